//! idemsim as a library, on a user's own model whose messages are not
//! `Copy` (a `String` address and a `Vec<u8>` body): exploring, shrinking,
//! every trace format, repro files and `idemsim::testing` work on it as on
//! the built-in models, and the built-in ledger judges it.

use crate::support;

use idemsim::render::{formats, run};
use idemsim::repro::Repro;
use idemsim::testing::{check_model, Check};
use models::core::wire::WorldMessage;
use models::core::{Ending, Obs, Op, Site, Space};
use sim::{
    Actor, ActorId, Ctx, LinkConfig, Message, PerMilleRange, SeedRange, Sim, Timer, World,
    US_PER_MS,
};
use std::fmt;
use std::sync::atomic::AtomicBool;

static MAIL: Space = Space {
    code: 40,
    noun: "mail",
    id_prefix: "#",
    unit: Some("bytes"),
    key_prefix: "mail",
    published: false,
};

static SENT: Site = Site { name: "mail sent" };

/// The world's message: owned payloads, `Clone` but not `Copy`.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Wire {
    Mail { id: u32, to: String, body: Vec<u8> },
    Accepted { id: u32 },
}

impl fmt::Display for Wire {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Wire::Mail { id, to, body } => {
                write!(f, "mail #{id} to {to}: {:?}", String::from_utf8_lossy(body))
            }
            Wire::Accepted { id } => write!(f, "mail #{id} accepted"),
        }
    }
}

impl Message for Wire {
    fn kind(&self) -> u16 {
        match self {
            Wire::Mail { .. } => 0,
            Wire::Accepted { .. } => 1,
        }
    }
}

impl WorldMessage for Wire {
    fn is_reply(&self) -> bool {
        matches!(self, Wire::Accepted { .. })
    }
}

/// The app: sends one mail and re-sends it every second until the relay accepts it.
struct App {
    relay: ActorId,
    to: String,
    body: Vec<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Resend;

impl fmt::Display for Resend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("resend")
    }
}

// One timer: the default slot.
impl Timer for Resend {}

impl App {
    fn op() -> Op {
        Op::new(&MAIL, 1)
    }

    fn send(&self, ctx: &mut impl Ctx<Self>) {
        let mail = Wire::Mail {
            id: 1,
            to: self.to.clone(),
            body: self.body.clone(),
        };
        ctx.send(self.relay, mail);
        ctx.set_timer(Resend, 1_000 * US_PER_MS);
    }
}

impl Actor for App {
    type Msg = Wire;
    type Obs = Obs;
    type Timer = Resend;
    /// Done: told the mail is accepted.
    type State = bool;
    type Storage = ();

    fn reset(&self, done: sim::Fresh<'_, bool>, storage: Option<sim::Fresh<'_, ()>>) {
        done.set(false);
        if let Some(s) = storage {
            s.set(());
        }
    }

    fn on_start(&self, _: &mut bool, _: &mut (), ctx: &mut impl Ctx<Self>) {
        ctx.observe(Obs::Intent {
            op: App::op(),
            payload: self.body.len() as u32,
            window_ms: 0,
        });
        self.send(ctx);
    }

    fn on_msg(&self, done: &mut bool, _: &mut (), _: ActorId, msg: Wire, ctx: &mut impl Ctx<Self>) {
        if let Wire::Accepted { .. } = msg {
            if !*done {
                *done = true;
                ctx.cancel_timer(Resend);
                let op = App::op();
                let payload = self.body.len() as u32;
                ctx.observe(Obs::ToldDone { op, payload });
                ctx.observe(Obs::Ended {
                    op,
                    ending: Ending::Done,
                });
            }
        }
    }

    fn on_timer(&self, done: &mut bool, _: &mut (), _: Resend, ctx: &mut impl Ctx<Self>) {
        if !*done {
            self.send(ctx);
        }
    }
}

/// The relay: sends every mail it gets, remembering message ids (durably) or not.
struct Relay {
    dedup: bool,
}

impl Actor for Relay {
    type Msg = Wire;
    type Obs = Obs;
    type Timer = sim::NoTimer;
    type State = ();
    /// Message ids sent, by their owned `String` form.
    type Storage = Vec<String>;

    fn reset(&self, state: sim::Fresh<'_, ()>, sent: Option<sim::Fresh<'_, Vec<String>>>) {
        state.set(());
        if let Some(sent) = sent {
            sent.or_default().clear();
        }
    }

    fn on_start(&self, _: &mut (), _: &mut Vec<String>, _: &mut impl Ctx<Self>) {}

    fn on_msg(
        &self,
        _: &mut (),
        sent: &mut Vec<String>,
        from: ActorId,
        msg: Wire,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Wire::Mail { id, to, body } = msg else {
            return;
        };
        let message_id = format!("<{id}@{to}>");
        if !(self.dedup && sent.contains(&message_id)) {
            sent.push(message_id);
            ctx.observe(Obs::Effect {
                site: &SENT,
                op: Op::new(&MAIL, id),
                payload: body.len() as u32,
            });
        }
        ctx.send(from, Wire::Accepted { id });
    }
}

