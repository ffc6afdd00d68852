//! The service's behaviour across its parts, driven handler by handler
//! through the harness: one module per part whose rules the cases are
//! about (each part's own unit tests sit beside its code).

mod bank_calls;
pub(super) mod harness;
mod keys;
mod recovery;
mod requests;
mod workers;
