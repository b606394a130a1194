//! A simulated uC/OS-II-style real-time kernel for FTL firmware running as tasks.
//!
//! One CPU runs the highest-priority ready task (priorities are unique; a lower number is a
//! higher priority, as in uC/OS-II; numbers are u64 so that a renumbering scheme such as
//! "oldest request first" needs no wrap-around, which uC/OS-II's 64 levels would). Tasks are state machines driven by a [`Program`]: each
//! call of [`Program::step`] runs one short stretch of the task's code and says what happens
//! next: use the CPU for a while ([`Step::Compute`]), pend on or post a counting semaphore,
//! sleep until woken ([`Kernel::wake`] from outside, [`Step::Resume`] from a task), or spin
//! polling the hardware ([`Step::Poll`]).
//!
//! Modelling choices (documented because the paper leaves them open):
//! - Preemption happens at step boundaries: a computing task finishes its step before a
//!   higher-priority task that became ready meanwhile runs. FTL steps are microseconds long.
//!   A polling task is preempted at once.
//! - `OSSemPost` readies the highest-priority waiter (uC/OS-II's rule); a task that posts to a
//!   higher-priority waiter is preempted at that point.
//! - A polling task (the paper's monitor) notices an interrupt-free event (a NAND operation
//!   finishing) at its next poll, `period_ns` after the previous one; the time it spins counts
//!   as polling, not as work, in the statistics.
//! - Every switch of the running task costs `context_switch_ns` of CPU time.
//!
//! **Lock discipline.** A semaphore created with [`Kernel::add_lock`] guards shared state (a
//! binary semaphore taken and given back by the same task). In debug builds and tests the
//! kernel records which task holds each lock and hands the stepping task the list ([`Held`]),
//! so task code can check that it holds the lock guarding what it is about to change; giving
//! back a lock the task does not hold panics there. Release builds record nothing (zero cost).
//!
//! The kernel is engine-agnostic: its owner (an FTL) calls [`Kernel::run`] at each simulated
//! time something happens and schedules a wake-up at the time it returns.

use serde::Serialize;

/// Index of a task (creation order).
pub type TaskId = usize;
/// Index of a semaphore (creation order).
pub type SemId = usize;

/// What a task does next, returned by [`Program::step`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Run on the CPU for this many ns, then step again.
    Compute(u64),
    /// `OSSemPend`: take a unit of the semaphore, or block until one is posted.
    Pend(SemId),
    /// `OSSemPost`: give a unit back (or hand it to the highest-priority waiter).
    Post(SemId),
    /// Block until [`Kernel::wake`] or another task's [`Step::Resume`].
    Sleep,
    /// Wake a sleeping task (`OSTaskResume`; no effect on a task that is not asleep). The
    /// caller goes on, unless the woken task has a higher priority.
    Resume(TaskId),
    /// Give the calling task a new priority (`OSTaskChangePrio`); panics if another task has
    /// it (priorities are unique).
    SetPriority(u64),
    /// Spin, checking something every `period_ns`, until [`Kernel::notify`] (the step after
    /// the poll that noticed it) or preemption by a higher-priority task.
    Poll { period_ns: u64 },
}

/// The tasks' code.
pub trait Program {
    /// Runs the next stretch of `task`'s code at time `now_ns`, holding the locks `held`.
    fn step(&mut self, task: TaskId, now_ns: u64, held: Held<'_>) -> Step;
}

/// The locks ([`Kernel::add_lock`]) the stepping task holds. Known in debug builds and tests
/// only (`cfg(debug_assertions)`): release builds pass an empty view and offer no query, so a
/// check of the lock discipline costs nothing there.
#[derive(Debug, Clone, Copy, Default)]
pub struct Held<'k> {
    #[cfg(debug_assertions)]
    locks: &'k [SemId],
    #[cfg(not(debug_assertions))]
    _locks: std::marker::PhantomData<&'k [SemId]>,
}

#[cfg(debug_assertions)]
impl Held<'_> {
    /// The locks held, in the order they were taken.
    pub fn locks(&self) -> &[SemId] {
        self.locks
    }
}

