//! Periodic real-time tasks (part-ftl.txt III.B, VI.B Table III): each task reads or writes a
//! fixed number of pages every period; job `j` of a task is released (arrives, open loop) at
//! `offset + j * period` and its deadline is `deadline` after its release (the period when
//! not given). The report then gives deadline misses and latencies per task.
//!
//! Choices where the paper is silent:
//! - Task ids are the tasks' positions in `workload.tasks`, a table with `count = N` giving N
//!   consecutive ids (`4xw12p@60ms+4xr3p@15ms`: writers 0-3, readers 4-7).
//! - Releases at the same time go in task-id order (ties between tasks are deterministic).
//! - `pages` are the device's pages (`geometry.page_bytes`, resolved when the source is built);
//!   offsets are page-aligned. A uniform task picks each job's offset uniformly among the
//!   page-aligned offsets where the request fits the addressed range; a sequential task `k` of
//!   `n` starts at the `k`-th `n`-th of the range (so sequential tasks do not overlap at
//!   first) and wraps to offset 0 at the end of the range.
//! - `count` bounds the jobs of all tasks together, `duration_ns` the release times (jobs
//!   released at or after it are not issued).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use super::{LoopMode, RequestSource, WorkloadConfig};
use crate::config::{ConfigError, MAX_SIMULATED_NS};
use crate::host::{Op, Request};
use crate::settings;
use crate::SimError;

/// Stream of the periodic tasks' offsets (distinct from the other generators').
const PERIODIC_STREAM: u64 = 0x7e51_0d1c;
/// Most tasks a workload may have (after expanding `count`): far above a real-time task set
/// (part-ftl.txt's have 8 to 10), and bounding the report's per-task histograms.
pub const MAX_TASKS: u64 = 4_096;

/// What a periodic task does each period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskOp {
    Read,
    Write,
}

impl TaskOp {
    pub fn op(self) -> Op {
        match self {
            TaskOp::Read => Op::Read,
            TaskOp::Write => Op::Write,
        }
    }
}

/// Where a periodic task's jobs go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskPattern {
    /// Uniformly random page-aligned offsets in the addressed range.
    Uniform,
    /// Consecutive requests from the task's start, wrapping at the end of the range.
    Sequential,
}

settings! {
    /// One entry of `workload.tasks` (`[[workload.tasks]]` in a --config file): `count`
    /// identical periodic tasks.
    pub struct PeriodicTask in "workload.tasks" {
        /// What each job does.
        op: TaskOp = TaskOp::Write, unit "", choices "read | write";
        /// Size of each job's request in device pages (geometry.page_bytes); 0: give bytes instead.
        pages: u64 = 0, unit "pages", range 0 ..= 1_048_576;
        /// Size of each job's request in bytes (multiples of 512); 0: give pages instead.
        bytes: u64 = 0, unit "bytes", range 0 ..= 1_073_741_824;
        /// Time between the releases of consecutive jobs.
        period_ns: u64 = 0, unit "ns", range 1 ..= MAX_SIMULATED_NS;
        /// Release time of the first job, from the start of the run.
        offset_ns: u64 = 0, unit "ns", range 0 ..= MAX_SIMULATED_NS;
        /// Relative deadline of each job, from its release; 0: the period.
        deadline_ns: u64 = 0, unit "ns", range 0 ..= MAX_SIMULATED_NS;
        /// Identical tasks this entry stands for (consecutive task ids).
        count: u64 = 1, unit "tasks", range 1 ..= MAX_TASKS;
        /// Addresses: uniform (random page-aligned) or sequential.
        pattern: TaskPattern = TaskPattern::Uniform, unit "", choices "uniform | sequential";
    }
}

impl PeriodicTask {
    /// The relative deadline: the one given, else the period.
    pub fn deadline_resolved_ns(&self) -> u64 {
        if self.deadline_ns > 0 {
            self.deadline_ns
        } else {
            self.period_ns
        }
    }

    /// Checks the entry at `index` of `workload.tasks`; errors name `workload.tasks[index]`.
    pub fn validate(&self, index: usize) -> Result<(), ConfigError> {
        self.check_ranges().map_err(|e| indexed(e, index))?;
        let field = |name: &str| format!("workload.tasks[{index}].{name}");
        match (self.pages, self.bytes) {
            (0, 0) => Err(ConfigError::invalid(
                field("pages"),
                0,
                "the task's request size is missing",
                "pages >= 1 (device pages) or bytes >= 512",
            )),
            (p, b) if p > 0 && b > 0 => Err(ConfigError::invalid(
                field("bytes"),
                b,
                format!("both pages ({p}) and bytes are given"),
                "one of pages and bytes",
            )),
            (_, b) if b % 512 != 0 => Err(ConfigError::invalid(
                field("bytes"),
                b,
                "not a multiple of 512",
                "multiples of 512 up to 1 GiB",
            )),
            _ => Ok(()),
        }
    }

