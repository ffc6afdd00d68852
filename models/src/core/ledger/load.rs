//! How the ledger records the load on each layer: requests per second as
//! they arrive, work taken and wasted, requests shed, and what clients'
//! budgets and breakers held back.

use super::Ledger;
use crate::core::obs::Layer;
use sim::TimeUs;

/// Requests per second at one layer, tracked as they arrive.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Rate {
    second: u64,
    in_second: u32,
    /// The most requests it received within one second.
    pub(super) peak: u32,
}

/// How one layer with a capacity fared in a run.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct LayerLoad {
    /// Requests its workers took.
    pub(super) work: u32,
    /// Of those, requests whose client had already stopped waiting.
    pub(super) wasted: u32,
    /// Requests it refused because it was full.
    pub(super) shed: u32,
    /// The last time it shed a request or worked for nobody.
    pub(super) last_overload_us: Option<TimeUs>,
}

impl Ledger {
    /// A request arrived at the layer whose [`Layer::index`] is `layer_at`:
    /// one more in this second.
    #[inline]
    pub(super) fn arrived(&mut self, layer_at: usize, now_us: TimeUs) {
        let rate = &mut self.rates[layer_at];
        let second = now_us / sim::US_PER_S;
        if second != rate.second || rate.in_second == 0 {
            rate.second = second;
            rate.in_second = 0;
        }
        rate.in_second += 1;
        rate.peak = rate.peak.max(rate.in_second);
    }

    /// A worker of `layer` took attempt `attempt` of the operation recorded
    /// at `at`: wasted if its client had stopped waiting for it.
    #[inline]
    pub(super) fn work(&mut self, at: Option<usize>, now_us: TimeUs, layer: &Layer, attempt: u32) {
        let wasted = at.is_some_and(|i| self.op_at(i).stopped_waiting(attempt));
        let l = &mut self.load[usize::from(layer.index)];
        l.work += 1;
        if wasted {
            l.wasted += 1;
            l.last_overload_us = Some(now_us);
        }
    }

    /// `layer` refused a request because it was full.
    #[inline]
    pub(super) fn shed(&mut self, now_us: TimeUs, layer: &Layer) {
        let l = &mut self.load[usize::from(layer.index)];
        l.shed += 1;
        l.last_overload_us = Some(now_us);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contention::RESOURCE_LAYER;
    use sim::US_PER_S;

    #[test]
    fn a_layers_peak_is_its_busiest_second() {
        let mut l = Ledger::default();
        let at = usize::from(RESOURCE_LAYER.index);
        for now_us in [0, 1, 2, US_PER_S, 3 * US_PER_S, 3 * US_PER_S + 5] {
            l.arrived(at, now_us);
        }
        assert_eq!(l.rates[at].peak, 3, "three in second 0, one, then two");
    }

    #[test]
    fn overload_is_a_shed_or_work_for_nobody() {
        let mut l = Ledger::default();
        let at = usize::from(RESOURCE_LAYER.index);
        l.work(None, 10, &RESOURCE_LAYER, 1);
        assert_eq!((l.load[at].work, l.load[at].wasted), (1, 0));
        assert_eq!(
            l.load[at].last_overload_us, None,
            "work for a waiting client"
        );
        l.shed(20, &RESOURCE_LAYER);
        assert_eq!(l.load[at].shed, 1);
        assert_eq!(l.load[at].last_overload_us, Some(20));
    }
}
