//! One task set judged by one scheme's test on one device, with every test's terms and the
//! scheme's guaranteed bounds: what `flashlab admit` prints, `flashlab.admit` returns and a
//! periodic run's report carries as `admission` (`run.admission`).
//!
//! The verdict is [`Scheme::check`]'s, the same the [`super::AdmissionController`] gives
//! `open()`, and a refusal's text is that check's message, so `run.admission = "enforce"` and
//! `flashlab admit` refuse with the same words. Bounds are the paper's closed forms on the
//! analysis device (PaRT-FTL: eqs. 8-11; WAO-GC: eqs. 12-16; the paper gives RTGC none).

use std::fmt::{self, Write as _};

use serde::Serialize;

use super::derive::{analysis_device, scheme_of_ftl, workload_tasks, AnalysisDevice};
use super::{part, rtgc, waogc, FlashParams, Scheme, TaskSpec, NS_PER_MS};
use crate::config::{AdmissionMode, ConfigSource, ExperimentConfig};
use crate::workload::Pattern;
use crate::SimError;

/// The verdict of one task set, with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    /// "PaRT-FTL", "WAO-GC" or "RTGC".
    pub scheme: &'static str,
    /// Where the device's times come from.
    pub device_source: String,
    pub device: FlashParams,
    pub tasks: Vec<TaskSpec>,
    pub admitted: bool,
    /// The failing test's message when refused (what `run.admission = "enforce"` says).
    pub refusal: Option<String>,
    /// Every test of the scheme, failing or not.
    pub tests: Vec<TestTerms>,
    /// The scheme's guaranteed latencies and bandwidths on this device.
    pub bounds: Vec<Bound>,
    /// What the paper says about this set or device that the numbers contradict.
    pub notes: Vec<String>,
}

/// One test: a utilisation sum against 1 (eqs. 6, 7, RTGC), or every request's worst
/// response against its deadline (WAO-GC, section VI.A).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestTerms {
    /// "read set", "write set", "flash", "worst-case blocking".
    pub name: &'static str,
    /// "eq. 6", "eq. 7", "RTGC", "section VI.A".
    pub source: &'static str,
    /// Named utilisations (the blocking term last); empty for a response-time test.
    pub terms: Vec<Term>,
    /// The sum of the terms, or the largest response / deadline.
    pub total: f64,
    /// What `total` must not exceed (1).
    pub limit: f64,
    pub passes: bool,
    /// Response-time tests: every request with its worst response.
    pub requests: Vec<RequestCheck>,
}

/// A named utilisation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Term {
    pub name: &'static str,
    pub value: f64,
}

/// A request's worst response against its deadline (WAO-GC).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestCheck {
    /// Index of the task in the set.
    pub task: usize,
    /// "read" or "write".
    pub request: &'static str,
    pub response_ns: f64,
    pub deadline_ns: f64,
    /// Partial GC steps in the response.
    pub partial_steps: u32,
}

/// A guaranteed figure of the scheme on this device.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bound {
    /// "worst page-read latency", ...
    pub name: &'static str,
    /// "eq. 8", ...
    pub equation: &'static str,
    pub value: f64,
    /// "ns", "MiB/s" or "fraction".
    pub unit: &'static str,
}

/// The analysis of `config`'s periodic workload on its device and FTL.
pub fn analyse(config: &ExperimentConfig) -> Result<Analysis, SimError> {
    let device = analysis_device(config)?;
    let tasks = workload_tasks(config)?;
    Ok(judge(device, tasks))
}

/// The verdict of `tasks` on `device`, with every test, bound and note.
pub fn judge(device: AnalysisDevice, tasks: Vec<TaskSpec>) -> Analysis {
    let AnalysisDevice {
        scheme,
        params,
        source,
    } = device;
    let refusal = scheme.check(&tasks, &params).err().map(|r| r.to_string());
    Analysis {
        scheme: scheme.name(),
        device_source: source,
        tests: tests(scheme, &tasks, &params),
        bounds: bounds(scheme, &params),
        notes: notes(scheme, &tasks, &params),
        device: params,
        tasks,
        admitted: refusal.is_none(),
        refusal,
    }
}

fn tests(scheme: Scheme, tasks: &[TaskSpec], dev: &FlashParams) -> Vec<TestTerms> {
    match scheme {
        Scheme::PartFtl => vec![
            utilisation(part::read_test(tasks, dev)),
            utilisation(part::write_test(tasks, dev)),
        ],
        Scheme::Rtgc => vec![utilisation(rtgc::admission_test(tasks, dev))],
        Scheme::WaoGc => vec![responses(tasks, dev)],
    }
}

