//! Real-time analysis of flash storage after part-ftl.txt (PaRT-FTL, Missimer & West) and the
//! schemes it compares with: pure functions of a task set and a device's parameters, no
//! simulator state.
//!
//! - [`task`]: the task model of section III.B, `[(r_i, T_i^r), (w_i, T_i^w)]`.
//! - [`device`]: the parameters of Tables II and IV (times per page or block on every chip of a
//!   set, |F|, |F_w|, f_r, k, m, P, λ, c) with the paper's values.
//! - [`part`]: PaRT-FTL: capacities and periods (eqs. 1, 2, 3, 5), admission (eqs. 6, 7),
//!   read latency (eq. 8), bandwidths (eqs. 9-11).
//! - [`waogc`]: WAO-GC (section IV): the λ bound (eq. 12), latencies (eqs. 13, 14),
//!   bandwidths (eqs. 15, 16), and section VI.A's blocking test (no admission control).
//! - [`rtgc`]: RTGC (Chang, Kuo and Lo, ACM TECS 3(4) 2004): one real-time garbage-collection
//!   task per write task and an EDF utilisation test with blocking.
//! - [`analysis`]: one task set judged with every test's terms and the scheme's bounds
//!   (`flashlab admit`, the report's `admission`).
//! - [`derive`]: the analysis of a configured run: its scheme, the parameters of its device
//!   (measured on the timing model, or a preset's measured table) and its periodic tasks.
//! - [`admission`]: the paper's `open()`: an [`admission::AdmissionController`] per scheme that
//!   admits streams or refuses them with the failed test and its terms.
//!
//! Times are `f64` nanoseconds (`_ns`), sizes are pages. docs/realtime-analysis.md lists the
//! equations, the interpretation choices and the paper's numbers against ours.

pub mod admission;
pub mod analysis;
pub mod derive;
pub mod device;
pub mod part;
pub mod rtgc;
pub mod task;
pub mod utilisation;
pub mod waogc;

pub use admission::{AdmissionController, Refusal, Scheme, StreamHandle};
pub use analysis::{analyse, Analysis};
pub use device::FlashParams;
pub use task::TaskSpec;
pub use utilisation::{Load, UtilisationTest};

use thiserror::Error;

/// Bad input to the analysis: a field outside its range, or an unknown stream.
#[derive(Debug, Clone, PartialEq, Error, serde::Serialize)]
pub enum RealtimeError {
    /// `field` holds `value`, which is not within `allowed`.
    #[error("{field} = {value}: must be {allowed}")]
    Invalid {
        field: &'static str,
        value: String,
        allowed: &'static str,
    },
    /// `release` of a handle that is not admitted.
    #[error("stream {0} is not admitted")]
    UnknownStream(u64),
}

impl RealtimeError {
    pub(crate) fn invalid(
        field: &'static str,
        value: impl std::fmt::Display,
        allowed: &'static str,
    ) -> Self {
        RealtimeError::Invalid {
            field,
            value: value.to_string(),
            allowed,
        }
    }
}

/// Nanoseconds per millisecond (the paper's tables are in ms).
pub const NS_PER_MS: f64 = 1e6;

/// `ceil(x)` robust to the rounding of a product such as `λ·P` that should be an integer.
pub(crate) fn ceil_exact(x: f64) -> f64 {
    (x - 1e-9).ceil()
}

/// `floor(x)` robust to the rounding of a ratio that should be an integer.
pub(crate) fn floor_exact(x: f64) -> f64 {
    (x + 1e-9).floor()
}
