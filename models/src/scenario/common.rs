//! The tables every scenario shares, whatever its model: `[expect]`,
//! `[run]`, `[network]` and `[crashes]`.

use super::dto::{ExpectDto, OneOrMore, ProtectionDto, RunDto};
use super::{Expect, Override, Protection, Verdict};
use crate::core::input::{
    count_in, did_you_mean, duration_us, invalid, one_of, path, Invalid, Seg, MAX_DURATION_MS,
};
use crate::core::invariants;
use crate::core::SituationDoc;
use sim::{Limits, TimeUs};

/// The top-level keys every model has.
pub(super) const KEYS: &[&str] = &[
    "format", "summary", "model", "expect", "run", "network", "crashes",
];

/// The run's phase and limits, before the world exists (models check their
/// start times against them).
pub(super) fn limits(r: &RunDto) -> Result<(TimeUs, Limits), Invalid> {
    let at = |k| path(&["run", k]);
    count_in(r.runs, 1, 1_000_000_000_000, at("runs"), "runs")?;
    let fault_phase_us = duration_us(r.fault_phase_ms, MAX_DURATION_MS, at("fault_phase_ms"))?;
    let limits = Limits {
        max_steps: count_in(r.max_steps, 1, 1_000_000_000, at("max_steps"), "steps")?,
        max_time_us: duration_us(r.max_time_ms, MAX_DURATION_MS, at("max_time_ms"))?,
        max_queue: count_in(r.max_queue, 1, 10_000_000, at("max_queue"), "queued events")? as usize,
    };
    if limits.max_time_us == 0 {
        return Err(invalid(
            at("max_time_ms"),
            "max_time_ms is 0: no event could run",
            "leave it out for a year, or give the virtual time a run may take",
        ));
    }
    if fault_phase_us > limits.max_time_us {
        return Err(invalid(
            at("fault_phase_ms"),
            "the fault phase is longer than run.max_time_ms: no run could heal",
            "make fault_phase_ms at most max_time_ms",
        ));
    }
    Ok((fault_phase_us, limits))
}

/// `run.strategy`: how `check` and `verify` look for a failure.
pub(super) fn strategy(r: &RunDto) -> Result<super::Strategy, Invalid> {
    one_of(
        r.strategy.as_deref().unwrap_or("seeds"),
        &[
            ("seeds", super::Strategy::Seeds),
            ("coverage", super::Strategy::Coverage),
        ],
        path(&["run", "strategy"]),
    )
}

/// `[expect]`: the verdict, the invariant a violation breaks, the situations
/// a "holds" must reach, and the protections whose removal must break it.
/// Each phase is checked in the order the errors have always come in.
pub(super) fn expect(
    e: &ExpectDto,
    situations: &[&SituationDoc],
    metrics: &[crate::core::Metric],
) -> Result<Expect, Invalid> {
    let (verdict, invariant) = verdict_of(e)?;
    let situations = situation_ids(e, situations)?;
    let protections = protections_of(e, verdict)?;
    let max_load = max_load_of(e, verdict, metrics)?;
    let warnings = warnings_of(e)?;
    Ok(Expect {
        verdict,
        invariant,
        situations,
        max_load,
        protections,
        warnings,
    })
}

fn expect_at(key: &'static str) -> Vec<Seg> {
    path(&["expect", key])
}

/// `verdict` and `invariant`: a violation names the invariant it breaks,
/// and nothing else names one.
fn verdict_of(e: &ExpectDto) -> Result<(Verdict, Option<&'static str>), Invalid> {
    let verdict = one_of(
        &e.verdict,
        &[
            ("holds", Verdict::Holds),
            ("violation", Verdict::Violation),
            ("inconclusive", Verdict::Inconclusive),
        ],
        expect_at("verdict"),
    )?;
    let invariant = e
        .invariant
        .as_deref()
        .map(|name| invariant(name, expect_at("invariant")))
        .transpose()?;
    match (verdict, invariant) {
        (Verdict::Violation, None) => Err(invalid(
            path(&["expect"]),
            "a scenario that expects a violation must name the invariant",
            "add invariant = \"no-duplicate-effect\" (or another) to [expect]",
        )),
        (Verdict::Holds | Verdict::Inconclusive, Some(_)) => Err(invalid(
            expect_at("invariant"),
            format!(
                "a scenario that expects \"{}\" breaks no invariant",
                e.verdict
            ),
            "remove `invariant`, or expect verdict = \"violation\"",
        )),
        _ => Ok((verdict, invariant)),
    }
}

