//! Stopping long work from outside: a caller that must stay responsive (the Python bindings,
//! which honour Ctrl-C) gives a [`StopCheck`]; the simulation and the trace reader call it at
//! their progress points and end with [`SimError::Interrupted`] when it asks them to stop.
//!
//! Progress points come every [`StopPoll::EVERY`] engine steps or trace lines (well under a
//! millisecond of work in release builds), inside preconditioning, the measured run and trace
//! reading alike. Without a check the cost is one never-taken branch per point.

use std::fmt;
use std::sync::Arc;

use crate::SimError;

/// Asked at progress points whether to stop: `true` stops the work with
/// [`SimError::Interrupted`]. Clones share the same check.
#[derive(Clone)]
pub struct StopCheck(Arc<dyn Fn() -> bool + Send + Sync>);

impl StopCheck {
    pub fn new(check: impl Fn() -> bool + Send + Sync + 'static) -> StopCheck {
        StopCheck(Arc::new(check))
    }

    /// Whether the caller asks to stop now.
    pub fn should_stop(&self) -> bool {
        (self.0)()
    }
}

impl fmt::Debug for StopCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StopCheck")
    }
}

/// An optional [`StopCheck`] called at every [`StopPoll::EVERY`]-th progress point.
#[derive(Debug, Default)]
pub(crate) struct StopPoll {
    check: Option<StopCheck>,
    points_left: u32,
}

impl StopPoll {
    /// Progress points between two calls of the check.
    pub(crate) const EVERY: u32 = 1024;

    pub(crate) fn set(&mut self, check: Option<StopCheck>) {
        self.check = check;
        self.points_left = 1;
    }

    pub(crate) fn check(&self) -> Option<&StopCheck> {
        self.check.as_ref()
    }

    /// One progress point: calls the check every [`StopPoll::EVERY`] points.
    #[inline]
    pub(crate) fn point(&mut self) -> Result<(), SimError> {
        match &self.check {
            None => Ok(()),
            Some(check) => {
                self.points_left -= 1;
                if self.points_left > 0 {
                    return Ok(());
                }
                self.points_left = Self::EVERY;
                if check.should_stop() {
                    Err(SimError::Interrupted)
                } else {
                    Ok(())
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    #[test]
    fn without_a_check_every_point_passes() {
        let mut poll = StopPoll::default();
        for _ in 0..3 * StopPoll::EVERY {
            poll.point().unwrap();
        }
    }

    #[test]
    fn the_check_is_asked_at_the_first_point_and_then_every_n_points() {
        let calls = Arc::new(AtomicU32::new(0));
        let counted = Arc::clone(&calls);
        let mut poll = StopPoll::default();
        poll.set(Some(StopCheck::new(move || {
            counted.fetch_add(1, Ordering::Relaxed);
            false
        })));
        poll.point().unwrap();
        assert_eq!(calls.load(Ordering::Relaxed), 1);
        for _ in 0..3 * StopPoll::EVERY {
            poll.point().unwrap();
        }
        assert_eq!(calls.load(Ordering::Relaxed), 4);
    }

    #[test]
    fn a_stop_request_ends_with_interrupted() {
        let mut poll = StopPoll::default();
        poll.set(Some(StopCheck::new(|| true)));
        let err = poll.point().unwrap_err();
        assert!(matches!(err, SimError::Interrupted));
        assert!(!err.is_input_error());
    }
}