/// Who holds each lock (debug builds and tests).
#[cfg(debug_assertions)]
#[derive(Debug, Default)]
struct Holders {
    is_lock: Vec<bool>,
    /// Per task, the locks it holds.
    held: Vec<Vec<SemId>>,
}

#[cfg(debug_assertions)]
impl Holders {
    fn taken(&mut self, task: TaskId, sem: SemId) {
        if self.is_lock[sem] {
            self.held[task].push(sem);
        }
    }

    fn given_back(&mut self, task: TaskId, sem: SemId, names: &[SemStats]) {
        if !self.is_lock[sem] {
            return;
        }
        let held = &mut self.held[task];
        match held.iter().position(|&s| s == sem) {
            Some(i) => {
                held.remove(i);
            }
            None => panic!(
                "lock discipline: task {task} gave back lock `{}` it does not hold",
                names[sem].name
            ),
        }
    }
}

/// Where a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ready,
    Pending {
        sem: SemId,
        since: u64,
    },
    Sleeping {
        since: u64,
    },
    /// Spinning since `since`; `noticed` once [`Kernel::notify`] arrived.
    Polling {
        period: u64,
        since: u64,
        notified_at: Option<u64>,
    },
}

/// Per-task figures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TaskStats {
    pub name: String,
    pub priority: u64,
    /// CPU time running steps.
    pub cpu_ns: u64,
    /// CPU time spinning in polls.
    pub polling_ns: u64,
    /// Times it blocked on a semaphore, and the total time blocked.
    pub sem_waits: u64,
    pub sem_wait_ns: u64,
    /// Time asleep (waiting for a wake-up).
    pub sleep_ns: u64,
    /// Times it was switched in.
    pub switched_in: u64,
}

/// Per-semaphore figures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SemStats {
    pub name: String,
    pub pends: u64,
    /// Pends that had to wait, and the total wait.
    pub waits: u64,
    pub wait_ns: u64,
}

/// Kernel-wide figures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct KernelStats {
    pub context_switches: u64,
    pub context_switch_ns: u64,
    pub tasks: Vec<TaskStats>,
    pub semaphores: Vec<SemStats>,
}

impl KernelStats {
    /// CPU time doing work (steps and switches, not polling).
    pub fn busy_ns(&self) -> u64 {
        self.context_switch_ns + self.tasks.iter().map(|t| t.cpu_ns).sum::<u64>()
    }
}

struct Sem {
    count: u32,
    waiters: Vec<TaskId>,
}

/// The kernel: tasks, semaphores, the CPU.
pub struct Kernel {
    priority: Vec<u64>,
    state: Vec<State>,
    sems: Vec<Sem>,
    current: Option<TaskId>,
    /// The CPU is busy until then (a step or a switch in progress).
    busy_until: u64,
    context_switch_ns: u64,
    stats: KernelStats,
    #[cfg(debug_assertions)]
    holders: Holders,
}

impl Kernel {
    /// A kernel whose context switches cost `context_switch_ns`.
    pub fn new(context_switch_ns: u64) -> Kernel {
        Kernel {
            priority: Vec::new(),
            state: Vec::new(),
            sems: Vec::new(),
            current: None,
            busy_until: 0,
            context_switch_ns,
            stats: KernelStats::default(),
            #[cfg(debug_assertions)]
            holders: Holders::default(),
        }
    }

    /// Creates a ready task; panics on a duplicate priority (a programming error).
    pub fn add_task(&mut self, name: &str, priority: u64) -> TaskId {
        assert!(
            !self.priority.contains(&priority),
            "task priorities are unique"
        );
        self.priority.push(priority);
        self.state.push(State::Ready);
        #[cfg(debug_assertions)]
        self.holders.held.push(Vec::new());
        self.stats.tasks.push(TaskStats {
            name: name.to_string(),
            priority,
            ..TaskStats::default()
        });
        self.priority.len() - 1
    }

    /// Creates a counting semaphore holding `count` units.
    pub fn add_semaphore(&mut self, name: &str, count: u32) -> SemId {
        self.new_semaphore(name, count, false)
    }

    /// Creates a lock: a binary semaphore (one unit) that guards shared state, taken and given
    /// back by the same task, whose holder is tracked in debug builds (see [`Held`]).
    pub fn add_lock(&mut self, name: &str) -> SemId {
        self.new_semaphore(name, 1, true)
    }