/// `situations`: each one of the model's, named once.
fn situation_ids(
    e: &ExpectDto,
    situations: &[&SituationDoc],
) -> Result<Vec<sim::SituationId>, Invalid> {
    let mut ids = Vec::new();
    for (i, s) in e.situations.iter().enumerate() {
        let found = situations.iter().find(|d| d.name == s).ok_or_else(|| {
            let names: Vec<&str> = situations.iter().map(|d| d.name).collect();
            let help = match did_you_mean(s, names.iter().copied()) {
                Some(b) => format!("did you mean \"{b}\"?"),
                None => format!("this model's situations are {}", names.join(", ")),
            };
            invalid(
                vec![Seg::Key("expect"), Seg::Key("situations"), Seg::Index(i)],
                format!("unknown situation \"{s}\""),
                help,
            )
        })?;
        if ids.contains(&found.id) {
            return Err(listed_twice("situations", i, s));
        }
        ids.push(found.id);
    }
    Ok(ids)
}

/// `protections`: only a scenario that holds has them.
fn protections_of(e: &ExpectDto, verdict: Verdict) -> Result<Vec<Protection>, Invalid> {
    if verdict != Verdict::Holds && !e.protections.is_empty() {
        return Err(invalid(
            expect_at("protections"),
            "only a scenario that holds has protections to remove",
            "remove `protections`, or expect verdict = \"holds\"",
        ));
    }
    let mut protections = Vec::new();
    for (i, p) in e.protections.iter().enumerate() {
        let at = vec![Seg::Key("expect"), Seg::Key("protections"), Seg::Index(i)];
        protections.push(protection(p, at)?);
    }
    Ok(protections)
}

/// `max_load`: only a scenario that holds has a load to bound.
fn max_load_of(
    e: &ExpectDto,
    verdict: Verdict,
    metrics: &[crate::core::Metric],
) -> Result<Vec<super::LoadBound>, Invalid> {
    if verdict != Verdict::Holds && !e.max_load.is_empty() {
        return Err(invalid(
            expect_at("max_load"),
            "only a scenario that holds has a load to bound",
            "remove `max_load`, or expect verdict = \"holds\"",
        ));
    }
    e.max_load
        .iter()
        .map(|(name, v)| load_bound(name, v, metrics))
        .collect()
}

/// `warnings`: design warning ids, each named once.
fn warnings_of(e: &ExpectDto) -> Result<Vec<&'static str>, Invalid> {
    let mut warnings = Vec::new();
    for (i, w) in e.warnings.iter().enumerate() {
        let id = warning(
            w,
            vec![Seg::Key("expect"), Seg::Key("warnings"), Seg::Index(i)],
        )?;
        if warnings.contains(&id) {
            return Err(listed_twice("warnings", i, w));
        }
        warnings.push(id);
    }
    Ok(warnings)
}

/// The error for the second mention of `name` in the list `key` of `[expect]`.
fn listed_twice(key: &'static str, i: usize, name: &str) -> Invalid {
    invalid(
        vec![Seg::Key("expect"), Seg::Key(key), Seg::Index(i)],
        format!("\"{name}\" is listed twice"),
        "remove the second one",
    )
}

fn warning(id: &str, path: Vec<Seg>) -> Result<&'static str, Invalid> {
    use crate::registry::RULES;
    RULES.iter().find(|&&r| r == id).copied().ok_or_else(|| {
        let help = match did_you_mean(id, RULES.iter().copied()) {
            Some(b) => format!("did you mean \"{b}\"?"),
            None => format!("the design warnings are {}", RULES.join(", ")),
        };
        invalid(path, format!("unknown design warning \"{id}\""), help)
    })
}

fn invariant(name: &str, path: Vec<Seg>) -> Result<&'static str, Invalid> {
    invariants::by_name(name).map(|i| i.name).ok_or_else(|| {
        let names = invariants::names();
        let help = match did_you_mean(name, names.iter().copied()) {
            Some(b) => format!("did you mean \"{b}\"?"),
            None => format!("the invariants are {}", names.join(", ")),
        };
        invalid(path, format!("unknown invariant \"{name}\""), help)
    })
}

