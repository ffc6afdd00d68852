//! What the payment scenario's settings say about the service's bank calls
//! and about restarts: read by the design warnings (`warnings.rs`) and by
//! the rules on the bank's status reads (`reads.rs`), so neither imports
//! the other.

use crate::payment::{Mode, ServiceConfig};

/// Whether the service asks the bank's status before each re-send (and, in
/// the state modes, before the first transfer too).
pub(crate) fn queries_bank(service: &ServiceConfig) -> bool {
    service.query_before_retry || service.mode != Mode::Action
}

/// One execution's bank call, in bank timeouts, counted from the request
/// (`service_bank.rs`): `(last transfer sent, call given up)`. Each attempt
/// waits up to a timeout; an attempt that asks the status first sends its
/// transfer only once the answer is in, which may come just before that
/// timeout, and then waits a full timeout more for the transfer. So with
/// `n` attempts: transfers only, the last at `n - 1` timeouts and the end at
/// `n`; a status query before each re-send, `2(n - 1)` and `2n - 1`; the
/// state modes, which ask before the first transfer too, `2n - 1` and `2n`.
pub(crate) fn bank_call_timeouts(service: &ServiceConfig) -> (u64, u64) {
    let n = u64::from(service.bank_max_attempts.max(1));
    match (service.mode, service.query_before_retry) {
        (Mode::Action, false) => (n - 1, n),
        (Mode::Action, true) => (2 * (n - 1), 2 * n - 1),
        (Mode::State | Mode::StateConditional, _) => (2 * n - 1, 2 * n),
    }
}

/// What the scenario's `[crashes.X]` tables say about the actors the rules
/// ask about: how long each stays down, if it can crash at all.
#[derive(Clone, Debug, Default)]
pub(crate) struct Restarts {
    /// The service's `(restart_ms_min, restart_ms_max)`.
    pub service_ms: Option<(u64, u64)>,
    /// The client actors that can crash, by name, with their
    /// `(restart_ms_min, restart_ms_max)`, in the clients' order.
    pub clients_ms: Vec<(String, (u64, u64))>,
    /// When the faults end (`run.fault_phase_ms`): no crash comes later,
    /// and an actor down then is back at the latest `restart_ms_min` after.
    pub faults_end_ms: u64,
}

impl Restarts {
    /// From the scenario `text`, whose service is the actor `service` and
    /// whose client actors are `clients`, with faults until `fault_phase_us`.
    pub(crate) fn of(text: &str, clients: &[String], fault_phase_us: sim::TimeUs) -> Restarts {
        use crate::core::design_warning::restart_ms;
        Restarts {
            faults_end_ms: fault_phase_us / sim::US_PER_MS,
            service_ms: restart_ms(text, "service"),
            clients_ms: clients
                .iter()
                .filter_map(|c| restart_ms(text, c).map(|r| (c.clone(), r)))
                .collect(),
        }
    }
}
