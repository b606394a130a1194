//! Serving requests from outside, one at a time, as a block device does (`flashlab serve`):
//! the caller submits a request when it arrives and gets a ticket, advances simulated time
//! (as fast as it runs, or paced to a wall clock), and collects the completions and what each
//! read delivered (the data version of every sector, from which the caller takes the bytes).
//! The flash's changes are journaled ([`crate::nand::FlashJournal`]) for a persistent mirror.

use super::{Simulation, SubId};
use crate::host::{Op, Request};
use crate::SimError;

/// A finished request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Served {
    /// What [`Simulation::submit_served`] returned for it.
    pub ticket: u64,
    pub op: Op,
    pub arrival_ns: u64,
    pub completion_ns: u64,
}

/// Sectors `first_sector ..+ sectors` of the read with `ticket` hold data `version` (0: never
/// written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivered {
    pub ticket: u64,
    pub first_sector: u64,
    pub sectors: u64,
    pub version: u64,
}

/// What a submitted request was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    pub ticket: u64,
    /// The data version of a write's sectors (0 for other requests).
    pub version: u64,
}

/// Completions and deliveries not yet taken, and deliveries of the running FTL call.
#[derive(Debug, Default)]
pub(super) struct ServedLog {
    pub(super) completions: Vec<Served>,
    pub(super) deliveries: Vec<Delivered>,
    /// Deliveries by sub-request during one FTL call, resolved to tickets after it.
    pub(super) by_sub: Vec<(SubId, u64, u64, u64)>,
}

impl Simulation {
    /// Turns the simulation into a served device: requests come from
    /// [`Simulation::submit_served`], completions and read deliveries are logged, the flash
    /// journals its changes, and the FTL gets idle calls when no request is outstanding.
    /// Needs payloads (`run.payloads`), or reads could not say what data they return.
    pub fn start_serving(&mut self) -> Result<(), SimError> {
        if !self.nand.has_payloads() {
            return Err(SimError::Input {
                location: "serve".into(),
                message: "a served device needs run.payloads = true (data versions per sector)"
                    .into(),
            });
        }
        self.served = Some(Box::default());
        self.nand.start_journal();
        self.source_done = false;
        self.reset_measurements();
        Ok(())
    }

    /// Admits `request` arriving now (its `arrival_ns` is ignored).
    pub fn submit_served(&mut self, request: Request) -> Result<Ticket, SimError> {
        let request = Request {
            arrival_ns: self.now,
            ..request
        };
        self.admit(request, true)?;
        let version = if request.op == Op::Write {
            self.next_version
        } else {
            0
        };
        Ok(Ticket {
            ticket: self.requests_admitted,
            version,
        })
    }

    /// Runs every FTL call and event due at or before `t_ns` (the simulation's time is then
    /// that of the last event run: a request may still arrive between it and `t_ns`).
    pub fn run_until_time(&mut self, t_ns: u64) -> Result<(), SimError> {
        loop {
            self.stop.point()?;
            self.drain_completions()?;
            if let Some(call) = self.next_call() {
                self.run_call(call)?;
            } else if let Some(ev) = self.immediate.pop_front() {
                self.handle(ev)?;
            } else if self.events.peek_time().is_some_and(|e| e <= t_ns) {
                let (t, ev) = self.events.pop().expect("peeked");
                self.now = t;
                self.handle(ev)?;
            } else {
                break;
            }
        }
        Ok(())
    }

    /// Runs every call and event due at or before `t_ns`, then lets time reach `t_ns` (a
    /// request arriving then is submitted next).
    pub fn advance_to(&mut self, t_ns: u64) -> Result<(), SimError> {
        self.run_until_time(t_ns)?;
        self.now = self.now.max(t_ns);
        Ok(())
    }

    /// Steps until a served request completed or nothing is left to do; false when nothing
    /// is left.
    pub fn run_until_served(&mut self) -> Result<bool, SimError> {
        loop {
            if self
                .served
                .as_ref()
                .is_some_and(|s| !s.completions.is_empty())
            {
                return Ok(true);
            }
            if !self.step()? {
                return Ok(false);
            }
        }
    }

    /// The data version the next write will get.
    pub fn next_data_version(&self) -> u64 {
        self.next_version + 1
    }

    /// The time of the next scheduled event, if any.
    pub fn next_event_ns(&self) -> Option<u64> {
        self.events.peek_time()
    }

    /// Moves the completions and deliveries logged since the last call into `completions`
    /// and `deliveries` (appended).
    pub fn take_served(&mut self, completions: &mut Vec<Served>, deliveries: &mut Vec<Delivered>) {
        if let Some(log) = self.served.as_deref_mut() {
            completions.append(&mut log.completions);
            deliveries.append(&mut log.deliveries);
        }
    }

    /// The flash's changes since the last call (see [`crate::nand::FlashJournal`]).
    pub fn take_flash_journal(&mut self, out: &mut crate::nand::FlashJournal) {
        self.nand.take_journal(out);
    }

    /// Resolves the deliveries of the FTL call that just ran to their requests' tickets.
    pub(super) fn resolve_deliveries(&mut self) {
        let Some(log) = self.served.as_deref_mut() else {
            return;
        };
        for (sub, first_sector, sectors, version) in log.by_sub.drain(..) {
            let req = self.subs.get(sub).req;
            log.deliveries.push(Delivered {
                ticket: self.reqs.get(req).seq,
                first_sector,
                sectors,
                version,
            });
        }
    }

    /// Logs a served request's completion.
    pub(super) fn log_served(&mut self, ticket: u64, op: Op, arrival_ns: u64) {
        let now = self.now;
        if let Some(log) = self.served.as_deref_mut() {
            log.completions.push(Served {
                ticket,
                op,
                arrival_ns,
                completion_ns: now,
            });
        }
    }
}
