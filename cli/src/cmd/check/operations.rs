//! What a sweep's operations came to: how each ended (`Operations`, the
//! effect ledger's counts) and the work they caused (`Load`), as the summary
//! line carries them and `merge` adds them up.

use models::core::ledger::counter;
use models::core::{LoadOf, Per};
use serde::{Deserialize, Serialize};

/// The work a sweep's operations caused: client attempts and the requests
/// (or deliveries) each layer received, so a design that holds only by doing
/// its work many times over shows it (`broker.visibility_timeout_ms = 50`
/// against 200 ms of processing delivers every event about forty times).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Load {
    /// Client attempts, over all runs; `None` for a model without clients
    /// that retry.
    pub attempts: Option<u64>,
    /// Requests or deliveries received per layer, in the model's order.
    pub received: Vec<Received>,
}

/// What one layer received over a sweep.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Received {
    /// The layer's name: `service`, `bank`, `consumer`, `server`.
    pub layer: String,
    /// Requests or deliveries it received, over all runs.
    pub count: u64,
    /// What the count is per: `operation` (`operations.started`) or
    /// `event` (`operations.events`).
    pub per: Per,
}

impl Load {
    /// The counts of the metrics `metrics` names (a model's sweep columns).
    pub fn from_tally(t: &sim::Tally, metrics: &[models::core::Metric]) -> Load {
        let mut load = Load::default();
        for l in LoadOf::of_metrics(metrics) {
            match l {
                LoadOf::Attempts => load.attempts = Some(l.count(t)),
                LoadOf::Layer(_) => load.received.push(Received {
                    layer: l.name().to_string(),
                    count: l.count(t),
                    per: l.per(),
                }),
            }
        }
        load
    }

    pub(super) fn absorb(&mut self, o: &Load) -> Result<(), String> {
        let overflow = || "the load counts add up past 2^64".to_string();
        self.attempts = match (self.attempts, o.attempts) {
            (Some(a), Some(b)) => Some(a.checked_add(b).ok_or_else(overflow)?),
            (a, b) => a.or(b),
        };
        for r in &o.received {
            match self.received.iter_mut().find(|x| x.layer == r.layer) {
                Some(x) => x.count = x.count.checked_add(r.count).ok_or_else(overflow)?,
                None => self.received.push(r.clone()),
            }
        }
        Ok(())
    }

    /// `attempts 1.30, service 1.35, bank 1.10 per operation; consumer
    /// 1.20 per event`, as the sweep's columns count them. `None` when
    /// nothing ran.
    pub fn text(&self, ops: &Operations) -> Option<String> {
        let counts = self
            .attempts
            .map(|a| ("attempts", a, Per::Operation))
            .into_iter()
            .chain(
                self.received
                    .iter()
                    .map(|r| (r.layer.as_str(), r.count, r.per)),
            );
        let mut groups: [Vec<String>; 2] = Default::default();
        for (name, n, per) in counts {
            let of = ops.of(per);
            if of > 0 {
                groups[per as usize].push(format!("{name} {:.2}", n as f64 / of as f64));
            }
        }
        let text: Vec<String> = [Per::Operation, Per::Event]
            .into_iter()
            .zip(groups)
            .filter(|(_, parts)| !parts.is_empty())
            .map(|(per, parts)| format!("{} per {}", parts.join(", "), per.as_str()))
            .collect();
        (!text.is_empty()).then(|| text.join("; "))
    }
}

/// The effect ledger's operation counts over a sweep: what clients finally knew.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Operations {
    /// Operations clients started, over all runs.
    pub started: u64,
    /// Told done.
    pub done: u64,
    /// Known failed, in a dead letter: nothing executed.
    pub failed: u64,
    /// Cancelled by a compensation: whatever landed was taken back (a
    /// summary from before this count merges as 0).
    #[serde(default)]
    pub cancelled: u64,
    /// Ended with an unknown outcome, in a dead letter for a person to reconcile.
    pub unknown: u64,
    /// Given up silently.
    pub abandoned: u64,
    /// Still open when their run stopped (a violation or a limit came first).
    pub open: u64,
    /// Events owed by committed state changes.
    pub events: u64,
}

impl Operations {
    /// How many of `per` ran: client operations started, or events owed.
    fn of(&self, per: Per) -> u64 {
        match per {
            Per::Operation => self.started,
            Per::Event => self.events,
        }
    }

    pub(super) fn from_tally(t: &sim::Tally) -> Operations {
        let c = |name| {
            t.counter(name)
                .and_then(|v| v.first())
                .copied()
                .unwrap_or(0)
        };
        Operations {
            started: c(counter::OPERATIONS),
            done: c(counter::DONE),
            failed: c(counter::FAILED),
            cancelled: c(counter::CANCELLED),
            unknown: c(counter::UNKNOWN),
            abandoned: c(counter::ABANDONED),
            open: c(counter::OPEN),
            events: c(counter::EVENTS),
        }
    }

    pub(super) fn absorb(&mut self, o: &Operations) -> Result<(), String> {
        for (a, b) in [
            (&mut self.started, o.started),
            (&mut self.done, o.done),
            (&mut self.failed, o.failed),
            (&mut self.cancelled, o.cancelled),
            (&mut self.unknown, o.unknown),
            (&mut self.abandoned, o.abandoned),
            (&mut self.open, o.open),
            (&mut self.events, o.events),
        ] {
            *a = a
                .checked_add(b)
                .ok_or("the operation counts add up past 2^64")?;
        }
        Ok(())
    }
}