    /// Request size in bytes on a device of `page_bytes` pages.
    pub fn request_bytes(&self, page_bytes: u64) -> u64 {
        if self.pages > 0 {
            self.pages * page_bytes
        } else {
            self.bytes
        }
    }
}

/// A range error of a task's field, named with the task's index (`workload.tasks[2].pages`).
fn indexed(err: ConfigError, index: usize) -> ConfigError {
    let name =
        |field: String| field.replace("workload.tasks.", &format!("workload.tasks[{index}]."));
    match err {
        ConfigError::OutOfRange {
            field,
            value,
            allowed,
        } => ConfigError::OutOfRange {
            field: name(field),
            value,
            allowed,
        },
        other => other,
    }
}

/// Checks the task list of a periodic workload.
pub(super) fn validate_tasks(tasks: &[PeriodicTask]) -> Result<(), ConfigError> {
    if tasks.is_empty() {
        return Err(ConfigError::invalid(
            "workload.tasks",
            "[]",
            "a periodic workload needs at least one task",
            "tasks=4xw12p@60ms+4xr3p@15ms, or [[workload.tasks]] tables in a --config file",
        ));
    }
    for (i, t) in tasks.iter().enumerate() {
        t.validate(i)?;
    }
    let total: u64 = tasks.iter().map(|t| t.count).sum();
    if total > MAX_TASKS {
        return Err(ConfigError::invalid(
            "workload.tasks",
            total,
            "too many tasks in all (counts added up)",
            format!("1 ..= {MAX_TASKS} tasks"),
        ));
    }
    Ok(())
}

/// One task, expanded, with its addressing state.
#[derive(Debug, Clone)]
struct TaskState {
    op: Op,
    len_bytes: u64,
    period_ns: u64,
    offset_ns: u64,
    deadline_ns: u64,
    pattern: TaskPattern,
    /// Next offset of a sequential task.
    cursor: u64,
    /// Jobs released so far.
    jobs: u64,
}

/// The requests of a periodic workload, in release order.
#[derive(Debug)]
pub struct PeriodicSource {
    w: WorkloadConfig,
    rng: Pcg64Mcg,
    page_bytes: u64,
    space_bytes: u64,
    tasks: Vec<TaskState>,
    /// (next release, task id) of every task, earliest first.
    releases: BinaryHeap<Reverse<(u64, u32)>>,
    issued: u64,
}

impl PeriodicSource {
    /// The tasks of `w` over the first `range_fraction` of `logical_bytes`, on a device of
    /// `page_bytes` pages.
    pub fn new(
        w: &WorkloadConfig,
        logical_bytes: u64,
        page_bytes: u64,
        seed: u64,
    ) -> Result<Self, ConfigError> {
        w.validate()?;
        let range = (logical_bytes as f64 * w.range_fraction) as u64;
        let space = range / page_bytes * page_bytes;
        let total: u64 = w.tasks.iter().map(|t| t.count).sum();
        let mut tasks = Vec::with_capacity(total as usize);
        for (i, t) in w.tasks.iter().enumerate() {
            let len_bytes = t.request_bytes(page_bytes);
            if len_bytes > space {
                return Err(ConfigError::invalid(
                    format!(
                        "workload.tasks[{i}].{}",
                        if t.pages > 0 { "pages" } else { "bytes" }
                    ),
                    if t.pages > 0 { t.pages } else { t.bytes },
                    format!(
                        "requests of {len_bytes} bytes do not fit the {space}-byte range addressed"
                    ),
                    format!("requests up to {space} bytes (or a larger workload.range_fraction)"),
                ));
            }
            for _ in 0..t.count {
                let k = tasks.len() as u64;
                let start = (space / total.max(1)) * k / page_bytes * page_bytes;
                tasks.push(TaskState {
                    op: t.op.op(),
                    len_bytes,
                    period_ns: t.period_ns,
                    offset_ns: t.offset_ns,
                    deadline_ns: t.deadline_resolved_ns(),
                    pattern: t.pattern,
                    cursor: start,
                    jobs: 0,
                });
            }
        }
        let mut releases = BinaryHeap::with_capacity(tasks.len());
        for (id, t) in tasks.iter().enumerate() {
            releases.push(Reverse((t.offset_ns, id as u32)));
        }
        Ok(PeriodicSource {
            w: w.clone(),
            rng: Pcg64Mcg::seed_from_u64(seed ^ PERIODIC_STREAM),
            page_bytes,
            space_bytes: space,
            tasks,
            releases,
            issued: 0,
        })
    }

