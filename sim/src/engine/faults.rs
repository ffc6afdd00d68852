//! Faults: the swarm mix a seed draws, crashes before a step, and what the
//! network does to a message (partitions, loss, duplication, delay).

use super::queue::EventKind;
use super::run::Run;
use super::{LinkNow, Model, MsgOf, ObsOf, Phase, TimerOf};
use crate::actor::{ActorId, Message, TimeUs};
use crate::choice::{StreamId, StreamLayout};
use crate::trace::{DropReason, TraceKind, Tracer};
use crate::world::{Partition, World};

mod links;
pub(super) use links::{link_draws, LinkDraws};

/// The swarm stream's decisions that pick every range at its maximum: what
/// exhaustive mode replays so that each fault the scenario allows "may happen".
/// Mirrors the order of draws in `draw_swarm_mix`; ranges with `lo == hi` are
/// no decision and take no place in the stream.
pub fn swarm_max_decisions(world: &World) -> Vec<u64> {
    let n = world.actor_count();
    let mut out = Vec::new();
    let put = |out: &mut Vec<u64>, lo: u32, hi: u32| {
        if hi > lo {
            out.push(u64::from(hi - lo));
        }
    };
    for from in 0..n {
        for to in 0..n {
            let l = world.link(from, to);
            put(&mut out, l.loss_per_mille.lo, l.loss_per_mille.hi);
            put(&mut out, l.duplicate_per_mille.lo, l.duplicate_per_mille.hi);
        }
    }
    for c in &world.crashes {
        put(&mut out, c.crash_per_mille.lo, c.crash_per_mille.hi);
    }
    let rp = &world.random_partition;
    if rp.enabled() {
        // At its maximum probability the partition happens (a decision only
        // below 1000 per mille), between the last two actors, for its longest
        // duration, from the start of the run.
        put(&mut out, rp.per_mille.lo, rp.per_mille.hi);
        if rp.per_mille.hi < 1000 {
            out.push(1);
        }
        out.push(u64::from(n - 1));
        if n > 2 {
            out.push(u64::from(n - 2));
        }
        if rp.duration_us_max > rp.duration_us_min {
            out.push(rp.duration_us_max - rp.duration_us_min);
        }
        if world.fault_phase_us > rp.duration_us_max {
            out.push(0);
        }
    }
    for k in &world.kind_faults {
        for r in [k.loss_per_mille, k.duplicate_per_mille]
            .into_iter()
            .flatten()
        {
            put(&mut out, r.lo, r.hi);
        }
    }
    out
}

