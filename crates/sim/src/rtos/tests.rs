use super::*;

/// A program from a script per task: each task's steps in order, then `Sleep` forever; records
/// (task, time) of every step.
struct Script {
    steps: Vec<Vec<Step>>,
    next: Vec<usize>,
    log: Vec<(TaskId, u64)>,
    /// The locks each step held (debug builds).
    held: Vec<Vec<SemId>>,
}

impl Script {
    fn new(steps: Vec<Vec<Step>>) -> Script {
        let n = steps.len();
        Script {
            steps,
            next: vec![0; n],
            log: Vec::new(),
            held: Vec::new(),
        }
    }
}

impl Program for Script {
    fn step(&mut self, task: TaskId, now_ns: u64, _held: Held<'_>) -> Step {
        self.log.push((task, now_ns));
        #[cfg(debug_assertions)]
        self.held.push(_held.locks().to_vec());
        let i = self.next[task];
        self.next[task] += 1;
        self.steps[task].get(i).copied().unwrap_or(Step::Sleep)
    }
}

/// Runs the kernel until nothing is due, starting at `now`; returns the final time.
fn run_all(k: &mut Kernel, p: &mut Script, mut now: u64) -> u64 {
    while let Some(t) = k.run(now, p) {
        now = t;
    }
    now
}

#[test]
fn the_highest_priority_ready_task_runs_first_and_switches_cost_time() {
    let mut k = Kernel::new(10);
    let low = k.add_task("low", 5);
    let high = k.add_task("high", 1);
    let mut p = Script::new(vec![vec![Step::Compute(100)], vec![Step::Compute(50)]]);
    let end = run_all(&mut k, &mut p, 0);
    // high: switch 0..10, step at 10 (50 ns) then its Sleep at 60; low: switch 60..70, step at 70.
    assert_eq!(p.log, vec![(high, 10), (high, 60), (low, 70), (low, 170)]);
    assert_eq!(end, 170);
    let s = k.stats();
    assert_eq!((s.context_switches, s.context_switch_ns), (2, 20));
    assert_eq!((s.tasks[low].cpu_ns, s.tasks[high].cpu_ns), (100, 50));
    assert_eq!(s.busy_ns(), 170);
}

#[test]
fn semaphores_count_block_and_hand_over_to_the_highest_priority_waiter() {
    let mut k = Kernel::new(0);
    let sem = k.add_semaphore("map", 1);
    let a = k.add_task("a", 1);
    let b = k.add_task("b", 2);
    let c = k.add_task("c", 3);
    let mut p = Script::new(vec![
        vec![Step::Pend(sem), Step::Compute(100), Step::Post(sem)],
        vec![
            Step::Compute(10),
            Step::Pend(sem),
            Step::Compute(5),
            Step::Post(sem),
        ],
        vec![Step::Pend(sem), Step::Compute(7), Step::Post(sem)],
    ]);
    // No contention: a (highest) runs all its steps, then b, then c.
    run_all(&mut k, &mut p, 0);
    assert_eq!(k.sem_count(sem), 1);
    let s = &k.stats().semaphores[sem];
    assert_eq!(s.pends, 3);
    assert_eq!(s.waits, 0);
    let cpu: Vec<u64> = [a, b, c]
        .iter()
        .map(|&t| k.stats().tasks[t].cpu_ns)
        .collect();
    assert_eq!(cpu, vec![100, 15, 7]);

    // Contention: c holds the unit, then b and a pend; c's post goes to a (higher), not b.
    let mut k = Kernel::new(0);
    let sem = k.add_semaphore("map", 1);
    let a = k.add_task("a", 1);
    let b = k.add_task("b", 2);
    let c = k.add_task("c", 3);
    for t in [a, b] {
        k.state[t] = State::Sleeping { since: 0 };
    }
    let mut p = Script::new(vec![
        vec![Step::Pend(sem), Step::Compute(1), Step::Post(sem)],
        vec![Step::Pend(sem), Step::Compute(1), Step::Post(sem)],
        vec![Step::Pend(sem), Step::Compute(100), Step::Post(sem)],
    ]);
    assert_eq!(k.run(0, &mut p), Some(100)); // c holds the semaphore, computing
    k.wake(b, 20);
    k.wake(a, 30);
    let end = run_all(&mut k, &mut p, 100);
    let order: Vec<TaskId> = p.log.iter().map(|&(t, _)| t).collect();
    // a and b, woken during c's step, run at its end (100) and block on the semaphore; c's
    // post then hands the unit to a (the higher priority), a's post to b.
    assert_eq!(order[..9], [c, c, a, b, c, a, a, a, b]);
    let st = k.stats();
    assert_eq!(st.tasks[a].sem_wait_ns, 0);
    assert_eq!(st.tasks[b].sem_wait_ns, 1);
    assert_eq!(st.semaphores[sem].waits, 2);
    assert_eq!(k.sem_count(sem), 1);
    assert!(end >= 102);
}

