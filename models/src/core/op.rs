//! Business operations: the unit the effect ledger judges.
//!
//! Identity is the operation (a claim to pay, an event to handle, a request
//! to serve), never a coarser thing such as the entity an event is about, and
//! never a service's own record of what it did.

use std::fmt;

/// A namespace of operation ids, with the words traces use for it. Each model
/// declares its own (`claim 4711`, `event #3`, `entity 4711`).
#[derive(Debug)]
pub struct Space {
    /// Distinguishes spaces in a violation's signature; unique per space.
    /// A built-in model writes `registry::space_code`'s, so the registry
    /// numbers it; repro files keep it in the operation's number.
    pub code: u8,
    /// "claim", "event", "entity".
    pub noun: &'static str,
    /// Written between the noun and the id: "" (claim 4711) or "#" (event #3).
    pub id_prefix: &'static str,
    /// The unit of an operation's payload ("EUR"), or none (a plain value).
    pub unit: Option<&'static str>,
    /// The prefix of keys minted for operations of this space: `zahl-4711-01`.
    pub key_prefix: &'static str,
    /// Its operations are events that exist for the outside world only once
    /// a broker accepted them (a publish step): an effect for one no broker
    /// accepted acts on something that did not happen (`no-phantom-event`).
    /// False for operations a client asks for directly (a claim, a request).
    pub published: bool,
}

// Spaces are compared by their code, which is unique per space: a model's
// check that an operation is of its own space (`op.space != &WRITE`) is on
// the hot path, and comparing every field compared their strings.
impl PartialEq for Space {
    #[inline]
    fn eq(&self, o: &Space) -> bool {
        self.code == o.code
    }
}

impl Eq for Space {}

impl PartialOrd for Space {
    fn partial_cmp(&self, o: &Space) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Space {
    fn cmp(&self, o: &Space) -> std::cmp::Ordering {
        self.code.cmp(&o.code)
    }
}

impl std::hash::Hash for Space {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u8(self.code);
    }
}

/// One business operation. Compared and hashed by its space's code and its
/// id: two integers, on the ledger's hot path.
#[derive(Clone, Copy)]
pub struct Op {
    /// The namespace: its noun, unit and code.
    pub space: &'static Space,
    /// The id within it (claim 4711).
    pub id: u32,
    /// Which of the id's operations: 0 for the first (in most models the
    /// only one); payment 02 of claim 4711 is part 1. Two parts of one id
    /// are two operations, each judged on its own.
    pub part: u8,
}

/// A first part shows as before ids had parts: a state dump (a report's
/// inspector) of a model with one operation per id is unchanged.
impl fmt::Debug for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Op");
        d.field("space", &self.space).field("id", &self.id);
        if self.part != 0 {
            d.field("part", &self.part);
        }
        d.finish()
    }
}

/// The state panel names an operation as the ledger does (`claim 4711`).
impl serde::Serialize for Op {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl PartialEq for Op {
    #[inline]
    fn eq(&self, o: &Op) -> bool {
        // The same static space (the usual case) needs no load to compare.
        self.id == o.id
            && self.part == o.part
            && (std::ptr::eq(self.space, o.space) || self.space.code == o.space.code)
    }
}

impl Eq for Op {}

impl PartialOrd for Op {
    fn partial_cmp(&self, o: &Op) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Op {
    fn cmp(&self, o: &Op) -> std::cmp::Ordering {
        (self.space.code, self.id, self.part).cmp(&(o.space.code, o.id, o.part))
    }
}

impl std::hash::Hash for Op {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u64(self.key());
    }
}

impl Op {
    /// Operation `id` of `space`.
    pub const fn new(space: &'static Space, id: u32) -> Op {
        Op::part(space, id, 0)
    }

    /// Part `part` of id `id` of `space` (0 is the first).
    pub const fn part(space: &'static Space, id: u32, part: u8) -> Op {
        Op { space, id, part }
    }