impl<M: Model, T: Tracer<MsgOf<M>, ObsOf<M>, TimerOf<M>>> Run<'_, '_, '_, M, T> {
    /// This seed's random partition, if the scenario allows one: drawn
    /// from the swarm stream after the links' and crashes' mix.
    fn draw_random_partition(&mut self, world: &World) {
        let n = world.actor_count();
        let swarm = StreamLayout::SWARM;
        self.sim.random_partition = None;
        // Drawn after everything else, and only when asked for, so that the
        // swarm streams of scenarios without it stay as they were.
        let rp = world.random_partition;
        if rp.enabled() {
            debug_assert!(n >= 2);
            let choices = &mut self.sim.choices;
            let p = choices.range(
                swarm,
                u64::from(rp.per_mille.lo),
                u64::from(rp.per_mille.hi),
            );
            if choices.chance(swarm, p as u32) {
                let a = choices.choose(swarm, u64::from(n)) as ActorId;
                let b = (a + 1 + choices.choose(swarm, u64::from(n - 1)) as ActorId) % n;
                // The whole cut lies inside the fault phase: validation keeps
                // the longest duration within it, so no cut is silently shortened.
                let duration_us = choices.range(swarm, rp.duration_us_min, rp.duration_us_max);
                let latest_start_us = world.fault_phase_us.saturating_sub(duration_us);
                let start_us = choices.range(swarm, 0, latest_start_us);
                let cut = Partition {
                    a,
                    b,
                    both_ways: true,
                    start_us,
                    end_us: start_us.saturating_add(duration_us),
                };
                self.sim.random_partition = Some(cut);
                self.trace(TraceKind::PartitionMix {
                    a,
                    b,
                    start_us: cut.start_us,
                    end_us: cut.end_us,
                });
            }
        }
    }

    /// Swarm testing: each seed draws its own fault mix within the scenario's ranges.
    pub(super) fn draw_swarm_mix(&mut self, world: &World) {
        let n = world.actor_count();
        let swarm = StreamLayout::SWARM;
        // A traced run draws one by one, so that each link's mix is traced;
        // a sweep's run takes the words and draws each link at its first use.
        self.sim.mix_now = self.sim.next_mix_stamp();
        if T::ENABLED || !self.take_link_words() {
            self.draw_link_mix(world);
        } else {
            self.sim.mix_links_seen();
        }
        for actor in 0..n {
            let c = world.crashes[actor as usize].crash_per_mille;
            let p = self
                .sim
                .choices
                .range(swarm, u64::from(c.lo), u64::from(c.hi)) as u32;
            let stream = self.sim.layout.crash(actor);
            self.sim.crash_odds[actor as usize] = self.sim.choices.odds(stream, p);
            if c.lo != c.hi {
                self.trace(TraceKind::CrashMix {
                    actor,
                    crash_per_mille: p,
                });
            }
        }
        self.draw_random_partition(world);
        // A rate the entry leaves to its link is the one the link drew above,
        // so "only duplicate the status queries" keeps them exactly as lossy
        // as every other message on that link in this seed.
        for (i, k) in world.kind_faults.iter().enumerate() {
            let link = self.sim.link_now((k.from * n + k.to) as usize);
            let choices = &mut self.sim.choices;
            // Validation keeps every rate at most 1000.
            let mut rate = |r: Option<crate::world::PerMilleRange>, drawn: u16| match r {
                Some(r) => choices.range(swarm, u64::from(r.lo), u64::from(r.hi)) as u16,
                None => drawn,
            };
            let lp = rate(k.loss_per_mille, link.loss_pm);
            let dp = rate(k.duplicate_per_mille, link.dup_pm);
            let now = &mut self.sim.kind_now[i];
            now.loss_pm = lp;
            now.dup_pm = dp;
        }
    }

    /// The words of the swarm stream that [`draw_link_mix`](Self::draw_link_mix)
    /// would scale into the links' rates, copied as they are in a sweep's
    /// run, a buffer at a time (the blocks computed ahead hold the first ones
    /// from the second run of a thread on; a world with more rates than one
    /// buffer holds takes the rest after a refill). The stream moves on past
    /// them as if each had been drawn, so the crash rates and everything
    /// after take the words they always did; each link scales its own words
    /// at its first use ([`link_now`](super::Sim::link_now)). False if it took
    /// nothing, for the caller to draw one by one.
    #[inline]
    fn take_link_words(&mut self) -> bool {
        let sim = &mut *self.sim;
        // The last two words are padding, never drawn.
        let total = sim.swarm_words.len() - 2;
        let mut done = 0;
        while done < total {
            let Some(words) = sim.choices.plain_words(StreamLayout::SWARM, total - done) else {
                // Only ever on the first ask, before anything was taken.
                debug_assert_eq!(done, 0);
                return false;
            };
            sim.swarm_words[done..done + words.len()].copy_from_slice(words);
            done += words.len();
        }
        true
    }

    /// Each link's loss and duplication for this seed, drawn one by one.
    fn draw_link_mix(&mut self, world: &World) {
        let n = world.actor_count();
        let swarm = StreamLayout::SWARM;
        // Links in row-major order, as always; a fixed link draws nothing.
        for k in 0..self.sim.swarm_links.len() {
            let i = self.sim.swarm_links[k];
            // The link by its row-major index; its ends only for the trace.
            let l = &world.links[i as usize];
            let (loss, dup) = (l.loss_per_mille, l.duplicate_per_mille);
            let choices = &mut self.sim.choices;
            // Validation keeps every rate at most 1000.
            let lp = choices.range(swarm, u64::from(loss.lo), u64::from(loss.hi)) as u16;
            let dp = choices.range(swarm, u64::from(dup.lo), u64::from(dup.hi)) as u16;
            self.sim.set_mixed(i as usize, lp, dp);
            self.trace(TraceKind::LinkMix {
                from: i / n,
                to: i % n,
                loss_per_mille: u32::from(lp),
                duplicate_per_mille: u32::from(dp),
            });
        }
    }

    /// Whether `actor` crashes before its next step: the caller then frees
    /// what the step would have taken, [`crash`](Self::crash)es it and hands
    /// a tracer that asks the actor's snapshot.
    #[inline(always)]
    pub(super) fn crash_rolled(&mut self, actor: ActorId) -> bool {
        if self.phase != Phase::Fault {
            return false;
        }
        // The rate and the stream as the swarm mix set them up for this run:
        // the same `chance` as ever, with one draw and one comparison.
        let odds = self.sim.crash_odds[actor as usize];
        self.sim.choices.roll(&odds)
    }

    /// `actor` goes down now: its timers die with it and its restart is queued.
    #[cold]
    #[inline(never)]
    pub(super) fn crash(&mut self, actor: ActorId) {
        let world = self.model.world();
        let c = &world.crashes[actor as usize];
        let stream = self.sim.crash_odds[actor as usize].stream();
        // The state stays where it is, only for its allocations: down is down.
        self.sim.up[actor as usize] = false;
        self.sim.down_since[actor as usize] = self.now_us;
        for g in &mut self.sim.timer_gen[actor as usize] {
            *g = g.wrapping_add(1);
        }
        self.faults.crashed += 1;
        // The caller hands the tracer the crashed actor's snapshot.
        self.trace(TraceKind::Crash { actor });
        let delay = self
            .sim
            .choices
            .range(stream, c.restart_us_min, c.restart_us_max);
        self.push(
            self.now_us.saturating_add(delay),
            EventKind::Restart { actor },
        );
    }

    /// What a send of `msg` on link `i` reads where the link's record will
    /// not do (a link not drawn yet in this run, or with kinds of their
    /// own): the link drawn now, and the rates and delays of `msg`'s kind
    /// where it has its own. Out of line, off the send's way.
    #[cold]
    #[inline(never)]
    fn link_round(&mut self, i: usize, msg: &MsgOf<M>) -> LinkFate {
        let link = self.sim.link_now(i);
        let mut fate = LinkFate::of(&link);
        if link.kinds_len > 0 {
            let kind = msg.kind();
            let start = link.kinds_start as usize;
            let run = &self.sim.kind_index[start..start + link.kinds_len as usize];
            debug_assert!(run.iter().all(|&(l, ..)| l as usize == i));
            if let Some(&(.., k)) = run.iter().find(|&&(_, kind_of, _)| kind_of == kind) {
                let k = self.sim.kind_now[k as usize];
                fate.loss_pm = k.loss_pm;
                fate.dup_pm = k.dup_pm;
                fate.delay_us_min = k.delay_us_min;
                fate.delay_us_max = k.delay_us_max;
            }
        }
        fate
    }

    pub(super) fn send(&mut self, from: ActorId, to: ActorId, msg: MsgOf<M>) {
        let world = self.model.world();
        let n = world.actor_count();
        assert!(to < n, "send to unknown actor {to}");
        let i = (from * n + to) as usize;
        // Nearly always: no kind of its own on the link, its rates this
        // run's. The stamp is compared where it lies and only the fields a
        // send reads are taken from the record, into registers: a copy of
        // the whole record on the stack, merged with the way round's, had
        // the stamp's comparison and the delays wait on its reload.
        let now = &self.sim.links[i];
        let link = if now.ready >= self.sim.mix_now {
            LinkFate::of(now)
        } else {
            self.link_round(i, &msg)
        };
        let msg_id = self.sim.next_msg_id;
        self.sim.next_msg_id = self.sim.next_msg_id.wrapping_add(1);
        // Links come first among the streams, row-major: link `i`'s stream,
        // with no second multiply.
        let stream = (i + 1) as StreamId;
        debug_assert_eq!(stream, self.sim.layout.link(from, to));
        let route = Route { from, to, msg_id };
        let fate = if self.phase == Phase::Fault && self.partitioned(world, from, to) {
            self.faults.partitioned += 1;
            Err(DropReason::Partitioned)
        } else {
            match self.fate_at_once(stream, &link) {
                Some(fate) => fate,
                None => self.fate_one_by_one(stream, &link),
            }
        };
        match fate {
            Ok(delays) => self.queue_copies(route, msg, delays),
            Err(reason) => self.trace(TraceKind::Drop {
                from,
                to,
                msg,
                msg_id,
                reason,
            }),
        }
    }

    /// Whether a partition cuts `from → to` now (no draw).
    #[inline(always)]
    fn partitioned(&self, world: &World, from: ActorId, to: ActorId) -> bool {
        let now_us = self.now_us;
        world.partitions.iter().any(|p| p.cuts(from, to, now_us))
            || self
                .sim
                .random_partition
                .is_some_and(|p| p.cuts(from, to, now_us))
    }

    /// What the network does to a message no partition cut: lost, or its
    /// copies' delays. In this order, as every seed recorded before: loss,
    /// then duplication (in the fault phase only), then the first copy's
    /// delay, then the second's. One by one, each draw on its own.
    #[inline(always)]
    fn fate_one_by_one(&mut self, stream: StreamId, link: &LinkFate) -> Result<Delays, DropReason> {
        let mut copies = 1;
        if self.phase == Phase::Fault {
            if self.sim.choices.chance(stream, u32::from(link.loss_pm)) {
                self.faults.lost += 1;
                return Err(DropReason::Lost);
            }
            if self.sim.choices.chance(stream, u32::from(link.dup_pm)) {
                self.faults.duplicated += 1;
                copies = 2;
            }
        }
        let first_us = self.delay_us(stream, link);
        let second_us = if copies == 2 {
            Some(self.delay_us(stream, link))
        } else {
            None
        };
        Ok(Delays {
            first_us,
            second_us,
        })
    }

    /// [`fate_one_by_one`](Self::fate_one_by_one)'s draws taken together
    /// from the link's stream (a sweep's run whose stream holds the four
    /// values a send may take, on a link with uniform delays): the same
    /// values, with the stream looked up once. `None` otherwise, drawing
    /// nothing.
    #[inline(always)]
    fn fate_at_once(
        &mut self,
        stream: StreamId,
        link: &LinkFate,
    ) -> Option<Result<Delays, DropReason>> {
        if link.delay_sd_us != 0 {
            return None;
        }
        let fault = self.phase == Phase::Fault;
        let mut draws = self.sim.choices.burst(stream, 4)?;
        let mut copies = 1;
        if fault {
            if draws.chance(u32::from(link.loss_pm)) {
                self.faults.lost += 1;
                return Some(Err(DropReason::Lost));
            }
            if draws.chance(u32::from(link.dup_pm)) {
                self.faults.duplicated += 1;
                copies = 2;
            }
        }
        // Validation keeps every delay range ordered and below 2^64 values.
        debug_assert!(link.delay_us_min <= link.delay_us_max);
        let arity = link.delay_us_max - link.delay_us_min + 1;
        let first_us = link.delay_us_min + draws.choose(arity);
        let second_us = (copies == 2).then(|| link.delay_us_min + draws.choose(arity));
        Some(Ok(Delays {
            first_us,
            second_us,
        }))
    }

    /// Queues a message's copies, each after its own delay, the first
    /// copy's first.
    #[inline]
    fn queue_copies(&mut self, route: Route, msg: MsgOf<M>, delays: Delays) {
        let Route { from, to, msg_id } = route;
        let first_at = self.now_us.saturating_add(delays.first_us);
        if T::ENABLED {
            self.trace(TraceKind::Send {
                from,
                to,
                msg: msg.clone(),
                msg_id,
                copies: 1 + u8::from(delays.second_us.is_some()),
                deliver_at_us: first_at,
            });
        }
        let deliver = |msg, duplicate| EventKind::Deliver {
            from,
            to,
            msg,
            msg_id,
            duplicate,
        };
        if let Some(second_us) = delays.second_us {
            let second_at = self.now_us.saturating_add(second_us);
            self.push(first_at, deliver(msg.clone(), false));
            self.push(second_at, deliver(msg, true));
        } else {
            self.push(first_at, deliver(msg, false));
        }
    }
}

/// What a send reads of its link's record ([`LinkNow`]), or of its kind's
/// where the kind has faults of its own: small enough to stay in registers
/// through the send.
#[derive(Clone, Copy)]
pub(super) struct LinkFate {
    pub(super) loss_pm: u16,
    pub(super) dup_pm: u16,
    pub(super) delay_us_min: TimeUs,
    pub(super) delay_us_max: TimeUs,
    /// 0 for a uniform delay.
    pub(super) delay_sd_us: TimeUs,
}

impl LinkFate {
    #[inline(always)]
    fn of(link: &LinkNow) -> Self {
        LinkFate {
            loss_pm: link.loss_pm,
            dup_pm: link.dup_pm,
            delay_us_min: link.delay_us_min,
            delay_us_max: link.delay_us_max,
            delay_sd_us: link.delay_sd_us,
        }
    }
}

/// The delays of a message's copies on their link: one, or two when the
/// network duplicated it.
#[derive(Clone, Copy)]
struct Delays {
    first_us: TimeUs,
    second_us: Option<TimeUs>,
}

/// A message's route through the network: its ends and its id.
#[derive(Clone, Copy)]
struct Route {
    from: ActorId,
    to: ActorId,
    msg_id: u32,
}
