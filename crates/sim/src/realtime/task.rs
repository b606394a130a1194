//! The task model of part-ftl.txt section III.B: task τ_i performs `r_i` page reads every
//! `T_i^r` and `w_i` page writes every `T_i^w` (CPU time is not part of it). Periods are
//! deadlines (implicit-deadline periodic tasks).

use super::RealtimeError;

/// Longest period accepted: 2^62 ns (the simulated clock's limit, about 146 years).
pub const MAX_PERIOD_NS: f64 = 4.611_686_018_427_388e18;

/// One task (a stream opened with `open()`): `[(r_i, T_i^r), (w_i, T_i^w)]`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct TaskSpec {
    /// r_i: pages read per read period (0: the task does not read).
    pub read_pages: u32,
    /// T_i^r (ignored when `read_pages` is 0).
    pub read_period_ns: f64,
    /// w_i: pages written per write period (0: the task does not write).
    pub write_pages: u32,
    /// T_i^w (ignored when `write_pages` is 0).
    pub write_period_ns: f64,
}

impl TaskSpec {
    /// A checked task: at least one page read or written, and each used period a finite
    /// positive number of ns up to [`MAX_PERIOD_NS`].
    pub fn new(
        read_pages: u32,
        read_period_ns: f64,
        write_pages: u32,
        write_period_ns: f64,
    ) -> Result<Self, RealtimeError> {
        if read_pages == 0 && write_pages == 0 {
            return Err(RealtimeError::invalid(
                "read_pages + write_pages",
                0,
                "at least 1 (a task reads or writes)",
            ));
        }
        if read_pages > 0 {
            check_period("read_period_ns", read_period_ns)?;
        }
        if write_pages > 0 {
            check_period("write_period_ns", write_period_ns)?;
        }
        Ok(TaskSpec {
            read_pages,
            read_period_ns,
            write_pages,
            write_period_ns,
        })
    }

    /// Checks a task built field by field (as [`TaskSpec::new`] does).
    pub fn validated(self) -> Result<Self, RealtimeError> {
        Self::new(
            self.read_pages,
            self.read_period_ns,
            self.write_pages,
            self.write_period_ns,
        )
    }

    /// A task that only reads.
    pub fn reader(pages: u32, period_ns: f64) -> Result<Self, RealtimeError> {
        Self::new(pages, period_ns, 0, 0.0)
    }

    /// A task that only writes.
    pub fn writer(pages: u32, period_ns: f64) -> Result<Self, RealtimeError> {
        Self::new(0, 0.0, pages, period_ns)
    }

    pub fn reads(&self) -> bool {
        self.read_pages > 0
    }

    pub fn writes(&self) -> bool {
        self.write_pages > 0
    }
}

fn check_period(field: &'static str, period_ns: f64) -> Result<(), RealtimeError> {
    if period_ns.is_finite() && period_ns > 0.0 && period_ns <= MAX_PERIOD_NS {
        Ok(())
    } else {
        Err(RealtimeError::invalid(
            field,
            period_ns,
            "a number of ns in (0, 2^62]",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_must_read_or_write() {
        let e = TaskSpec::new(0, 1e6, 0, 1e6).unwrap_err();
        assert!(e.to_string().contains("read_pages + write_pages"), "{e}");
    }

    #[test]
    fn errors_name_the_bad_period() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e19] {
            let e = TaskSpec::new(1, bad, 0, 0.0).unwrap_err();
            assert!(e.to_string().starts_with("read_period_ns"), "{e}");
            let e = TaskSpec::new(0, 0.0, 3, bad).unwrap_err();
            assert!(e.to_string().starts_with("write_period_ns"), "{e}");
        }
    }

    #[test]
    fn a_task_built_by_fields_is_checked_too() {
        let t = TaskSpec {
            read_pages: 1,
            read_period_ns: f64::NAN,
            write_pages: 0,
            write_period_ns: 0.0,
        };
        assert!(t.validated().is_err());
        let ok = TaskSpec::writer(3, 1e6).unwrap();
        assert_eq!(ok.validated(), Ok(ok));
    }

    #[test]
    fn an_unused_period_is_not_checked() {
        assert!(TaskSpec::reader(1, 15e6).is_ok());
        assert!(TaskSpec::writer(12, 60e6).is_ok());
    }
}
