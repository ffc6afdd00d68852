//! What a fix costs, read from the effect ledger's counters over the same
//! seeds, and the ranking: the Pareto front over the four costs first, ties
//! by fewer changes.

use models::core::hist;
use models::core::ledger::counter;
use models::core::LoadOf;
use sim::Tally;

/// The four costs of a design over a sweep's seeds; lower is better in each.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Costs {
    /// Requests the clients sent per business operation beyond the first.
    pub extra_requests_per_op: f64,
    /// The 99th percentile of the time from intent to first effect, in µs;
    /// `None` when no effect landed in any run.
    pub p99_latency_us: Option<u64>,
    /// The most keys a dedup store held at once, over every run.
    pub dedup_store_keys: u64,
    /// Operations that ended "outcome unknown", left for a person, per operation.
    pub unknown_per_op: f64,
}

impl Costs {
    /// The costs of the runs `t` counts.
    pub fn of(t: &Tally) -> Costs {
        let first = |name: &str| t.counter(name).and_then(|c| c.first()).copied();
        let operations = first(counter::OPERATIONS).unwrap_or(0);
        let unknown = first(counter::UNKNOWN).unwrap_or(0);
        Costs {
            extra_requests_per_op: LoadOf::Attempts
                .ratio(t)
                .map_or(0.0, |r| (r - 1.0).max(0.0)),
            p99_latency_us: t
                .counter(counter::TIME_TO_EFFECT)
                .and_then(|h| hist::quantile(h, 0.99)),
            dedup_store_keys: first(counter::PEAK_DEDUP_KEYS).unwrap_or(0),
            unknown_per_op: if operations == 0 {
                0.0
            } else {
                unknown as f64 / operations as f64
            },
        }
    }

    /// The costs as numbers to compare, lower better: no latency at all
    /// (nothing landed) is no better than the worst.
    fn key(&self) -> [f64; 4] {
        [
            self.extra_requests_per_op,
            self.p99_latency_us.map_or(f64::INFINITY, |us| us as f64),
            self.dedup_store_keys as f64,
            self.unknown_per_op,
        ]
    }

    /// The costs compared in order (requests, latency, store, unknowns), for
    /// a total order among fixes no cost separates on the front.
    pub fn order(&self, other: &Costs) -> std::cmp::Ordering {
        let (a, b) = (self.key(), other.key());
        a.iter()
            .zip(&b)
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    }

    /// Whether `self` is no worse than `other` in every cost and better in one.
    pub fn dominates(&self, other: &Costs) -> bool {
        let (a, b) = (self.key(), other.key());
        a.iter().zip(&b).all(|(x, y)| x <= y) && a.iter().zip(&b).any(|(x, y)| x < y)
    }
}

/// Each cost vector's Pareto layer: 0 for the front (dominated by none),
/// 1 for the front of the rest, and so on.
pub fn layers(costs: &[Costs]) -> Vec<usize> {
    let mut layer = vec![usize::MAX; costs.len()];
    let mut current = 0;
    while layer.contains(&usize::MAX) {
        let open: Vec<usize> = (0..costs.len())
            .filter(|&i| layer[i] == usize::MAX)
            .collect();
        let front: Vec<usize> = open
            .iter()
            .copied()
            .filter(|&i| !open.iter().any(|&j| costs[j].dominates(&costs[i])))
            .collect();
        for i in front {
            layer[i] = current;
        }
        current += 1;
    }
    layer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(extra: f64, p99: u64, keys: u64, unknown: f64) -> Costs {
        Costs {
            extra_requests_per_op: extra,
            p99_latency_us: Some(p99),
            dedup_store_keys: keys,
            unknown_per_op: unknown,
        }
    }

    #[test]
    fn the_front_holds_what_nothing_beats_in_every_cost() {
        let all = [
            c(0.5, 100, 1, 0.0),
            c(0.2, 300, 1, 0.0),
            c(0.6, 200, 2, 0.1), // beaten by the first in every cost
            c(0.5, 100, 1, 0.0), // equal to the first: neither beats the other
        ];
        assert!(all[0].dominates(&all[2]));
        assert!(!all[0].dominates(&all[3]));
        assert_eq!(layers(&all), [0, 0, 1, 0]);
    }

    #[test]
    fn no_effect_at_all_is_no_cheaper_than_a_slow_one() {
        let none = Costs {
            p99_latency_us: None,
            ..c(0.0, 0, 0, 0.0)
        };
        assert!(c(0.0, 5_000_000, 0, 0.0).dominates(&none));
    }
}
