//! Timer names, interned: a program names its timers with strings, and the
//! engine's timers are small `Copy` values, so a timer carries the index of
//! its name here. The table only grows, and is bounded.

use super::session::{failure, Failure};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Most distinct timer names one idemsim process takes from programs.
pub const MAX_TIMER_NAMES: usize = 4096;

/// Longest timer name, in bytes.
pub const MAX_TIMER_NAME_BYTES: usize = 200;

struct Names {
    list: Vec<&'static str>,
    index: BTreeMap<&'static str, u16>,
}

static NAMES: Mutex<Names> = Mutex::new(Names {
    list: Vec::new(),
    index: BTreeMap::new(),
});

fn names() -> std::sync::MutexGuard<'static, Names> {
    NAMES.lock().unwrap_or_else(|p| p.into_inner())
}

/// The index of `name`, adding it the first time.
pub fn intern(name: &str) -> Result<u16, Failure> {
    if name.len() > MAX_TIMER_NAME_BYTES {
        return Err(failure(
            format!("a timer id of {} bytes", name.len()),
            format!("name timers with at most {MAX_TIMER_NAME_BYTES} bytes, e.g. \"work:17\""),
        ));
    }
    let mut n = names();
    if let Some(&i) = n.index.get(name) {
        return Ok(i);
    }
    if n.list.len() >= MAX_TIMER_NAMES {
        return Err(failure(
            format!("more than {MAX_TIMER_NAMES} distinct timer ids"),
            "reuse timer ids: one per purpose and pending job (\"work:17\"), not one per step",
        ));
    }
    // Leaked once per distinct name, bounded above: timers are `Copy` and
    // name themselves in traces without a lookup table at hand.
    let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
    let i = n.list.len() as u16;
    n.list.push(leaked);
    n.index.insert(leaked, i);
    Ok(i)
}

pub fn name_of(i: u16) -> &'static str {
    names().list.get(usize::from(i)).copied().unwrap_or("?")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_keeps_its_index() {
        let a = intern("names-test-a").unwrap();
        let b = intern("names-test-b").unwrap();
        assert_ne!(a, b);
        assert_eq!(intern("names-test-a").unwrap(), a);
        assert_eq!(name_of(b), "names-test-b");
        assert!(intern(&"x".repeat(MAX_TIMER_NAME_BYTES + 1)).is_err());
    }
}
