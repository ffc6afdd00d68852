//! compare/'s at-least-once sender and receiver: the sender sends ids 0..4 and resends the
//! unacked ones every 1 to 2 s; the receiver applies each (once, with dedup) and acks.
use sim::{Actor, ActorId, Ctx, Fresh, PerMilleRange, Plain, Sim, Tick, Violation, World};
use sim::{US_PER_MS, US_PER_S};

/// An id: sent as data to the receiver, as its ack to the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Id(u8);
sim::display_as_debug!(Id);
impl sim::Message for Id {}

enum Node {
    Sender,
    Receiver { dedup: bool },
}

impl Actor for Node {
    type Msg = Id;
    type Obs = u8; // an id took effect
    type Timer = Tick; // resend
    type State = u32; // the sender's unacked ids, the receiver's applied ones
    type Storage = ();
    fn reset(&self, ids: Fresh<'_, u32>, storage: Option<Fresh<'_, ()>>) {
        ids.set(if let Node::Sender = self { 0b1111 } else { 0 });
        storage.into_iter().for_each(|s| s.set(()));
    }
    fn on_start(&self, ids: &mut u32, _: &mut (), ctx: &mut impl Ctx<Self>) {
        self.on_timer(ids, &mut (), Tick, ctx); // the sender sends all and arms its timer
    }
    fn on_msg(&self, ids: &mut u32, _: &mut (), to: ActorId, Id(i): Id, c: &mut impl Ctx<Self>) {
        match self {
            Node::Sender => *ids &= !(1 << i),
            Node::Receiver { dedup } => {
                if !dedup || *ids & 1 << i == 0 {
                    c.observe(i);
                }
                *ids |= 1 << i;
                c.send(to, Id(i)); // the ack, to the sender
            }
        }
    }
    fn on_timer(&self, ids: &mut u32, _: &mut (), _: Tick, ctx: &mut impl Ctx<Self>) {
        (0..4)
            .filter(|i| *ids & 1 << i != 0)
            .for_each(|i| ctx.send(1, Id(i)));
        if *ids != 0 {
            let after_us = ctx.range(US_PER_S, 2 * US_PER_S);
            ctx.set_timer(Tick, after_us);
        }
    }
}

/// The judge: an id's second effect breaks exactly-once.
fn once(applied: &mut u32, &id: &u8) -> Option<Violation> {
    let twice = *applied & 1 << id != 0;
    *applied |= 1 << id;
    twice.then(|| Violation::new("exactly-once", id.into(), format!("id {id} twice")))
}

#[cfg_attr(test, test)]
fn main() {
    const HALF: PerMilleRange = PerMilleRange { lo: 0, hi: 500 }; // each seed draws its rate
    let mut world = World::new(vec!["sender".into(), "receiver".into()]);
    for link in &mut world.links {
        (link.loss_per_mille, link.duplicate_per_mille) = (HALF, HALF);
        (link.delay_us_min, link.delay_us_max) = (US_PER_MS, 100 * US_PER_MS);
    }
    for dedup in [true, false] {
        let nodes = vec![Node::Sender, Node::Receiver { dedup }];
        let model = Plain::new(world.clone(), nodes, once);
        let mut sim = Sim::new(&model);
        let failing = (0..2_000).find(|&seed| sim.run_seed(&model, seed).outcome.is_failure());
        assert_eq!(failing.is_none(), dedup, "{failing:?}");
    }
}
