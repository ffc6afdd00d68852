//! Client groups (`[client.groups.NAME]`) and rollouts: which client actor
//! runs which version of the claims system and starts which operations.
//! Each group is an actor, `client-NAME`, with `[client]` and the group's
//! keys written over it, and gets its share (`share`, a fraction) or its
//! count (`ops`) of the operations, dealt out in turn by a fixed rule (no
//! draw: the same file gives the same groups on every seed). A client's
//! rollout at `at_ms` splits its operations: those starting earlier stay
//! with the old version, the later ones go to an actor of the new version.

use super::client::{client, ClientDto};
use super::rollouts::{self, at as rollout_at, table, CLIENT_KEYS};
use super::{operations, FileDto, MAX_OPERATIONS};
use crate::core::input::{invalid, path, Invalid, LoadError, Seg};
use crate::core::overlay::{known_keys, moved, overlay, typed};
use crate::core::BuildInput;
use crate::payment::{BankConfig, ClientConfig, ServiceConfig};
use sim::{ActorId, TimeUs};

/// The versioned parts of a file with client groups or rollouts: the
/// client actors' names and settings, the service's first settings and
/// its later versions, the bank.
pub(super) struct Parts {
    pub(super) names: Vec<String>,
    pub(super) clients: Vec<ClientConfig>,
    pub(super) service: ServiceConfig,
    pub(super) later: Vec<(TimeUs, ServiceConfig)>,
    pub(super) bank: BankConfig,
}

/// One client actor to be: its name, the tables written over `[client]`
/// (the group's, then its rollouts', each with where it is in the file)
/// and its operations (indices into every operation).
struct Planned {
    name: String,
    overlays: Vec<(toml::Table, Vec<Seg>)>,
    ops: Vec<usize>,
}

/// Whether the file has groups or rollouts (else the plain loader runs).
pub(super) fn versioned(d: &FileDto) -> bool {
    !d.client.groups.is_empty() || !d.rollouts.is_empty()
}

pub(super) fn parts(d: &FileDto, input: &BuildInput<'_>) -> Result<Parts, LoadError> {
    if d.client.actors != 1 {
        return Err(invalid(
            path(&["client", "actors"]),
            "client.actors with groups or rollouts: which actor would be which version?",
            "remove `actors`, and give each version a group of its own ([client.groups.NAME])",
        )
        .into());
    }
    let raw: toml::Table = toml::from_str(input.text)?;
    let specs = operations::specs(&d.operations, input.max_time_us)?;
    let groups = groups(d, specs.len())?;
    let bases: Vec<String> = groups.iter().map(|g| g.name.clone()).collect();
    rollouts::check(d, &bases, input.max_time_us)?;
    let planned: Vec<Planned> = groups
        .into_iter()
        .flat_map(|g| split(d, g, &specs))
        .collect();
    let (service_id, bank_id) = (planned.len() as ActorId, planned.len() as ActorId + 1);
    let mut base = table(&raw, "client");
    base.remove("groups");
    let mut clients = Vec::with_capacity(planned.len());
    for p in &planned {
        let mut t = base.clone();
        for (over, _) in &p.overlays {
            overlay(&mut t, over);
        }
        let where_ = p.overlays.last().map_or(&[][..], |(_, at)| at.as_slice());
        let dto: ClientDto = typed(t, where_)?;
        let mut cfg = client(&dto, &d.operations, input.max_time_us, service_id)
            .map_err(|e| located(e, &p.overlays))?;
        super::followup::jobs(
            (dto.reconcile.as_ref(), dto.compensate.as_ref()),
            &d.bank,
            (service_id, bank_id),
            &mut cfg,
        )?;
        let all = std::mem::take(&mut cfg.ops);
        cfg.ops = p.ops.iter().map(|&i| all[i]).collect();
        clients.push(cfg);
    }
    let service = super::service::service(&d.service, &d.bank, bank_id)?;
    let later = rollouts::service_versions(d, &raw, bank_id)?;
    Ok(Parts {
        names: planned.into_iter().map(|p| p.name).collect(),
        clients,
        service,
        later,
        bank: BankConfig::try_from(&d.bank)?,
    })
}

/// A mistake the client loader found, at the last overlay that wrote its
/// key (a rollout over its group over `[client]`).
fn located(mut e: Invalid, overlays: &[(toml::Table, Vec<Seg>)]) -> Invalid {
    for (over, at) in overlays.iter().rev() {
        let before = e.path.clone();
        e = moved(e, &["client"], over, at);
        if e.path != before {
            break;
        }
    }
    e
}

