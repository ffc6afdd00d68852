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
/// `a` to `b` carries a kind only where `a`, as configured, sends it to one
/// of `b`'s roles, and a reply only where `b` sends `a` its request: a
/// `[[network.links]]` entry for anything else would be a fault that never
/// fires, and the loader refuses it. `tests/network.rs` checks the traffic
/// of every built-in scenario against these declarations, so one that
/// leaves a send out fails there, not in a user's file.
pub trait Ends {
    /// The roles its peers address it in (`"service"`, `"broker"`).
    const ROLES: &'static [&'static str];
    /// Each kind it may send, with the role it sends it to. A name may be
    /// finer than the wire's kinds where a reply answers only some messages
    /// of a kind (the messaging consumer's `ack-with-result`, an `ack` the
    /// broker answers with `ack-result`): such a name matters only to
    /// [`ANSWERS`](Ends::ANSWERS), and the actor declares the wire's kind too.
    const SENDS: &'static [(&'static str, &'static str)];
    /// The replies among [`SENDS`](Ends::SENDS), each with a request it
    /// answers: a reply goes only to a peer that sends it that request.
    const ANSWERS: &'static [(&'static str, &'static str)] = &[];

    /// Whether this actor, as configured, ever sends `kind` to `role` (one
    /// of its [`SENDS`](Ends::SENDS)): false where its settings never use
    /// that send (a reconciliation job that is off, leases never renewed).
    fn sends(&self, kind: &str, role: &str) -> bool {
        let _ = (kind, role);
        true
    }
}

/// One actor's [`Ends`] as configured: its roles, the kinds it sends to
/// whom, and which of them answer which requests.
#[derive(Clone, Debug)]
pub struct ActorEnds {
    /// [`Ends::ROLES`].
    pub roles: &'static [&'static str],
    /// The [`Ends::SENDS`] its settings use.
    pub sends: Vec<(&'static str, &'static str)>,
    /// [`Ends::ANSWERS`].
    pub answers: &'static [(&'static str, &'static str)],
}

impl ActorEnds {
    /// The ends of actor `a`, as configured.
    pub fn of<A: Ends>(a: &A) -> ActorEnds {
        ActorEnds {
            roles: A::ROLES,
            sends: A::SENDS
                .iter()
                .copied()
                .filter(|&(kind, role)| a.sends(kind, role))
                .collect(),
            answers: A::ANSWERS,
        }
    }

    /// Whether it sends `kind` to an actor with ends `to`, reply or not.
    fn sends_to(&self, to: &ActorEnds, kind: &str) -> bool {
        self.sends
            .iter()
            .any(|&(k, role)| k == kind && to.roles.contains(&role))
    }
}

/// Whether a link from an actor with ends `from` to one with ends `to`
/// carries messages of `kind`: `from` sends it to one of `to`'s roles, and,
/// if it is a reply, `to` sends `from` a request it answers.
pub fn carries(from: &ActorEnds, to: &ActorEnds, kind: &str) -> bool {
    let mut requests = from
        .answers
        .iter()
        .filter(|&&(reply, _)| reply == kind)
        .peekable();
    // Not a reply, or a reply to something `to` asks `from`.
    from.sends_to(to, kind)
        && (requests.peek().is_none() || requests.any(|&(_, request)| to.sends_to(from, request)))
}