    fn new_semaphore(&mut self, name: &str, count: u32, _lock: bool) -> SemId {
        #[cfg(debug_assertions)]
        self.holders.is_lock.push(_lock);
        self.sems.push(Sem {
            count,
            waiters: Vec::new(),
        });
        self.stats.semaphores.push(SemStats {
            name: name.to_string(),
            ..SemStats::default()
        });
        self.sems.len() - 1
    }

    pub fn stats(&self) -> &KernelStats {
        &self.stats
    }

    /// Clears the figures (not the state).
    pub fn reset_stats(&mut self, now_ns: u64) {
        for t in &mut self.stats.tasks {
            *t = TaskStats {
                name: std::mem::take(&mut t.name),
                priority: t.priority,
                ..TaskStats::default()
            };
        }
        for s in &mut self.stats.semaphores {
            *s = SemStats {
                name: std::mem::take(&mut s.name),
                ..SemStats::default()
            };
        }
        self.stats.context_switches = 0;
        self.stats.context_switch_ns = 0;
        // Waits in progress are counted from now.
        for st in &mut self.state {
            match st {
                State::Pending { since, .. } | State::Sleeping { since } => *since = now_ns,
                State::Polling { since, .. } => *since = (*since).max(now_ns),
                State::Ready => {}
            }
        }
    }

    /// Whether `task` is asleep.
    pub fn is_sleeping(&self, task: TaskId) -> bool {
        matches!(self.state[task], State::Sleeping { .. })
    }

    /// Units of a semaphore available now.
    pub fn sem_count(&self, sem: SemId) -> u32 {
        self.sems[sem].count
    }

    /// Wakes a sleeping task (no effect on a task that is not asleep).
    pub fn wake(&mut self, task: TaskId, now_ns: u64) {
        if let State::Sleeping { since } = self.state[task] {
            self.stats.tasks[task].sleep_ns += now_ns.saturating_sub(since);
            self.state[task] = State::Ready;
        }
    }

    /// Posts a semaphore from outside the tasks (an interrupt handler); never a lock.
    pub fn post(&mut self, sem: SemId, now_ns: u64) {
        #[cfg(debug_assertions)]
        assert!(
            !self.holders.is_lock[sem],
            "lock discipline: lock `{}` posted from outside the tasks",
            self.stats.semaphores[sem].name
        );
        self.release(sem, now_ns);
    }

    /// Tells a polling task that what it polls for happened (it sees it at its next poll).
    pub fn notify(&mut self, task: TaskId, now_ns: u64) {
        if let State::Polling { notified_at, .. } = &mut self.state[task] {
            notified_at.get_or_insert(now_ns);
        }
    }

    /// Runs every step due by `now_ns`; returns when the kernel needs to run again (a step, a
    /// switch or a noticing poll ends), or `None` when nothing is due until an outside event
    /// ([`Kernel::wake`], [`Kernel::post`], [`Kernel::notify`]).
    pub fn run(&mut self, now_ns: u64, program: &mut dyn Program) -> Option<u64> {
        loop {
            if self.busy_until > now_ns {
                return Some(self.busy_until);
            }
            let at = self.busy_until.max(now_ns);
            let Some(task) = self.highest_ready() else {
                self.current = None;
                self.busy_until = at;
                return None;
            };
            if self.current != Some(task) {
                self.switch_to(task, at);
                continue;
            }
            if let State::Polling { .. } = self.state[task] {
                match self.poll_ends(task, at) {
                    Some(end) if end > now_ns => return Some(end),
                    Some(end) => {
                        self.end_poll(task, end);
                        continue;
                    }
                    None => return None,
                }
            }
            let step = program.step(task, at, self.held(task));
            self.apply(task, step, at);
        }
    }

