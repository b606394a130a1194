//! RTGC's real-time garbage collectors: one per writing task, released at the rate of the
//! admission analysis (`realtime::part::gc_period_ns` with |F|·α pages per job, the rule
//! `realtime::rtgc::gc_task` uses), and the free-page tokens they hand their writer.
//!
//! A request with a task id and a deadline is a job of a periodic writer: its period is its
//! relative deadline (the periodic workload's deadline is the period's end), its pages w its
//! size. With p_G = gc_period_ns(w, p, |F|α): when p_G >= p, a collector job is released at
//! the arrival of every (p_G / p)-th writer job (the first included) with deadline
//! release + p_G; when p_G < p, p / p_G jobs are released at each writer job's arrival with
//! deadlines p_G apart (the periodic collector's deadlines; released early, which EDF allows).

use super::Rtgc;
use crate::ftl::FtlCtx;
use crate::host::SubRequest;
use crate::realtime::part::gc_period_ns;
use crate::SimError;

/// The collector of a writing task and its writer's tokens.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Collector {
    /// Whether the task wrote yet.
    seen: bool,
    /// Arrival order of the writer job seen last.
    last_seq: u64,
    /// Writer jobs seen.
    writer_jobs: u64,
    /// The writer's period (its jobs' relative deadline) and pages per job, as last seen.
    period_ns: u64,
    write_pages: u32,
    /// p_G of the analysis for that period and size.
    collector_period_ns: f64,
    /// Free-page tokens left (negative: pages written beyond the supply).
    tokens: i64,
}

/// A collector job in flight.
#[derive(Debug, Clone, Copy)]
pub(super) struct Job {
    task: u32,
    pub deadline_ns: u64,
    /// Dies whose reclamation for this job has not ended.
    dies_left: u32,
}

/// How a writer of `write_pages` pages per `period_ns` releases collector jobs: every
/// `every` writer jobs, `per_release` jobs `step_ns` apart in deadline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Release {
    pub collector_period_ns: f64,
    pub every: u64,
    pub per_release: u32,
    pub step_ns: u64,
}

/// The release rule for a writer (see the module docs).
pub fn release_rule(write_pages: u32, period_ns: u64, job_pages: u32) -> Release {
    let p_g = gc_period_ns(write_pages, period_ns as f64, f64::from(job_pages));
    let p = period_ns as f64;
    if p_g >= p {
        let every = (p_g / p).round() as u64;
        Release {
            collector_period_ns: p_g,
            every,
            per_release: 1,
            step_ns: every * period_ns,
        }
    } else {
        let per_release = (p / p_g).round() as u32;
        Release {
            collector_period_ns: p_g,
            every: 1,
            per_release,
            step_ns: period_ns / u64::from(per_release),
        }
    }
}

impl Rtgc {
    /// Accounts a host page write: for a real-time task's write, a new writer job may release
    /// collector jobs, and the page spends a token. Returns whether the write is real-time.
    pub(super) fn writer_page(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        sub: &SubRequest,
    ) -> Result<bool, SimError> {
        let Some(task) = sub.task.filter(|_| sub.deadline_ns != u64::MAX) else {
            return Ok(false);
        };
        let t = task as usize;
        if self.collectors.len() <= t {
            self.collectors.resize(t + 1, Collector::default());
        }
        let c = self.collectors[t];
        if !c.seen || c.last_seq != sub.arrival_seq {
            self.writer_job(ctx, task, sub)?;
        }
        let c = &mut self.collectors[t];
        if c.tokens <= 0 {
            self.stats.writes_without_token += 1;
        }
        c.tokens -= 1;
        self.stats.tokens_spent += 1;
        Ok(true)
    }

    /// The first page of a writer job: learns the task's period and size, gives a new writer
    /// its initial tokens (one release's supply plus one job's pages) and releases the
    /// collector jobs due.
    fn writer_job(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        task: u32,
        sub: &SubRequest,
    ) -> Result<(), SimError> {
        self.stats.writer_jobs += 1;
        let period = sub.deadline_ns.saturating_sub(sub.arrival_ns).max(1);
        let pages = self.pages.pages_of(sub.request_sectors);
        let pages = u32::try_from(pages).unwrap_or(u32::MAX);
        let rule = release_rule(pages, period, self.sizing.job_pages);
        let c = &mut self.collectors[task as usize];
        if !c.seen {
            let grant =
                i64::from(rule.per_release) * i64::from(self.sizing.job_pages) + i64::from(pages);
            c.tokens += grant;
            self.stats.tokens_granted += grant as u64;
        }
        c.seen = true;
        c.last_seq = sub.arrival_seq;
        c.period_ns = period;
        c.write_pages = pages;
        c.collector_period_ns = rule.collector_period_ns;
        let due = c.writer_jobs % rule.every == 0;
        c.writer_jobs += 1;
        if due {
            for j in 0..u64::from(rule.per_release) {
                let deadline = sub.arrival_ns.saturating_add((j + 1) * rule.step_ns);
                self.release_job(ctx, task, deadline)?;
            }
        }
        Ok(())
    }

