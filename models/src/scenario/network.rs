//! `[network]` and `[crashes]`: the links, partitions and crashes of the
//! engine's world, for the actors a model built.

use super::common::CommonDto;
use super::routes::{all_links, carried, cuts_traffic, kind_at, Kinds};
use crate::core::input::{
    did_you_mean, duration_us, invalid, min_max, path, per_mille, Invalid, PerMille, Seg,
    MAX_DURATION_MS,
};
use crate::core::wire::ActorEnds;
use serde::Deserialize;
use sim::{CrashConfig, KindFault, Limits, LinkConfig, Partition, TimeUs, World, US_PER_MS};
use std::collections::BTreeMap;

const DAY_MS: u64 = 24 * 3600 * 1000;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct NetworkDto {
    #[serde(default)]
    loss_per_mille: PerMille,
    #[serde(default)]
    duplicate_per_mille: PerMille,
    #[serde(default = "one")]
    delay_ms_min: u64,
    #[serde(default = "fifty")]
    delay_ms_max: u64,
    #[serde(default)]
    links: Vec<LinkDto>,
    #[serde(default)]
    partitions: Vec<PartitionDto>,
    /// Swarm testing: the chance per seed of one random partition between two actors.
    #[serde(default)]
    random_partition_per_mille: PerMille,
    #[serde(default = "thousand")]
    random_partition_ms_min: u64,
    #[serde(default = "thirty_thousand")]
    random_partition_ms_max: u64,
}

impl Default for NetworkDto {
    fn default() -> Self {
        NetworkDto {
            loss_per_mille: PerMille::default(),
            duplicate_per_mille: PerMille::default(),
            delay_ms_min: one(),
            delay_ms_max: fifty(),
            links: Vec::new(),
            partitions: Vec::new(),
            random_partition_per_mille: PerMille::default(),
            random_partition_ms_min: thousand(),
            random_partition_ms_max: thirty_thousand(),
        }
    }
}

