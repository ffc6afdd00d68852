//! A rollout of a consumer instance: from a virtual time on, other
//! settings. The instance is replaced the way a rolling deploy replaces
//! it, with a graceful shutdown: the old process finishes the deliveries
//! it holds under its own settings (each job keeps the version that took
//! it), the new one takes every delivery from its time on. So for a
//! moment an instance runs both, as a drain does, and across instances
//! old and new versions consume the same queue side by side. The switch
//! is a timer set at the start, not a check per delivery.

use super::state::{ConsumerState, ConsumerTimer};
use super::{Consumer, ConsumerConfig};
use crate::core::{Carries, Obs};
use crate::messaging::msg::Msg;
use crate::messaging::situations as sit;
use sim::{Ctx, TimeUs};
use std::marker::PhantomData;

/// Most versions a consumer has: its first and its rollouts'.
pub const MAX_CONSUMER_VERSIONS: usize = 16;

/// One later version of a consumer: from `from_us` on, `consumer`.
pub(super) struct Version<W> {
    pub(super) from_us: TimeUs,
    pub(super) consumer: Consumer<W>,
}

impl<W> Consumer<W> {
    /// A consumer configured by `cfg` until the first of `later`, each a
    /// version's start and its settings, in time order.
    pub fn with_rollouts(cfg: ConsumerConfig, later: Vec<(TimeUs, ConsumerConfig)>) -> Self {
        assert!(
            later.len() < MAX_CONSUMER_VERSIONS,
            "at most {MAX_CONSUMER_VERSIONS} versions"
        );
        debug_assert!(later.windows(2).all(|w| w[0].0 < w[1].0));
        let versioned = !later.is_empty();
        Consumer {
            cfg: ConsumerConfig {
                version: u8::from(versioned),
                ..cfg
            },
            versions: later
                .into_iter()
                .zip(2..)
                .map(|((from_us, cfg), version)| Version {
                    from_us,
                    consumer: Consumer::new(ConsumerConfig { version, ..cfg }),
                })
                .collect(),
            wire: PhantomData,
        }
    }

    /// The consumer of version `v` (0: the first).
    pub(super) fn of(&self, v: u8) -> &Self {
        match v {
            0 => self,
            v => &self.versions[usize::from(v) - 1].consumer,
        }
    }

    /// The version deployed at `now_us` (0: the first).
    fn version_at(&self, now_us: TimeUs) -> u8 {
        self.versions.iter().filter(|v| v.from_us <= now_us).count() as u8
    }

    /// Every version's settings, the first one's first.
    pub fn configs(&self) -> impl Iterator<Item = &ConsumerConfig> {
        std::iter::once(&self.cfg).chain(self.versions.iter().map(|v| &v.consumer.cfg))
    }

    /// When the version after the one running starts, if one does.
    fn next_from_us(&self, running: u8) -> Option<TimeUs> {
        self.versions.get(usize::from(running)).map(|v| v.from_us)
    }
}

impl<W: Carries<Msg>> Consumer<W> {
    /// On a (re)start: the version deployed now runs (a crash does not undo
    /// a deploy), and the next one is due at its time.
    pub(super) fn start_version(&self, st: &mut ConsumerState, ctx: &mut impl Ctx<Self>) {
        if self.versions.is_empty() {
            return;
        }
        st.version = self.version_at(ctx.now_us());
        self.deploy_next(st.version, ctx);
    }

    /// The deploy timer: the next version takes every delivery from now on.
    pub(super) fn on_deploy(&self, st: &mut ConsumerState, ctx: &mut impl Ctx<Self>) {
        st.version = self.version_at(ctx.now_us());
        ctx.reached(sit::CONSUMER_REDEPLOYED);
        ctx.observe(Obs::Deployed {
            version: st.version + 1,
        });
        self.deploy_next(st.version, ctx);
    }

    fn deploy_next(&self, running: u8, ctx: &mut impl Ctx<Self>) {
        if let Some(at_us) = self.next_from_us(running) {
            ctx.set_timer(ConsumerTimer::Deploy, at_us.saturating_sub(ctx.now_us()));
        }
    }
}
