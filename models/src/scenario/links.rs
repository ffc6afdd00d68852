//! `[[network.links]]`: the entries that change one link, every link out
//! of or into an actor, or some message kinds only, and the refusal of a
//! `--set network.<key>` that every such entry would override.

use super::dto::{LinkDto, NetworkDto};
use super::routes::{all_links, kind_at, Kinds};
use crate::core::input::{
    did_you_mean, duration_us, invalid, min_max, path, per_mille, Invalid, Seg, DAY_MS,
};
use sim::{KindFault, LinkConfig, World};
use std::collections::BTreeMap;

/// Resolves an actor's name to its id.
pub(super) fn actor(
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

/// Refuses `--set network.<key>` (`key`: one of the link values) when every
/// link that carries messages takes its own value of `key` from a
/// `[[network.links]]` entry: the user asked for a change, and no message
/// would see it.
pub(super) fn set_everywhere_overridden(
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
    let Some(overriding) = overriding_entries(n, &sets, &covers, names.len(), kinds) else {
        return Ok(());
    };
    Err(invalid(
        path(&["network"]).into_iter().chain([Seg::Name(key.to_string())]).collect(),
        format!(
            "network.{key} changes no message: every link that carries messages sets its own {key} in {}",
            entries_shown(n, &overriding)
        ),
        format!(
            "change {key} in those entries of the file; a --set cannot name one entry, but it can replace them all: --set 'network.links=[{{from = \"a\", to = \"b\", {key} = ...}}]'"
        ),
    ))
}

/// The entries that decide the key on every busy link, in file order;
/// `None` where some busy link keeps the `[network]` value, or no link
/// is busy.
fn overriding_entries(
    n: &NetworkDto,
    sets: &dyn Fn(&LinkDto) -> bool,
    covers: &dyn Fn(&LinkDto, (sim::ActorId, sim::ActorId)) -> bool,
    actors: usize,
    kinds: &Kinds<'_>,
) -> Option<Vec<usize>> {
    let mut overriding: Vec<usize> = Vec::new();
    let mut busy = 0;
    for link in all_links(actors) {
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
            None => return None,
        }
    }
    if busy == 0 {
        return None;
    }
    overriding.sort_unstable();
    Some(overriding)
}

/// The entries `overriding` as the error names them.
fn entries_shown(n: &NetworkDto, overriding: &[usize]) -> String {
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
    shown.join(", ")
}

/// Kind entries a world may hold in all: a `kinds` entry without `from` or
/// `to` is one per link and kind, and a world of hundreds of actors has tens
/// of thousands of links.
const MAX_KIND_FAULTS: usize = 1 << 16;

/// The directed links entry `i` names: one, or, where it leaves `from` or
/// `to` out, every link out of or into an actor, or every link.
pub(super) fn matched_links(
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
pub(super) fn link_entry(l: &LinkDto, i: usize, cfg: &mut LinkConfig) -> Result<(), Invalid> {
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

/// The number of kind `name` (entry `i`'s `j`th), if the model sends it.
fn kind_index(kinds: &Kinds<'_>, name: &str, i: usize, j: usize) -> Result<u16, Invalid> {
    let kind = kinds.all.iter().position(|k| *k == name);
    let Some(kind) = kind.filter(|_| kinds.own.contains(&name)) else {
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
    Ok(kind as u16)
}

/// A `[[network.links]]` entry with `kinds`, on the link `from → to`: each
/// chosen kind gets the loss, duplication and delays the entry sets. What it
/// leaves out, a kind keeps from an earlier entry for it on this link, or
/// else follows the link (its rate as each seed draws it, its delay bounds
/// as the entries without `kinds` leave them); a later entry for the same
/// kind replaces an earlier one in place. Its delay bounds are checked
/// against each other once every entry is read ([`kind_delays_in_order`]).
pub(super) fn kind_faults(
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
    let delay_min = l
        .delay_ms_min
        .map(|v| duration_us(v, DAY_MS, at("delay_ms_min")))
        .transpose()?;
    let delay_max = l
        .delay_ms_max
        .map(|v| duration_us(v, DAY_MS, at("delay_ms_max")))
        .transpose()?;
    for (j, name) in selected.iter().enumerate() {
        let kind = kind_index(kinds, name, i, j)?;
        let earlier = known.get(&(from, to, kind)).copied();
        let mut fault = match earlier {
            Some(e) => world.kind_faults[e],
            None => KindFault {
                from,
                to,
                kind,
                loss_per_mille: None,
                duplicate_per_mille: None,
                delay_us_min: None,
                delay_us_max: None,
            },
        };
        fault.loss_per_mille = loss.or(fault.loss_per_mille);
        fault.duplicate_per_mille = dup.or(fault.duplicate_per_mille);
        fault.delay_us_min = delay_min.or(fault.delay_us_min);
        fault.delay_us_max = delay_max.or(fault.delay_us_max);
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

/// Each kind's delay bounds in order, once every `[[network.links]]` entry
/// is read: a bound a `kinds` entry leaves out follows its link's, which a
/// later entry without `kinds` may still change. `set_by` is, per entry of
/// `world.kind_faults`, the last `[[network.links]]` entry that gave it a
/// delay bound and the key of it an error points at.
pub(super) fn kind_delays_in_order(
    world: &World,
    set_by: &[Option<(usize, &'static str)>],
) -> Result<(), Invalid> {
    use Seg::{Index, Key};
    for (k, by) in world.kind_faults.iter().zip(set_by) {
        let Some((i, key)) = *by else { continue };
        let (lo_us, hi_us) = k.delays_us(world.link(k.from, k.to));
        let names = &world.actor_names;
        let link = format!("{} to {}", names[k.from as usize], names[k.to as usize]);
        // A bound the entry left out is the link's: say so, since that
        // number appears nowhere in the entry.
        let whose = |own: Option<u64>| if own.is_some() { "its" } else { "the link's" };
        if lo_us > hi_us {
            return Err(invalid(
                vec![Key("network"), Key("links"), Index(i), Key(key)],
                format!(
                    "this kind's delay on the link {link} runs from {} ms ({} delay_ms_min) to {} ms ({} delay_ms_max): the longest is shorter than the shortest",
                    lo_us / sim::US_PER_MS,
                    whose(k.delay_us_min),
                    hi_us / sim::US_PER_MS,
                    whose(k.delay_us_max)
                ),
                "give this entry both delay_ms_min and delay_ms_max, the first no larger than the second",
            ));
        }
    }
    Ok(())
}
