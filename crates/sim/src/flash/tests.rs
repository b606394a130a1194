//! Scheduler tests: phase timing, bus arbitration, cache operations, queue policies, ordering
//! guarantees, and the way/channel parallelism of the Cosmos board (part-ftl.txt, Table I).

use super::*;
use crate::config::{preset, Geometry};

/// Runs commands released at time 0; returns each command's completion time.
fn run(timing: Timing, geometry: &Geometry, ops: &[(FlashOp, Vec<usize>)]) -> Vec<u64> {
    let mut s = FlashScheduler::new(Layout::new(geometry), timing, false);
    let mut q = EventQueue::new();
    finish(&mut s, &mut q, 0, ops)
}

/// Submits `ops` (each with the indices of earlier ops it depends on), releases them at `now`
/// and runs until idle; returns their completion times.
fn finish(
    s: &mut FlashScheduler,
    q: &mut EventQueue,
    now: u64,
    ops: &[(FlashOp, Vec<usize>)],
) -> Vec<u64> {
    let mut ids = Vec::new();
    for (i, (op, deps)) in ops.iter().enumerate() {
        let after: Vec<CmdId> = deps.iter().map(|&d| ids[d]).collect();
        ids.push(s.submit(*op, &after, i as u64 + 1, NIL));
    }
    for id in &ids {
        s.release(*id, now, q);
    }
    let mut done = vec![0; ops.len()];
    let mut out = Vec::new();
    while let Some((t, ev)) = q.pop() {
        s.on_event(ev, t, q);
        s.drain_completions(&mut out);
        for c in out.drain(..) {
            done[(c.token - 1) as usize] = t;
        }
    }
    assert_eq!(s.in_flight(), 0, "every command completes");
    done
}

fn small() -> Geometry {
    Geometry {
        channels: 2,
        chips_per_channel: 2,
        dies_per_chip: 1,
        planes_per_die: 2,
        blocks_per_plane: 8,
        pages_per_block: 8,
        page_bytes: 4096,
        oob_bytes: 64,
    }
}

fn timing() -> Timing {
    Timing {
        read_latency_ns: 50_000,
        program_latency_ns: 500_000,
        erase_latency_ns: 3_000_000,
        read_oob_latency_ns: 10_000,
        program_oob_latency_ns: 200_000,
        bus_mb_per_s: 409.6, // 4096 B in 10 us
        page_buffer_bytes: 0,
        cache_ops: false,
        die_queue_policy: QueuePolicy::Fifo,
    }
}

fn op(kind: OpKind, die: u32, block: u32, bytes: u32) -> FlashOp {
    FlashOp::single(kind, die, block, bytes, Cause::Host)
}

/// First block of `die` in `small()` (2 planes x 8 blocks per die).
fn blk(die: u32) -> u32 {
    die * 16
}

#[test]
fn phases_add_up_for_each_kind() {
    let g = small();
    let t = timing();
    let done = run(
        t,
        &g,
        &[
            (op(OpKind::Read, 0, blk(0), 4096), vec![]),
            (op(OpKind::Program, 1, blk(1), 4096), vec![]),
            (op(OpKind::Erase, 2, blk(2), 0), vec![]),
            (op(OpKind::ReadOob, 3, blk(3), 64), vec![]),
        ],
    );
    assert_eq!(done[0], 50_000 + 10_000);
    assert_eq!(done[1], 10_000 + 500_000);
    assert_eq!(done[2], 3_000_000);
    // Die 3 shares channel 1 with die 2 (erase, no bus): 10 us cell + 64 B at 409.6 MB/s.
    assert_eq!(done[3], 10_000 + 156);
}

#[test]
fn bus_is_shared_round_robin_within_a_channel_only() {
    let g = small();
    // Dies 0 and 1 share channel 0; die 2 is on channel 1.
    let done = run(
        timing(),
        &g,
        &[
            (op(OpKind::Read, 0, blk(0), 4096), vec![]),
            (op(OpKind::Read, 1, blk(1), 4096), vec![]),
            (op(OpKind::Read, 2, blk(2), 4096), vec![]),
        ],
    );
    assert_eq!(done[0], 60_000);
    assert_eq!(done[1], 70_000, "waits for the bus");
    assert_eq!(done[2], 60_000, "own channel");
}