fn utilisation(test: super::UtilisationTest) -> TestTerms {
    TestTerms {
        name: test.name,
        source: test.source,
        total: test.total(),
        limit: 1.0,
        passes: test.passes(),
        terms: test
            .terms
            .iter()
            .map(|&(name, value)| Term { name, value })
            .collect(),
        requests: Vec::new(),
    }
}

fn responses(tasks: &[TaskSpec], dev: &FlashParams) -> TestTerms {
    let requests: Vec<RequestCheck> = waogc::worst_case_responses(tasks, dev)
        .into_iter()
        .map(|m| RequestCheck {
            task: m.task,
            request: m.request,
            response_ns: m.response_ns,
            deadline_ns: m.deadline_ns,
            partial_steps: m.steps,
        })
        .collect();
    let total = requests
        .iter()
        .map(|r| r.response_ns / r.deadline_ns)
        .fold(0.0, f64::max);
    TestTerms {
        name: "worst-case blocking",
        source: "section VI.A",
        terms: Vec::new(),
        total,
        limit: 1.0,
        passes: total <= 1.0,
        requests,
    }
}

fn bound(name: &'static str, equation: &'static str, value: f64, unit: &'static str) -> Bound {
    Bound {
        name,
        equation,
        value,
        unit,
    }
}

fn bounds(scheme: Scheme, dev: &FlashParams) -> Vec<Bound> {
    let mib = |pages_per_s: f64| dev.mib_per_s(pages_per_s);
    match scheme {
        Scheme::PartFtl => vec![
            bound(
                "worst page-read latency (a rebuild)",
                "eq. 8",
                part::read_latency_bound_ns(dev),
                "ns",
            ),
            bound(
                "worst-case write bandwidth",
                "eq. 9",
                mib(part::write_bandwidth_pages_per_s(dev)),
                "MiB/s",
            ),
            bound(
                "read bandwidth, no rebuild",
                "eq. 10",
                mib(part::max_read_bandwidth_pages_per_s(dev)),
                "MiB/s",
            ),
            bound(
                "read bandwidth, every read rebuilt",
                "eq. 11",
                mib(part::min_read_bandwidth_pages_per_s(dev)),
                "MiB/s",
            ),
        ],
        Scheme::WaoGc => vec![
            bound(
                "largest lambda (exclusive)",
                "eq. 12",
                waogc::max_logical_ratio(dev.pages_per_block, dev.copies_per_partial_step),
                "fraction",
            ),
            bound(
                "worst page-write latency",
                "eq. 13",
                waogc::write_latency_bound_ns(dev),
                "ns",
            ),
            bound(
                "worst page-read latency",
                "eq. 14",
                waogc::read_latency_bound_ns(dev),
                "ns",
            ),
            bound(
                "write bandwidth",
                "eq. 15",
                mib(waogc::write_bandwidth_pages_per_s(dev)),
                "MiB/s",
            ),
            bound(
                "read bandwidth",
                "eq. 16",
                mib(waogc::read_bandwidth_pages_per_s(dev)),
                "MiB/s",
            ),
        ],
        Scheme::Rtgc => Vec::new(),
    }
}

/// Table III (section VI.B): 4 tasks writing 12 pages every 60 ms, 4 reading 3 every 15 ms.
fn is_table_iii(tasks: &[TaskSpec]) -> bool {
    let writer = TaskSpec::writer(12, 60.0 * NS_PER_MS).ok();
    let reader = TaskSpec::reader(3, 15.0 * NS_PER_MS).ok();
    let count = |t: Option<TaskSpec>| tasks.iter().filter(|x| Some(**x) == t).count();
    tasks.len() == 8 && count(writer) == 4 && count(reader) == 4
}

fn notes(scheme: Scheme, tasks: &[TaskSpec], dev: &FlashParams) -> Vec<String> {
    let mut notes = Vec::new();
    match scheme {
        Scheme::PartFtl if is_table_iii(tasks) => notes.push(table_iii_note(tasks, dev)),
        Scheme::WaoGc => {
            notes.push(
                "WAO-GC has no admission control in the paper; this is section VI.A's \
                 deterministic worst case (every other writer and the request's own write \
                 delay it by one partial GC step)"
                    .into(),
            );
            let bound = waogc::max_logical_ratio(dev.pages_per_block, dev.copies_per_partial_step);
            if dev.logical_ratio >= bound {
                notes.push(format!(
                    "lambda {:.3} is not below eq. 12's bound {bound:.3}: a victim's copies and \
                     the steps' writes do not fit one block",
                    dev.logical_ratio
                ));
            }
        }
        Scheme::Rtgc => notes.push(
            "part-ftl.txt gives RTGC no latency or bandwidth formula: an admitted set's \
             requests complete within their periods"
                .into(),
        ),
        Scheme::PartFtl => {}
    }
    notes
}

