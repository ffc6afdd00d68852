//! `[rollouts.NAME]`: from `at_ms` on, an actor runs with other settings
//! (`set`, keys of the actor's own table written over it). The name is the
//! version's: a client's later version is an actor of its own,
//! `<client>-NAME`, that starts the operations from `at_ms` on while the
//! old one finishes those it started (a drain); the service restarts as
//! the new version at `at_ms` (`service/rollout.rs`).

use super::service::{service, ServiceDto};
use super::FileDto;
use crate::core::input::{invalid, path, start_us, Invalid, Seg};
use crate::core::overlay::{known_keys, moved, overlay, typed};
use crate::payment::service::MAX_VERSIONS;
use crate::payment::ServiceConfig;
use serde::Deserialize;
use sim::{ActorId, TimeUs};

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct RolloutDto {
    pub(super) actor: String,
    pub(super) at_ms: u64,
    /// A rolling deploy's window: refused here (see `check`), read by the
    /// messaging model's consumers.
    #[serde(default)]
    pub(super) over_ms: u64,
    #[serde(default)]
    pub(super) set: toml::Table,
}

/// The `[service]` keys a rollout may set: all but the key store's
/// retention, which the store keeps from its creation.
pub(super) const SERVICE_KEYS: &[&str] = &[
    "idempotency",
    "fingerprint_check",
    "pass_key_to_bank",
    "bank_timeout_ms",
    "bank_max_attempts",
    "lease_ms",
    "concurrent",
    "processing_ms",
    "max_keys",
    "workers",
    "queue_max",
    "drop_expired",
    "recover_ms",
    "mode",
    "query_before_retry",
    "query_on_recovery",
    "on_bank_timeout",
];

/// The `[client]` keys a client group or a client's rollout may set: all
/// but how many actors there are and the reconciliation job, which every
/// version shares.
pub(super) const CLIENT_KEYS: &[&str] = &[
    "key",
    "key_bucket_ms",
    "timeout_ms",
    "timeout_means",
    "overloaded_means",
    "retry",
    "budget",
    "breaker",
];