#[test]
fn page_buffer_chunks_interleave_transfers() {
    let g = small();
    let t = Timing {
        page_buffer_bytes: 1024,
        ..timing()
    };
    let done = run(
        t,
        &g,
        &[
            (op(OpKind::Read, 0, blk(0), 4096), vec![]),
            (op(OpKind::Read, 1, blk(1), 4096), vec![]),
        ],
    );
    // Eight 2.5 us chunks alternate: die 0 ends after chunk 7, die 1 after chunk 8.
    assert_eq!(done[0], 50_000 + 7 * 2_500);
    assert_eq!(done[1], 50_000 + 8 * 2_500);
}

#[test]
fn same_die_commands_serialize_without_cache_ops() {
    let g = small();
    let done = run(
        timing(),
        &g,
        &[
            (op(OpKind::Read, 0, blk(0), 4096), vec![]),
            (op(OpKind::Read, 0, blk(0) + 1, 4096), vec![]),
        ],
    );
    assert_eq!(done, vec![60_000, 120_000]);
}

#[test]
fn cache_read_overlaps_cell_time_with_transfer() {
    let g = small();
    let t = Timing {
        cache_ops: true,
        read_latency_ns: 10_000,
        ..timing()
    };
    let done = run(
        t,
        &g,
        &[
            (op(OpKind::Read, 0, blk(0), 4096), vec![]),
            (op(OpKind::Read, 0, blk(0) + 1, 4096), vec![]),
            (op(OpKind::Read, 0, blk(0) + 2, 4096), vec![]),
        ],
    );
    // tR 10 us then three 10 us transfers back to back, the next tR hidden behind each.
    assert_eq!(done, vec![20_000, 30_000, 40_000]);
}

#[test]
fn cache_program_overlaps_data_in_with_program() {
    let g = small();
    let t = Timing {
        cache_ops: true,
        ..timing()
    };
    let done = run(
        t,
        &g,
        &[
            (op(OpKind::Program, 0, blk(0), 4096), vec![]),
            (op(OpKind::Program, 0, blk(0), 4096), vec![]),
        ],
    );
    assert_eq!(done, vec![510_000, 1_010_000]);
}

#[test]
fn dependencies_delay_start_until_completion() {
    let g = small();
    let done = run(
        timing(),
        &g,
        &[
            (op(OpKind::Read, 0, blk(0), 4096), vec![]),
            (op(OpKind::Program, 2, blk(2), 4096), vec![0]),
        ],
    );
    assert_eq!(done[1], 60_000 + 10_000 + 500_000);
}

#[test]
fn read_first_overtakes_programs_but_not_on_the_same_block() {
    let g = small();
    let t = Timing {
        die_queue_policy: QueuePolicy::ReadFirst,
        ..timing()
    };
    // Die 0 busy with an erase; queued behind it: a program, then a read of another block,
    // then a read of the programmed block.
    let done = run(
        t,
        &g,
        &[
            (op(OpKind::Erase, 0, blk(0) + 5, 0), vec![]),
            (op(OpKind::Program, 0, blk(0), 4096), vec![]),
            (op(OpKind::Read, 0, blk(0) + 1, 4096), vec![]),
            (op(OpKind::Read, 0, blk(0), 4096), vec![]),
        ],
    );
    assert!(done[2] < done[1], "read of another block goes first");
    assert!(
        done[3] > done[1],
        "read of the programmed block stays behind the program"
    );
}

/// A read-first scheduler after pages `0..pages` of `blk(0)` were programmed.
fn programmed_scheduler(pages: u32) -> (FlashScheduler, EventQueue) {
    let t = Timing {
        die_queue_policy: QueuePolicy::ReadFirst,
        ..timing()
    };
    let mut s = FlashScheduler::new(Layout::new(&small()), t, false);
    let mut q = EventQueue::new();
    let programs: Vec<(FlashOp, Vec<usize>)> = (0..pages)
        .map(|page| {
            (
                FlashOp {
                    page,
                    ..op(OpKind::Program, 0, blk(0), 4096)
                },
                vec![],
            )
        })
        .collect();
    finish(&mut s, &mut q, 0, &programs);
    (s, q)
}

/// `ops` without dependencies.
fn independent(ops: &[FlashOp]) -> Vec<(FlashOp, Vec<usize>)> {
    ops.iter().map(|o| (*o, vec![])).collect()
}