sim::compose! {
    enum Node, NodeState, NodeStorage, NodeTimer {
        msg: Wire,
        obs: Obs,
        App(App),
        Relay(Relay),
    }
}

struct Mailer {
    world: World,
    nodes: Vec<Node>,
}

impl sim::Model for Mailer {
    type Node = Node;
    type Oracle = models::Ledger;
    fn world(&self) -> &World {
        &self.world
    }
    fn nodes(&self) -> &[Node] {
        &self.nodes
    }
    fn new_oracle(&self) -> models::Ledger {
        models::Ledger::default()
    }
}

/// Replies lost now and then (up to 30%); the relay remembers ids or not.
fn mailer(dedup: bool) -> Mailer {
    let mut world = World::new(vec!["app".into(), "relay".into()]);
    let link =
        LinkConfig::uniform(US_PER_MS, 50 * US_PER_MS).loss(PerMilleRange { lo: 0, hi: 300 });
    world.links.iter_mut().for_each(|l| *l = link);
    world.fault_phase_us = 10_000 * US_PER_MS;
    let nodes = vec![
        Node::App(App {
            relay: 1,
            to: "claims@example.org".into(),
            body: b"claim 4711 approved".to_vec(),
        }),
        Node::Relay(Relay { dedup }),
    ];
    Mailer { world, nodes }
}

fn sweep(m: &Mailer, jobs: usize) -> sim::Summary {
    let seeds = SeedRange { start: 0, end: 300 };
    sim::explore(m, seeds, jobs, &AtomicBool::new(false), &|_| {})
}

#[test]
fn a_model_with_owned_payloads_is_explored_and_judged_by_the_ledger() {
    let broken = mailer(false);
    let sum = sweep(&broken, support::JOBS);
    assert!(sum.tally.violations > 0, "a lost reply resends the mail");
    assert_eq!(sum.violation().unwrap().invariant, "no-duplicate-effect");
    assert_eq!(sum.tally.panics, 0);
    // The same for any number of threads.
    assert_eq!(sweep(&broken, 1), sum);
    let fixed = sweep(&mailer(true), support::JOBS);
    assert_eq!(fixed.tally.holds, 300, "{:?}", fixed.first_failure);
    assert!(fixed.tally.faults.lost > 0, "faults fired");
}

#[test]
fn shrinking_and_every_trace_format_work_on_owned_payloads() {
    let m = mailer(false);
    let seed = sweep(&m, support::JOBS).first_failure.unwrap().seed;
    let mut sim = Sim::new(&m);
    let shrunk = sim::shrink::shrink_seed(&mut sim, &m, seed, Default::default()).unwrap();
    assert!(shrunk.complete);
    assert!(shrunk.record.nonzero_count() <= 2, "{:?}", shrunk.record);
    let info = run::shrink_info(&shrunk, None);
    let (trace, report) =
        run::trace_of_record(&m, "mailer", &shrunk.record, "shrunk".into(), Some(info));
    assert!(report.outcome.is_failure());
    let text = formats::text(&trace);
    assert!(
        text.contains(r#"mail #1 to claims@example.org: "claim 4711 approved""#),
        "{text}"
    );
    assert!(text.contains("reply lost: mail #1 accepted"), "{text}");
    assert!(text.contains("EFFECT mail sent of 19 bytes"), "{text}");
    assert!(
        text.contains("=> Violation of no-duplicate-effect on mail #1"),
        "{text}"
    );
    let mermaid = formats::mermaid(&trace);
    assert!(mermaid.starts_with("sequenceDiagram"));
    assert!(mermaid.contains("claims@example.org"), "{mermaid}");
    for other in [
        formats::json(&trace),
        formats::dot(&trace),
        formats::chrome(&trace),
    ] {
        assert!(other.contains("claims@example.org"));
    }
}

#[test]
fn a_repro_file_of_a_users_model_replays_the_same_run() {
    let m = mailer(false);
    let seed = sweep(&m, support::JOBS).first_failure.unwrap().seed;
    let record = run::record_of_seed(&m, seed).unwrap();
    let (before, report) = run::trace_of_record(&m, "mailer", &record, "seed".into(), None);
    let repro = Repro::new("mailer", 7, &m.world, Some(seed), &record, &report.outcome);
    let path = support::scratch("library/mailer").join("library-mailer.repro.json");
    repro.write(&path).unwrap();
    let back = Repro::read(&path).unwrap();
    assert_eq!(back, repro);
    assert!(back.same_version());
    assert_eq!(back.invariant.as_deref(), Some("no-duplicate-effect"));
    let (after, _) = run::trace_of_record(
        &m,
        "mailer",
        &back.record(&m.world).unwrap(),
        "seed".into(),
        None,
    );
    assert_eq!(formats::text(&after), formats::text(&before));
    // A stream the world does not have is an error, not a panic.
    let mut wrong = back.clone();
    wrong.choices.insert("link:app->bank".into(), vec![1]);
    assert!(wrong
        .record(&m.world)
        .unwrap_err()
        .contains("link:app->bank"));
}

#[test]
fn check_model_fails_with_the_shrunk_trace_and_one_repro_line() {
    let m = mailer(false);
    let failure = check_model(&m, 0..300).unwrap_err();
    let message = failure.to_string();
    let lines: Vec<&str> = message.lines().collect();
    assert!(
        lines[0].starts_with("model: violation of no-duplicate-effect"),
        "{message}"
    );
    assert!(lines[1].starts_with(&format!("# model · shrunk from seed {}", failure.seed)));
    assert_eq!(
        *lines.last().unwrap(),
        format!("repro: idemsim::testing::replay(&model, {})", failure.seed)
    );
    // The repro line's call gives the same shrunk trace: shrinking is deterministic.
    let again = idemsim::testing::replay(&m, failure.seed).unwrap_err();
    assert_eq!(again.trace, failure.trace);
    assert_eq!(again.record, failure.record);
    // Named, with a command for a repro line, on one thread: the same run.
    let named = Check::new("mailer", &m)
        .seeds(0..300)
        .jobs(1)
        .repro_line("cargo test mailer -- --seed {seed}")
        .run()
        .unwrap_err();
    assert_eq!(named.seed, failure.seed);
    assert!(named.to_string().ends_with(&format!(
        "repro: cargo test mailer -- --seed {}",
        failure.seed
    )));
    assert!(check_model(&mailer(true), 0..300).is_ok());
}

/// A world message with a `String` beside the built-in models' messages.
#[derive(Clone, Debug, PartialEq)]
enum Mixed {
    Messaging(models::messaging::Msg),
    Payment(models::payment::Msg),
    Note(String),
}

impl fmt::Display for Mixed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mixed::Messaging(m) => m.fmt(f),
            Mixed::Payment(m) => m.fmt(f),
            Mixed::Note(s) => f.write_str(s),
        }
    }
}

