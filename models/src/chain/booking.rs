//! The booking service: the payment service of the payment model (keys
//! claimed "in progress", bookings, bank calls, recovery) composed with the
//! messaging model's outbox relay, so that every booking announces itself
//! with a "payment booked" event.
//!
//! It owns no copy of either: it hands each message and timer to the inner
//! service or the relay through a [`Narrow`] context, and after every step
//! of the service looks at what that step booked. In outbox mode it writes
//! an outbox row for each new booking in that same step, which is the same
//! transaction (a crash falls between steps, never inside one). In
//! event-first mode (the mistake) it publishes the event when the request
//! arrives and lets the service run the request only once the broker has
//! confirmed it, so the event goes out before the transaction that may or
//! may not book.

use super::situations as sit;
use crate::core::slots::Slots;
use crate::core::{Carries, Obs, Op};
use crate::messaging::{self, Event, OutboxRow, Relay, RelayState, RelayTimer};
use crate::payment::{self, PayStatus, Service, ServiceState, ServiceStorage, ServiceTimer};
use sim::{Actor, ActorId, Ctx, Narrow, TimeUs};
use std::fmt;

/// How a booking's event reaches the broker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Publish {
    /// An outbox row in the booking's transaction; the relay publishes it.
    Outbox,
    /// Published when the request arrives, before the transaction that books.
    EventFirst,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// How the booking service publishes its "payment booked" event.
pub struct BookingConfig {
    /// Outbox row in the booking's transaction, or the event published first (a mistake).
    pub publish: Publish,
    /// The broker the events go to.
    pub broker: ActorId,
    /// The relay's wait for the broker's confirmation, and the event-first
    /// request's, after which that request is dropped.
    pub publish_timeout_us: TimeUs,
}

/// The payment database with its outbox table, committed together per step.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BookingStorage {
    /// The payment service's database (keys, bookings).
    pub service: ServiceStorage,
    /// The outbox table, written in the same transaction as each booking.
    pub outbox: Vec<OutboxRow>,
    /// The last event id handed out: a database sequence, unique across crashes.
    pub last_event: u32,
}

/// Event first: a request whose event is out, waiting for the broker's
/// confirmation before the service runs it.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Publishing {
    /// The client the request came from.
    pub from: ActorId,
    /// The payment request held back.
    #[serde(serialize_with = "crate::core::shown::as_text")]
    pub pay: payment::Msg,
    /// The event published for it.
    pub ev: Event,
}

#[derive(Clone, Debug)]
/// Volatile: the payment service's, the relay's, and the held requests.
#[derive(serde::Serialize)]
pub struct BookingState {
    /// The payment service's volatile state.
    pub service: ServiceState,
    /// The relay's volatile state.
    pub relay: RelayState,
    /// Event first: requests waiting for their event's confirmation.
    pub publishing: Slots<Publishing>,
}

/// Requests an event-first service holds while their events are confirmed.
pub const MAX_PUBLISHING: usize = 64;
/// How the payment service's timers become the booking service's.
type ToBooking = fn(ServiceTimer) -> BookingTimer;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// The booking service's timers: the payment service's, the relay's, and its own.
pub enum BookingTimer {
    /// A timer of the payment service.
    Service(ServiceTimer),
    /// A timer of the outbox relay.
    Relay(RelayTimer),
    /// Event first: the broker did not confirm request `slot`'s event in time.
    PublishTimeout {
        /// The held request's slot.
        slot: u32,
    },
}

impl fmt::Display for BookingTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BookingTimer::Service(t) => fmt::Display::fmt(t, f),
            BookingTimer::Relay(t) => fmt::Display::fmt(t, f),
            BookingTimer::PublishTimeout { .. } => f.write_str("publish timeout"),
        }
    }
}

sim::timer_slots!(BookingTimer {
    Service(t: Timer),
    Relay(t: Timer),
    PublishTimeout { slot },
});

/// The insurer's payment service with its outbox: the payment service and the relay in one process, so a booking and its outbox row commit together.
pub struct BookingService<W> {
    /// The payment service it runs.
    pub service: Service<W>,
    /// The outbox relay it runs.
    pub relay: Relay<W>,
    /// How it publishes.
    pub cfg: BookingConfig,
}

impl<W> BookingService<W> {
    /// A booking service around the payment service configured by `service`.
    pub fn new(service: payment::ServiceConfig, cfg: BookingConfig) -> Self {
        BookingService {
            service: Service::new(service),
            relay: Relay::new(cfg.broker, cfg.publish_timeout_us / sim::US_PER_MS, false),
            cfg,
        }
    }
}

/// The event announcing the booking of `amount_eur` for payment `op` (a
/// claim's first or a later payment), as its `version`-th booking: its id
/// comes from the sequence.
fn next_event(s: &mut BookingStorage, op: Op, amount_eur: u32, version: u32) -> Event {
    s.last_event += 1;
    Event {
        id: s.last_event,
        entity: op.id,
        value: amount_eur,
        version,
        entity_space: &payment::CLAIM,
        entity_part: op.part,
    }
}