#[test]
fn a_step_is_not_preempted_but_the_next_one_is() {
    let mut k = Kernel::new(0);
    let low = k.add_task("low", 9);
    let high = k.add_task("high", 1);
    k.state[high] = State::Sleeping { since: 0 };
    let mut p = Script::new(vec![
        vec![Step::Compute(100), Step::Compute(100)],
        vec![Step::Compute(5)],
    ]);
    assert_eq!(k.run(0, &mut p), Some(100));
    k.wake(high, 40);
    assert_eq!(k.run(40, &mut p), Some(100)); // low's step runs to its end
    run_all(&mut k, &mut p, 100);
    assert_eq!(p.log[..3], [(low, 0), (high, 100), (high, 105)]);
    assert_eq!(k.stats().tasks[high].sleep_ns, 40);
}

#[test]
fn a_polling_task_notices_at_its_next_poll_and_yields_at_once() {
    let mut k = Kernel::new(0);
    let monitor = k.add_task("monitor", 63);
    let worker = k.add_task("worker", 1);
    k.state[worker] = State::Sleeping { since: 0 };
    let mut p = Script::new(vec![
        vec![
            Step::Poll { period_ns: 30 },
            Step::Compute(5),
            Step::Poll { period_ns: 30 },
        ],
        vec![Step::Compute(20)],
    ]);
    assert_eq!(k.run(0, &mut p), None); // spinning, nothing to notice yet
    k.notify(monitor, 70);
    assert_eq!(k.run(70, &mut p), Some(90)); // polls at 30, 60, 90: the one at 90 sees it
    assert_eq!(k.run(90, &mut p), Some(95));
    assert_eq!(p.log, vec![(monitor, 0), (monitor, 90)]);
    // Polling again from 95; the worker wakes at 100 and takes the CPU at once.
    assert_eq!(k.run(95, &mut p), None);
    k.wake(worker, 100);
    assert_eq!(k.run(100, &mut p), Some(120));
    assert_eq!(p.log.last(), Some(&(worker, 100)));
    let st = &k.stats().tasks[monitor];
    assert_eq!(st.polling_ns, 90 + 5);
    assert_eq!(st.cpu_ns, 5);
    // Notified while switched out: it notices one period after it is back.
    k.notify(monitor, 110);
    run_all(&mut k, &mut p, 120);
    assert_eq!(p.log.last().unwrap().0, monitor);
}

#[test]
fn reset_keeps_state_and_clears_figures() {
    let mut k = Kernel::new(3);
    let sem = k.add_semaphore("s", 0);
    let t = k.add_task("t", 1);
    let mut p = Script::new(vec![vec![Step::Pend(sem), Step::Compute(10)]]);
    assert_eq!(run_all(&mut k, &mut p, 0), 3); // switched in, then blocked
    k.reset_stats(50);
    k.post(sem, 80);
    run_all(&mut k, &mut p, 80);
    let s = k.stats();
    assert_eq!(s.tasks[t].sem_wait_ns, 30);
    assert_eq!(s.tasks[t].cpu_ns, 10);
    assert_eq!(s.context_switches, 1);
}