impl Message for Mixed {}
impl WorldMessage for Mixed {}

impl models::core::Carries<models::messaging::Msg> for Mixed {
    fn wrap(t: models::messaging::Msg) -> Self {
        Mixed::Messaging(t)
    }
    fn peek(&self) -> Option<&models::messaging::Msg> {
        match self {
            Mixed::Messaging(m) => Some(m),
            _ => None,
        }
    }
}

impl models::core::Carries<models::payment::Msg> for Mixed {
    fn wrap(t: models::payment::Msg) -> Self {
        Mixed::Payment(t)
    }
    fn peek(&self) -> Option<&models::payment::Msg> {
        match self {
            Mixed::Payment(m) => Some(m),
            _ => None,
        }
    }
}

fn is_actor<A: Actor<Msg = Mixed, Obs = Obs>>() {}

#[test]
fn every_built_in_actor_runs_in_a_world_whose_message_is_not_copy() {
    use models::{messaging, payment};
    // Compiles only if no built-in actor needs its world message to be `Copy`.
    is_actor::<messaging::Producer<Mixed>>();
    is_actor::<messaging::Broker<Mixed>>();
    is_actor::<messaging::Consumer<Mixed>>();
    is_actor::<messaging::ConsumerDb<Mixed>>();
    is_actor::<payment::Client<Mixed>>();
    is_actor::<payment::Service<Mixed>>();
    is_actor::<payment::Bank<Mixed>>();
    // And the trace machinery takes it.
    let note = Mixed::Note("hello".into());
    assert!(!note.is_reply());
    assert_eq!(note.to_string(), "hello");
}

/// `replay` of a failing seed whose rerun makes more decisions than a
/// record holds cannot shrink it, and says so rather than blaming the
/// model's determinism.
#[test]
fn a_failing_seed_too_long_to_record_is_named_as_such() {
    let m = mailer(false);
    let seed = sweep(&m, support::JOBS).first_failure.unwrap().seed;
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        sim::with_record_bound(1, || idemsim::testing::replay(&m, seed))
    }))
    .expect_err("a run too long to record is not shrunk");
    let text = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(
        text.contains("more decisions than a record holds")
            && text.contains(&format!("seed {seed}")),
        "{text}"
    );
}

/// docs/library.md quotes examples/minimal.rs whole: the guide shows the
/// example that `cargo test` runs, not a copy drifting from it.
#[test]
fn the_guide_quotes_the_minimal_example_as_it_is() {
    let guide = include_str!("../../docs/library.md");
    let example = include_str!("../../examples/minimal.rs");
    assert!(
        guide.contains(&format!("```rust\n{example}```")),
        "docs/library.md no longer quotes examples/minimal.rs as it is: copy the file into its block"
    );
    // The smallest model stays small: stateright's sender and receiver take
    // about 40 lines; idemsim's may take 60, as `cargo fmt` lays them out.
    let lines = example.lines().count();
    assert!(
        lines <= 60,
        "examples/minimal.rs has {lines} lines, over 60"
    );
}