/// Section VI.B says Table III "passes PaRT-FTL's admission control"; the arithmetic on
/// this device.
fn table_iii_note(tasks: &[TaskSpec], dev: &FlashParams) -> String {
    let read = part::read_test(tasks, dev);
    let write = part::write_test(tasks, dev);
    let evaluated = FlashParams {
        logical_ratio: super::device::EVALUATED_PART_LOGICAL_RATIO,
        ..*dev
    };
    let write_evaluated = part::write_test(tasks, &evaluated);
    let t_r = dev.read_ns / NS_PER_MS;
    format!(
        "section VI.B says this set (Table III) \"passes PaRT-FTL's admission control, so no \
         deadlines are missed\", but by its own equations it does not: eq. 6 = 4 readers x 3 \
         pages x {t_r:.3} ms / 15 ms + blocking {t_r:.3} ms / 15 ms = {:.3} > 1 at any lambda; \
         eq. 7 = {:.3} at lambda {:.3} (section V.A), {:.3} at lambda 0.518 (the value under \
         which eq. 9 gives the paper's 7.3 MB/s)",
        read.total(),
        write.total(),
        dev.logical_ratio,
        write_evaluated.total(),
    )
}

fn ms(ns: f64) -> String {
    format!("{:.3} ms", ns / NS_PER_MS)
}

/// "4 x write 12 pages / 60 ms, 4 x read 3 pages / 15 ms": identical tasks counted.
pub fn tasks_summary(tasks: &[TaskSpec]) -> String {
    let mut groups: Vec<(TaskSpec, usize)> = Vec::new();
    for t in tasks {
        match groups.iter_mut().find(|(g, _)| g == t) {
            Some((_, n)) => *n += 1,
            None => groups.push((*t, 1)),
        }
    }
    let pages = |n: u32| {
        if n == 1 {
            "1 page".to_string()
        } else {
            format!("{n} pages")
        }
    };
    let one = |t: &TaskSpec| {
        let mut parts = Vec::new();
        if t.reads() {
            let (n, period) = (pages(t.read_pages), ms(t.read_period_ns));
            parts.push(format!("read {n} / {period}"));
        }
        if t.writes() {
            let (n, period) = (pages(t.write_pages), ms(t.write_period_ns));
            parts.push(format!("write {n} / {period}"));
        }
        parts.join(" and ")
    };
    groups
        .iter()
        .map(|(t, n)| format!("{n} x {}", one(t)))
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for TestTerms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.passes { "holds" } else { "FAILS" };
        let op = if self.passes { "<=" } else { ">" };
        write!(f, "{} ({}): ", self.name, self.source)?;
        if self.requests.is_empty() {
            let terms: Vec<String> = self
                .terms
                .iter()
                .map(|t| format!("{} {:.3}", t.name, t.value))
                .collect();
            write!(
                f,
                "{} = {:.3} {op} {}  {verdict}",
                terms.join(" + "),
                self.total,
                self.limit
            )
        } else {
            write!(
                f,
                "largest response / deadline {:.3} {op} {}  {verdict}",
                self.total, self.limit
            )?;
            for (first, last, r) in same_request_runs(&self.requests) {
                let tasks = if first == last {
                    format!("task {first}")
                } else {
                    format!("tasks {first}-{last}")
                };
                write!(
                    f,
                    "\n    {tasks} {}: {} ({} partial steps) vs deadline {}",
                    r.request,
                    ms(r.response_ns),
                    r.partial_steps,
                    ms(r.deadline_ns)
                )?;
            }
            Ok(())
        }
    }
}

