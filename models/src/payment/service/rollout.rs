//! A rollout of the service: from a virtual time on, other settings. The
//! new version takes over the way a deploy does: the process restarts (no
//! crash, no lost step to the engine): what it held in memory (requests
//! queued or mid-step, bank calls waiting for their answer) is gone, its
//! database (the key table, the bookings) is kept, and the new version
//! recovers the keys left "in progress" as any restart does. A key table
//! the old version never wrote (`idempotency = "none"`) is empty for the
//! requests it handled: their retries are new requests to the new version,
//! as they are to a real service that starts to record keys.

use super::state::ServiceState;
use super::timers::ServiceTimer;
use super::{Idempotency, Service, ServiceConfig, ServiceStorage};
use crate::core::{Carries, Obs};
use crate::payment::msg::Msg;
use crate::payment::situations as sit;
use sim::{Ctx, TimeUs};

/// Most versions a service has: its first and its rollouts'.
pub const MAX_VERSIONS: usize = 16;

/// One later version of the service: from `from_us` on, `service`.
pub(super) struct Version<W> {
    pub(super) from_us: TimeUs,
    pub(super) service: Service<W>,
}

impl<W> Service<W> {
    /// A service configured by `cfg` until the first of `later`, each a
    /// version's start and its settings, in time order.
    pub fn with_rollouts(cfg: ServiceConfig, later: Vec<(TimeUs, ServiceConfig)>) -> Self {
        assert!(
            later.len() < MAX_VERSIONS,
            "at most {MAX_VERSIONS} versions"
        );
        debug_assert!(later.windows(2).all(|w| w[0].0 < w[1].0));
        let versioned = !later.is_empty();
        let mut s = Service::new(ServiceConfig {
            version: u8::from(versioned),
            ..cfg
        });
        s.versions = later
            .into_iter()
            .zip(2..)
            .map(|((from_us, cfg), version)| Version {
                from_us,
                service: Service::new(ServiceConfig { version, ..cfg }),
            })
            .collect();
        s
    }

    /// The version deployed at `now_us` (0: the first) and its service.
    fn version_at(&self, now_us: TimeUs) -> (u8, &Self) {
        match self.versions.iter().rposition(|v| v.from_us <= now_us) {
            Some(i) => (i as u8 + 1, &self.versions[i].service),
            None => (0, self),
        }
    }

    /// Every version's settings, the first one's first.
    pub fn configs(&self) -> impl Iterator<Item = &ServiceConfig> {
        std::iter::once(&self.cfg).chain(self.versions.iter().map(|v| &v.service.cfg))
    }
}

impl<W: Carries<Msg>> Service<W> {
    /// The version that handles a step at this time, and whether it has just
    /// been deployed: then the old version's memory is gone (its timers
    /// with it) and the new one has recovered what the database holds.
    // Inlined into every step for its first check: most services have no
    // rollout, and a call per step cost more than the check.
    #[inline(always)]
    pub(super) fn deployed(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        ctx: &mut impl Ctx<Self>,
    ) -> (&Self, bool) {
        if self.versions.is_empty() {
            return (self, false);
        }
        self.deployed_version(st, s, ctx)
    }

    /// [`deployed`](Self::deployed) for a service with a rollout.
    #[inline(never)]
    fn deployed_version(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        ctx: &mut impl Ctx<Self>,
    ) -> (&Self, bool) {
        let (version, this) = self.version_at(ctx.now_us());
        if version == st.version {
            return (this, false);
        }
        forget(st, ctx);
        st.version = version;
        ctx.reached(sit::SERVICE_REDEPLOYED);
        ctx.observe(Obs::Deployed {
            version: version + 1,
        });
        this.restarted(st, s, ctx);
        (this, true)
    }

    /// The version a (re)start runs: a crash does not undo a deploy.
    pub(super) fn started(&self, st: &mut ServiceState, now_us: TimeUs) -> &Self {
        let (version, this) = self.version_at(now_us);
        st.version = version;
        this
    }

    /// What this version does when its process starts again. A version that
    /// ignores keys has no job that reads the key table: keys another
    /// version left "in progress" stay so, and nothing drives them.
    pub(super) fn restarted(
        &self,
        st: &mut ServiceState,
        s: &mut ServiceStorage,
        ctx: &mut impl Ctx<Self>,
    ) {
        match self.cfg.idempotency {
            Idempotency::None => ctx.observe(Obs::ExecutorsLost),
            _ => self.recover(st, s, ctx),
        }
    }
}

/// Drops what the old process held in memory, and its timers.
fn forget<W: Carries<Msg>>(st: &mut ServiceState, ctx: &mut impl Ctx<Service<W>>) {
    for (slot, _) in st.calls.iter() {
        ctx.cancel_timer(ServiceTimer::BankTimeout { slot: slot as u32 });
    }
    for (slot, _) in st.steps.iter() {
        ctx.cancel_timer(ServiceTimer::Step { slot: slot as u32 });
    }
    ctx.cancel_timer(ServiceTimer::Recover);
    ctx.cancel_timer(ServiceTimer::Dequeue);
    st.clear();
}
