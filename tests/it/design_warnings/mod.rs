//! Design warnings: settings that break a rule of the domain, reported
//! whether or not a run reaches the gap. Cases written from the rules
//! themselves (a key must outlive the retries that carry it; an inbox row
//! must outlive the redeliveries of its message), each where the warning must
//! fire and where it must stay silent, and the guide's own question: what if
//! keys live 1 day and retries run for 3?
//!
//! Its cases are grouped by the model or the rule family they exercise,
//! with the helpers several groups share in `helpers`.

mod helpers;

mod catalog;
mod commands;
mod http;
mod messaging_commits;
mod messaging_consumer;
mod messaging_inbox;
mod messaging_leases;
mod messaging_producer;
mod payment_bank;
mod payment_key_delays;
mod payment_key_stretch;
mod payment_keys;
mod payment_reads;
mod retry_window;
