//! Shortcuts for a small model: [`Plain`], a model that is its world, its
//! actors and a judge function; [`Tick`], the timer of an actor with one;
//! and `display_as_debug!`, for messages and timers whose names in traces
//! may be their `Debug` forms.

use crate::engine::{Model, Oracle, Violation};
use crate::world::World;
use crate::{Actor, ActorId, TimeUs, Timer};

/// What a judge function keeps between observations of one run, starting
/// from `S::default()`, and what it says of each observation.
pub type Judge<S, Obs> = fn(&mut S, &Obs) -> Option<Violation>;

/// A model made of a world, one actor per actor name, and a judge of safety
/// alone: a function from what it has seen in this run (`S`, default at
/// the start of each run) and one observation to a violation, if any.
pub struct Plain<N: Actor, S> {
    /// The world: actor names, links, crashes, phases, limits.
    pub world: World,
    /// One actor per name in `world`, in the same order.
    pub nodes: Vec<N>,
    judge: Judge<S, N::Obs>,
}

impl<N: Actor, S> Plain<N, S> {
    /// The model of `world` with `nodes`, judged by `judge`.
    pub fn new(world: World, nodes: Vec<N>, judge: Judge<S, N::Obs>) -> Self {
        Plain {
            world,
            nodes,
            judge,
        }
    }
}

/// The oracle of a [`Plain`] model: its judge and what the judge has seen.
pub struct PlainOracle<S, Obs> {
    seen: S,
    judge: Judge<S, Obs>,
}

impl<S: Default, Obs> Oracle for PlainOracle<S, Obs> {
    type Obs = Obs;
    fn reset(&mut self) {
        self.seen = S::default();
    }
    fn observe(&mut self, _: TimeUs, _: ActorId, obs: &Obs) -> Option<Violation> {
        (self.judge)(&mut self.seen, obs)
    }
}

impl<N: Actor, S: Default> Model for Plain<N, S> {
    type Node = N;
    type Oracle = PlainOracle<S, N::Obs>;
    fn world(&self) -> &World {
        &self.world
    }
    fn nodes(&self) -> &[N] {
        &self.nodes
    }
    fn new_oracle(&self) -> Self::Oracle {
        PlainOracle {
            seen: S::default(),
            judge: self.judge,
        }
    }
}

/// The timer of an actor that has one ("tick" in traces).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tick;

impl std::fmt::Display for Tick {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("tick")
    }
}

impl Timer for Tick {}

/// Implements `Display` as `Debug` for each type named: trace lines then
/// show a message or a timer as its `Debug` form (`Data(3)`).
#[macro_export]
macro_rules! display_as_debug {
    ($($t:ty),+ $(,)?) => {
        $(impl ::std::fmt::Display for $t {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::fmt::Debug::fmt(self, f)
            }
        })+
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_most_once(seen: &mut u32, &id: &u8) -> Option<Violation> {
        let twice = *seen & 1 << id != 0;
        *seen |= 1 << id;
        twice.then(|| Violation::new("at-most-once", id.into(), String::new()))
    }

    #[test]
    fn a_plain_oracle_forgets_what_it_saw_at_each_reset() {
        let mut oracle = PlainOracle {
            seen: 0u32,
            judge: at_most_once,
        };
        assert!(oracle.observe(0, 0, &3).is_none());
        assert_eq!(oracle.observe(0, 0, &3).map(|v| v.operation), Some(3));
        oracle.reset();
        assert!(oracle.observe(0, 0, &3).is_none());
        assert_eq!(Tick.to_string(), "tick");
    }
}
