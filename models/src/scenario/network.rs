//! `[network]` and `[crashes]`: the links, partitions and crashes of the
//! engine's world, for the actors a model built.

use super::dto::{CommonDto, CrashDto, NetworkDto, PartitionDto};
use super::links::{
    actor, kind_delays_in_order, kind_faults, link_entry, matched_links, set_everywhere_overridden,
};
use super::routes::{carried, cuts_traffic, Kinds};
use crate::core::input::{
    duration_us, invalid, min_max, path, per_mille, Invalid, Seg, DAY_MS, MAX_DURATION_MS,
};
use crate::core::wire::ActorEnds;
use sim::{CrashConfig, Limits, LinkConfig, Partition, TimeUs, World, US_PER_MS};
use std::collections::BTreeMap;

/// The delay ranges `[network]` and its links set, by actor name, before the
/// actors exist: the design warnings read them while a model is built.
/// Each value is range-checked here already, so the warnings' arithmetic
/// never sees a number [`world`] would refuse later.
pub(super) fn delays(n: &NetworkDto) -> Result<crate::core::design_warning::Delays, Invalid> {
    use Seg::{Index, Key};
    duration_us(n.delay_ms_min, DAY_MS, path(&["network", "delay_ms_min"]))?;
    duration_us(n.delay_ms_max, DAY_MS, path(&["network", "delay_ms_max"]))?;
    let mut d = crate::core::design_warning::Delays::new(n.delay_ms_min, n.delay_ms_max);
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
        // An entry with `kinds` delays only its kinds: the design warnings
        // read the delays of a whole link (a gap: a rule that compares a
        // transfer's delay with its status query's sees the link's for both).
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
pub(super) fn unused(n: &NetworkDto) -> Vec<crate::core::Unused> {
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

/// The actors a model built, as `[network]` and `[crashes]` name them.
pub(super) struct Actors<'a> {
    pub names: &'a [String],
    /// What the error for an unknown actor adds (how to get more of them).
    pub hint: &'a str,
    pub model: &'a str,
    /// The message kinds the model's actors send.
    pub own_kinds: &'a [&'static str],
    /// Per actor, the kinds it sends and takes.
    pub ends: &'a [ActorEnds],
    /// For a variant, the ends of the file as written (`routes::Kinds::written`).
    pub written: &'a [(String, ActorEnds)],
    /// `--set network.<key>`, the changes a user asked of every link.
    pub set: &'a [&'a str],
}

/// `[network]` and `[crashes]` for `actors`: the engine's world.
pub(super) fn world(
    c: &CommonDto,
    actors: &Actors<'_>,
    fault_phase_us: TimeUs,
    limits: Limits,
) -> Result<World, Invalid> {
    let names = actors.names;
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
    base_links(n, &mut world)?;
    let kinds = Kinds {
        all: crate::registry::message_kinds(),
        model: actors.model,
        own: actors.own_kinds,
        ends: actors.ends,
        names,
        written: actors.written,
    };
    debug_assert_eq!(actors.ends.len(), names.len(), "the ends of every actor");
    link_entries(n, actors, &kinds, &mut world)?;
    for key in actors.set {
        set_everywhere_overridden(n, key, names, &kinds)?;
    }
    for (i, p) in n.partitions.iter().enumerate() {
        let cut = partition(p, names, actors.hint, i, fault_phase_us)?;
        cuts_traffic(&cut, p, i, names, &kinds)?;
        world.partitions.push(cut);
    }
    random_partition(n, names, fault_phase_us, &mut world)?;
    crashes(&c.crashes, actors, &mut world)?;
    Ok(world)
}

/// `[network]`'s own values, on every link.
fn base_links(n: &NetworkDto, world: &mut World) -> Result<(), Invalid> {
    let nat = |k| path(&["network", k]);
    // Each bound in its range first: a huge minimum is that key's mistake,
    // not the maximum's.
    let mut base = LinkConfig::default();
    base.loss_per_mille = per_mille(n.loss_per_mille, nat("loss_per_mille"))?;
    base.duplicate_per_mille = per_mille(n.duplicate_per_mille, nat("duplicate_per_mille"))?;
    base.delay_us_min = duration_us(n.delay_ms_min, DAY_MS, nat("delay_ms_min"))?;
    base.delay_us_max = duration_us(n.delay_ms_max, DAY_MS, nat("delay_ms_max"))?;
    base.delay_sd_us = duration_us(n.delay_sd_ms, DAY_MS, nat("delay_sd_ms"))?;
    min_max(
        n.delay_ms_min,
        n.delay_ms_max,
        nat("delay_ms_max"),
        "network delay (ms)",
    )?;
    for l in &mut world.links {
        *l = base;
    }
    Ok(())
}

/// Each `[[network.links]]` entry, in file order, on the links it names.
fn link_entries(
    n: &NetworkDto,
    actors: &Actors<'_>,
    kinds: &Kinds<'_>,
    world: &mut World,
) -> Result<(), Invalid> {
    let mut known = BTreeMap::new();
    // Per kind entry of the world, the last file entry that set its delays,
    // and the key there an error about them points at.
    let mut delays_set_by: Vec<Option<(usize, &'static str)>> = Vec::new();
    for (i, l) in n.links.iter().enumerate() {
        let links = matched_links(l, actors.names, actors.hint, i)?;
        for &(from, to) in &links {
            match &l.kinds {
                Some(_) => {
                    kind_faults(l, kinds, (from, to), i, world, &mut known)?;
                    delays_set_by.resize(world.kind_faults.len(), None);
                    let key = match (l.delay_ms_min, l.delay_ms_max) {
                        (_, Some(_)) => Some("delay_ms_max"),
                        (Some(_), None) => Some("delay_ms_min"),
                        (None, None) => None,
                    };
                    if let Some(key) = key {
                        for kind in l.kinds.iter().flatten() {
                            let at = kinds.all.iter().position(|k| k == kind);
                            let entry = at.map(|k| (from, to, k as u16));
                            if let Some(&e) = entry.and_then(|entry| known.get(&entry)) {
                                delays_set_by[e] = Some((i, key));
                            }
                        }
                    }
                }
                None => link_entry(l, i, world.link_mut(from, to))?,
            }
        }
        carried(l, i, &links, actors.names, kinds)?;
    }
    kind_delays_in_order(world, &delays_set_by)
}

/// `[crashes.<actor>]`: how often each named actor crashes, and how soon
/// it restarts.
fn crashes(
    crashes: &BTreeMap<String, CrashDto>,
    actors: &Actors<'_>,
    world: &mut World,
) -> Result<(), Invalid> {
    use Seg::{Key, Name};
    for (name, cr) in crashes {
        let at = |k| vec![Key("crashes"), Name(name.clone()), Key(k)];
        let id = actor(
            actors.names,
            name,
            vec![Key("crashes"), Name(name.clone())],
            actors.hint,
        )?;
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
    Ok(())
}

/// A `[[network.partitions]]` entry: two actors cut off from each other
/// (one way, or both) for a window within the fault phase.
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