/// The groups, each with its operations; without groups, one: `client`.
fn groups(d: &FileDto, ops: usize) -> Result<Vec<Planned>, Invalid> {
    if d.client.groups.is_empty() {
        return Ok(vec![Planned {
            name: "client".into(),
            overlays: Vec::new(),
            ops: (0..ops).collect(),
        }]);
    }
    let at = |name: &str| {
        vec![
            Seg::Key("client"),
            Seg::Key("groups"),
            Seg::Name(name.to_string()),
        ]
    };
    let mut known: Vec<&str> = vec!["share", "ops"];
    known.extend_from_slice(CLIENT_KEYS);
    let mut weights = Vec::with_capacity(d.client.groups.len());
    for (name, g) in &d.client.groups {
        known_keys(g, &known, &at(name))?;
        weights.push(weight(g, &at(name))?);
    }
    let counts = counts(d, &weights, ops)?;
    let mut planned: Vec<Planned> = d
        .client
        .groups
        .iter()
        .map(|(name, g)| {
            let mut settings = g.clone();
            settings.remove("share");
            settings.remove("ops");
            Planned {
                name: format!("client-{name}"),
                overlays: vec![(settings, at(name))],
                ops: Vec::new(),
            }
        })
        .collect();
    for (k, g) in deal(&counts).into_iter().enumerate() {
        planned[g].ops.push(k);
    }
    Ok(planned)
}

/// A group's share of the operations, or its count of them.
enum Weight {
    Share(f64),
    Ops(u64),
}

fn weight(g: &toml::Table, at: &[Seg]) -> Result<Weight, Invalid> {
    let here = |k: &'static str| {
        let mut p = at.to_vec();
        p.push(Seg::Key(k));
        p
    };
    match (g.get("share"), g.get("ops")) {
        (Some(s), None) => match s.as_float().or(s.as_integer().map(|i| i as f64)) {
            Some(f) if f > 0.0 && f <= 1.0 => Ok(Weight::Share(f)),
            _ => Err(invalid(
                here("share"),
                format!("share {s} is no fraction of the operations"),
                "write a number above 0 and at most 1: share = 0.3",
            )),
        },
        (None, Some(n)) => match n.as_integer() {
            Some(i) if (1..=MAX_OPERATIONS as i64).contains(&i) => Ok(Weight::Ops(i as u64)),
            _ => Err(invalid(
                here("ops"),
                format!("ops {n} is no count of operations"),
                format!("write a whole number from 1 to {MAX_OPERATIONS}: ops = 10"),
            )),
        },
        (Some(_), Some(_)) => Err(invalid(
            here("ops"),
            "a group with both a share and a count of the operations",
            "give the group either `share` or `ops`",
        )),
        (None, None) => Err(invalid(
            at.to_vec(),
            "a group without its part of the operations",
            "give the group `share = 0.3` (a fraction) or `ops = 10` (a count)",
        )),
    }
}

/// How many of the `ops` operations each group gets: its count, or its
/// share rounded so the counts add up (largest remainders first).
fn counts(d: &FileDto, weights: &[Weight], ops: usize) -> Result<Vec<usize>, Invalid> {
    // `[client.groups]` itself is seldom written: the first group's header
    // is where the groups start in the file.
    let first = d.client.groups.keys().next().expect("groups");
    let groups = vec![
        Seg::Key("client"),
        Seg::Key("groups"),
        Seg::Name(first.clone()),
    ];
    let shares: Vec<f64> = weights
        .iter()
        .filter_map(|w| match w {
            Weight::Share(s) => Some(*s),
            Weight::Ops(_) => None,
        })
        .collect();
    let counts: Vec<usize> = if shares.len() == weights.len() {
        let sum: f64 = shares.iter().sum();
        if (sum - 1.0).abs() > 1e-9 {
            return Err(invalid(
                groups,
                format!("the groups' shares add up to {sum}, not 1"),
                "make the shares add up to 1, e.g. share = 0.3 and share = 0.7",
            ));
        }
        largest_remainders(&shares, ops)
    } else if shares.is_empty() {
        let c: Vec<usize> = weights
            .iter()
            .map(|w| match w {
                Weight::Ops(n) => *n as usize,
                Weight::Share(_) => 0,
            })
            .collect();
        let sum: usize = c.iter().sum();
        if sum != ops {
            return Err(invalid(
                groups,
                format!("the groups count {sum} operations; [[operations]] has {ops}"),
                format!("make the groups' `ops` add up to {ops}, or use `share`"),
            ));
        }
        c
    } else {
        return Err(invalid(
            groups,
            "some groups give a share, others a count",
            "give every group `share` (fractions adding up to 1) or every group `ops`",
        ));
    };
    if let Some((name, _)) = d.client.groups.keys().zip(&counts).find(|(_, c)| **c == 0) {
        return Err(invalid(
            vec![
                Seg::Key("client"),
                Seg::Key("groups"),
                Seg::Name(name.clone()),
            ],
            format!("group `{name}` gets none of the {ops} operations"),
            "raise its share, or add operations (`repeat` in [[operations]])",
        ));
    }
    Ok(counts)
}

