//! Experiments that reproduce a paper's study end to end (many runs, one document).

pub mod claims;
pub mod fmmu;
pub mod fmmu_study;
pub mod kast;
pub mod mt_ftl;
pub mod nftl;
pub mod part_admission;
pub mod part_cosmos;
pub mod part_schedulability;
