//! Experiments that reproduce a paper's study end to end (many runs, one document).

pub mod kast;
pub mod mt_ftl;
pub mod nftl;