#[test]
fn reads_of_programmed_pages_overtake_a_queued_program_of_their_block() {
    let (mut s, mut q) = programmed_scheduler(5);
    let now = 10_000_000;
    let mut program = op(OpKind::Program, 0, blk(0), 4096);
    program.page = 5;
    let mut old_page = op(OpKind::Read, 0, blk(0), 4096);
    old_page.page = 2;
    let mut new_page = op(OpKind::Read, 0, blk(0), 4096);
    new_page.page = 5;
    // An erase of another block keeps the die busy while the others queue.
    let ops = independent(&[
        op(OpKind::Erase, 0, blk(0) + 3, 0),
        program,
        old_page,
        new_page,
    ]);
    let done = finish(&mut s, &mut q, now, &ops);
    assert!(
        done[2] < done[1],
        "read of page 2 goes before the program of page 5"
    );
    assert!(done[3] > done[1], "read of page 5 waits for its program");
}

#[test]
fn reads_never_pass_a_pending_erase_of_their_block() {
    let (mut s, mut q) = programmed_scheduler(5);
    let now = 10_000_000;
    let mut read = op(OpKind::Read, 0, blk(0), 4096);
    read.page = 0;
    let mut program = op(OpKind::Program, 0, blk(0), 4096);
    program.page = 0;
    let ops = independent(&[
        op(OpKind::Erase, 0, blk(0) + 3, 0),
        op(OpKind::Erase, 0, blk(0), 0),
        program,
        read,
    ]);
    let done = finish(&mut s, &mut q, now, &ops);
    assert!(
        done[1] < done[2] && done[2] < done[3],
        "erase, program, read in order: {done:?}"
    );
}

#[test]
fn edf_serves_earliest_deadline_first() {
    let g = small();
    let t = Timing {
        die_queue_policy: QueuePolicy::Edf,
        ..timing()
    };
    let mut late = op(OpKind::Read, 0, blk(0) + 1, 4096);
    late.deadline_ns = 9_000_000;
    let mut early = op(OpKind::Read, 0, blk(0) + 2, 4096);
    early.deadline_ns = 1_000_000;
    let done = run(
        t,
        &g,
        &[
            (op(OpKind::Erase, 0, blk(0) + 3, 0), vec![]),
            (late, vec![]),
            (early, vec![]),
        ],
    );
    assert!(done[2] < done[1]);
}

#[test]
fn multi_plane_program_runs_one_cell_operation() {
    let g = small();
    let mut mp = op(OpKind::Program, 0, blk(0), 8192);
    mp.blocks[1] = blk(0) + 8; // plane 1
    mp.planes = 2;
    let done = run(timing(), &g, &[(mp, vec![])]);
    assert_eq!(done[0], 20_000 + 500_000);
}

/// Completion time of the last of four operations issued together on the Cosmos preset.
fn cosmos_four(kind: OpKind, placement: &str) -> u64 {
    let p = preset("cosmos").unwrap();
    let g = Geometry {
        blocks_per_plane: 8,
        ..p.device.geometry
    };
    let layout = Layout::new(&g);
    let bytes = if kind == OpKind::Erase { 0 } else { 8192 };
    let ops: Vec<(FlashOp, Vec<usize>)> = (0..4)
        .map(|i| {
            let die = match placement {
                "die" => 0,
                "way" => layout.die_at(0, i, 0),
                _ => layout.die_at(i, 0, 0),
            };
            // Different blocks of the die, so erases are legal and reads independent.
            let block = layout.block(die, 0, if placement == "die" { i } else { 0 });
            (op(kind, die, block, bytes), vec![])
        })
        .collect();
    *run(p.device.timing, &g, &ops).iter().max().unwrap()
}

#[test]
fn cosmos_reproduces_the_parallelism_of_table_i() {
    let w = |p| cosmos_four(OpKind::Program, p);
    let (die, way, channel) = (w("die"), w("way"), w("channel"));
    assert!(
        die > way && way > channel,
        "writes {die} > {way} > {channel}"
    );
    let e = |p| cosmos_four(OpKind::Erase, p);
    assert!(e("die") > 3 * e("way") && e("way") == e("channel"));
    let r = |p| cosmos_four(OpKind::Read, p);
    let (die, way, channel) = (r("die") as f64, r("way") as f64, r("channel") as f64);
    let gain = way / die;
    assert!(
        (0.9..=1.1).contains(&gain),
        "way interleaving gains nothing for reads: {gain:.3}"
    );
    let quarter = channel / die;
    assert!(
        (0.2..=0.4).contains(&quarter),
        "channel striping takes about a quarter: {quarter:.3}"
    );
    // Table I: one read on its own channel averages 0.375 ms.
    assert_eq!(channel as u64, 375_000);
}

