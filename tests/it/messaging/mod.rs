//! The messaging catalog: every `scenarios/messaging-*.toml` gives its expected
//! verdict within a bounded seed budget, each broken variant holds once its one
//! mistake is fixed (so the variant, not the fault mix, causes the failure),
//! and the traces of two classic failures have the shape the docs describe.
//!
//! Its cases are grouped by the part of the design they exercise, with the
//! helpers several groups share in `helpers`.

mod helpers;

mod acks;
mod catalog;
mod conformance;
mod delivery_timeout;
mod inbox;
mod leases;
mod presets;
mod producer;
mod unread;