#[test]
fn a_resumed_higher_priority_task_preempts_the_resumer_at_its_next_step() {
    let mut k = Kernel::new(0);
    let worker = k.add_task("worker", 1);
    let monitor = k.add_task("monitor", 63);
    k.state[worker] = State::Sleeping { since: 0 };
    let mut p = Script::new(vec![
        vec![Step::Compute(10)],
        vec![Step::Compute(5), Step::Resume(worker), Step::Compute(7)],
    ]);
    let end = run_all(&mut k, &mut p, 0);
    // monitor computes 0..5, resumes the worker at 5, which runs at once (5..15); the
    // monitor's next step starts at 15.
    assert_eq!(
        p.log[..5],
        [
            (monitor, 0),
            (monitor, 5),
            (worker, 5),
            (worker, 15),
            (monitor, 15)
        ]
    );
    assert_eq!(end, 22);
    assert_eq!(k.stats().tasks[worker].sleep_ns, 5);
}

#[test]
fn a_task_can_change_its_priority_and_semaphores_follow_it() {
    let mut k = Kernel::new(0);
    let sem = k.add_semaphore("nand", 0);
    let a = k.add_task("a", 1);
    let b = k.add_task("b", 2);
    let mut p = Script::new(vec![
        vec![Step::SetPriority(10), Step::Pend(sem), Step::Compute(1)],
        vec![Step::Pend(sem), Step::Compute(1)],
    ]);
    run_all(&mut k, &mut p, 0);
    // Both wait; the post goes to b, now the higher priority.
    k.post(sem, 5);
    run_all(&mut k, &mut p, 5);
    assert!(p.log.contains(&(b, 5)));
    assert!(!p.log.iter().any(|&(t, at)| t == a && at >= 5));
    assert_eq!(k.stats().tasks[a].priority, 10);
}

/// Debug builds track who holds each lock: from the pend that takes it (or the post that hands
/// it to a waiter) to the task's own post; counting semaphores are not locks.
#[cfg(debug_assertions)]
#[test]
fn a_lock_is_held_from_its_pend_to_its_post_and_follows_a_hand_over() {
    let mut k = Kernel::new(0);
    let queue = k.add_semaphore("queue", 1);
    let map = k.add_lock("map");
    let a = k.add_task("a", 1);
    let c = k.add_task("c", 3);
    k.state[a] = State::Sleeping { since: 0 };
    let mut p = Script::new(vec![
        vec![
            Step::Pend(map),
            Step::Compute(1),
            Step::Post(map),
            Step::Compute(1),
        ],
        vec![
            Step::Pend(queue),
            Step::Pend(map),
            Step::Compute(100),
            Step::Post(map),
            Step::Compute(1),
        ],
    ]);
    assert_eq!(k.run(0, &mut p), Some(100)); // c holds the lock, computing
    k.wake(a, 30);
    run_all(&mut k, &mut p, 100);
    let steps: Vec<(TaskId, Vec<SemId>)> = p
        .log
        .iter()
        .map(|&(t, _)| t)
        .zip(p.held.iter().cloned())
        .collect();
    assert_eq!(
        steps[..8],
        [
            (c, vec![]),    // Pend(queue): a counting semaphore, not a lock
            (c, vec![]),    // Pend(map)
            (c, vec![map]), // Compute
            (a, vec![]),    // Pend(map): blocks
            (c, vec![map]), // Post(map): handed to a
            (a, vec![map]), // Compute, holding it
            (a, vec![map]), // Post(map)
            (a, vec![]),    // Compute
        ]
    );
}

#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "lock discipline: task 0 gave back lock `map` it does not hold")]
fn giving_back_a_lock_not_held_is_a_bug() {
    let mut k = Kernel::new(0);
    let map = k.add_lock("map");
    k.add_task("a", 1);
    let mut p = Script::new(vec![vec![Step::Post(map)]]);
    run_all(&mut k, &mut p, 0);
}