/// Consecutive tasks whose requests of one kind have the same response and deadline, as
/// (first task, last task, the request): a set of many identical tasks prints one line each.
fn same_request_runs(requests: &[RequestCheck]) -> Vec<(usize, usize, &RequestCheck)> {
    let mut runs: Vec<(usize, usize, &RequestCheck)> = Vec::new();
    for r in requests {
        let same = |x: &RequestCheck| {
            x.request == r.request
                && x.response_ns == r.response_ns
                && x.deadline_ns == r.deadline_ns
                && x.partial_steps == r.partial_steps
        };
        match runs
            .iter_mut()
            .rev()
            .find(|(_, _, x)| x.request == r.request)
        {
            Some((_, last, x)) if same(x) && *last + 1 == r.task => *last = r.task,
            _ => runs.push((r.task, r.task, r)),
        }
    }
    runs
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.unit {
            "ns" => write!(f, "{} {}: {}", self.equation, self.name, ms(self.value)),
            "MiB/s" => write!(
                f,
                "{} {}: {:.2} MiB/s",
                self.equation, self.name, self.value
            ),
            _ => write!(f, "{} {}: {:.4}", self.equation, self.name, self.value),
        }
    }
}

impl Analysis {
    /// "admitted" or "refused".
    pub fn verdict(&self) -> &'static str {
        if self.admitted {
            "admitted"
        } else {
            "refused"
        }
    }

    /// The device line: set sizes and times.
    pub fn device_line(&self) -> String {
        let d = &self.device;
        format!(
            "|F| {}, |F_w| {}, f_r {}, k {}, m {}, P {}, lambda {:.3}, c {}, t_r {}, t'_r {}, \
             t_w {}, t_e {}, t_c^e {}, t_c^d {}",
            d.chips,
            d.write_chips,
            d.parallel_reads,
            d.data_chips,
            d.parity_chips,
            d.pages_per_block,
            d.logical_ratio,
            d.copies_per_partial_step,
            ms(d.read_ns),
            ms(d.gc_read_ns),
            ms(d.write_ns),
            ms(d.erase_ns),
            ms(d.encode_ns),
            ms(d.decode_ns)
        )
    }
}

impl fmt::Display for Analysis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{} admission: {}",
            self.scheme,
            self.verdict().to_uppercase()
        );
        let _ = writeln!(s, "  tasks: {}", tasks_summary(&self.tasks));
        let _ = writeln!(s, "  device: {}", self.device_line());
        let _ = writeln!(s, "  times from {}", self.device_source);
        for t in &self.tests {
            let _ = writeln!(s, "  {t}");
        }
        for b in &self.bounds {
            let _ = writeln!(s, "  bound: {b}");
        }
        if let Some(r) = &self.refusal {
            let _ = writeln!(s, "  refused: {r}");
        }
        for n in &self.notes {
            let _ = writeln!(s, "  note: {n}");
        }
        f.write_str(s.trim_end())
    }
}

/// A run's admission (`run.admission`): the analysis of its task set, or why the set cannot
/// be analysed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunAdmission {
    pub mode: AdmissionMode,
    pub analysis: Option<Analysis>,
    /// Why the tests do not apply to this task set (e.g. a deadline shorter than its period).
    pub not_analysable: Option<String>,
}

/// Whether `config` is a run the admission applies to: a periodic workload (no trace) on an
/// FTL with a test, and `run.admission` not `off`.
pub fn admission_applies(config: &ExperimentConfig) -> bool {
    config.run.admission != AdmissionMode::Off
        && scheme_of_ftl(config.ftl_name()).is_some()
        && !config.trace.enabled()
        && config.workload.pattern == Pattern::Periodic
}

/// The admission of a run before it starts: `None` when it does not apply; under `enforce`,
/// an error when the test refuses the set or cannot analyse it.
pub fn run_admission(config: &ExperimentConfig) -> Result<Option<RunAdmission>, SimError> {
    if !admission_applies(config) {
        return Ok(None);
    }
    let mode = config.run.admission;
    let enforce = mode == AdmissionMode::Enforce;
    match analyse(config) {
        Ok(a) if enforce && !a.admitted => Err(SimError::Admission(format!(
            "admission refused by {}'s test: {} (run.admission = \"enforce\"; `flashlab admit` \
             shows every test)",
            a.scheme,
            a.refusal.as_deref().unwrap_or("")
        ))),
        Ok(a) => Ok(Some(RunAdmission {
            mode,
            analysis: Some(a),
            not_analysable: None,
        })),
        Err(e) if enforce => Err(SimError::Admission(format!(
            "admission cannot analyse this task set: {e} (run.admission = \"enforce\")"
        ))),
        Err(e) => Ok(Some(RunAdmission {
            mode,
            analysis: None,
            not_analysable: Some(e.to_string()),
        })),
    }
}

