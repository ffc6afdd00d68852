//! The external actor: a user's program in a model's role, as a plain
//! `sim::Actor`. Each handler (`on_start`, `on_msg`, `on_timer`) writes one
//! line to the program and applies the lines it answers with, up to `done`,
//! as one atomic step; a crash falls between two handlers, never inside one.

use super::names;
use super::session::{failure, Failure, Program, Session};
use super::{protocol, Out, PayloadError, PROTOCOL_ERROR};
use crate::core::Carries;
use crate::Obs;
use serde_json::Value;
use sim::SituationId;
use sim::{Actor, ActorId, Ctx, TimeUs, Timer};
use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

/// Most timers one program may have pending at once.
pub const MAX_TIMERS: usize = 64;

/// Most keys a program may keep in its durable storage.
pub const MAX_STORED_KEYS: usize = 100_000;

/// Most bytes a program may keep in its durable storage (keys and values as
/// compact JSON): each `start` hands all of it back on one line, and a
/// simulator keeps it for every run, so it needs a bound of its own beside
/// the key count (100,000 keys of a 1 MiB line each would be 100 GiB).
pub const MAX_STORED_BYTES: usize = 16 << 20;

/// A program's actor, as the scenario configured it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExternalConfig {
    /// The actor's name (`consumer-1`), as the program is told in `start`.
    pub name: String,
    /// The command that runs the program.
    pub program: Program,
    /// Wall-clock milliseconds a handler may take before it is a protocol error.
    pub handler_timeout_ms: u64,
    /// Every actor's name, in world order: `from` and `to` in the protocol.
    pub actor_names: Vec<String>,
    /// The role's own fields of `start`, each `,"name":value`; mostly empty.
    pub start_fields: String,
}

/// How the determinism check runs a program (see `idemsim check`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CheckMode {
    /// A new process at every `start` instead of the one kept warm.
    pub fresh_process: bool,
    /// Keep every exchange of a run, to compare two runs.
    pub transcript: bool,
}

/// The role a program plays in a model: which of the model's messages it
/// gets as JSON, which it may send, and where its effects land. A model
/// implements it once per role (the messaging consumer's is
/// `messaging::ConsumerRole`); the actor and the protocol stay the same.
pub trait Role: 'static {
    /// The model's messages.
    type Msg;
    /// The role's name, as errors and docs/protocol.md name it.
    const NAME: &'static str;
    /// The first protocol version with this role: a program that says (`hello`)
    /// it speaks an older one is told so (3 added only fields it may ignore).
    const SINCE_PROTOCOL: u64 = 2;
    /// Reached when a message about an operation arrives after the program
    /// reported that operation's effect: its own dedup is put to the test.
    /// `None`: the role's model has no such situation.
    const REDELIVERED_AFTER_EFFECT: Option<SituationId>;
    /// A message as JSON text (one object, no newline) for the program;
    /// `None`: not handed to it.
    fn incoming(msg: &Self::Msg) -> Option<String>;
    /// The operation a message is about, and what idemsim observes when it
    /// arrives (the arrival is a fact; what the program makes of it is not).
    fn arrival(msg: &Self::Msg) -> Option<(u32, Obs)>;
    /// A payload the program sent to the actor named `to`, as the model's
    /// message; an error also when `to` does not take that message.
    fn outgoing(to: &str, payload: &Value) -> Result<Self::Msg, PayloadError>;
    /// The observation of an effect the program reported for `op`.
    fn effect(op: u32, payload: u32) -> Obs;
    /// Why a role reports no effects of its own, if it does not (the
    /// payment service's effects are the bank's transfers): an `effect`
    /// line from its program is then a protocol error with this fix.
    const NO_EFFECTS: Option<&'static str> = None;
    /// Reached when a message sent before the program's latest start is
    /// dropped (see [`Role::connection_sent_us`]).
    const OLD_CONNECTION: Option<SituationId> = None;
    /// When `msg` was sent, if it travels over a connection that dies with
    /// the receiving process (a delivery over a consumer's connection to
    /// its broker); `None` for a message that is not bound to one. A copy
    /// sent before the program's latest start was sent to the process that
    /// crashed, and the restarted one never gets it.
    fn connection_sent_us(_msg: &Self::Msg) -> Option<TimeUs> {
        None
    }
    /// The name of the frame `msg` is on its connection (a delivery's
    /// receipt), if it travels over one: a network copy of a frame already
    /// written to the program is dropped unseen, since TCP never hands a
    /// frame over twice. `None` for a message not bound to a connection.
    fn frame_id(_msg: &Self::Msg) -> Option<u32> {
        None
    }
}