    /// The same id of the same space: the thing the operation is about (a
    /// claim), whichever part of it.
    pub fn same_id(self, o: Op) -> bool {
        Op::new(self.space, self.id) == Op::new(o.space, o.id)
    }

    /// The operation as a number, for a violation's signature; a first
    /// part's is its id's alone, as before ids had parts.
    pub fn key(self) -> u64 {
        (u64::from(self.part) << 40) | (u64::from(self.space.code) << 32) | u64::from(self.id)
    }

    /// A payload of this operation for people: "1200 EUR" or "value 1200".
    pub fn payload(self, payload: u32) -> Payload {
        Payload {
            unit: self.space.unit,
            value: payload,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}{}", self.space.noun, self.space.id_prefix, self.id)?;
        match self.part {
            0 => Ok(()),
            p => write!(f, "/{:02}", u32::from(p) + 1),
        }
    }
}

/// A payload with its unit, as traces print it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Payload {
    /// Its unit, if it has one.
    pub unit: Option<&'static str>,
    /// The number.
    pub value: u32,
}

impl fmt::Display for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.unit {
            Some(u) => write!(f, "{} {u}", self.value),
            None => write!(f, "value {}", self.value),
        }
    }
}

/// An idempotency key as a client sends it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum Key {
    /// No key at all.
    None,
    /// Minted per business operation (`n` = 1) or, wrongly, per attempt.
    Op {
        /// The operation it was minted for.
        op: Op,
        /// Which key of that operation: 1 for a stable key, the attempt's number for a key per attempt.
        n: u32,
    },
    /// Derived from a clock reading: two operations in one bucket collide.
    Time {
        /// The clock reading's bucket (a second, a minute).
        bucket: u64,
    },
}

impl Key {
    /// Any key at all.
    pub fn is_some(self) -> bool {
        self != Key::None
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Key::None => write!(f, "no key"),
            Key::Op { op, n } if op.part == 0 => {
                write!(f, "{}-{}-{n:02}", op.space.key_prefix, op.id)
            }
            // A later part's key is numbered by its part (`zahl-4711-02`),
            // an attempt's key beyond its first by the attempt as well.
            Key::Op { op, n } => {
                let part = u32::from(op.part) + 1;
                write!(f, "{}-{}-{part:02}", op.space.key_prefix, op.id)?;
                match n {
                    1 => Ok(()),
                    n => write!(f, "-{n:02}"),
                }
            }
            Key::Time { bucket } => write!(f, "ts-{bucket}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static CLAIM: Space = Space {
        code: 1,
        noun: "claim",
        id_prefix: "",
        unit: Some("EUR"),
        key_prefix: "zahl",
        published: false,
    };
    static EVENT: Space = Space {
        code: 2,
        noun: "event",
        id_prefix: "#",
        unit: None,
        key_prefix: "event",
        published: true,
    };

    #[test]
    fn operations_speak_their_models_words() {
        let claim = Op::new(&CLAIM, 4711);
        assert_eq!(claim.to_string(), "claim 4711");
        assert_eq!(claim.payload(1200).to_string(), "1200 EUR");
        assert_eq!(Key::Op { op: claim, n: 1 }.to_string(), "zahl-4711-01");
        let second = Op::part(&CLAIM, 4711, 1);
        assert_eq!(second.to_string(), "claim 4711/02");
        assert_eq!(Key::Op { op: second, n: 1 }.to_string(), "zahl-4711-02");
        assert_eq!(Key::Op { op: second, n: 3 }.to_string(), "zahl-4711-02-03");
        assert_ne!(
            second, claim,
            "two payments of one claim are two operations"
        );
        assert_ne!(second.key(), claim.key());
        assert!(second.same_id(claim));
        let event = Op::new(&EVENT, 3);
        assert_eq!(event.to_string(), "event #3");
        assert_eq!(event.payload(7).to_string(), "value 7");
        assert_ne!(
            claim.key(),
            Op::new(&EVENT, 4711).key(),
            "spaces keep ids apart"
        );
    }
}