/// The bookings of payment `op`: each payment of a claim counts its own, so
/// a claim's second payment is its first booking, not the claim's second.
fn bookings_of(s: &ServiceStorage, op: Op) -> u32 {
    s.bookings().iter().filter(|b| b.op == op).count() as u32
}

/// The booking of `ev`'s claim committed: the event is owed.
fn committed(ev: Event) -> Obs {
    Obs::Committed {
        op: ev.op(),
        entity: ev.entity_op(),
        value: ev.value,
        version: ev.version,
    }
}

impl<W: Carries<payment::Msg> + Carries<messaging::Msg>> BookingService<W> {
    /// Outbox mode: an outbox row for every booking the step just made, in
    /// the step's transaction, and the relay woken up.
    // Inlined into every step for its check: most steps book nothing, and
    // a call per step cost more than the check.
    #[inline(always)]
    fn write_outbox_rows(&self, s: &mut BookingStorage, before: usize, ctx: &mut impl Ctx<Self>) {
        if self.cfg.publish != Publish::Outbox || s.service.bookings().len() == before {
            return;
        }
        self.write_new_outbox_rows(s, before, ctx);
    }

    /// [`write_outbox_rows`](Self::write_outbox_rows) for a step that booked.
    #[inline(never)]
    fn write_new_outbox_rows(
        &self,
        s: &mut BookingStorage,
        before: usize,
        ctx: &mut impl Ctx<Self>,
    ) {
        for i in before..s.service.bookings().len() {
            let b = s.service.bookings()[i];
            let version = bookings_of(&s.service, b.op);
            let ev = next_event(s, b.op, b.amount_eur, version);
            s.outbox.push(OutboxRow {
                ev,
                sent: false,
                attempts: 0,
                pid: 0,
                epoch: 0,
            });
            ctx.observe(committed(ev));
        }
        ctx.continue_with(BookingTimer::Relay(RelayTimer::Poll));
    }

    /// Runs `step` of the payment service, then writes the outbox rows of the
    /// bookings it made in the same step; returns its result and how many
    /// bookings it made.
    fn service_step<C: Ctx<Self>, R>(
        &self,
        s: &mut BookingStorage,
        ctx: &mut C,
        step: impl FnOnce(&mut ServiceStorage, &mut Narrow<'_, Self, C, ToBooking>) -> R,
    ) -> (R, usize) {
        let before = s.service.bookings().len();
        let mut c = Narrow::<Self, _, _>::new(ctx, BookingTimer::Service as ToBooking);
        let result = step(&mut s.service, &mut c);
        self.write_outbox_rows(s, before, ctx);
        (result, s.service.bookings().len() - before)
    }

    /// Runs one message through the payment service, as one step.
    fn serve(
        &self,
        st: &mut BookingState,
        s: &mut BookingStorage,
        from: ActorId,
        msg: W,
        ctx: &mut impl Ctx<Self>,
    ) -> usize {
        let service = &mut st.service;
        self.service_step(s, ctx, |ss, c| {
            self.service.on_msg(service, ss, from, msg, c)
        })
        .1
    }

    /// Event first: the event goes out now; the service runs the request
    /// once the broker confirms it.
    fn publish_first(
        &self,
        st: &mut BookingState,
        s: &mut BookingStorage,
        from: ActorId,
        pay: payment::Msg,
        ctx: &mut impl Ctx<Self>,
    ) {
        let payment::Msg::Pay {
            op,
            attempt,
            amount_eur,
            ..
        } = pay
        else {
            return;
        };
        let version = bookings_of(&s.service, op) + 1;
        let ev = next_event(s, op, amount_eur, version);
        let Some(slot) = st.publishing.insert(Publishing { from, pay, ev }) else {
            // Full: shed before anything happened, as the service would.
            let reply = payment::Msg::PayReply {
                op,
                attempt,
                status: PayStatus::Overloaded,
                amount_eur: 0,
            };
            ctx.send(from, W::wrap(reply));
            return;
        };
        ctx.send(self.cfg.broker, W::wrap(messaging::Msg::Publish { ev }));
        let timer = BookingTimer::PublishTimeout { slot: slot as u32 };
        ctx.set_timer(timer, self.cfg.publish_timeout_us);
    }

    /// Event first: the broker has the event; now the request's transaction.
    fn published(
        &self,
        st: &mut BookingState,
        s: &mut BookingStorage,
        id: u32,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(slot) = st.publishing.find(|p| p.ev.id == id) else {
            return; // a duplicate confirmation, or one for a request given up
        };
        let p = st.publishing.take(slot).expect("slot is busy");
        ctx.cancel_timer(BookingTimer::PublishTimeout { slot: slot as u32 });
        if self.serve(st, s, p.from, W::wrap(p.pay), ctx) > 0 {
            ctx.observe(committed(p.ev));
        } else {
            ctx.reached(sit::PUBLISHED_WITHOUT_BOOKING);
        }
    }
}

impl<W> crate::core::Ends for BookingService<W> {
    const ROLES: &'static [&'static str] = &["service", "producer"];
    const SENDS: &'static [(&'static str, &'static str)] = &[
        // What the payment service inside it sends, and its relay's publish.
        ("pay-reply", "client"),
        ("status-reply", "client"),
        ("transfer", "bank"),
        ("status-query", "bank"),
        ("publish", "broker"),
    ];
    const ANSWERS: &'static [(&'static str, &'static str)] =
        <Service<W> as crate::core::Ends>::ANSWERS;

    /// The payment service inside decides whether it asks the bank.
    fn sends(&self, kind: &str, role: &str) -> bool {
        crate::core::Ends::sends(&self.service, kind, role)
    }
}