/// Frames remembered per process to drop their network copies: as many as
/// the built-in consumer remembers receipts.
const RECENT_FRAMES: usize = 64;

/// A user's program as an actor of role `R`, talking JSON Lines (docs/protocol.md).
pub struct External<W, R> {
    /// Boxed, so the world's actor enum does not grow for the built-in actors.
    pub cfg: Box<ExternalConfig>,
    /// Keep the warm process, or start a new one at every `start` (the determinism check's second run).
    pub mode: CheckMode,
    wire: PhantomData<fn() -> (W, R)>,
}

impl<W, R> External<W, R> {
    /// An actor running `cfg`'s program.
    pub fn new(cfg: ExternalConfig) -> Self {
        External {
            cfg: Box::new(cfg),
            mode: CheckMode::default(),
            wire: PhantomData,
        }
    }
}

/// A program's timer: its name (interned) and the slot it holds while
/// pending. Four bytes, so the world's timer enum does not grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExternalTimer {
    slot: u16,
    name: u16,
}

impl ExternalTimer {
    /// The program's name for the timer.
    pub fn name(&self) -> &'static str {
        names::name_of(self.name)
    }
}

impl fmt::Display for ExternalTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Timer for ExternalTimer {
    fn slot(&self) -> u32 {
        u32::from(self.slot)
    }
}

/// Volatile: which timer name holds which slot. The program's own memory
/// is volatile too: `start` tells it to forget it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ExternalState {
    timers: Vec<Option<u16>>,
    /// When this process (as idemsim counts them: a `start`) began.
    started_us: TimeUs,
    /// The last frames written to this process ([`Role::frame_id`]).
    frames: VecDeque<u32>,
}

/// Durable: the keys the program stored, and idemsim's own note of which
/// events the program reported an effect for. The process lives here
/// because storage is per simulator, and a simulator is per thread: each
/// worker of a parallel sweep gets its own process. The state panel shows
/// what the program stored; its process is no state to show.
#[derive(serde::Serialize)]
pub struct ExternalStorage {
    /// The keys the program stored.
    pub kv: BTreeMap<String, Value>,
    /// The size of `kv` as [`MAX_STORED_BYTES`] counts it.
    #[serde(skip)]
    kv_bytes: usize,
    #[serde(skip)]
    effects: Vec<u32>,
    /// The running program.
    #[serde(skip)]
    pub session: Box<Session>,
}

/// For developers: the process is no value to print.
impl fmt::Debug for ExternalStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExternalStorage")
            .field("kv", &self.kv)
            .field("kv_bytes", &self.kv_bytes)
            .field("effects", &self.effects)
            .finish_non_exhaustive()
    }
}

impl<W: Carries<R::Msg>, R: Role> External<W, R> {
    /// Ends the run: a program that broke the protocol has no next step.
    /// The panic becomes the seed's failure (`Outcome::Panicked`), which the
    /// command line reports as a protocol error (exit 2) with its seed.
    fn fail(&self, storage: &mut ExternalStorage, f: &Failure) -> ! {
        let report = storage.session.report(&self.cfg.name, &self.cfg.program, f);
        panic!("{PROTOCOL_ERROR}{report}");
    }

