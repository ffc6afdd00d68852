//! The `timer_slots!` macro: a timer enum's [`Timer`](crate::Timer) impl,
//! its slots derived from the order of its variants instead of numbered by
//! hand, so that a new variant cannot take a slot another one has.

/// Implements [`Timer`](crate::Timer) for an enum, one group of slots per
/// listed variant, in the order listed. A group is one variant or several
/// joined by `|` with their field named once, after the last (`Publish |
/// CommitTx(i),`): they share their slots, for two timers of which at most
/// one is ever pending. Each group has one of the forms:
///
/// - `Poll,`: a unit variant, one slot;
/// - `Step { slot },`: a variant with a `u32` field numbering its timers
///   (a job's slot), one slot per value;
/// - `Request(i),`: the same with a tuple variant;
/// - `Relay(t: Timer),`: a variant that carries a timer of another kind (an
///   embedded actor's), one slot per slot of that kind.
///
/// With `K` groups, group `j`'s timer numbered `n` has slot `n * K + j`:
/// the slots interleave, so no group needs to know how many the others use,
/// and a unit variant's slot is its place in the list.
///
/// ```
/// use sim::{timer_slots, Timer};
/// #[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// enum Job { Done { slot: u32 }, Poll, Send(u32), Retry(u32) }
/// # impl std::fmt::Display for Job {
/// #     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { write!(f, "{self:?}") }
/// # }
/// timer_slots!(Job { Done { slot }, Poll, Send | Retry(i), });
/// assert_eq!(Job::Poll.slot(), 1);
/// assert_eq!(Job::Done { slot: 2 }.slot(), 6);
/// assert_eq!(Job::Send(1).slot(), Job::Retry(1).slot());
/// ```
#[macro_export]
macro_rules! timer_slots {
    ($timer:ty { $($groups:tt)* }) => {
        impl $crate::Timer for $timer {
            #[inline]
            fn slot(&self) -> u32 {
                const GROUPS: u32 = $crate::timer_slots!(@count $($groups)*);
                $crate::timer_slots!(@arms self, GROUPS, 0u32, [] $($groups)*)
            }
        }
    };

    (@count) => { 0u32 };
    (@count $($v:ident)|+ ( $t:ident : Timer ), $($rest:tt)*) => {
        1u32 + $crate::timer_slots!(@count $($rest)*)
    };
    (@count $($v:ident)|+ ( $i:ident ), $($rest:tt)*) => {
        1u32 + $crate::timer_slots!(@count $($rest)*)
    };
    (@count $($v:ident)|+ { $f:ident }, $($rest:tt)*) => {
        1u32 + $crate::timer_slots!(@count $($rest)*)
    };
    (@count $($v:ident)|+, $($rest:tt)*) => {
        1u32 + $crate::timer_slots!(@count $($rest)*)
    };

    (@arms $s:ident, $k:expr, $j:expr, [$($arms:tt)*]) => {
        match *$s { $($arms)* }
    };
    (@arms $s:ident, $k:expr, $j:expr, [$($arms:tt)*]
        $($v:ident)|+ ( $t:ident : Timer ), $($rest:tt)*) => {
        $crate::timer_slots!(@arms $s, $k, $j + 1, [$($arms)*
            $(Self::$v($t))|+ => $crate::Timer::slot(&$t) * $k + ($j),
        ] $($rest)*)
    };
    (@arms $s:ident, $k:expr, $j:expr, [$($arms:tt)*]
        $($v:ident)|+ ( $i:ident ), $($rest:tt)*) => {
        $crate::timer_slots!(@arms $s, $k, $j + 1, [$($arms)*
            $(Self::$v($i))|+ => $i * $k + ($j),
        ] $($rest)*)
    };
    (@arms $s:ident, $k:expr, $j:expr, [$($arms:tt)*]
        $($v:ident)|+ { $f:ident }, $($rest:tt)*) => {
        $crate::timer_slots!(@arms $s, $k, $j + 1, [$($arms)*
            $(Self::$v { $f })|+ => $f * $k + ($j),
        ] $($rest)*)
    };
    (@arms $s:ident, $k:expr, $j:expr, [$($arms:tt)*]
        $($v:ident)|+, $($rest:tt)*) => {
        $crate::timer_slots!(@arms $s, $k, $j + 1, [$($arms)*
            $(Self::$v)|+ => $j,
        ] $($rest)*)
    };
}

#[cfg(test)]
mod tests {
    use crate::Timer;
    use std::fmt;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Inner {
        A,
        B { slot: u32 },
    }
    timer_slots!(Inner { A, B { slot }, });

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Outer {
        Part(Inner),
        Poll,
        Send(u32),
        Resend(u32),
    }
    timer_slots!(Outer { Part(t: Timer), Poll, Send | Resend(i), });

    impl fmt::Display for Inner {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{self:?}")
        }
    }
    impl fmt::Display for Outer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{self:?}")
        }
    }

    #[test]
    fn distinct_timers_get_distinct_slots_and_joined_ones_share() {
        let mut timers = vec![Outer::Poll];
        for n in 0..20 {
            timers.push(Outer::Send(n));
            timers.push(Outer::Part(Inner::B { slot: n }));
        }
        timers.push(Outer::Part(Inner::A));
        let mut slots: Vec<u32> = timers.iter().map(Timer::slot).collect();
        slots.sort_unstable();
        slots.dedup();
        assert_eq!(slots.len(), timers.len(), "no two of them share a slot");
        for n in 0..20 {
            assert_eq!(Outer::Send(n).slot(), Outer::Resend(n).slot());
        }
    }

    #[test]
    fn slots_follow_the_order_listed_and_interleave() {
        assert_eq!(Inner::A.slot(), 0);
        assert_eq!(Inner::B { slot: 3 }.slot(), 7);
        assert_eq!(Outer::Poll.slot(), 1);
        assert_eq!(Outer::Send(2).slot(), 8);
        assert_eq!(Outer::Part(Inner::B { slot: 3 }).slot(), 21);
    }
}
