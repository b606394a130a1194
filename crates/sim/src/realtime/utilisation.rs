//! An EDF utilisation test with blocking (Baker's SRP, part-ftl.txt eqs. 6 and 7; RTGC's test):
//! a sum of named terms that must not exceed 1. Kept as its terms so a refusal can say which
//! part of the load failed it.

use std::fmt;

/// A periodic load: `capacity_ns` of work every `period_ns`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Load {
    pub capacity_ns: f64,
    pub period_ns: f64,
}

impl Load {
    pub fn utilisation(&self) -> f64 {
        self.capacity_ns / self.period_ns
    }
}

/// Which flash operations a test covers and its terms, e.g. the write set of eq. 7:
/// write + encoding + GC + blocking.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct UtilisationTest {
    /// "read set", "write set", "flash".
    pub name: &'static str,
    /// Where it comes from: "eq. 6", "eq. 7", "RTGC".
    pub source: &'static str,
    /// Named utilisations, the blocking term last.
    pub terms: Vec<(&'static str, f64)>,
}

impl UtilisationTest {
    /// A test over `loads` (summed per name, in the order given) with blocking by the longest
    /// non-preemptible operation `blocking_ns` over the shortest period (0 without loads).
    pub fn edf_with_blocking(
        name: &'static str,
        source: &'static str,
        loads: &[(&'static str, Load)],
        blocking_ns: f64,
    ) -> Self {
        let mut terms: Vec<(&'static str, f64)> = Vec::new();
        for (term, load) in loads {
            match terms.iter_mut().find(|(t, _)| t == term) {
                Some((_, u)) => *u += load.utilisation(),
                None => terms.push((term, load.utilisation())),
            }
        }
        let min_period_ns = loads
            .iter()
            .map(|(_, l)| l.period_ns)
            .fold(f64::INFINITY, f64::min);
        let blocking = if min_period_ns.is_finite() {
            blocking_ns / min_period_ns
        } else {
            0.0
        };
        terms.push(("blocking", blocking));
        UtilisationTest {
            name,
            source,
            terms,
        }
    }

    pub fn total(&self) -> f64 {
        self.terms.iter().map(|(_, u)| u).sum()
    }

    pub fn passes(&self) -> bool {
        self.total() <= 1.0
    }

    /// The value of one term (0 when absent).
    pub fn term(&self, name: &str) -> f64 {
        self.terms
            .iter()
            .find(|(t, _)| *t == name)
            .map_or(0.0, |(_, u)| *u)
    }
}

impl fmt::Display for UtilisationTest {
    /// "write set utilisation 1.07 > 1 (eq. 7): write 0.52 + encoding 0.11 + GC 0.40 + blocking 0.04"
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = if self.passes() { "<=" } else { ">" };
        write!(
            f,
            "{} utilisation {:.2} {op} 1 ({}):",
            self.name,
            self.total(),
            self.source
        )?;
        for (i, (term, u)) in self.terms.iter().enumerate() {
            let sep = if i == 0 { " " } else { " + " };
            write!(f, "{sep}{term} {u:.2}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_summed_per_name_and_blocking_uses_the_shortest_period() {
        let l = |c: f64, p: f64| Load {
            capacity_ns: c,
            period_ns: p,
        };
        let t = UtilisationTest::edf_with_blocking(
            "write set",
            "eq. 7",
            &[
                ("write", l(1.0, 10.0)),
                ("GC", l(2.0, 8.0)),
                ("write", l(3.0, 10.0)),
            ],
            2.0,
        );
        assert_eq!(
            t.terms,
            vec![("write", 0.4), ("GC", 0.25), ("blocking", 0.25)]
        );
        assert!((t.total() - 0.9).abs() < 1e-12 && t.passes());
        assert_eq!(
            t.to_string(),
            "write set utilisation 0.90 <= 1 (eq. 7): write 0.40 + GC 0.25 + blocking 0.25"
        );
    }

    #[test]
    fn no_load_no_blocking() {
        let t = UtilisationTest::edf_with_blocking("read set", "eq. 6", &[], 5.0);
        assert_eq!(t.total(), 0.0);
    }
}