/// Whole counts for `shares` of `n`, adding up to `n`: each share's whole
/// part, then one more for the largest remainders (the earlier on a tie).
fn largest_remainders(shares: &[f64], n: usize) -> Vec<usize> {
    let exact: Vec<f64> = shares.iter().map(|s| s * n as f64).collect();
    let mut counts: Vec<usize> = exact.iter().map(|e| e.floor() as usize).collect();
    let mut order: Vec<usize> = (0..shares.len()).collect();
    order.sort_by(|&a, &b| {
        let (ra, rb) = (exact[a] - exact[a].floor(), exact[b] - exact[b].floor());
        rb.total_cmp(&ra).then(a.cmp(&b))
    });
    let missing = n.saturating_sub(counts.iter().sum());
    for &g in order.iter().take(missing) {
        counts[g] += 1;
    }
    counts
}

/// Which group each operation goes to, in order: each group's turn comes
/// as often as its count says, spread evenly (smooth weighted round robin,
/// as nginx balances by weight), the earlier group first on a tie.
fn deal(counts: &[usize]) -> Vec<usize> {
    let total: i64 = counts.iter().sum::<usize>() as i64;
    let mut credit = vec![0i64; counts.len()];
    (0..total)
        .map(|_| {
            for (c, n) in credit.iter_mut().zip(counts) {
                *c += *n as i64;
            }
            let g = (0..counts.len())
                .max_by(|&a, &b| credit[a].cmp(&credit[b]).then(b.cmp(&a)))
                .expect("at least one group");
            credit[g] -= total;
            g
        })
        .collect()
}

/// `g` with its rollouts: one actor per version that starts an operation,
/// the later ones named `<actor>-<rollout>`.
fn split(d: &FileDto, g: Planned, specs: &[crate::payment::OpSpec]) -> Vec<Planned> {
    let rollouts = rollouts::of(d, &g.name);
    let mut versions: Vec<Planned> = std::iter::once(Planned {
        name: g.name.clone(),
        overlays: g.overlays.clone(),
        ops: Vec::new(),
    })
    .collect();
    for (name, r) in &rollouts {
        let mut overlays = versions.last().expect("the first").overlays.clone();
        overlays.push((r.set.clone(), rollout_at(name, &["set"])));
        versions.push(Planned {
            name: format!("{}-{name}", g.name),
            overlays,
            ops: Vec::new(),
        });
    }
    for i in g.ops {
        let v = rollouts
            .iter()
            .take_while(|(_, r)| r.at_ms <= specs[i].start_ms)
            .count();
        versions[v].ops.push(i);
    }
    versions.retain(|v| !v.ops.is_empty());
    versions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_round_to_counts_that_add_up() {
        assert_eq!(largest_remainders(&[0.3, 0.7], 10), vec![3, 7]);
        assert_eq!(largest_remainders(&[0.5, 0.5], 3), vec![2, 1]);
        assert_eq!(largest_remainders(&[1.0 / 3.0; 3], 10), vec![4, 3, 3]);
    }

    #[test]
    fn turns_are_spread_evenly_and_keep_the_counts() {
        assert_eq!(deal(&[3, 7]), vec![1, 0, 1, 1, 0, 1, 1, 1, 0, 1]);
        assert_eq!(deal(&[1, 1]), vec![0, 1]);
        let d = deal(&[2, 5, 3]);
        for (g, n) in [2, 5, 3].iter().enumerate() {
            assert_eq!(d.iter().filter(|x| **x == g).count(), *n);
        }
    }
}
