//! The `compose!` macro: an enum of actor kinds that is itself an actor,
//! dispatching to its kinds through [`Narrow`](crate::Narrow) contexts with
//! no `dyn`. It names everything through `$crate`, so it imports nothing and
//! `actor.rs` keeps only the trait and the contexts.

/// Declares an enum of actor kinds that is itself an [`Actor`](crate::Actor): the enum, its
/// state, storage and timer enums, and a dispatch with no `dyn`. Every kind
/// must share the enum's message and observation types.
///
/// ```
/// use sim::{compose, Actor, ActorId, Ctx, Fresh, Message, NoTimer};
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
    (
        $(#[$meta:meta])*
        $vis:vis enum $node:ident, $state:ident, $storage:ident, $timer:ident {
            msg: $msg:ty,
            obs: $obs:ty,
            $( $(#[$vmeta:meta])* $variant:ident($kind:ty) ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $node {
            $( $(#[$vmeta])* $variant($kind), )+
        }

        /// Volatile state of one actor of the enum.
        #[derive(Debug)]
        $vis enum $state {
            $(
                #[doc = concat!("The state of a `", stringify!($variant), "`.")]
                $variant(<$kind as $crate::Actor>::State),
            )+
        }

        /// Durable storage of one actor of the enum.
        #[derive(Debug)]
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
                match self {
                    $( $node::$variant(a) => {
                        // In place where the engine kept this kind's; a new
                        // one (the first run) is built aside and put in.
                        let (mut new_state, mut new_storage) = (None, None);
                        let (inner_state, state_back) = match state {
                            $crate::Fresh::Kept($state::$variant(st)) => ($crate::Fresh::Kept(st), None),
                            other => ($crate::Fresh::New(&mut new_state), Some(other)),
                        };
                        let (inner_storage, storage_back) = match storage {
                            None => (None, None),
                            Some($crate::Fresh::Kept($storage::$variant(s))) => (Some($crate::Fresh::Kept(s)), None),
                            Some(other) => (Some($crate::Fresh::New(&mut new_storage)), Some(other)),
                        };
                        $crate::Actor::reset(a, inner_state, inner_storage);
                        if let Some(back) = state_back {
                            back.set($state::$variant(new_state.expect("reset fills a new state")));
                        }
                        if let Some(back) = storage_back {
                            back.set($storage::$variant(new_storage.expect("reset fills a new storage")));
                        }
                    } )+
                }
            }

            fn on_start(
                &self,
                state: &mut $state,
                storage: &mut $storage,
                ctx: &mut impl $crate::Ctx<Self>,
            ) {
                match (self, state, storage) {
                    $( ($node::$variant(a), $state::$variant(st), $storage::$variant(s)) => {
                        let mut c = $crate::Narrow::<Self, _, _>::with_own_slots(ctx, $timer::$variant);
                        $crate::Actor::on_start(a, st, s, &mut c)
                    } )+
                    #[allow(unreachable_patterns)]
                    _ => unreachable!("state and storage kinds match the actor kind"),
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
                match (self, state, storage) {
                    $( ($node::$variant(a), $state::$variant(st), $storage::$variant(s)) => {
                        let mut c = $crate::Narrow::<Self, _, _>::with_own_slots(ctx, $timer::$variant);
                        $crate::Actor::on_msg(a, st, s, from, msg, &mut c)
                    } )+
                    #[allow(unreachable_patterns)]
                    _ => unreachable!("state kind matches actor kind"),
                }
            }

            fn on_timer(
                &self,
                state: &mut $state,
                storage: &mut $storage,
                timer: $timer,
                ctx: &mut impl $crate::Ctx<Self>,
            ) {
                match (self, state, storage, timer) {
                    $( ($node::$variant(a), $state::$variant(st), $storage::$variant(s), $timer::$variant(t)) => {
                        let mut c = $crate::Narrow::<Self, _, _>::with_own_slots(ctx, $timer::$variant);
                        $crate::Actor::on_timer(a, st, s, t, &mut c)
                    } )+
                    #[allow(unreachable_patterns)]
                    _ => unreachable!("timer kind matches actor kind"),
                }
            }

            fn on_crash(
                &self,
                state: &$state,
                storage: &$storage,
                reached: &mut dyn FnMut($crate::SituationId),
            ) {
                match (self, state, storage) {
                    $( ($node::$variant(a), $state::$variant(st), $storage::$variant(s)) => {
                        $crate::Actor::on_crash(a, st, s, reached)
                    } )+
                    #[allow(unreachable_patterns)]
                    _ => unreachable!("state and storage kinds match the actor kind"),
                }
            }
        }
    };
}