#[test]
fn functional_mode_completes_at_release() {
    let g = small();
    let layout = Layout::new(&g);
    let mut s = FlashScheduler::new(layout, timing(), true);
    let mut q = EventQueue::new();
    let id = s.submit(op(OpKind::Program, 0, 0, 4096), &[], 7, NIL);
    s.release(id, 0, &mut q);
    let mut out = Vec::new();
    s.drain_completions(&mut out);
    assert_eq!(out, vec![Completion { token: 7, sub: NIL }]);
    assert!(q.is_empty());
    assert_eq!(s.counters().get(OpKind::Program, Cause::Host), 1);
}

#[test]
fn any_order_chips_keep_a_read_behind_the_program_of_a_lower_page() {
    // Page 7 was programmed first (legal on an any-order chip); page 2 is programmed later.
    // Its read must not overtake its program, though page 2 is below the highest started page.
    let t = Timing {
        die_queue_policy: QueuePolicy::ReadFirst,
        ..timing()
    };
    let mut s = FlashScheduler::new(Layout::new(&small()), t, false);
    s.set_program_order(ProgramOrder::Any);
    let mut q = EventQueue::new();
    let page = |kind, page| FlashOp {
        page,
        ..op(kind, 0, blk(0), 4096)
    };
    finish(&mut s, &mut q, 0, &independent(&[page(OpKind::Program, 7)]));
    let ops = independent(&[
        op(OpKind::Erase, 0, blk(0) + 3, 0),
        page(OpKind::Program, 2),
        page(OpKind::Read, 2),
    ]);
    let done = finish(&mut s, &mut q, 10_000_000, &ops);
    assert!(
        done[2] > done[1],
        "read of page 2 ({}) waits for the program of page 2 ({})",
        done[2],
        done[1]
    );
}

/// Submits `ops` in order (token: index + 1), releases them at `now` in `release` order (as
/// handlers that commit when their own CPU time ends may), runs until idle and returns the
/// tokens in completion order.
fn completion_order(
    s: &mut FlashScheduler,
    q: &mut EventQueue,
    now: u64,
    ops: &[FlashOp],
    release: &[usize],
) -> Vec<u64> {
    let ids: Vec<CmdId> = ops
        .iter()
        .enumerate()
        .map(|(i, op)| s.submit(*op, &[], i as u64 + 1, NIL))
        .collect();
    for &i in release {
        s.release(ids[i], now, q);
    }
    let mut order = Vec::new();
    let mut out = Vec::new();
    while let Some((t, ev)) = q.pop() {
        s.on_event(ev, t, q);
        s.drain_completions(&mut out);
        order.extend(out.drain(..).map(|c| c.token));
    }
    order
}

fn page_op(kind: OpKind, page: u32) -> FlashOp {
    FlashOp {
        page,
        ..op(
            kind,
            0,
            blk(0),
            if kind == OpKind::Erase { 0 } else { 4096 },
        )
    }
}

#[test]
fn commands_released_out_of_issue_order_start_in_issue_order_on_a_block() {
    // Programs of pages 0, 1, 2 of one block released 2, 1, 0 run 0, 1, 2 (FIFO die queue).
    let mut s = FlashScheduler::new(Layout::new(&small()), timing(), false);
    let mut q = EventQueue::new();
    let programs = [0, 1, 2].map(|p| page_op(OpKind::Program, p));
    assert_eq!(
        completion_order(&mut s, &mut q, 0, &programs, &[2, 1, 0]),
        [1, 2, 3]
    );
    // Reads of a programmed block, then its erase, released erase first: the erase runs last
    // (read-first die queue).
    let (mut s, mut q) = programmed_scheduler(2);
    let ops = [
        page_op(OpKind::Read, 0),
        page_op(OpKind::Read, 1),
        page_op(OpKind::Erase, 0),
    ];
    let order = completion_order(&mut s, &mut q, 10_000_000, &ops, &[2, 1, 0]);
    assert_eq!(order.len(), 3);
    assert_eq!(order[2], 3, "the erase runs after both reads: {order:?}");
}