    /// The offset of task `id`'s next job.
    fn offset(&mut self, id: usize) -> u64 {
        let space = self.space_bytes;
        let page = self.page_bytes;
        let t = &mut self.tasks[id];
        match t.pattern {
            TaskPattern::Uniform => {
                let slots = (space - t.len_bytes) / page + 1;
                self.rng.random_range(0..slots) * page
            }
            TaskPattern::Sequential => {
                if t.cursor + t.len_bytes > space {
                    t.cursor = 0;
                }
                let at = t.cursor;
                t.cursor += t.len_bytes.div_ceil(page) * page;
                at
            }
        }
    }

    /// Jobs the tasks release before `duration_ns`.
    fn jobs_within(&self, duration_ns: u64) -> u64 {
        self.tasks
            .iter()
            .map(|t| {
                duration_ns
                    .saturating_sub(t.offset_ns)
                    .div_ceil(t.period_ns)
            })
            .sum()
    }
}

impl RequestSource for PeriodicSource {
    fn next_request(&mut self, _now_ns: u64) -> Result<Option<Request>, SimError> {
        if self.w.count > 0 && self.issued >= self.w.count {
            return Ok(None);
        }
        let Some(&Reverse((release, id))) = self.releases.peek() else {
            return Ok(None);
        };
        if self.w.duration_ns > 0 && release >= self.w.duration_ns {
            return Ok(None);
        }
        if release > MAX_SIMULATED_NS {
            return Err(SimError::Input {
                location: format!("workload.tasks (task {id})"),
                message: format!(
                    "job {} would be released after {release} ns, beyond the 146 years (2^62 ns) the simulated clock holds; lower workload.count or set workload.duration_ns",
                    self.tasks[id as usize].jobs + 1
                ),
            });
        }
        self.releases.pop();
        let offset_bytes = self.offset(id as usize);
        let t = &mut self.tasks[id as usize];
        t.jobs += 1;
        let next = t
            .offset_ns
            .saturating_add(t.jobs.saturating_mul(t.period_ns));
        self.releases.push(Reverse((next, id)));
        self.issued += 1;
        Ok(Some(Request {
            arrival_ns: release,
            op: t.op,
            offset_bytes,
            len_bytes: t.len_bytes,
            deadline_ns: t.deadline_ns,
            task: Some(id),
        }))
    }

    fn loop_mode(&self) -> LoopMode {
        LoopMode::Open
    }

    fn expected_requests(&self) -> Option<u64> {
        match (self.w.count, self.w.duration_ns) {
            (count, 0) => Some(count),
            (0, d) => Some(self.jobs_within(d)),
            (count, d) => Some(count.min(self.jobs_within(d))),
        }
    }

    fn duration_ns(&self) -> Option<u64> {
        (self.w.duration_ns > 0).then_some(self.w.duration_ns)
    }