    /// The locks `task` holds (debug builds; an empty view in release builds).
    fn held(&self, _task: TaskId) -> Held<'_> {
        Held {
            #[cfg(debug_assertions)]
            locks: &self.holders.held[_task],
            #[cfg(not(debug_assertions))]
            _locks: std::marker::PhantomData,
        }
    }

    /// The highest-priority task that can use the CPU (ready or polling).
    fn highest_ready(&self) -> Option<TaskId> {
        (0..self.state.len())
            .filter(|&t| matches!(self.state[t], State::Ready | State::Polling { .. }))
            .min_by_key(|&t| self.priority[t])
    }

    fn switch_to(&mut self, task: TaskId, at: u64) {
        // The task switched out stops spinning here; it resumes its poll when it is back.
        if let Some(out) = self.current {
            if let State::Polling { since, .. } = &mut self.state[out] {
                self.stats.tasks[out].polling_ns += at.saturating_sub(*since);
                *since = u64::MAX;
            }
        }
        self.current = Some(task);
        self.stats.context_switches += 1;
        self.stats.context_switch_ns += self.context_switch_ns;
        self.stats.tasks[task].switched_in += 1;
        self.busy_until = at + self.context_switch_ns;
        if let State::Polling { since, .. } = &mut self.state[task] {
            *since = self.busy_until;
        }
    }

    /// When the running polling task's poll that sees its notification ends (`None`: not
    /// notified yet, it spins on).
    fn poll_ends(&self, task: TaskId, at: u64) -> Option<u64> {
        let State::Polling {
            period,
            since,
            notified_at,
        } = self.state[task]
        else {
            return Some(at);
        };
        let noticed = notified_at?.max(since);
        let polls = (noticed - since).div_ceil(period.max(1)).max(1);
        Some(since + polls * period.max(1)).map(|end| end.max(at))
    }

    fn end_poll(&mut self, task: TaskId, end: u64) {
        if let State::Polling { since, .. } = self.state[task] {
            self.stats.tasks[task].polling_ns += end.saturating_sub(since);
        }
        self.state[task] = State::Ready;
        self.busy_until = end;
    }

    fn apply(&mut self, task: TaskId, step: Step, at: u64) {
        match step {
            Step::Compute(ns) => {
                self.stats.tasks[task].cpu_ns += ns;
                self.busy_until = at + ns;
            }
            Step::Pend(sem) => {
                self.stats.semaphores[sem].pends += 1;
                let s = &mut self.sems[sem];
                if s.count > 0 {
                    s.count -= 1;
                    #[cfg(debug_assertions)]
                    self.holders.taken(task, sem);
                } else {
                    s.waiters.push(task);
                    self.state[task] = State::Pending { sem, since: at };
                    self.stats.semaphores[sem].waits += 1;
                    self.stats.tasks[task].sem_waits += 1;
                }
            }
            Step::Post(sem) => {
                #[cfg(debug_assertions)]
                self.holders.given_back(task, sem, &self.stats.semaphores);
                self.release(sem, at);
            }
            Step::Sleep => self.state[task] = State::Sleeping { since: at },
            Step::Resume(other) => self.wake(other, at),
            Step::SetPriority(p) => {
                assert!(
                    self.priority
                        .iter()
                        .enumerate()
                        .all(|(t, &q)| t == task || q != p),
                    "task priorities are unique"
                );
                self.priority[task] = p;
                self.stats.tasks[task].priority = p;
            }
            Step::Poll { period_ns } => {
                self.state[task] = State::Polling {
                    period: period_ns.max(1),
                    since: at,
                    notified_at: None,
                }
            }
        }
    }

    /// Hands a unit of `sem` to its highest-priority waiter, or adds it to the count.
    fn release(&mut self, sem: SemId, at: u64) {
        let priority = &self.priority;
        let s = &mut self.sems[sem];
        let Some(i) = (0..s.waiters.len()).min_by_key(|&i| priority[s.waiters[i]]) else {
            s.count += 1;
            #[cfg(debug_assertions)]
            assert!(
                !self.holders.is_lock[sem] || s.count == 1,
                "lock discipline: lock `{}` given back more often than taken",
                self.stats.semaphores[sem].name
            );
            return;
        };
        let task = s.waiters.swap_remove(i);
        #[cfg(debug_assertions)]
        self.holders.taken(task, sem);
        if let State::Pending { since, .. } = self.state[task] {
            let waited = at.saturating_sub(since);
            self.stats.tasks[task].sem_wait_ns += waited;
            self.stats.semaphores[sem].wait_ns += waited;
        }
        self.state[task] = State::Ready;
    }
}

#[cfg(test)]
mod tests;
