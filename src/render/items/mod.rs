//! The one model of a trace every format is derived from: the engine's raw
//! entries, resolved to names and annotated from the effect ledger's
//! observations. `json` prints these items as they are; `text`, `mermaid`,
//! `dot` and `chrome` read nothing else. The words come from the models:
//! messages, observations and timers describe themselves.

mod describe;
mod end;
mod recorder;
mod types;
mod what;

pub use describe::describe;
pub use end::trace;
pub(crate) use end::trace_of_items;
pub(crate) use recorder::ItemRecorder;
pub use recorder::{items, EntryMap, Kept, TRACE_END_ITEMS};
pub use types::{End, Header, Item, Name, ShrinkInfo, Trace, TurnSearchNote, What};