    fn describe(&self) -> serde_json::Value {
        let tasks: Vec<serde_json::Value> = self
            .tasks
            .iter()
            .enumerate()
            .map(|(id, t)| {
                serde_json::json!({
                    "task": id,
                    "op": t.op.name(),
                    "bytes": t.len_bytes,
                    "period_ns": t.period_ns,
                    "offset_ns": t.offset_ns,
                    "deadline_ns": t.deadline_ns,
                    "pattern": crate::config::settings::render_value(&t.pattern),
                    "jobs_released": t.jobs,
                })
            })
            .collect();
        serde_json::json!({
            "kind": "periodic",
            "spec": self.w.to_spec(),
            "addressed_bytes": self.space_bytes,
            "page_bytes": self.page_bytes,
            "tasks": tasks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::parse_spec;

    const PAGE: u64 = 8192;

    fn source(spec: &str) -> PeriodicSource {
        let w = parse_spec(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        PeriodicSource::new(&w, 1 << 30, PAGE, 7).unwrap_or_else(|e| panic!("{spec}: {e}"))
    }

    fn all(spec: &str) -> Vec<Request> {
        let mut s = source(spec);
        std::iter::from_fn(|| s.next_request(0).unwrap()).collect()
    }

    #[test]
    fn table_iii_releases_jobs_at_offset_plus_multiples_of_the_period() {
        let reqs = all("periodic:tasks=4xw12p@60ms+4xr3p@15ms,duration=120ms");
        // Writers (tasks 0-3) at 0 and 60 ms, readers (4-7) at 0, 15, ..., 105 ms.
        assert_eq!(reqs.len(), 4 * 2 + 4 * 8);
        for r in &reqs {
            let task = r.task.expect("every job has its task");
            let (op, pages, period) = if task < 4 {
                (Op::Write, 12, 60_000_000)
            } else {
                (Op::Read, 3, 15_000_000)
            };
            assert_eq!((r.op, r.len_bytes), (op, pages * PAGE), "task {task}");
            assert_eq!(r.arrival_ns % period, 0, "task {task} at {}", r.arrival_ns);
            assert_eq!(r.deadline_ns, period, "the deadline defaults to the period");
            assert_eq!(r.offset_bytes % PAGE, 0, "page-aligned");
            assert!(r.offset_bytes + r.len_bytes <= 1 << 30);
        }
        let first: Vec<(u64, u32)> = reqs[..9]
            .iter()
            .map(|r| (r.arrival_ns, r.task.unwrap()))
            .collect();
        let at = |t, ids: std::ops::Range<u32>| ids.map(move |id| (t, id));
        let expect: Vec<(u64, u32)> = at(0, 0..8).chain(at(15_000_000, 4..5)).collect();
        assert_eq!(first, expect, "same release: task id order");
        let keys: Vec<(u64, u32)> = reqs
            .iter()
            .map(|r| (r.arrival_ns, r.task.unwrap()))
            .collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted, "releases in (time, task id) order");
    }

    #[test]
    fn offsets_deadlines_and_bytes_are_taken_as_given() {
        let reqs = all("periodic:tasks=w16k@10ms/offset=3ms/deadline=2ms+r1p@4ms,count=6");
        let got: Vec<(u64, u32, u64, u64)> = reqs
            .iter()
            .map(|r| (r.arrival_ns, r.task.unwrap(), r.len_bytes, r.deadline_ns))
            .collect();
        let ms = 1_000_000;
        assert_eq!(
            got,
            vec![
                (0, 1, PAGE, 4 * ms),
                (3 * ms, 0, 16384, 2 * ms),
                (4 * ms, 1, PAGE, 4 * ms),
                (8 * ms, 1, PAGE, 4 * ms),
                (12 * ms, 1, PAGE, 4 * ms),
                (13 * ms, 0, 16384, 2 * ms),
            ],
            "count bounds the jobs of all tasks together"
        );
    }

    #[test]
    fn duration_bounds_release_times_and_the_expected_count() {
        let mut s = source("periodic:tasks=w1p@10ms/offset=5ms+r1p@10ms,duration=30ms");
        assert_eq!(s.expected_requests(), Some(3 + 3));
        let n = std::iter::from_fn(|| s.next_request(0).unwrap()).count();
        assert_eq!(n, 6, "releases at 5, 15, 25 and 0, 10, 20 ms; not at 30 ms");
        assert_eq!(s.loop_mode(), LoopMode::Open);
    }

    #[test]
    fn sequential_tasks_start_apart_and_advance_by_their_size() {
        let reqs = all("periodic:tasks=2xw2p@1ms/seq,count=6");
        let offsets = |task: u32| -> Vec<u64> {
            reqs.iter()
                .filter(|r| r.task == Some(task))
                .map(|r| r.offset_bytes)
                .collect()
        };
        let half = (1u64 << 30) / 2;
        assert_eq!(offsets(0), vec![0, 2 * PAGE, 4 * PAGE]);
        assert_eq!(offsets(1), vec![half, half + 2 * PAGE, half + 4 * PAGE]);
    }

    #[test]
    fn the_same_seed_gives_the_same_offsets() {
        let spec = "periodic:tasks=3xr2p@1ms,count=30";
        assert_eq!(all(spec), all(spec));
        let offsets: std::collections::HashSet<u64> =
            all(spec).iter().map(|r| r.offset_bytes).collect();
        assert!(offsets.len() > 20, "uniform offsets vary: {offsets:?}");
    }

    #[test]
    fn a_request_larger_than_the_range_is_refused_naming_the_task() {
        let w = parse_spec("periodic:tasks=r1p@1ms+w200p@1ms,count=5").unwrap();
        let e = PeriodicSource::new(&w, 100 * PAGE, PAGE, 1)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("workload.tasks[1].pages") && e.contains("fit"),
            "{e}"
        );
    }
}