    /// One handler: the line in, the program's lines applied in order.
    /// Its draws are the actor's own recorded decisions, so a replay hands
    /// the program the same values and shrinking lowers them.
    fn call(
        &self,
        storage: &mut ExternalStorage,
        state: &mut ExternalState,
        line: &str,
        ctx: &mut impl Ctx<Self>,
    ) {
        let timeout = Duration::from_millis(self.cfg.handler_timeout_ms);
        let now_us = ctx.now_us();
        let outs =
            match storage
                .session
                .call(&self.cfg.program, timeout, now_us, line, &mut |bound| {
                    ctx.choose(bound)
                }) {
                Ok(outs) => outs,
                Err(f) => self.fail(storage, &f),
            };
        let starting = line.starts_with(r#"{"type":"start""#);
        for out in outs {
            if let Err(f) = self.apply(storage, state, out, starting, ctx) {
                self.fail(storage, &f);
            }
        }
    }

    /// A `hello`: only in answer to a `start`, and with a version that has this role.
    fn hello(protocol: u64, starting: bool) -> Result<(), Failure> {
        if !starting {
            return Err(failure(
                "a `hello` in answer to a line that is no `start`",
                "say hello once, in the answer to each start line",
            ));
        }
        if protocol < R::SINCE_PROTOCOL {
            return Err(failure(
                format!(
                    "the program speaks protocol {protocol}, which has no {} role (since protocol {})",
                    R::NAME,
                    R::SINCE_PROTOCOL
                ),
                format!(
                    "answer start with {{\"type\":\"hello\",\"protocol\":{}}} and the messages of docs/protocol.md",
                    protocol::PROTOCOL
                ),
            ));
        }
        Ok(())
    }

    /// Applies one line of the program's answer to the simulation.
    fn apply(
        &self,
        storage: &mut ExternalStorage,
        state: &mut ExternalState,
        out: Out,
        starting: bool,
        ctx: &mut impl Ctx<Self>,
    ) -> Result<(), Failure> {
        match out {
            Out::Send { to, payload } => self.send(&to, &payload, ctx)?,
            Out::SetTimer { id, after_us } => ctx.set_timer(state.set_timer(&id)?, after_us),
            Out::CancelTimer { id } => {
                if let Some(timer) = state.cancel_timer(&id)? {
                    ctx.cancel_timer(timer);
                }
            }
            Out::Effect { op, payload } => {
                if let Some(fix) = R::NO_EFFECTS {
                    let what = format!("an `effect`, which the {} role does not report", R::NAME);
                    return Err(failure(what, fix));
                }
                if !storage.effects.contains(&op) {
                    storage.effects.push(op);
                }
                ctx.observe(R::effect(op, payload));
            }
            Out::Store { key, value } => storage.store(key, value)?,
            Out::Hello { protocol } => Self::hello(protocol, starting)?,
            // A draw was answered while the program wrote its answer.
            Out::Draw { .. } | Out::Log { .. } | Out::Done => {}
        }
        Ok(())
    }

    /// A `send`: to an actor of this scenario, with a payload its role takes.
    fn send(&self, to: &str, payload: &Value, ctx: &mut impl Ctx<Self>) -> Result<(), Failure> {
        let Some(id) = self.cfg.actor_names.iter().position(|n| n == to) else {
            let names = self.cfg.actor_names.join(", ");
            let hint = crate::core::input::did_you_mean(
                to,
                self.cfg.actor_names.iter().map(String::as_str),
            )
            .map(|b| format!("did you mean \"{b}\"? "))
            .unwrap_or_default();
            return Err(failure(
                format!("a `send` to \"{to}\", which is no actor of this scenario"),
                format!("{hint}the actors are {names}"),
            ));
        };
        let msg = R::outgoing(to, payload).map_err(|e| {
            let e = protocol::payload_error(to, e);
            failure(e.what, e.fix)
        })?;
        ctx.send(id as ActorId, W::wrap(msg));
        Ok(())
    }
}

impl ExternalState {
    /// The timer a `set_timer` of `id` sets: the slot `id` already holds
    /// (setting it again replaces it), else a free one.
    fn set_timer(&mut self, id: &str) -> Result<ExternalTimer, Failure> {
        let name = names::intern(id)?;
        let slot = match self.timers.iter().position(|t| *t == Some(name)) {
            Some(s) => s,
            None => self
                .timers
                .iter()
                .position(Option::is_none)
                .ok_or_else(|| {
                    failure(
                        format!("more than {MAX_TIMERS} timers pending at once"),
                        "cancel timers you no longer need, or reuse one timer id for one purpose",
                    )
                })?,
        };
        self.timers[slot] = Some(name);
        Ok(ExternalTimer {
            slot: slot as u16,
            name,
        })
    }