impl<W: Carries<payment::Msg> + Carries<messaging::Msg>> Actor for BookingService<W> {
    type Msg = W;
    type Obs = Obs;
    type Timer = BookingTimer;
    type State = BookingState;
    type Storage = BookingStorage;

    fn reset(
        &self,
        state: sim::Fresh<'_, BookingState>,
        storage: Option<sim::Fresh<'_, BookingStorage>>,
    ) {
        // Each part resets itself in place; a new whole (the first run) is
        // made of its parts' new ones.
        let st = state.or_insert_with(|| BookingState {
            service: self.service.fresh().0,
            relay: self.relay.fresh().0,
            publishing: Slots::new(MAX_PUBLISHING),
        });
        st.publishing.clear();
        let mut s = storage.map(|s| {
            s.or_insert_with(|| BookingStorage {
                service: self.service.fresh().1,
                outbox: self.relay.fresh().1,
                last_event: 0,
            })
        });
        if let Some(s) = &mut s {
            s.last_event = 0;
        }
        let (service, outbox) = match s {
            Some(s) => (
                Some(sim::Fresh::Kept(&mut s.service)),
                Some(sim::Fresh::Kept(&mut s.outbox)),
            ),
            None => (None, None),
        };
        self.service
            .reset(sim::Fresh::Kept(&mut st.service), service);
        self.relay.reset(sim::Fresh::Kept(&mut st.relay), outbox);
    }

    fn on_start(&self, st: &mut BookingState, s: &mut BookingStorage, ctx: &mut impl Ctx<Self>) {
        let service = &mut st.service;
        self.service_step(s, ctx, |ss, c| self.service.on_start(service, ss, c));
        let mut r = Narrow::<Self, _, _>::new(ctx, BookingTimer::Relay);
        self.relay.on_start(&mut st.relay, &mut s.outbox, &mut r);
    }

    fn on_msg(
        &self,
        st: &mut BookingState,
        s: &mut BookingStorage,
        from: ActorId,
        msg: W,
        ctx: &mut impl Ctx<Self>,
    ) {
        if let Some(&messaging::Msg::PublishAck { id, .. }) = Carries::<messaging::Msg>::peek(&msg)
        {
            match self.cfg.publish {
                Publish::EventFirst => self.published(st, s, id, ctx),
                Publish::Outbox => {
                    let mut r = Narrow::<Self, _, _>::new(ctx, BookingTimer::Relay);
                    self.relay
                        .on_msg(&mut st.relay, &mut s.outbox, from, msg, &mut r);
                }
            }
            return;
        }
        // The mode first: an outbox service (the usual one) hands every
        // other message to the payment service as it is, without copying
        // the payment message out to look at its kind.
        if self.cfg.publish == Publish::EventFirst {
            if let Some(&p @ payment::Msg::Pay { .. }) = Carries::<payment::Msg>::peek(&msg) {
                return self.publish_first(st, s, from, p, ctx);
            }
        }
        self.serve(st, s, from, msg, ctx);
    }

    fn on_timer(
        &self,
        st: &mut BookingState,
        s: &mut BookingStorage,
        timer: BookingTimer,
        ctx: &mut impl Ctx<Self>,
    ) {
        match timer {
            BookingTimer::Service(t) => {
                let service = &mut st.service;
                self.service_step(s, ctx, |ss, c| self.service.on_timer(service, ss, t, c));
            }
            BookingTimer::Relay(t) => {
                let mut r = Narrow::<Self, _, _>::new(ctx, BookingTimer::Relay);
                self.relay.on_timer(&mut st.relay, &mut s.outbox, t, &mut r);
            }
            BookingTimer::PublishTimeout { slot } => {
                // The request is dropped unanswered; the client's retry publishes again.
                if st.publishing.take(slot as usize).is_some() {
                    ctx.reached(sit::PUBLISH_UNCONFIRMED);
                }
            }
        }
    }
}