/// The configuration `flashlab admit` and `flashlab.admit` analyse: `source`'s preset, file
/// and `--set` lines with `ftl.name = ftl` before them, and the task set `tasks` (the
/// periodic workload's syntax, `4xw12p@60ms+4xr3p@15ms`, with or without `periodic:tasks=`)
/// as the workload.
pub fn admit_config(
    source: &ConfigSource<'_>,
    ftl: &str,
    tasks: &str,
) -> Result<ExperimentConfig, SimError> {
    let mut sets = vec![format!("ftl.name={}", toml::Value::String(ftl.to_string()))];
    sets.extend(source.sets.iter().cloned());
    let mut config = ExperimentConfig::load(&ConfigSource {
        sets: &sets,
        ..source.clone()
    })?;
    let tasks = tasks.trim();
    let spec = if tasks.starts_with("periodic:") {
        tasks.to_string()
    } else {
        format!("periodic:tasks={tasks}")
    };
    config.workload = crate::workload::parse_spec(&spec)?;
    config.validate()?;
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::realtime::derive::AnalysisDevice;

    fn paper(scheme: Scheme) -> AnalysisDevice {
        AnalysisDevice {
            scheme,
            params: scheme.paper_device(),
            source: "Table IV".into(),
        }
    }

    fn table_iii() -> Vec<TaskSpec> {
        let mut tasks = vec![TaskSpec::writer(12, 60.0 * NS_PER_MS).unwrap(); 4];
        tasks.extend([TaskSpec::reader(3, 15.0 * NS_PER_MS).unwrap(); 4]);
        tasks
    }

    #[test]
    fn table_iii_is_refused_and_the_note_gives_the_arithmetic() {
        let a = judge(paper(Scheme::PartFtl), table_iii());
        assert!(!a.admitted);
        assert_eq!(
            a.refusal.as_deref(),
            Some("read set utilisation 1.07 > 1 (eq. 6): read 0.98 + blocking 0.08")
        );
        assert_eq!(a.tests[0].terms.len(), 2);
        assert!((a.tests[1].total - 1.254).abs() < 1e-3);
        let note = &a.notes[0];
        assert!(note.contains("= 1.066 > 1 at any lambda"), "{note}");
        assert!(note.contains("eq. 7 = 1.254 at lambda 0.643"), "{note}");
        assert!(note.contains("0.919 at lambda 0.518"), "{note}");
        // Another set has no such note.
        let other = judge(paper(Scheme::PartFtl), table_iii()[..7].to_vec());
        assert!(other.notes.is_empty());
    }

    #[test]
    fn bounds_are_the_papers_closed_forms() {
        let p = judge(paper(Scheme::PartFtl), table_iii());
        let eqs: Vec<&str> = p.bounds.iter().map(|b| b.equation).collect();
        assert_eq!(eqs, ["eq. 8", "eq. 9", "eq. 10", "eq. 11"]);
        assert_eq!(p.bounds[0].value, 1.23 * NS_PER_MS);
        assert!((p.bounds[2].value - 76.22).abs() < 0.01);
        let w = judge(paper(Scheme::WaoGc), table_iii());
        let value = |eq: &str| w.bounds.iter().find(|b| b.equation == eq).unwrap().value;
        assert!((value("eq. 15") - 15.49).abs() < 0.01);
        assert!((value("eq. 16") - 13.44).abs() < 0.01);
        assert!((value("eq. 14") - 9.3 * NS_PER_MS).abs() < 1.0);
        assert!(judge(paper(Scheme::Rtgc), table_iii()).bounds.is_empty());
    }

    #[test]
    fn wao_gc_lists_every_request_and_prints_runs_of_equal_ones() {
        let a = judge(paper(Scheme::WaoGc), table_iii());
        let test = &a.tests[0];
        assert_eq!(test.requests.len(), 8);
        assert!((test.total - 28.49 / 15.0).abs() < 1e-9);
        let text = a.to_string();
        assert!(
            text.contains("tasks 0-3 write: 26.670 ms (4 partial steps)"),
            "{text}"
        );
        assert!(
            text.contains("tasks 4-7 read: 28.490 ms (4 partial steps) vs deadline 15.000 ms"),
            "{text}"
        );
        assert!(
            text.contains("refused: read of stream #4 responds in 28.49 ms"),
            "{text}"
        );
    }

    #[test]
    fn tasks_are_summarised_by_kind() {
        assert_eq!(
            tasks_summary(&table_iii()),
            "4 x write 12 pages / 60.000 ms, 4 x read 3 pages / 15.000 ms"
        );
        let one = TaskSpec::reader(1, 2.0 * NS_PER_MS).unwrap();
        assert_eq!(tasks_summary(&[one]), "1 x read 1 page / 2.000 ms");
    }
}
