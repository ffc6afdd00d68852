//! `[consumer] program`: a user's program in each consumer's place
//! (docs/protocol.md), checked against the built-in consumer's keys, and
//! the actors that run it.

use super::queue::ConsumerDto;
use super::written_in;
use crate::core::input::{invalid, path, positive_duration_us, Invalid, LoadError};
use crate::core::{BuildInput, Carries};
use crate::external::{self, ExternalConfig};
use crate::messaging::{ProgramConsumer, ProgramRelay};

/// The built-in consumer's keys, which mean nothing when a program is the consumer.
const BUILT_IN_CONSUMER_KEYS: &[&str] = &[
    "handler",
    "ack",
    "processing_ms",
    "processing_jitter_ms",
    "tx_timeout_ms",
    "tx_max_attempts",
    "inbox_retention_ms",
    "inbox_max_rows",
    "lease_renewal_ms",
];

/// Longest wall-clock time a program's handler may be given.
const MAX_HANDLER_TIMEOUT_MS: u64 = 3600 * 1000;

/// Whether the scenario writes `[consumer] key` (a default is not written).
fn written(text: &str, key: &str) -> bool {
    written_in(text, "consumer", key)
}

/// For a model whose consumers are always built in (the chain's
/// `[accounting]`): the program keys are refused, not ignored.
pub(crate) fn refuse_program(
    c: &ConsumerDto,
    text: &str,
    table: &'static str,
    model: &str,
) -> Result<(), Invalid> {
    for key in ["program", "handler_timeout_ms", "state_folder"] {
        if (key == "program" && c.program.is_some()) || written_in(text, table, key) {
            return Err(invalid(
                path(&[table, key]),
                format!("the {model} model runs its built-in {table} consumer: {table}.{key} is for a program in the consumer's place, which only the messaging model takes"),
                "delete the line, or run the program with model = \"messaging\" and [consumer] program = [...]",
            ));
        }
    }
    Ok(())
}

/// `[consumer] program`, checked: the built-in consumer's keys are not
/// written beside it, and the program and its files exist.
pub(super) fn program_of(
    c: &ConsumerDto,
    input: &BuildInput<'_>,
) -> Result<Option<(external::Program, u64)>, LoadError> {
    let cat = |k| path(&["consumer", k]);
    let Some(argv) = &c.program else {
        for key in ["handler_timeout_ms", "state_folder"] {
            if written(input.text, key) {
                return Err(invalid(
                    cat(key),
                    format!("{key} is a setting of an external program, and no consumer.program is given"),
                    "delete the line, or give the program: program = [\"python3\", \"consumer.py\"]",
                )
                .into());
            }
        }
        return Ok(None);
    };
    if let Some(k) = BUILT_IN_CONSUMER_KEYS
        .iter()
        .find(|k| written(input.text, k))
    {
        return Err(invalid(
            cat(k),
            format!("consumer.{k} belongs to the built-in consumer, and consumer.program replaces it: the program decides how it handles a delivery and when it acks"),
            "delete the line, or delete consumer.program to use the built-in consumer",
        )
        .into());
    }
    let mut program = external::resolve_program(argv, input.dir, &cat("program"))?;
    program.state_folder = c.state_folder;
    let timeout_ms = positive_duration_us(
        c.handler_timeout_ms,
        MAX_HANDLER_TIMEOUT_MS,
        cat("handler_timeout_ms"),
        "write handler_timeout_ms = 10000 (wall-clock milliseconds per handler)",
    )? / 1000;
    Ok(Some((program, timeout_ms)))
}
/// A user's program in each consumer's place (after the producer and the
/// broker in `actors`): each keeps its own database.
pub(super) fn program_actors<N, W>(
    actors: &mut Vec<(String, N)>,
    (program, handler_timeout_ms): (external::Program, u64),
    consumers: u32,
) where
    N: From<ProgramConsumer<W>>,
    W: Carries<crate::messaging::Msg>,
{
    let names: Vec<String> = actors
        .iter()
        .map(|a| a.0.clone())
        .chain((1..=consumers).map(|i| format!("consumer-{i}")))
        .collect();
    for name in &names[2..] {
        let cfg = ExternalConfig {
            name: name.clone(),
            program: program.clone(),
            handler_timeout_ms,
            actor_names: names.clone(),
            start_fields: String::new(),
        };
        actors.push((name.clone(), N::from(ProgramConsumer::new(cfg))));
    }
}

/// `[relay]`: a user's program as the outbox relay (docs/protocol.md).
#[derive(serde::Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
pub(super) struct RelayDto {
    program: Option<Vec<String>>,
    handler_timeout_ms: u64,
    state_folder: bool,
}

impl Default for RelayDto {
    fn default() -> Self {
        RelayDto {
            program: None,
            handler_timeout_ms: external::keys::default_handler_timeout_ms(),
            state_folder: false,
        }
    }
}

/// `[relay] program`, checked; the producer must keep an outbox for it.
pub(super) fn relay_program_of(
    r: &RelayDto,
    mode: crate::messaging::WriteMode,
    input: &BuildInput<'_>,
) -> Result<Option<(external::Program, u64)>, LoadError> {
    let keys = external::keys::ProgramKeys {
        table: "relay",
        argv: r.program.as_deref(),
        handler_timeout_ms: r.handler_timeout_ms,
        state_folder: r.state_folder,
        built_in: &[],
    };
    if r.program.is_some() && mode != crate::messaging::WriteMode::Outbox {
        return Err(invalid(
            path(&["relay", "program"]),
            "a relay publishes the rows of an outbox, and this producer keeps none",
            "write producer.write = \"outbox\", or delete [relay]",
        )
        .into());
    }
    let written = |key: &str| written_in(input.text, "relay", key);
    Ok(external::keys::program_of(&keys, written, input.dir)?)
}

/// The relay program's actor, after every other actor in `actors`: the
/// producer's rows go to it in the broker's place.
pub(super) fn relay_actor<N, W>(actors: &mut Vec<(String, N)>, program: &(external::Program, u64))
where
    N: From<ProgramRelay<W>>,
    W: Carries<crate::messaging::Msg>,
{
    let names = actors.iter().map(|a| a.0.clone()).chain(["relay".into()]);
    let cfg = external::keys::config_for("relay", program, names.collect());
    actors.push(("relay".to_string(), N::from(ProgramRelay::new(cfg))));
}