fn one() -> u64 {
    1
}
fn fifty() -> u64 {
    50
}
fn thousand() -> u64 {
    1000
}
fn thirty_thousand() -> u64 {
    30_000
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct LinkDto {
    /// The sender; left out, every actor.
    pub(super) from: Option<String>,
    /// The receiver; left out, every actor.
    pub(super) to: Option<String>,
    /// Only these message kinds get this link's loss and duplication.
    pub(super) kinds: Option<Vec<String>>,
    loss_per_mille: Option<PerMille>,
    duplicate_per_mille: Option<PerMille>,
    delay_ms_min: Option<u64>,
    delay_ms_max: Option<u64>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct PartitionDto {
    pub(super) between: Vec<String>,
    #[serde(default)]
    one_way: bool,
    start_ms: u64,
    end_ms: u64,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct CrashDto {
    #[serde(default)]
    crash_per_mille: PerMille,
    #[serde(default)]
    restart_ms_min: u64,
    #[serde(default)]
    restart_ms_max: u64,
}

/// The delay ranges `[network]` and its links set, by actor name, before the
/// actors exist: the design warnings read them while a model is built.
/// Each value is range-checked here already, so the warnings' arithmetic
/// never sees a number [`world`] would refuse later.
pub fn delays(n: &NetworkDto) -> Result<crate::core::hazard::Delays, Invalid> {
    use Seg::{Index, Key};
    duration_us(n.delay_ms_min, DAY_MS, path(&["network", "delay_ms_min"]))?;
    duration_us(n.delay_ms_max, DAY_MS, path(&["network", "delay_ms_max"]))?;
    let mut d = crate::core::hazard::Delays::new(n.delay_ms_min, n.delay_ms_max);
    for (i, l) in n.links.iter().enumerate() {
        let at = |k| vec![Key("network"), Key("links"), Index(i), Key(k)];
        for (v, k) in [
            (l.delay_ms_min, "delay_ms_min"),
            (l.delay_ms_max, "delay_ms_max"),
        ] {
            if let Some(ms) = v {
                duration_us(ms, DAY_MS, at(k))?;
            }
        }
        // An entry with `kinds` may not set delays (world() refuses it).
        if l.kinds.is_none() {
            d.link(
                l.from.as_deref(),
                l.to.as_deref(),
                l.delay_ms_min,
                l.delay_ms_max,
            );
        }
    }
    Ok(d)
}

/// The keys of `[network]` its other settings leave without effect: how
/// long a random partition lasts, where none is drawn.
pub fn unused(n: &NetworkDto) -> Vec<crate::core::Unused> {
    let drawn = per_mille(n.random_partition_per_mille, Vec::new()).map_or(true, |p| p.hi > 0);
    if drawn {
        return Vec::new();
    }
    crate::core::Unused::each(
        &["network"],
        &["random_partition_ms_min", "random_partition_ms_max"],
        &[&["network", "random_partition_per_mille"]],
        "no random partition is drawn (network.random_partition_per_mille = 0)",
        "remove it, or draw one in some seeds: random_partition_per_mille = 200",
    )
}

/// Resolves an actor's name to its id.
fn actor(
    names: &[String],
    name: &str,
    path: Vec<Seg>,
    hint: &str,
) -> Result<sim::ActorId, Invalid> {
    names
        .iter()
        .position(|n| n == name)
        .map(|i| i as sim::ActorId)
        .ok_or_else(|| {
            let help = match did_you_mean(name, names.iter().map(String::as_str)) {
                Some(b) => format!(
                    "did you mean \"{b}\"? The actors are {}{hint}",
                    names.join(", ")
                ),
                None => format!("the actors are {}{hint}", names.join(", ")),
            };
            invalid(
                path,
                format!("no actor named \"{name}\" in this model"),
                help,
            )
        })
}

/// `[network]` and `[crashes]` for the actors `names` of model `model`,
/// whose actors send the message kinds `own_kinds`, and each of which sends
/// and takes the kinds in `ends`: the engine's world.
pub fn world(
    c: &CommonDto,
    names: &[String],
    hint: &str,
    (model, own_kinds, ends): (&str, &[&'static str], &[ActorEnds]),
    (written, set): (&[(String, ActorEnds)], &[&str]),
    fault_phase_us: TimeUs,
    limits: Limits,
) -> Result<World, Invalid> {
    use Seg::{Key, Name};
    if names.len() > sim::MAX_ACTORS {
        return Err(invalid(
            vec![],
            format!(
                "{} actors: a world has at most {}",
                names.len(),
                sim::MAX_ACTORS
            ),
            "use fewer consumers or clients",
        ));
    }
    let mut world = World::new(names.to_vec());
    world.fault_phase_us = fault_phase_us;
    world.limits = limits;
    let n = &c.network;
    let nat = |k| path(&["network", k]);
    // Each bound in its range first: a huge minimum is that key's mistake,
    // not the maximum's.
    let base = LinkConfig {
        loss_per_mille: per_mille(n.loss_per_mille, nat("loss_per_mille"))?,
        duplicate_per_mille: per_mille(n.duplicate_per_mille, nat("duplicate_per_mille"))?,
        delay_us_min: duration_us(n.delay_ms_min, DAY_MS, nat("delay_ms_min"))?,
        delay_us_max: duration_us(n.delay_ms_max, DAY_MS, nat("delay_ms_max"))?,
    };
    min_max(
        n.delay_ms_min,
        n.delay_ms_max,
        nat("delay_ms_max"),
        "network delay (ms)",
    )?;
    for l in &mut world.links {
        *l = base;
    }
    let kinds = Kinds {
        all: crate::registry::message_kinds(),
        model,
        own: own_kinds,
        ends,
        names,
        written,
    };
    debug_assert_eq!(ends.len(), names.len(), "the ends of every actor");
    let mut known = BTreeMap::new();
    for (i, l) in n.links.iter().enumerate() {
        let links = matched_links(l, names, hint, i)?;
        for &(from, to) in &links {
            match &l.kinds {
                Some(_) => kind_faults(l, &kinds, (from, to), i, &mut world, &mut known)?,
                None => link_entry(l, i, world.link_mut(from, to))?,
            }
        }
        carried(l, i, &links, names, &kinds)?;
    }
    for key in set {
        set_everywhere_overridden(n, key, names, &kinds)?;
    }
    for (i, p) in n.partitions.iter().enumerate() {
        let cut = partition(p, names, hint, i, fault_phase_us)?;
        cuts_traffic(&cut, p, i, names, &kinds)?;
        world.partitions.push(cut);
    }
    random_partition(n, names, fault_phase_us, &mut world)?;
    for (name, cr) in &c.crashes {
        let at = |k| vec![Key("crashes"), Name(name.clone()), Key(k)];
        let id = actor(names, name, vec![Key("crashes"), Name(name.clone())], hint)?;
        let crash = CrashConfig {
            crash_per_mille: per_mille(cr.crash_per_mille, at("crash_per_mille"))?,
            restart_us_min: duration_us(cr.restart_ms_min, DAY_MS, at("restart_ms_min"))?,
            restart_us_max: duration_us(cr.restart_ms_max, DAY_MS, at("restart_ms_max"))?,
        };
        min_max(
            cr.restart_ms_min,
            cr.restart_ms_max,
            at("restart_ms_max"),
            "restart delay (ms)",
        )?;
        world.crashes[id as usize] = crash;
    }
    Ok(world)
}

/// Refuses `--set network.<key>` (`key`: one of the link values) when every
/// link that carries messages takes its own value of `key` from a
/// `[[network.links]]` entry: the user asked for a change, and no message
/// would see it.
fn set_everywhere_overridden(
    n: &NetworkDto,
    key: &str,
    names: &[String],
    kinds: &Kinds<'_>,
) -> Result<(), Invalid> {
    let sets = |l: &LinkDto| match key {
        "loss_per_mille" => l.loss_per_mille.is_some(),
        "duplicate_per_mille" => l.duplicate_per_mille.is_some(),
        "delay_ms_min" => l.delay_ms_min.is_some(),
        "delay_ms_max" => l.delay_ms_max.is_some(),
        _ => false,
    };
    if !n.links.iter().any(&sets) {
        return Ok(());
    }
    let index = |name: &Option<String>| {
        name.as_ref()
            .map(|x| names.iter().position(|n| n == x).map(|i| i as sim::ActorId))
    };
    let covers = |l: &LinkDto, (f, t): (sim::ActorId, sim::ActorId)| {
        // An entry that names an actor the model lacks is refused later.
        let side = |name: &Option<String>, a| match index(name) {
            None => true,
            Some(Some(x)) => x == a,
            Some(None) => false,
        };
        side(&l.from, f) && side(&l.to, t)
    };
    let mut overriding: Vec<usize> = Vec::new();
    let mut busy = 0;
    for link in all_links(names.len()) {
        if !kinds.busy(link) {
            continue;
        }
        busy += 1;
        // The last entry without `kinds` that sets the key decides; an
        // entry with `kinds` sets loss and duplication for some kinds only,
        // so the link's own value still reaches the others.
        let entry = n
            .links
            .iter()
            .enumerate()
            .rev()
            .find(|(_, l)| l.kinds.is_none() && sets(l) && covers(l, link));
        match entry {
            Some((i, _)) if !overriding.contains(&i) => overriding.push(i),
            Some(_) => {}
            None => return Ok(()),
        }
    }
    if busy == 0 {
        return Ok(());
    }
    overriding.sort_unstable();
    let shown: Vec<String> = overriding
        .iter()
        .map(|&i| {
            let l = &n.links[i];
            let side = |x: &Option<String>| {
                x.as_deref()
                    .map_or("any actor".into(), |a| format!("\"{a}\""))
            };
            format!(
                "[[network.links]] entry {} (from {} to {})",
                i + 1,
                side(&l.from),
                side(&l.to)
            )
        })
        .collect();
    Err(invalid(
        path(&["network"]).into_iter().chain([Seg::Name(key.to_string())]).collect(),
        format!(
            "network.{key} changes no message: every link that carries messages sets its own {key} in {}",
            shown.join(", ")
        ),
        format!(
            "change {key} in those entries of the file; a --set cannot name one entry, but it can replace them all: --set 'network.links=[{{from = \"a\", to = \"b\", {key} = ...}}]'"
        ),
    ))
}

/// Kind entries a world may hold in all: a `kinds` entry without `from` or
/// `to` is one per link and kind, and a world of hundreds of actors has tens
/// of thousands of links.
const MAX_KIND_FAULTS: usize = 1 << 16;

/// The directed links entry `i` names: one, or, where it leaves `from` or
/// `to` out, every link out of or into an actor, or every link.
fn matched_links(
    l: &LinkDto,
    names: &[String],
    hint: &str,
    i: usize,
) -> Result<Vec<(sim::ActorId, sim::ActorId)>, Invalid> {
    use Seg::{Index, Key};
    let at = |k| vec![Key("network"), Key("links"), Index(i), Key(k)];
    let from = match &l.from {
        Some(name) => Some(actor(names, name, at("from"), hint)?),
        None => None,
    };
    let to = match &l.to {
        Some(name) => Some(actor(names, name, at("to"), hint)?),
        None => None,
    };
    if from.is_some() && from == to {
        return Err(invalid(
            at("to"),
            format!(
                "a link from \"{}\" to itself: an actor does not send to itself over the network",
                l.to.as_deref().unwrap_or_default()
            ),
            "name two different actors",
        ));
    }
    if from.is_none() && to.is_none() && l.kinds.is_none() {
        return Err(invalid(
            vec![Key("network"), Key("links"), Index(i)],
            "an entry with neither `from` nor `to` nor `kinds` changes every link",
            "set these values in [network] itself, or name the link with `from` and `to`",
        ));
    }
    let mut out = all_links(names.len());
    out.retain(|&(f, t)| from.is_none_or(|x| x == f) && to.is_none_or(|x| x == t));
    Ok(out)
}

/// A `[[network.links]]` entry without `kinds`: the values it sets replace
/// the link's.
fn link_entry(l: &LinkDto, i: usize, cfg: &mut LinkConfig) -> Result<(), Invalid> {
    use Seg::{Index, Key};
    let at = |k| vec![Key("network"), Key("links"), Index(i), Key(k)];
    if let Some(p) = l.loss_per_mille {
        cfg.loss_per_mille = per_mille(p, at("loss_per_mille"))?;
    }
    if let Some(p) = l.duplicate_per_mille {
        cfg.duplicate_per_mille = per_mille(p, at("duplicate_per_mille"))?;
    }
    if let Some(v) = l.delay_ms_min {
        cfg.delay_us_min = duration_us(v, DAY_MS, at("delay_ms_min"))?;
    }
    if let Some(v) = l.delay_ms_max {
        cfg.delay_us_max = duration_us(v, DAY_MS, at("delay_ms_max"))?;
    }
    min_max(
        cfg.delay_us_min / 1000,
        cfg.delay_us_max / 1000,
        at("delay_ms_max"),
        "link delay (ms)",
    )
}

/// A `[[network.links]]` entry with `kinds`, on the link `from → to`: each
/// chosen kind gets the loss and duplication the entry sets. What it leaves
/// out, a kind keeps from an earlier entry for it on this link, or else
/// follows the link's rate as each seed draws it; a later entry for the same
/// kind replaces an earlier one in place.
fn kind_faults(
    l: &LinkDto,
    kinds: &Kinds<'_>,
    (from, to): (sim::ActorId, sim::ActorId),
    i: usize,
    world: &mut World,
    known: &mut BTreeMap<(sim::ActorId, sim::ActorId, u16), usize>,
) -> Result<(), Invalid> {
    use Seg::{Index, Key};
    let selected = l.kinds.as_deref().unwrap_or_default();
    let at = |k| vec![Key("network"), Key("links"), Index(i), Key(k)];
    if l.delay_ms_min.is_some() || l.delay_ms_max.is_some() {
        return Err(invalid(
            at("kinds"),
            "a link entry with `kinds` sets loss and duplication only: delays belong to the whole link",
            "put the delays in a second [[network.links]] entry without `kinds`",
        ));
    }
    if selected.is_empty() {
        return Err(invalid(
            at("kinds"),
            "`kinds` is empty",
            "name at least one message kind, e.g. [\"status-query\"]",
        ));
    }
    let loss = l
        .loss_per_mille
        .map(|p| per_mille(p, at("loss_per_mille")))
        .transpose()?;
    let dup = l
        .duplicate_per_mille
        .map(|p| per_mille(p, at("duplicate_per_mille")))
        .transpose()?;
    for (j, name) in selected.iter().enumerate() {
        let kind = kinds.all.iter().position(|k| k == name);
        let Some(kind) = kind.filter(|_| kinds.own.contains(&name.as_str())) else {
            let own = kinds.own.join(", ");
            let help = match did_you_mean(name, kinds.own.iter().copied()) {
                Some(b) => format!("did you mean \"{b}\"?"),
                None => format!("the {} model's message kinds are {own}", kinds.model),
            };
            let message = match kind {
                // A kind of another model: accepted, it would change nothing.
                Some(_) => format!(
                    "the {} model sends no \"{name}\" messages: a fault for them would never fire",
                    kinds.model
                ),
                None => format!("unknown message kind \"{name}\""),
            };
            return Err(invalid(kind_at(i, j), message, help));
        };
        let kind = kind as u16;
        let earlier = known.get(&(from, to, kind)).copied();
        let mut fault = match earlier {
            Some(e) => world.kind_faults[e],
            None => KindFault {
                from,
                to,
                kind,
                loss_per_mille: None,
                duplicate_per_mille: None,
            },
        };
        fault.loss_per_mille = loss.or(fault.loss_per_mille);
        fault.duplicate_per_mille = dup.or(fault.duplicate_per_mille);
        match earlier {
            Some(e) => world.kind_faults[e] = fault,
            None if world.kind_faults.len() < MAX_KIND_FAULTS => {
                known.insert((from, to, kind), world.kind_faults.len());
                world.kind_faults.push(fault);
            }
            None => {
                return Err(invalid(
                    at("kinds"),
                    format!("more than {MAX_KIND_FAULTS} pairs of link and message kind"),
                    "name the links with `from` and `to`, or fewer kinds",
                ))
            }
        }
    }
    Ok(())
}

fn partition(
    p: &PartitionDto,
    names: &[String],
    hint: &str,
    i: usize,
    fault_phase_us: TimeUs,
) -> Result<Partition, Invalid> {
    use Seg::{Index, Key};
    let at = |k| vec![Key("network"), Key("partitions"), Index(i), Key(k)];
    if p.between.len() != 2 {
        return Err(invalid(
            at("between"),
            format!("a partition is between two actors, not {}", p.between.len()),
            format!(
                "write between = [\"{}\", \"{}\"]",
                names[0],
                names[names.len().min(2) - 1]
            ),
        ));
    }
    let a = actor(names, &p.between[0], at("between"), hint)?;
    let b = actor(names, &p.between[1], at("between"), hint)?;
    if a == b {
        return Err(invalid(
            at("between"),
            format!("\"{}\" cannot be cut off from itself", p.between[0]),
            "name two different actors",
        ));
    }
    let start_us = duration_us(p.start_ms, MAX_DURATION_MS, at("start_ms"))?;
    let end_us = duration_us(p.end_ms, MAX_DURATION_MS, at("end_ms"))?;
    min_max(p.start_ms, p.end_ms, at("end_ms"), "partition window (ms)")?;
    if end_us > fault_phase_us {
        return Err(invalid(
            at("end_ms"),
            format!(
                "the partition ends at {} ms, after the fault phase ({} ms): faults stop when healing starts, so it would be cut short",
                p.end_ms,
                fault_phase_us / US_PER_MS
            ),
            format!("raise run.fault_phase_ms to at least {}, or end the partition earlier", p.end_ms),
        ));
    }
    Ok(Partition {
        a,
        b,
        both_ways: !p.one_way,
        start_us,
        end_us,
    })
}

fn random_partition(
    n: &NetworkDto,
    names: &[String],
    fault_phase_us: TimeUs,
    world: &mut World,
) -> Result<(), Invalid> {
    let nat = |k| path(&["network", k]);
    let p = per_mille(
        n.random_partition_per_mille,
        nat("random_partition_per_mille"),
    )?;
    let min_us = duration_us(
        n.random_partition_ms_min,
        MAX_DURATION_MS,
        nat("random_partition_ms_min"),
    )?;
    let max_us = duration_us(
        n.random_partition_ms_max,
        MAX_DURATION_MS,
        nat("random_partition_ms_max"),
    )?;
    min_max(
        n.random_partition_ms_min,
        n.random_partition_ms_max,
        nat("random_partition_ms_max"),
        "random partition duration (ms)",
    )?;
    if p.hi > 0 {
        if names.len() < 2 {
            return Err(invalid(
                nat("random_partition_per_mille"),
                "a partition needs two actors",
                "remove random_partition_per_mille",
            ));
        }
        if max_us > fault_phase_us {
            return Err(invalid(
                nat("random_partition_ms_max"),
                format!(
                    "a random partition may last {} ms, longer than the fault phase ({} ms): it would be cut short",
                    n.random_partition_ms_max,
                    fault_phase_us / US_PER_MS
                ),
                format!(
                    "raise run.fault_phase_ms to at least {}, or shorten random_partition_ms_max",
                    n.random_partition_ms_max
                ),
            ));
        }
    }
    world.random_partition = sim::RandomPartition {
        per_mille: p,
        duration_us_min: min_us,
        duration_us_max: max_us,
    };
    Ok(())
}
