//! The contention model's messages: a read of the row and a conditional
//! write, each with its answer, small and `Copy`.

use crate::core::wire::ModelMessage;
use crate::core::Op;
use std::fmt;

/// A message of the contention model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Msg {
    /// Client to resource: the row's value and version, please.
    Read {
        /// The write (business operation) it belongs to.
        op: Op,
        /// The attempt, from 1.
        attempt: u32,
    },
    /// The row as it stands, and the write that made its current version
    /// (none for the initial one), so a client whose answer was lost can
    /// find its own write.
    ReadReply {
        /// The write (business operation) it belongs to.
        op: Op,
        /// The attempt, from 1.
        attempt: u32,
        /// The row's value (or the value written).
        value: u32,
        /// The row's version.
        version: u32,
        /// The write that made that version.
        writer: Option<Op>,
    },
    /// Client to resource: set the row to `value`, computed from a read of
    /// version `read` by adding `amount`. With `cas` the write is conditional
    /// on the row still being at that version (compare-and-set); without, it
    /// is blind: it lands whatever was written since the read.
    Write {
        /// The write (business operation) it belongs to.
        op: Op,
        /// The attempt, from 1.
        attempt: u32,
        /// The version the write was computed from.
        read: u32,
        /// The row's value (or the value written).
        value: u32,
        /// What the write adds.
        amount: u32,
        /// Conditional on the version read.
        cas: bool,
        /// The write carries its id as a request id, which the row keeps in
        /// the same transaction as the value: a write whose id it holds is
        /// answered "written" and not applied again.
        request_id: bool,
    },
    /// Whether the write landed, and the row's version after it.
    WriteReply {
        /// The write (business operation) it belongs to.
        op: Op,
        /// The attempt, from 1.
        attempt: u32,
        /// The write landed (now, or before under the same request id).
        ok: bool,
        /// The row already held the write's request id: nothing written now.
        already: bool,
        /// The row's version.
        version: u32,
    },
}

impl ModelMessage for Msg {
    const KINDS: &'static [&'static str] = &["read", "read-reply", "write", "write-reply"];

    fn kind(&self) -> u16 {
        match self {
            Msg::Read { .. } => 0,
            Msg::ReadReply { .. } => 1,
            Msg::Write { .. } => 2,
            Msg::WriteReply { .. } => 3,
        }
    }

    fn is_reply(&self) -> bool {
        matches!(self, Msg::ReadReply { .. } | Msg::WriteReply { .. })
    }

    fn delivery_note(&self, effect: bool, sent: &[Msg]) -> Option<&'static str> {
        let Msg::Write { cas: true, .. } = self else {
            return None;
        };
        let refused = sent
            .iter()
            .any(|m| matches!(m, Msg::WriteReply { ok: false, .. }));
        (!effect && refused).then_some("the row moved on since the read: nothing written")
    }
}

impl fmt::Display for Msg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Msg::Read { op, attempt } => write!(f, "{op}: read the row [attempt {attempt}]"),
            Msg::ReadReply {
                op,
                attempt,
                value,
                version,
                writer,
            } => {
                write!(f, "{op}: the row is {value} at v{version}")?;
                if let Some(w) = writer {
                    write!(f, ", written by {w}")?;
                }
                write!(f, " [attempt {attempt}]")
            }
            Msg::Write { .. } => self.fmt_write(f),
            Msg::WriteReply { .. } => self.fmt_write_reply(f),
        }
    }
}

impl Msg {
    /// A write as a trace line: conditional on the version read, or blind.
    fn fmt_write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Msg::Write {
            op,
            attempt,
            read,
            value,
            cas,
            request_id,
            ..
        } = *self
        else {
            unreachable!("fmt_write is called for writes")
        };
        let kept = if request_id { ", request id kept" } else { "" };
        if cas {
            write!(
                f,
                "{op}: set the row to {value} if still v{read}{kept} [attempt {attempt}]"
            )
        } else {
            write!(
                f,
                "{op}: set the row to {value} (read at v{read}, no condition){kept} [attempt {attempt}]"
            )
        }
    }

    /// A write's answer as a trace line: already written, written, or refused.
    fn fmt_write_reply(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Msg::WriteReply {
            op,
            attempt,
            already,
            ok,
            version,
            ..
        } = *self
        else {
            unreachable!("fmt_write_reply is called for write replies")
        };
        if already {
            write!(
                f,
                "{op}: written before under this request id, nothing written now (the row is v{version}) [attempt {attempt}]"
            )
        } else if ok {
            write!(
                f,
                "{op}: written, the row is now v{version} [attempt {attempt}]"
            )
        } else {
            write!(
                f,
                "{op}: conflict, the row is already v{version}: nothing written [attempt {attempt}]"
            )
        }
    }
}
