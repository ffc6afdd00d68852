//! How the registry numbers what models declare. A model numbers its
//! situations, spaces and layers locally, from 0, in its own folder, and
//! names its design-warning rules there ([`Declares`]); the `registry!` call
//! gives each model where its numbers begin ([`Registered`]), in the order it
//! lists the models, at compile time. So ids stay `const` (actors match on
//! them, sets index by them, nothing is looked up on the hot path), no two
//! models can share one, and a new model needs no number picked by hand.

use crate::core::{Layer, SituationDoc, Space};
use sim::SituationId;

/// What a model declares in its own folder, numbered locally.
pub trait Declares {
    /// How many situation ids it numbers from its first, gaps included: its
    /// `situations.rs` writes each id as `FIRST + n` (see [`span`]).
    const SITUATIONS: u16;
    /// Its spaces; the i-th is written with `space_code::<M>(i)` as its code.
    const SPACES: &'static [&'static Space];
    /// Its layers; the i-th gets `FIRST_LAYER + i` as its index ([`layer_index`]).
    const LAYERS: &'static [&'static Layer];
    /// The design-warning rules its loader checks (`[expect] warnings` names them).
    const RULES: &'static [&'static str];
}

/// Where the registry begins a model's numbers; `registry!` implements it,
/// nothing else does.
pub trait Registered: Declares {
    /// Its first situation id: the ids after those of the models listed before it.
    const FIRST_SITUATION: SituationId;
    /// Its first space's place among every model's spaces (from 0); the
    /// code is [`space_code`]'s.
    const FIRST_SPACE: u8;
    /// Its first layer index.
    const FIRST_LAYER: u8;
}

/// Space codes no model is given. Violation signatures number an operation
/// by its space's code, and repro files keep that number: the contention
/// model's files carry 8 and 9, so 6 and 7 stay unused and the registry's
/// numbering reproduces every code a file may hold.
pub const UNUSED_SPACE_CODES: &[u8] = &[6, 7];

/// The code of `M`'s space number `local` (its place in `M::SPACES`).
pub const fn space_code<M: Registered>(local: u8) -> u8 {
    nth_space_code(M::FIRST_SPACE + local)
}

/// The index of `M`'s layer number `local` (its place in `M::LAYERS`).
pub const fn layer_index<M: Registered>(local: u8) -> u8 {
    M::FIRST_LAYER + local
}

/// The code of the space at place `n` among every model's (from 0): the
/// `n`-th code from 1 that is not in [`UNUSED_SPACE_CODES`].
pub const fn nth_space_code(n: u8) -> u8 {
    let mut code = 0;
    let mut left = n as usize + 1;
    while left > 0 {
        code += 1;
        let mut unused = false;
        let mut i = 0;
        while i < UNUSED_SPACE_CODES.len() {
            unused |= UNUSED_SPACE_CODES[i] == code;
            i += 1;
        }
        if !unused {
            left -= 1;
        }
    }
    code
}

/// How many ids from `first` the situations `docs` use: one past the
/// highest, less `first`. Panics (at compile time, where a model's
/// `Declares::SITUATIONS` asks) if one is below `first`.
pub const fn span(docs: &[SituationDoc], first: SituationId) -> u16 {
    let mut n = 0;
    let mut i = 0;
    while i < docs.len() {
        assert!(
            docs[i].id >= first,
            "a situation below its model's first id"
        );
        let local = docs[i].id - first;
        if local + 1 > n {
            n = local + 1;
        }
        i += 1;
    }
    n
}

/// `parts` one after another, as one array of exactly `N`.
pub const fn concat<const N: usize>(parts: &[&[&'static str]]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut at = 0;
    let mut p = 0;
    while p < parts.len() {
        let mut i = 0;
        while i < parts[p].len() {
            out[at] = parts[p][i];
            at += 1;
            i += 1;
        }
        p += 1;
    }
    assert!(at == N, "the lengths of the parts add up to N");
    out
}

/// Whether `M`'s spaces and layers carry the numbers the registry gave
/// them (a model writes `space_code::<M>(i)` for its i-th space).
pub const fn numbered_in_place<M: Registered>() -> bool {
    let mut i = 0;
    while i < M::SPACES.len() {
        if M::SPACES[i].code != space_code::<M>(i as u8) {
            return false;
        }
        i += 1;
    }
    let mut i = 0;
    while i < M::LAYERS.len() {
        if M::LAYERS[i].index as usize != M::FIRST_LAYER as usize + i {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn space_codes_step_over_the_unused_ones() {
        let codes: Vec<u8> = (0..8).map(nth_space_code).collect();
        assert_eq!(codes, [1, 2, 3, 4, 5, 8, 9, 10], "6 and 7 are never given");
    }

    #[test]
    fn a_span_counts_gaps_and_concat_keeps_the_order() {
        let docs = [
            SituationDoc {
                id: 12,
                name: "a",
                doc: "",
            },
            SituationDoc {
                id: 10,
                name: "b",
                doc: "",
            },
        ];
        assert_eq!(span(&docs, 10), 3);
        assert_eq!(span(&[], 10), 0);
        let all: [&str; 3] = concat(&[&["x"], &[], &["y", "z"]]);
        assert_eq!(all, ["x", "y", "z"]);
    }

    /// A model that writes a code of its own choosing is caught (the
    /// registry checks every model with this at compile time).
    #[test]
    fn a_space_numbered_by_hand_is_refused() {
        struct ByHand;
        static PICKED: Space = Space {
            code: 40,
            noun: "thing",
            id_prefix: "",
            unit: None,
            key_prefix: "thing",
            published: false,
        };
        impl Declares for ByHand {
            const SITUATIONS: u16 = 0;
            const SPACES: &'static [&'static Space] = &[&PICKED];
            const LAYERS: &'static [&'static Layer] = &[];
            const RULES: &'static [&'static str] = &[];
        }
        impl Registered for ByHand {
            const FIRST_SITUATION: SituationId = 0;
            const FIRST_SPACE: u8 = 0;
            const FIRST_LAYER: u8 = 0;
        }
        assert!(!numbered_in_place::<ByHand>());
        assert_eq!(space_code::<ByHand>(0), 1);
    }
}