fn protection(p: &ProtectionDto, at: Vec<Seg>) -> Result<Protection, Invalid> {
    let (sets, breaks): (Vec<String>, Option<&str>) = match p {
        ProtectionDto::One(s) => (vec![s.clone()], None),
        ProtectionDto::Together(v) => (v.clone(), None),
        ProtectionDto::Table { set, breaks } => (
            match set {
                OneOrMore::One(s) => vec![s.clone()],
                OneOrMore::More(v) => v.clone(),
            },
            breaks.as_deref(),
        ),
    };
    if sets.is_empty() {
        return Err(invalid(
            at,
            "a protection names at least one override",
            "write it as \"client.key=none\", the override that removes it",
        ));
    }
    let overrides = sets
        .iter()
        .map(|s| {
            Override::parse(s).map_err(|m| {
                invalid(
                    at.clone(),
                    m,
                    "a protection is the override that removes it, e.g. \"service.idempotency=none\"",
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let breaks = breaks.map(|b| invariant(b, at.clone())).transpose()?;
    Ok(Protection { overrides, breaks })
}

/// Most a ratio of work per operation may be: far above any design that
/// makes sense, below where a float stops counting runs exactly.
const MAX_LOAD: f64 = 1_000_000.0;

/// One `[expect].max_load` entry: a name the model counts, and a number
/// from 1 (no retry, no redelivery) up.
fn load_bound(
    name: &str,
    v: &toml::Value,
    metrics: &[crate::core::Metric],
) -> Result<super::LoadBound, Invalid> {
    use crate::core::LoadOf;
    let at = || {
        vec![
            Seg::Key("expect"),
            Seg::Key("max_load"),
            Seg::Name(name.to_string()),
        ]
    };
    let Some(of) = LoadOf::of_metrics(metrics).find(|l| l.name() == name) else {
        let names: Vec<&str> = LoadOf::of_metrics(metrics).map(LoadOf::name).collect();
        let help = if names.is_empty() {
            "this model counts no load; remove `max_load`".to_string()
        } else {
            match did_you_mean(name, names.iter().copied()) {
                Some(b) => format!(
                    "did you mean \"{b}\"? This model counts {}",
                    names.join(", ")
                ),
                None => format!("this model counts {}", names.join(", ")),
            }
        };
        return Err(invalid(at(), format!("no load named \"{name}\""), help));
    };
    let (name, per) = (of.name(), of.per().as_str());
    let max = match v {
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(f) => *f,
        other => {
            return Err(invalid(
                at(),
                format!("a load bound is a number, not {}", other.type_str()),
                format!("write {name} = 5 (at most 5 per {per}; 1 means no retry)"),
            ))
        }
    };
    if !(1.0..=MAX_LOAD).contains(&max) {
        return Err(invalid(
            at(),
            format!("{max} {name} per {per}: the range is 1 to {MAX_LOAD}"),
            "1 means no retry and no redelivery; write the most a run of this design may take, such as 5",
        ));
    }
    Ok(super::LoadBound { name, of, max })
}

#[cfg(test)]
mod tests {
    use super::expect;
    use crate::core::input::{path, Seg};
    use crate::scenario::dto::ExpectDto;
    use crate::scenario::Verdict;

    fn expect_of(text: &str) -> Result<crate::scenario::Expect, crate::core::input::Invalid> {
        let e: ExpectDto = toml::from_str(text).unwrap();
        expect(&e, &[], &[])
    }

    #[test]
    fn a_violation_names_its_invariant_and_nothing_else_does() {
        let e = expect_of("verdict = \"violation\"").unwrap_err();
        assert_eq!(e.path, path(&["expect"]));
        let e = expect_of("verdict = \"holds\"\ninvariant = \"no-duplicate-effect\"").unwrap_err();
        assert_eq!(e.path, path(&["expect", "invariant"]));
        let ok = expect_of("verdict = \"violation\"\ninvariant = \"no-duplicate-effect\"").unwrap();
        assert_eq!(ok.verdict, Verdict::Violation);
        assert_eq!(ok.invariant, Some("no-duplicate-effect"));
    }

    #[test]
    fn the_phases_refuse_in_their_order() {
        // A verdict mistake comes before a protection's, which comes before
        // a load bound's.
        let e = expect_of("verdict = \"maybe\"\nprotections = [\"a=b\"]").unwrap_err();
        assert_eq!(e.path, path(&["expect", "verdict"]));
        let text =
            "verdict = \"inconclusive\"\nprotections = [\"a=b\"]\nmax_load = { attempts = 2 }";
        let e = expect_of(text).unwrap_err();
        assert_eq!(e.path, path(&["expect", "protections"]));
        let e = expect_of("verdict = \"holds\"\nwarnings = [\"no-such-rule\"]").unwrap_err();
        assert_eq!(
            e.path,
            vec![Seg::Key("expect"), Seg::Key("warnings"), Seg::Index(0)]
        );
    }
}
