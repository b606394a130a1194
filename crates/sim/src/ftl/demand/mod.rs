//! Demand-paged page mapping (fmmu.txt section 4.2; DFTL, Gupta et al. ASPLOS 2009): the
//! mapping table lives in translation pages in flash and a RAM map cache holds part of it.
//!
//! So far this folder holds the FTL execution-time model the map caches charge
//! ([`exec_time`]); the core (data path, GTD, translation GC, CondUpdate) is issue 12's next
//! step.

pub mod exec_time;