    /// The timer a `cancel_timer` of `id` cancels, if one is pending
    /// (cancelling a timer that is not pending is no error).
    fn cancel_timer(&mut self, id: &str) -> Result<Option<ExternalTimer>, Failure> {
        let name = names::intern(id)?;
        let Some(slot) = self.timers.iter().position(|t| *t == Some(name)) else {
            return Ok(None);
        };
        self.timers[slot] = None;
        Ok(Some(ExternalTimer {
            slot: slot as u16,
            name,
        }))
    }
}

impl ExternalStorage {
    /// A `store`: writes `key` (a `null` value deletes it) within the
    /// bounds on keys and bytes.
    fn store(&mut self, key: String, value: Value) -> Result<(), Failure> {
        let old_bytes = self.kv.get(&key).map_or(0, |v| stored_bytes(&key, v));
        if value.is_null() {
            self.kv.remove(&key);
            self.kv_bytes -= old_bytes;
            return Ok(());
        }
        let delete = "delete keys you no longer need with {\"type\":\"store\",\"key\":\"...\",\"value\":null}";
        if self.kv.len() >= MAX_STORED_KEYS && !self.kv.contains_key(&key) {
            return Err(failure(
                format!("more than {MAX_STORED_KEYS} keys in its storage"),
                delete,
            ));
        }
        let bytes = self.kv_bytes - old_bytes + stored_bytes(&key, &value);
        if bytes > MAX_STORED_BYTES {
            return Err(failure(
                format!(
                    "more than {MAX_STORED_BYTES} bytes in its storage ({bytes} with this store)"
                ),
                delete,
            ));
        }
        self.kv.insert(key, value);
        self.kv_bytes = bytes;
        Ok(())
    }
}

/// What one stored key costs against [`MAX_STORED_BYTES`]: the key and its
/// value as compact JSON, as the `start` line carries them.
fn stored_bytes(key: &str, value: &Value) -> usize {
    key.len() + value.to_string().len()
}

// What a program may send is what its role's built-in actor sends.
impl<W, R: Role + crate::core::Ends> crate::core::Ends for External<W, R> {
    const ROLES: &'static [&'static str] = R::ROLES;
    const SENDS: &'static [(&'static str, &'static str)] = R::SENDS;
    const ANSWERS: &'static [(&'static str, &'static str)] = R::ANSWERS;
}

impl<W: Carries<R::Msg>, R: Role> Actor for External<W, R> {
    type Msg = W;
    type Obs = Obs;
    type Timer = ExternalTimer;
    type State = ExternalState;
    type Storage = ExternalStorage;

    fn reset(
        &self,
        state: sim::Fresh<'_, ExternalState>,
        storage: Option<sim::Fresh<'_, ExternalStorage>>,
    ) {
        if let Some(s) = storage {
            let s = s.or_insert_with(|| ExternalStorage {
                kv: BTreeMap::new(),
                kv_bytes: 0,
                effects: Vec::new(),
                session: Box::default(),
            });
            s.kv.clear();
            s.kv_bytes = 0;
            s.effects.clear();
            s.session.new_run(self.mode.transcript);
        }
        let st = state.or_insert_with(|| ExternalState {
            timers: Vec::new(),
            started_us: 0,
            frames: VecDeque::with_capacity(RECENT_FRAMES),
        });
        st.started_us = 0;
        st.frames.clear();
        st.timers.clear();
        st.timers.resize(MAX_TIMERS, None);
    }

    fn on_start(
        &self,
        state: &mut ExternalState,
        storage: &mut ExternalStorage,
        ctx: &mut impl Ctx<Self>,
    ) {
        let kill = self.cfg.program.state_folder && ctx.restarted();
        if self.mode.fresh_process || kill {
            // What a crash does to a real process; the warm process gets the
            // same news from `start` and must forget its memory itself. A
            // program with a state folder is killed at its crash (its
            // database is the files, not its memory), and so cannot keep it.
            storage.session.stop();
        }
        storage.session.declared = None;
        state.started_us = ctx.now_us();
        let at = (ctx.restarted(), ctx.now_us());
        let line = protocol::start(&self.cfg.name, at, &self.cfg.start_fields, &storage.kv);
        self.call(storage, state, &line, ctx);
    }