/// Where rollout `name` is in the file, with `more` below it.
pub(super) fn at(name: &str, more: &[&'static str]) -> Vec<Seg> {
    let mut p = vec![Seg::Key("rollouts"), Seg::Name(name.to_string())];
    p.extend(path(more));
    p
}

/// Checks every rollout's actor (the service or one of `clients`), time
/// and keys; two rollouts of one actor at the same time are refused.
pub(super) fn check(d: &FileDto, clients: &[String], max_time_us: TimeUs) -> Result<(), Invalid> {
    for (name, r) in &d.rollouts {
        let service = r.actor == "service";
        if !service && !clients.contains(&r.actor) {
            let names: Vec<&str> = std::iter::once("service")
                .chain(clients.iter().map(String::as_str))
                .collect();
            let options: Vec<(&str, ())> = names.iter().map(|n| (*n, ())).collect();
            let err = crate::core::input::one_of(&r.actor, &options, at(name, &["actor"]))
                .expect_err("not among them");
            return Err(Invalid {
                message: format!("no actor \"{}\" to roll out", r.actor),
                ..err
            });
        }
        if r.at_ms == 0 {
            return Err(invalid(
                at(name, &["at_ms"]),
                "a rollout at 0 ms is the first version itself",
                "write these settings in the actor's own table, or roll out later (at_ms = 30000)",
            ));
        }
        start_us(r.at_ms, max_time_us, at(name, &["at_ms"]), "rollout")?;
        if r.over_ms > 0 {
            return Err(over_refused(name, service));
        }
        if r.set.is_empty() {
            return Err(invalid(
                at(name, &["set"]),
                "the rollout changes nothing",
                "give the settings of the new version: set = { key = \"stable\" }",
            ));
        }
        if service && r.set.contains_key("retention_ms") {
            return Err(invalid(
                at(name, &["set", "retention_ms"]),
                "the key store keeps the retention it was made with",
                "set retention_ms in [service]; a rollout cannot change it",
            ));
        }
        let keys = if service { SERVICE_KEYS } else { CLIENT_KEYS };
        known_keys(&r.set, keys, &at(name, &["set"]))?;
        if let Some((other, _)) = d
            .rollouts
            .iter()
            .find(|(o, x)| *o < name && x.actor == r.actor && x.at_ms == r.at_ms)
        {
            return Err(invalid(
                at(name, &["at_ms"]),
                format!("rollout `{other}` of {} is at the same time", r.actor),
                "give each version of an actor a time of its own, or merge the two `set`s",
            ));
        }
    }
    let versions = |a: &str| d.rollouts.values().filter(|r| r.actor == a).count();
    if let Some(a) = std::iter::once("service")
        .chain(clients.iter().map(String::as_str))
        .find(|a| versions(a) >= MAX_VERSIONS)
    {
        return Err(invalid(
            vec![Seg::Key("rollouts")],
            format!("{} rollouts of {a}", versions(a)),
            format!("give an actor at most {} rollouts", MAX_VERSIONS - 1),
        ));
    }
    Ok(())
}

/// `over_ms` in the payment model: it has no instances to replace one by
/// one. The service is one process (its key table, its bank calls), and a
/// client's new version is an actor that runs beside the old one already.
fn over_refused(name: &str, service: bool) -> Invalid {
    let (message, help) = if service {
        (
            "the payment service is one process: there are no instances to replace one by one",
            "drop over_ms: the service restarts as the new version at at_ms (a rolling deploy \
             over instances is modelled for the messaging consumers, broker.consumers)",
        )
    } else {
        (
            "a client's new version takes the operations from at_ms on while the old one \
             finishes its own: the two already run side by side",
            "drop over_ms, or give old and new clients their shares with [client.groups.NAME]",
        )
    };
    invalid(at(name, &["over_ms"]), message, help)
}

/// The rollouts of `actor`, in time order.
pub(super) fn of<'a>(d: &'a FileDto, actor: &str) -> Vec<(&'a str, &'a RolloutDto)> {
    let mut v: Vec<(&str, &RolloutDto)> = d
        .rollouts
        .iter()
        .filter(|(_, r)| r.actor == actor)
        .map(|(n, r)| (n.as_str(), r))
        .collect();
    v.sort_by_key(|(_, r)| r.at_ms);
    v
}

/// The table at `key` of the file, or an empty one.
pub(super) fn table(raw: &toml::Table, key: &str) -> toml::Table {
    match raw.get(key) {
        Some(toml::Value::Table(t)) => t.clone(),
        _ => toml::Table::new(),
    }
}

/// The service's later versions, each from its rollout's time: `[service]`
/// with every `set` up to it written over it, checked as `[service]` is.
pub(super) fn service_versions(
    d: &FileDto,
    raw: &toml::Table,
    bank: ActorId,
) -> Result<Vec<(TimeUs, ServiceConfig)>, Invalid> {
    let mut t = table(raw, "service");
    let mut later = Vec::new();
    for (name, r) in of(d, "service") {
        overlay(&mut t, &r.set);
        let dto: ServiceDto = typed(t.clone(), &at(name, &["set"]))?;
        let cfg = service(&dto, &d.bank, bank)
            .map_err(|e| moved(e, &["service"], &r.set, &at(name, &["set"])))?;
        later.push((r.at_ms * 1000, cfg));
    }
    Ok(later)
}

#[cfg(test)]
mod tests {
    use super::super::client::ClientDto;
    use super::*;

    /// Each listed key is one `[service]` or `[client]` reads: a typo in
    /// the lists would refuse a real key, or let an unknown one through to
    /// a message without its place.
    #[test]
    fn the_lists_name_only_keys_of_their_tables() {
        // A wrong type is fine (the key is known); an unknown key is not.
        let known = |e: Result<(), toml::de::Error>| {
            e.map_or_else(|e| !e.message().contains("unknown field"), |()| true)
        };
        for k in SERVICE_KEYS {
            assert!(
                known(toml::from_str::<ServiceDto>(&format!("{k} = []")).map(drop)),
                "{k}"
            );
        }
        for k in CLIENT_KEYS {
            let text = format!("{k} = []");
            assert!(known(toml::from_str::<ClientDto>(&text).map(drop)), "{k}");
        }
        assert!(!known(toml::from_str::<ClientDto>("kye = []").map(drop)));
    }
}
