//! One table's keys written over another's: a client group's settings over
//! `[client]`, a rollout's `set` over its actor's table. The result is read
//! by the same loader as the table it overlays, so a group or a version is
//! checked exactly as `[client]` or `[service]` is; a mistake it finds in a
//! value the overlay wrote is reported where the overlay wrote it.

use super::input::{did_you_mean, invalid, plain, Invalid, Seg};
use serde::de::DeserializeOwned;

/// `over`'s keys written onto `base`; a table inside both is overlaid key
/// by key (`retry = { max_attempts = 5 }` keeps the base's other retry keys).
pub fn overlay(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => overlay(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Refuses a key of `over` that `known` does not list, at `at.key`, with
/// the closest known key as the fix.
pub fn known_keys(over: &toml::Table, known: &[&str], at: &[Seg]) -> Result<(), Invalid> {
    let Some(unknown) = over.keys().find(|k| !known.contains(&k.as_str())) else {
        return Ok(());
    };
    let mut path = at.to_vec();
    path.push(Seg::Name(unknown.clone()));
    let help = match did_you_mean(unknown, known.iter().copied()) {
        Some(best) => format!("did you mean `{best}`? The keys are {}", known.join(", ")),
        None => format!("write one of {}", known.join(", ")),
    };
    Err(invalid(path, format!("unknown key `{unknown}`"), help))
}

/// The overlaid table read as `T`; a value of the wrong type is reported at
/// `at` (the keys were checked by [`known_keys`] before).
pub fn typed<T: DeserializeOwned>(table: toml::Table, at: &[Seg]) -> Result<T, Invalid> {
    toml::Value::Table(table)
        .try_into()
        .map_err(|e: toml::de::Error| {
            invalid(
                at.to_vec(),
                // In the user's words, as the file's own loader puts them.
                plain(e.message()),
                "give each key the type docs/scenario-format.md gives it in its table",
            )
        })
}

/// `err`, found by the loader of the table at `table` (such as
/// `["client"]`), moved to `to` when the key it names is one `over` wrote.
pub fn moved(err: Invalid, table: &[&str], over: &toml::Table, to: &[Seg]) -> Invalid {
    let written = err.path.len() > table.len()
        && err.path.iter().zip(table).all(|(s, t)| name(s) == Some(t))
        && name(&err.path[table.len()]).is_some_and(|k| over.contains_key(k));
    if !written {
        return err;
    }
    let mut path = to.to_vec();
    path.extend(err.path[table.len()..].iter().cloned());
    Invalid { path, ..err }
}

fn name(s: &Seg) -> Option<&str> {
    match s {
        Seg::Key(k) => Some(k),
        Seg::Name(n) => Some(n),
        Seg::Index(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(s: &str) -> toml::Table {
        toml::from_str(s).unwrap()
    }

    #[test]
    fn an_inner_table_is_overlaid_key_by_key() {
        let mut base = table("key = \"stable\"\n[retry]\nmax_attempts = 1\nbase_ms = 5");
        overlay(
            &mut base,
            &table("key = \"none\"\nretry = { max_attempts = 4 }"),
        );
        assert_eq!(
            base,
            table("key = \"none\"\n[retry]\nmax_attempts = 4\nbase_ms = 5")
        );
    }

    #[test]
    fn an_unknown_key_gets_the_closest_known_one() {
        let err =
            known_keys(&table("kye = 1"), &["key", "timeout_ms"], &[Seg::Key("x")]).unwrap_err();
        assert_eq!(err.path, vec![Seg::Key("x"), Seg::Name("kye".into())]);
        assert!(err.help.unwrap().starts_with("did you mean `key`?"));
        assert!(known_keys(&table("key = 1"), &["key"], &[]).is_ok());
    }

    #[test]
    fn an_error_moves_only_when_the_overlay_wrote_its_key() {
        let at = |k: &'static str| Invalid {
            path: vec![Seg::Key("client"), Seg::Key(k)],
            message: String::new(),
            help: None,
        };
        let to = [
            Seg::Key("rollouts"),
            Seg::Name("v2".into()),
            Seg::Key("set"),
        ];
        let over = table("key = \"x\"");
        assert_eq!(
            moved(at("key"), &["client"], &over, &to).path,
            vec![
                Seg::Key("rollouts"),
                Seg::Name("v2".into()),
                Seg::Key("set"),
                Seg::Key("key")
            ]
        );
        assert_eq!(
            moved(at("timeout_ms"), &["client"], &over, &to).path,
            at("timeout_ms").path
        );
    }

    #[test]
    fn a_wrong_type_the_overlay_wrote_names_no_rust_type() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Outer {
            retry: Inner,
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Inner {
            base_ms: u64,
        }
        let err = typed::<Outer>(table("retry = \"1000\""), &[Seg::Key("client")]).unwrap_err();
        assert_eq!(
            err.message,
            "wrong type: string \"1000\", expected a table of keys"
        );
    }
}