    fn on_msg(
        &self,
        state: &mut ExternalState,
        storage: &mut ExternalStorage,
        from: ActorId,
        msg: W,
        ctx: &mut impl Ctx<Self>,
    ) {
        let Some(m) = msg.peek() else {
            return;
        };
        if R::connection_sent_us(m).is_some_and(|sent_us| sent_us < state.started_us) {
            if let Some(s) = R::OLD_CONNECTION {
                ctx.reached(s);
            }
            return;
        }
        if let Some(frame) = R::frame_id(m) {
            if state.frames.contains(&frame) {
                return; // a network copy of a frame the program has had
            }
            if state.frames.len() == RECENT_FRAMES {
                state.frames.pop_front();
            }
            state.frames.push_back(frame);
        }
        let Some(payload) = R::incoming(m) else {
            return;
        };
        if let Some((op, seen)) = R::arrival(m) {
            ctx.observe(seen);
            if let Some(s) = R::REDELIVERED_AFTER_EFFECT.filter(|_| storage.effects.contains(&op)) {
                ctx.reached(s);
            }
        }
        let from = self
            .cfg
            .actor_names
            .get(from as usize)
            .map_or("?", String::as_str);
        let line = protocol::msg(from, ctx.now_us(), &payload);
        self.call(storage, state, &line, ctx);
    }

    fn on_timer(
        &self,
        state: &mut ExternalState,
        storage: &mut ExternalStorage,
        timer: ExternalTimer,
        ctx: &mut impl Ctx<Self>,
    ) {
        // The slot is free again: the handler may set the same timer anew.
        if let Some(t) = state.timers.get_mut(usize::from(timer.slot)) {
            *t = None;
        }
        let line = protocol::timer(timer.name(), ctx.now_us());
        self.call(storage, state, &line, ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state() -> ExternalState {
        ExternalState {
            timers: vec![None; MAX_TIMERS],
            started_us: 0,
            frames: VecDeque::new(),
        }
    }

    fn storage() -> ExternalStorage {
        ExternalStorage {
            kv: BTreeMap::new(),
            kv_bytes: 0,
            effects: Vec::new(),
            session: Box::default(),
        }
    }

    #[test]
    fn a_timer_id_keeps_its_slot_until_cancelled() {
        let mut st = state();
        let a = st.set_timer("a").unwrap();
        let b = st.set_timer("b").unwrap();
        assert_eq!((a.slot, b.slot), (0, 1));
        // Setting it again replaces it: the same slot, so the engine drops the old one.
        assert_eq!(st.set_timer("a").unwrap().slot, 0);
        assert_eq!(st.cancel_timer("a").unwrap().map(|t| t.slot), Some(0));
        assert_eq!(st.cancel_timer("a").unwrap(), None, "not pending any more");
        assert_eq!(
            st.set_timer("c").unwrap().slot,
            0,
            "the freed slot is reused"
        );
    }

    #[test]
    fn too_many_pending_timers_are_refused() {
        let mut st = state();
        for i in 0..MAX_TIMERS {
            st.set_timer(&format!("t{i}")).unwrap();
        }
        let f = st.set_timer("one-more").unwrap_err();
        assert_eq!(
            f.what,
            format!("more than {MAX_TIMERS} timers pending at once")
        );
    }

    #[test]
    fn the_store_counts_its_bytes_and_null_deletes() {
        let mut s = storage();
        s.store("k".into(), json!("vv")).unwrap();
        assert_eq!(s.kv_bytes, "k".len() + "\"vv\"".len());
        s.store("k".into(), json!(1)).unwrap();
        assert_eq!(s.kv_bytes, 2, "a new value replaces the old one's bytes");
        s.store("k".into(), Value::Null).unwrap();
        assert_eq!((s.kv.len(), s.kv_bytes), (0, 0));
        // Deleting a key that is not there is no error.
        s.store("absent".into(), Value::Null).unwrap();
        assert_eq!(s.kv_bytes, 0);
    }

    #[test]
    fn a_store_over_the_byte_bound_is_refused_and_changes_nothing() {
        let mut s = storage();
        let big = "x".repeat(MAX_STORED_BYTES);
        let f = s.store("k".into(), json!(big)).unwrap_err();
        assert!(
            f.what
                .starts_with(&format!("more than {MAX_STORED_BYTES} bytes")),
            "{f:?}"
        );
        assert!(f.fix.contains("\"value\":null"), "{f:?}");
        assert_eq!((s.kv.len(), s.kv_bytes), (0, 0));
    }
}
