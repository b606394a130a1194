//! A read of a page programmed during preconditioning (a functional-only phase) waits for no
//! later program of its block. The timed flash scheduler is built when preconditioning ends;
//! it must know which pages of each block are programmed already, or it orders a read of
//! any of them after the next program of the block (the rule for reads of unprogrammed
//! pages), and with EDF die queues that program (no deadline) yields to every host command,
//! so the read waited for a whole burst of GC copies (about 100 ms on `cosmos`).
//!
//! Closed form on the tiny device (`tiny_device`: one die, 4 KiB pages, tR 50 us, bus
//! 4 KiB in 5.12 us, link 4 KiB in 4.096 us, 500 ns per command), EDF die queues, 30%
//! preconditioned by a sequential fill, so the host's open block has some pages programmed:
//!
//! - t = 0: a read of a unit in a closed block takes the idle die from 500 ns to 55_620 ns;
//! - t = 0: a write's data is in at 5_096 ns; its program (no deadline) goes to the next page
//!   of the open block and queues;
//! - t = 10 us: a read (deadline 1 ms) of a page of the open block programmed in
//!   preconditioning reaches the FTL at 10_500 ns and queues. EDF starts it first when the
//!   die frees: done at 55_620 + 55_120 = 110_740 ns, complete after its data crossed the
//!   link at 114_836 ns: 104_836 ns after its arrival. Ordered after the program, it would
//!   wait for its data-in and tPROG (600 us) too.

mod tiny_device;

use std::cell::RefCell;
use std::rc::Rc;

use flashlab_sim::engine::CompletedRequest;
use flashlab_sim::host::{Op, Request};
use flashlab_sim::workload::{LoopMode, RequestSource};
use flashlab_sim::{SimError, Simulation};

const READ_ARRIVAL_NS: u64 = 10_000;
const READ_LATENCY_NS: u64 = 55_620 + 55_120 + 4_096 - READ_ARRIVAL_NS;

/// Requests at the times they give (open loop).
struct Given(std::vec::IntoIter<Request>);

impl RequestSource for Given {
    fn next_request(&mut self, _now_ns: u64) -> Result<Option<Request>, SimError> {
        Ok(self.0.next())
    }
    fn loop_mode(&self) -> LoopMode {
        LoopMode::Open
    }
    fn expected_requests(&self) -> Option<u64> {
        None
    }
    fn describe(&self) -> serde_json::Value {
        serde_json::json!({ "kind": "test" })
    }
}

fn request(op: Op, unit: u64, arrival_ns: u64, deadline_ns: u64) -> Request {
    Request {
        arrival_ns,
        op,
        offset_bytes: unit * 4096,
        len_bytes: 4096,
        deadline_ns,
        task: None,
    }
}

#[test]
fn a_read_of_a_preconditioned_page_does_not_wait_for_a_later_program_of_its_block() {
    let cfg = tiny_device::tiny_device(
        1000,
        &["timing.die_queue_policy=\"edf\"", "run.precondition=0.3"],
    );
    let mut sim = Simulation::new(&cfg).unwrap();
    sim.precondition().unwrap();
    // The host's open block: pages programmed in preconditioning, more to come.
    let nand = sim.nand();
    let layout = *nand.layout();
    let lpn_on_page_0 = |block| {
        let unit = layout.ppn(block, 0);
        u64::from(nand.oob(unit).lpn().expect("a programmed host page"))
    };
    let open = (0..layout.blocks())
        .find(|&b| (1..layout.pages_per_block).contains(&nand.block(b).write_ptr))
        .expect("the fill ends inside a block");
    let closed = (0..layout.blocks())
        .find(|&b| nand.block(b).write_ptr == layout.pages_per_block)
        .expect("a full block");
    let (in_open_block, in_closed_block) = (lpn_on_page_0(open), lpn_on_page_0(closed));
    let unwritten = sim.logical_bytes() / 4096 - 1;
    let open_block_pages = nand.block(open).write_ptr;

    let done: Rc<RefCell<Vec<CompletedRequest>>> = Rc::default();
    let sink = Rc::clone(&done);
    sim.set_observer(Box::new(move |c| sink.borrow_mut().push(*c)));
    let requests = vec![
        request(Op::Read, in_closed_block, 0, 0),
        request(Op::Write, unwritten, 0, 0),
        request(Op::Read, in_open_block, READ_ARRIVAL_NS, 1_000_000),
    ];
    sim.run(Box::new(Given(requests.into_iter())), &mut |_| {})
        .unwrap();
    sim.check_invariants().unwrap();

    assert_eq!(
        sim.nand().block(open).write_ptr,
        open_block_pages + 1,
        "the write was programmed into the open block"
    );
    let done = done.borrow();
    assert_eq!(done.len(), 3);
    let read = done
        .iter()
        .find(|c| c.op == Op::Read && c.offset_bytes == in_open_block * 4096)
        .expect("the read of the open block completed");
    assert_eq!(
        read.completion_ns - read.arrival_ns,
        READ_LATENCY_NS,
        "a read's time after the die frees, not after the program queued before it"
    );
}
