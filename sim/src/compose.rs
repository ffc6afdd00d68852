//! The `compose!` macro: an enum of actor kinds that is itself an actor,
//! dispatching to its kinds through [`Narrow`](crate::Narrow) contexts with
//! no `dyn`. It names everything through `$crate`, so it imports nothing and
//! `actor.rs` keeps only the trait and the contexts.

/// Declares an enum of actor kinds that is itself an [`Actor`](crate::Actor): the enum, its
/// state, storage and timer enums, and a dispatch with no `dyn`. Every kind
/// must share the enum's message and observation types.
///
/// ```
/// use idemsim_sim::{compose, Actor, ActorId, Ctx, Fresh, Message, NoTimer};
///
/// #[derive(Clone, Debug)]
/// pub struct Ping;
/// impl std::fmt::Display for Ping {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         f.write_str("ping")
///     }
/// }
/// impl Message for Ping {}
///
/// pub struct Echo;
/// impl Actor for Echo {
///     type Msg = Ping;
///     type Obs = ();
///     type Timer = NoTimer;
///     type State = ();
///     type Storage = ();
///     fn reset(&self, state: Fresh<'_, ()>, storage: Option<Fresh<'_, ()>>) {
///         state.set(());
///         storage.map(|s| s.set(()));
///     }
///     fn on_start(&self, _: &mut (), _: &mut (), _: &mut impl Ctx<Self>) {}
///     fn on_msg(&self, _: &mut (), _: &mut (), from: ActorId, m: Ping, ctx: &mut impl Ctx<Self>) {
///         ctx.send(from, m);
///     }
/// }
///
/// compose! {
///     /// Two kinds of actor in one world.
///     pub enum Node, NodeState, NodeStorage, NodeTimer {
///         msg: Ping,
///         obs: (),
///         A(Echo),
///         B(Echo),
///     }
/// }
/// ```
#[macro_export]
macro_rules! compose {
    // Inside the dispatch: each enum's value of the actor's kind taken out
    // by a `let ... else` of its own (see the comment on the handlers); a
    // value of another kind panics, cold.
    (@own $( $enum:ident :: $variant:ident ($bind:ident) = $value:expr; )+) => {
        $(
            #[allow(irrefutable_let_patterns)]
            let $enum::$variant($bind) = $value else { $crate::compose_kind_mismatch() };
        )+
    };
    (
        $(#[$meta:meta])*
        $vis:vis enum $node:ident, $state:ident, $storage:ident, $timer:ident {
            msg: $msg:ty,
            obs: $obs:ty,
            $( $(#[$vmeta:meta])* $variant:ident($kind:ty) ),+ $(,)?
        }
    ) => {
        // An explicit tag on the actor, its state and its storage: the
        // dispatch reads the actor's kind with one load and tests the
        // state's and storage's with one compare each, where a kind kept in
        // a field's niche took two or three instructions more to decode.
        $(#[$meta])*
        #[repr(u32)]
        $vis enum $node {
            $( $(#[$vmeta])* $variant($kind), )+
        }

        /// Volatile state of one actor of the enum.
        #[derive(Debug)]
        #[repr(u32)]
        $vis enum $state {
            $(
                #[doc = concat!("The state of a `", stringify!($variant), "`.")]
                $variant(<$kind as $crate::Actor>::State),
            )+
        }

        /// Durable storage of one actor of the enum.
        #[derive(Debug)]
        #[repr(u32)]
        $vis enum $storage {
            $(
                #[doc = concat!("The storage of a `", stringify!($variant), "`.")]
                $variant(<$kind as $crate::Actor>::Storage),
            )+
        }

        /// A timer of one actor of the enum.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $timer {
            $(
                #[doc = concat!("A timer of a `", stringify!($variant), "`.")]
                $variant(<$kind as $crate::Actor>::Timer),
            )+
        }

        impl ::std::fmt::Display for $timer {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                match self {
                    $( $timer::$variant(t) => ::std::fmt::Display::fmt(t, f), )+
                }
            }
        }

        impl $crate::Timer for $timer {
            #[inline]
            fn slot(&self) -> u32 {
                match self {
                    $( $timer::$variant(t) => $crate::Timer::slot(t), )+
                }
            }
        }

        impl $crate::Actor for $node {
            type Msg = $msg;
            type Obs = $obs;
            type Timer = $timer;
            type State = $state;
            type Storage = $storage;

            fn reset(
                &self,
                state: $crate::Fresh<'_, $state>,
                storage: ::std::option::Option<$crate::Fresh<'_, $storage>>,
            ) {
                use $crate::Fresh::Kept;
                match self {
                    $( $node::$variant(a) => match (state, storage) {
                        // Every run but a simulator's first, and every
                        // restart: what the engine kept is this kind's, reset
                        // in place.
                        (Kept($state::$variant(st)), None) => $crate::Actor::reset(a, Kept(st), None),
                        (Kept($state::$variant(st)), Some(Kept($storage::$variant(s)))) => {
                            $crate::Actor::reset(a, Kept(st), Some(Kept(s)))
                        }
                        (state, storage) => $crate::compose_reset_aside(
                            a,
                            state,
                            storage,
                            |st| match st { $state::$variant(x) => Some(x), #[allow(unreachable_patterns)] _ => None },
                            |s| match s { $storage::$variant(x) => Some(x), #[allow(unreachable_patterns)] _ => None },
                            $state::$variant,
                            $storage::$variant,
                        ),
                    }, )+
                }
            }

            // Each handler matches on the actor's kind alone, once: the
            // state, storage and timer of that kind are then taken out by a
            // test of their own variant each (a compare and a branch that is
            // never taken), where a match on the tuple of all of them
            // decoded every enum's discriminant in full before the jump.
            // One `let ... else` per enum, not one on their tuple: LLVM
            // turned the tuple's test into a flag per enum (`sete`) and a
            // branch on each flag, one or two instructions more per enum.
            fn on_start(
                &self,
                state: &mut $state,
                storage: &mut $storage,
                ctx: &mut impl $crate::Ctx<Self>,
            ) {
                match self {
                    $( $node::$variant(a) => {
                        $crate::compose!(@own $state::$variant(st) = state; $storage::$variant(s) = storage;);
                        let mut c = $crate::Narrow::<Self, _, _>::with_own_slots(ctx, $timer::$variant);
                        $crate::Actor::on_start(a, st, s, &mut c)
                    } )+
                }
            }

            fn on_msg(
                &self,
                state: &mut $state,
                storage: &mut $storage,
                from: $crate::ActorId,
                msg: $msg,
                ctx: &mut impl $crate::Ctx<Self>,
            ) {
                match self {
                    $( $node::$variant(a) => {
                        $crate::compose!(@own $state::$variant(st) = state; $storage::$variant(s) = storage;);
                        let mut c = $crate::Narrow::<Self, _, _>::with_own_slots(ctx, $timer::$variant);
                        $crate::Actor::on_msg(a, st, s, from, msg, &mut c)
                    } )+
                }
            }

            fn on_timer(
                &self,
                state: &mut $state,
                storage: &mut $storage,
                timer: $timer,
                ctx: &mut impl $crate::Ctx<Self>,
            ) {
                match self {
                    $( $node::$variant(a) => {
                        $crate::compose!(@own
                            $state::$variant(st) = state;
                            $storage::$variant(s) = storage;
                            $timer::$variant(t) = timer;
                        );
                        let mut c = $crate::Narrow::<Self, _, _>::with_own_slots(ctx, $timer::$variant);
                        $crate::Actor::on_timer(a, st, s, t, &mut c)
                    } )+
                }
            }

            fn on_crash(
                &self,
                state: &$state,
                storage: &$storage,
                reached: &mut dyn FnMut($crate::SituationId),
            ) {
                match self {
                    $( $node::$variant(a) => {
                        $crate::compose!(@own $state::$variant(st) = state; $storage::$variant(s) = storage;);
                        $crate::Actor::on_crash(a, st, s, reached)
                    } )+
                }
            }
        }
    };
}

/// The panic of an enum of actors handed a state, storage or timer of
/// another kind than the actor's: the engine keeps each actor's state and
/// storage of its own kind, so this is a caller's bug. Out of line and cold,
/// so that the dispatch's test of each kind is one compare and one branch
/// that is never taken.
#[doc(hidden)]
#[cold]
#[inline(never)]
#[track_caller]
pub fn compose_kind_mismatch() -> ! {
    panic!(
        "an enum of actors was handed a state, storage or timer of another kind than the actor's"
    )
}

/// The rest of an enum of actors' [`reset`](crate::Actor::reset), out of
/// the way of the usual one (all kept, of the actor's own kind): a new state
/// or storage, the first time, is made aside and put in, wrapped by
/// `wrap_state` or `wrap_storage`; a kept one of another kind is replaced
/// the same way. `own_state` and `own_storage` give a kept one's inside when
/// it is of the actor's kind.
#[doc(hidden)]
#[cold]
#[inline(never)]
pub fn compose_reset_aside<A: crate::Actor + ?Sized, S, T>(
    actor: &A,
    state: crate::Fresh<'_, S>,
    storage: Option<crate::Fresh<'_, T>>,
    own_state: fn(&mut S) -> Option<&mut A::State>,
    own_storage: fn(&mut T) -> Option<&mut A::Storage>,
    wrap_state: fn(A::State) -> S,
    wrap_storage: fn(A::Storage) -> T,
) {
    let (mut new_state, mut new_storage) = (None, None);
    let (inner_state, state_back) = own_or_aside(state, own_state, &mut new_state);
    let (inner_storage, storage_back) = match storage {
        None => (None, None),
        Some(storage) => {
            let (inner, back) = own_or_aside(storage, own_storage, &mut new_storage);
            (Some(inner), back)
        }
    };
    actor.reset(inner_state, inner_storage);
    if let Some(back) = state_back {
        back.set(wrap_state(new_state.expect("reset fills a new state")));
    }
    if let Some(back) = storage_back {
        back.set(wrap_storage(
            new_storage.expect("reset fills a new storage"),
        ));
    }
}

/// For one of [`compose_reset_aside`]'s state and storage: a kept value's
/// inside when it is the actor's kind (`own`), to reset in place; else the
/// empty `aside` to make a new one in, and the value to put it back into.
fn own_or_aside<'a, 'b, X, Y>(
    fresh: crate::Fresh<'a, X>,
    own: fn(&mut X) -> Option<&mut Y>,
    aside: &'b mut Option<Y>,
) -> (crate::Fresh<'b, Y>, Option<crate::Fresh<'a, X>>)
where
    'a: 'b,
{
    use crate::Fresh::{Kept, New};
    match fresh {
        // Asked twice: a borrow returned from the first ask would keep `x`
        // borrowed in the branch that hands it back.
        Kept(x) => {
            if own(x).is_some() {
                (Kept(own(x).expect("checked")), None)
            } else {
                (New(aside), Some(Kept(x)))
            }
        }
        fresh => (New(aside), Some(fresh)),
    }
}

#[cfg(test)]
mod tests {
    use crate::{Actor, ActorId, Choices, Command, Context, Ctx, Fresh, Message};
    use crate::{SituationId, Timer};
    use std::fmt;

    #[derive(Clone, Debug, PartialEq, Eq)]
    struct Note(u32);
    impl fmt::Display for Note {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "note {}", self.0)
        }
    }
    impl Message for Note {}

    /// A kind's own timers, with its own slots 0 and 1.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Tick {
        Early,
        Late,
    }
    impl fmt::Display for Tick {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{self:?}")
        }
    }
    impl Timer for Tick {
        fn slot(&self) -> u32 {
            *self as u32
        }
    }

    /// Writes every input into its storage under its name, and counts its
    /// steps in its state: a step given to the wrong actor shows.
    struct Logger {
        name: &'static str,
    }

    impl Actor for Logger {
        type Msg = Note;
        type Obs = ();
        type Timer = Tick;
        type State = u32;
        type Storage = Vec<String>;

        fn reset(&self, state: Fresh<'_, u32>, storage: Option<Fresh<'_, Vec<String>>>) {
            state.set(0);
            if let Some(log) = storage {
                log.or_default().clear();
            }
        }
        fn on_start(&self, _: &mut u32, log: &mut Vec<String>, _: &mut impl Ctx<Self>) {
            log.push(format!("{} start", self.name));
        }
        fn on_msg(
            &self,
            steps: &mut u32,
            log: &mut Vec<String>,
            from: ActorId,
            msg: Note,
            ctx: &mut impl Ctx<Self>,
        ) {
            *steps += 1;
            log.push(format!("{} {msg} from {from}", self.name));
            ctx.set_timer(Tick::Late, 5);
        }
        fn on_timer(
            &self,
            steps: &mut u32,
            log: &mut Vec<String>,
            timer: Tick,
            ctx: &mut impl Ctx<Self>,
        ) {
            *steps += 1;
            log.push(format!("{} {timer}", self.name));
            ctx.cancel_timer(Tick::Early);
            ctx.send(0, Note(*steps));
        }
        fn on_crash(&self, steps: &u32, _: &Vec<String>, reached: &mut dyn FnMut(SituationId)) {
            reached(*steps as SituationId);
        }
    }

    compose! {
        /// Two actors of one type and one of another between them, so that
        /// a kind taken for another of the same type would compile and run.
        enum Two, TwoState, TwoStorage, TwoTimer {
            msg: Note,
            obs: (),
            L(Logger),
            Other(Idle),
            M(Logger),
        }
    }

    /// A kind of other types, that does nothing.
    struct Idle;
    impl Actor for Idle {
        type Msg = Note;
        type Obs = ();
        type Timer = crate::NoTimer;
        type State = u64;
        type Storage = ();
        fn reset(&self, state: Fresh<'_, u64>, storage: Option<Fresh<'_, ()>>) {
            state.set(7);
            if let Some(s) = storage {
                s.set(());
            }
        }
        fn on_start(&self, _: &mut u64, _: &mut (), _: &mut impl Ctx<Self>) {}
    }

    type Out = Vec<Command<Note, (), TwoTimer>>;

    fn world() -> [Two; 3] {
        [
            Two::L(Logger { name: "l" }),
            Two::Other(Idle),
            Two::M(Logger { name: "m" }),
        ]
    }

    /// The log in a storage of a `Logger`, and its steps.
    fn logged(state: &TwoState, storage: &TwoStorage) -> (u32, Vec<String>) {
        match (state, storage) {
            (TwoState::L(n) | TwoState::M(n), TwoStorage::L(log) | TwoStorage::M(log)) => {
                (*n, log.clone())
            }
            _ => panic!("not a logger's: {state:?} {storage:?}"),
        }
    }

    #[test]
    fn each_actor_steps_with_its_own_state_storage_and_timers() {
        let nodes = world();
        let mut kept: Vec<(TwoState, TwoStorage)> = nodes.iter().map(|n| n.fresh()).collect();
        let (mut choices, mut out) = (Choices::new(), Out::new());
        for (me, (node, (st, s))) in nodes.iter().zip(kept.iter_mut()).enumerate() {
            let mut ctx = Context::detached(10, me as ActorId, &mut choices, &mut out);
            node.on_start(st, s, &mut ctx);
            node.on_msg(st, s, 1, Note(me as u32), &mut ctx);
        }
        let mut ctx = Context::detached(20, 2, &mut choices, &mut out);
        let (st, s) = &mut kept[2];
        nodes[2].on_timer(st, s, TwoTimer::M(Tick::Late), &mut ctx);
        assert_eq!(
            logged(&kept[0].0, &kept[0].1),
            (1, vec!["l start".into(), "l note 0 from 1".into()])
        );
        assert!(matches!(
            kept[1],
            (TwoState::Other(7), TwoStorage::Other(()))
        ));
        let m_log = ["m start", "m note 2 from 1", "m Late"]
            .map(String::from)
            .to_vec();
        assert_eq!(logged(&kept[2].0, &kept[2].1), (2, m_log));
        // Each kind's timers come out as the enum's variant of that kind,
        // with the kind's own slot.
        let expected: Out = vec![
            Command::SetTimer {
                timer: TwoTimer::L(Tick::Late),
                slot: 1,
                after_us: 5,
            },
            Command::SetTimer {
                timer: TwoTimer::M(Tick::Late),
                slot: 1,
                after_us: 5,
            },
            Command::CancelTimer {
                timer: TwoTimer::M(Tick::Early),
                slot: 0,
            },
            Command::Send {
                to: 0,
                msg: Note(2),
            },
        ];
        assert_eq!(out, expected);
        let mut reached = Vec::new();
        nodes[2].on_crash(&kept[2].0, &kept[2].1, &mut |s| reached.push(s));
        assert_eq!(reached, [2]);
    }

    #[test]
    fn a_reset_keeps_its_own_kind_and_replaces_another() {
        let nodes = world();
        let (mut st, mut s) = nodes[0].fresh();
        let (mut choices, mut out) = (Choices::new(), Out::new());
        let mut ctx = Context::detached(0, 0, &mut choices, &mut out);
        nodes[0].on_msg(&mut st, &mut s, 1, Note(1), &mut ctx);
        // A restart: the state is reset in place, the storage survives.
        nodes[0].reset(Fresh::Kept(&mut st), None);
        assert_eq!(logged(&st, &s), (0, vec!["l note 1 from 1".into()]));
        // A new run: both reset in place.
        nodes[0].on_msg(&mut st, &mut s, 1, Note(2), &mut ctx);
        nodes[0].reset(Fresh::Kept(&mut st), Some(Fresh::Kept(&mut s)));
        assert!(matches!((&st, &s), (TwoState::L(0), TwoStorage::L(log)) if log.is_empty()));
        // Kept ones of another kind are replaced by this kind's, whole.
        let (mut other_st, mut other_s) = nodes[1].fresh();
        nodes[0].reset(Fresh::Kept(&mut other_st), Some(Fresh::Kept(&mut other_s)));
        assert!(
            matches!((&other_st, &other_s), (TwoState::L(0), TwoStorage::L(log)) if log.is_empty())
        );
        // Of `M`, whose storage is of `L`'s type: replaced all the same.
        let (mut m_st, mut m_s) = nodes[2].fresh();
        nodes[2].on_msg(&mut m_st, &mut m_s, 1, Note(3), &mut ctx);
        nodes[0].reset(Fresh::Kept(&mut m_st), Some(Fresh::Kept(&mut m_s)));
        assert!(matches!(m_st, TwoState::L(0)), "{m_st:?}");
        assert!(
            matches!(&m_s, TwoStorage::L(log) if log.is_empty()),
            "{m_s:?}"
        );
    }

    /// Steps actor 0 (`L`) with `M`'s state or storage or timer where
    /// `swap` says: of the same types as its own, so only the kind's check
    /// can tell.
    fn step_with_another_kinds(swap: &str) {
        let nodes = world();
        let (mut own_st, mut own_s) = nodes[0].fresh();
        let (mut m_st, mut m_s) = nodes[2].fresh();
        let st = if swap == "state" {
            &mut m_st
        } else {
            &mut own_st
        };
        let s = if swap == "storage" {
            &mut m_s
        } else {
            &mut own_s
        };
        let (mut choices, mut out) = (Choices::new(), Out::new());
        let mut ctx = Context::detached(0, 0, &mut choices, &mut out);
        if swap == "timer" {
            nodes[0].on_timer(st, s, TwoTimer::M(Tick::Early), &mut ctx);
        } else {
            nodes[0].on_msg(st, s, 1, Note(1), &mut ctx);
        }
    }

    #[test]
    #[should_panic(expected = "another kind")]
    fn a_state_of_another_kind_is_refused() {
        step_with_another_kinds("state");
    }

    #[test]
    #[should_panic(expected = "another kind")]
    fn a_storage_of_another_kind_is_refused() {
        step_with_another_kinds("storage");
    }

    #[test]
    #[should_panic(expected = "another kind")]
    fn a_timer_of_another_kind_is_refused() {
        step_with_another_kinds("timer");
    }
}
