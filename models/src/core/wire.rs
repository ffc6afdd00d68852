//! How a kind of actor speaks its model's messages inside a world whose
//! message type it does not know: the world's message (an enum over every
//! model's messages, or a user's own) carries each model's message type.
//! So a model depends on nothing but `core`, and a world of payment and
//! messaging actors (or a user's consumer beside the built-in broker) is a
//! choice of message type, not a change to any model.

/// A world's message type that carries `T`, one model's messages.
pub trait Carries<T>: sim::Message {
    /// The world's message carrying the model's message `t`.
    fn wrap(t: T) -> Self;
    /// The model's message inside, if this is one of them.
    fn peek(&self) -> Option<&T>;
}

/// What every model's message type tells the world about itself.
pub trait ModelMessage: Copy + PartialEq + std::fmt::Debug + std::fmt::Display {
    /// Kind names, as link faults select them (`kinds = ["status-query"]`).
    const KINDS: &'static [&'static str];
    /// Index into [`KINDS`](ModelMessage::KINDS).
    fn kind(&self) -> u16;
    /// An answer to a request: a lost one shows as "reply lost".
    fn is_reply(&self) -> bool;
    /// A note for a trace line showing this message's delivery, from what the
    /// same step did: whether an effect landed, and which messages of this
    /// model it sent ("dedup hit: no second transfer").
    fn delivery_note(&self, effect: bool, sent: &[Self]) -> Option<&'static str> {
        let _ = (effect, sent);
        None
    }

    /// Whether two runs that sent these two messages at the same point still
    /// do the same thing (for `diff`): requests of one kind may carry other
    /// keys or payloads under another design; an answer that says something
    /// else is a real difference.
    fn same_for_diff(&self, other: &Self) -> bool {
        self.kind() == other.kind() && (!self.is_reply() || self == other)
    }
}

/// What traces and `idemsim diff` ask of a world's message type, beyond what
/// the engine needs ([`sim::Message`]): which messages are replies, the note
/// on a delivery line, and when two messages count as the same for a diff.
///
/// The registry's `Msg` answers by asking each model's [`ModelMessage`]. A
/// user's own world message implements it with an empty `impl` (every method
/// has a default) and gets every trace format. It must compare with `==`: the
/// search for a run's point of no return compares two runs entry by entry.
/// Nothing here needs `Copy`: a message with `String` or `Vec` payloads
/// renders like any other.
pub trait WorldMessage: sim::Message + PartialEq {
    /// An answer to a request: a lost one shows as "reply lost".
    fn is_reply(&self) -> bool {
        false
    }

    /// A note for the trace line showing this message's delivery, from what
    /// the same step did: whether an effect landed, and what it sent.
    fn delivery_note(&self, effect: bool, sent: &[Self]) -> Option<&'static str>
    where
        Self: Sized,
    {
        let _ = (effect, sent);
        None
    }

    /// Whether two runs that sent these two messages at the same point still
    /// do the same thing (for `diff`): by default, when they are of one kind.
    fn same_for_diff(&self, other: &Self) -> bool {
        self.kind() == other.kind()
    }
}

/// Who a kind of actor is to its peers, and which message kinds it sends to
/// whom (kind names from its model's [`ModelMessage::KINDS`]). A link from
/// `a` to `b` carries a kind only where `a` sends it to one of `b`'s roles,
/// so a `[[network.links]]` entry for anything else would be a fault that
/// never fires: the loader refuses it. `tests/network.rs` checks the traffic
/// of every built-in scenario against these lists, so a list that leaves a
/// send out fails there, not in a user's file.
pub trait Ends {
    /// The roles its peers address it in (`"service"`, `"broker"`).
    const ROLES: &'static [&'static str];
    /// Each kind it sends, with the role it sends it to.
    const SENDS: &'static [(&'static str, &'static str)];
}

/// One actor's [`Ends`]: its roles and the kinds it sends to whom.
pub type ActorEnds = (
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
);

/// Whether a link from an actor with ends `from` to one with ends `to`
/// carries messages of `kind`.
pub fn carries(from: ActorEnds, to: ActorEnds, kind: &str) -> bool {
    from.1
        .iter()
        .any(|&(k, role)| k == kind && to.0.contains(&role))
}
