//! compare/'s sender and receiver: ids 0..4 resent every 1-2 s until acked, applied once with dedup.
use sim::{Actor, ActorId, Ctx, Fresh, LinkConfig, PerMilleRange, Plain, Sim, Tick, Violation};
use sim::{World, US_PER_MS, US_PER_S};
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Id(u8); // sent as data to the receiver, as its ack to the sender
sim::display_as_debug!(Id);
impl sim::Message for Id {}
struct Node(bool, bool); // (the sender?, the receiver dedups?)
impl Actor for Node {
    type Msg = Id;
    type Obs = u8; // an id took effect
    type Timer = Tick; // resend
    type State = u32; // the sender's unacked ids, the receiver's applied ones
    type Storage = ();
    fn reset(&self, ids: Fresh<'_, u32>, storage: Option<Fresh<'_, ()>>) {
        ids.set(if self.0 { 0b1111 } else { 0 });
        storage.into_iter().for_each(|s| s.set(()));
    }
    fn on_start(&self, ids: &mut u32, _: &mut (), ctx: &mut impl Ctx<Self>) {
        self.on_timer(ids, &mut (), Tick, ctx); // the sender sends all and arms its timer
    }
    fn on_msg(&self, ids: &mut u32, _: &mut (), to: ActorId, Id(i): Id, c: &mut impl Ctx<Self>) {
        if self.0 {
            return *ids &= !(1 << i); // the sender: acked
        }
        if !self.1 || *ids & 1 << i == 0 {
            c.observe(i);
        }
        *ids |= 1 << i;
        c.send(to, Id(i)); // the ack, to the sender
    }
    fn on_timer(&self, ids: &mut u32, _: &mut (), _: Tick, ctx: &mut impl Ctx<Self>) {
        for i in (0..4).filter(|i| *ids & 1 << i != 0) {
            ctx.send(1, Id(i));
        }
        if *ids != 0 {
            let after_us = ctx.range(US_PER_S, 2 * US_PER_S);
            ctx.set_timer(Tick, after_us);
        }
    }
}
fn once(applied: &mut u32, &id: &u8) -> Option<Violation> {
    let twice = *applied & 1 << id != 0; // the judge: an id's second effect breaks exactly-once
    *applied |= 1 << id;
    twice.then(|| Violation::new("exactly-once", id.into(), format!("id {id} twice")))
}
#[cfg_attr(test, test)]
fn main() {
    const HALF: PerMilleRange = PerMilleRange { lo: 0, hi: 500 }; // each seed draws its rate
    let mut world = World::new(vec!["sender".into(), "receiver".into()]);
    let link = LinkConfig::lossy(HALF, HALF, (US_PER_MS, 100 * US_PER_MS));
    world.links.fill(link);
    for dedup in [true, false] {
        let nodes = vec![Node(true, false), Node(false, dedup)];
        let model = Plain::new(world.clone(), nodes, once);
        let mut sim = Sim::new(&model);
        let failing = (0..2_000).find(|&seed| sim.run_seed(&model, seed).outcome.is_failure());
        assert_eq!(failing.is_none(), dedup, "{failing:?}");
    }
}