    /// Releases a collector job: one victim reclaimed on every die that is down to
    /// `collector_free_blocks` free blocks, its commands carrying `deadline_ns`.
    fn release_job(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        task: u32,
        deadline_ns: u64,
    ) -> Result<(), SimError> {
        self.stats.collector_jobs_released += 1;
        let job = Job {
            task,
            deadline_ns,
            dies_left: 0,
        };
        let slot = match self.free_jobs.pop() {
            Some(s) => {
                self.jobs[s as usize] = job;
                s
            }
            None => {
                self.jobs.push(job);
                self.jobs.len() as u32 - 1
            }
        };
        let dies: u32 = (0..self.layout.dies())
            .filter(|&d| self.blocks.free_in_die(d, false) <= self.cfg.collector_free_blocks)
            .count() as u32;
        if dies == 0 {
            self.stats.collector_jobs_idle += 1;
            self.finish_job(ctx, slot);
            return Ok(());
        }
        // Counted before any reclamation starts: one may end at once (no room).
        self.jobs[slot as usize].dies_left = dies;
        for die in 0..self.layout.dies() {
            if self.blocks.free_in_die(die, false) <= self.cfg.collector_free_blocks {
                self.queue_reclaim(ctx, die, slot)?;
            }
        }
        Ok(())
    }

    pub(super) fn record_reclaimed(&mut self, freed: u32) {
        let s = &mut self.stats;
        s.collector_victims += 1;
        s.collector_pages_reclaimed += u64::from(freed);
        s.min_reclaimed_pages_per_victim = Some(
            s.min_reclaimed_pages_per_victim
                .map_or(freed, |m| m.min(freed)),
        );
        if freed < self.sizing.alpha_pages {
            s.victims_below_alpha += 1;
        }
    }

    /// Job `slot`'s reclamation on one die ended: the job is done after its last.
    pub(super) fn job_die_done(&mut self, ctx: &mut FtlCtx<'_>, slot: u32) -> Result<(), SimError> {
        let job = &mut self.jobs[slot as usize];
        if job.dies_left == 0 {
            return Err(self.bug(format!("collector job {slot}: a die too many finished")));
        }
        job.dies_left -= 1;
        if job.dies_left == 0 {
            self.finish_job(ctx, slot);
        }
        Ok(())
    }

    /// Job `slot` is done: late or not, its writer gets the |F|·α tokens it guarantees.
    fn finish_job(&mut self, ctx: &FtlCtx<'_>, slot: u32) {
        let job = self.jobs[slot as usize];
        self.stats.collector_jobs_completed += 1;
        if ctx.now() > job.deadline_ns {
            self.stats.collector_jobs_late += 1;
        }
        let grant = self.sizing.job_pages;
        self.collectors[job.task as usize].tokens += i64::from(grant);
        self.stats.tokens_granted += u64::from(grant);
        self.free_jobs.push(slot);
    }

    /// Each writing task's collector, for the report.
    pub(super) fn collectors_report(&self) -> serde_json::Value {
        let list: Vec<_> = self
            .collectors
            .iter()
            .enumerate()
            .filter(|(_, c)| c.seen)
            .map(|(task, c)| {
                serde_json::json!({
                    "task": task,
                    "write_period_ns": c.period_ns,
                    "write_pages": c.write_pages,
                    "collector_period_ns": c.collector_period_ns,
                    "writer_jobs": c.writer_jobs,
                    "tokens": c.tokens,
                })
            })
            .collect();
        serde_json::Value::Array(list)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule follows gc_period_ns: a job frees 8 pages; 3-page writers release one every
    /// ⌊8/3⌋ = 2 jobs, 8-page writers one per job, 9-page writers two per job 50 apart.
    #[test]
    fn release_rule_matches_the_analysis_period() {
        let r = release_rule(3, 100, 8);
        assert_eq!((r.every, r.per_release, r.step_ns), (2, 1, 200));
        assert_eq!(r.collector_period_ns, 200.0);
        let r = release_rule(8, 100, 8);
        assert_eq!((r.every, r.per_release, r.step_ns), (1, 1, 100));
        let r = release_rule(9, 100, 8);
        assert_eq!((r.every, r.per_release, r.step_ns), (1, 2, 50));
        let r = release_rule(17, 90, 8);
        assert_eq!((r.every, r.per_release, r.step_ns), (1, 3, 30));
    }
}
