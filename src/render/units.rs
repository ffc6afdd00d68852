//! Numbers as a reader says them: durations in the unit that keeps them
//! short (`30 d`, `2.5 s`), for the report's state panel and the sweep page.

/// The units of a duration, largest first, each as (microseconds, name).
const UNITS: [(u64, &str); 6] = [
    (86_400_000_000, "d"),
    (3_600_000_000, "h"),
    (60_000_000, "min"),
    (1_000_000, "s"),
    (1_000, "ms"),
    (1, "µs"),
];

/// A duration of `us` microseconds in the largest unit it fills at least
/// once, with at most three decimals and no trailing zeros: `30 d`,
/// `2.5 s`, `17.279 ms`, `0 s`. Exact for whole units, so a setting
/// written as `retention_ms = 2592000000` reads back as `30 d`.
pub fn duration_us(us: u64) -> String {
    if us == 0 {
        return "0 s".into();
    }
    let (size, unit) = UNITS
        .iter()
        .copied()
        .find(|&(size, _)| us >= size)
        .unwrap_or((1, "µs"));
    let whole = us / size;
    // Thousandths of the unit, rounded to nearest; a carry into the whole
    // part (1.9996 s) is kept exact by working in integers.
    let rest = us % size;
    let mut milli = (u128::from(rest) * 1000 + u128::from(size) / 2) / u128::from(size);
    let mut whole = u128::from(whole);
    if milli == 1000 {
        whole += 1;
        milli = 0;
    }
    if milli == 0 {
        return format!("{whole} {unit}");
    }
    let decimals = format!("{milli:03}");
    format!("{whole}.{} {unit}", decimals.trim_end_matches('0'))
}

/// A duration of `ms` milliseconds, as [`duration_us`] writes it.
pub fn duration_ms(ms: u64) -> String {
    duration_us(ms.saturating_mul(1000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_in_the_unit_that_keeps_them_short() {
        assert_eq!(duration_us(2_592_000_000_000), "30 d");
        assert_eq!(duration_us(86_400_000_000), "1 d");
        assert_eq!(duration_us(2_500_000), "2.5 s");
        assert_eq!(duration_us(17_279), "17.279 ms");
        assert_eq!(duration_us(999), "999 µs");
        assert_eq!(duration_us(90_000_000), "1.5 min");
        assert_eq!(duration_us(5_400_000_000), "1.5 h");
        assert_eq!(duration_us(0), "0 s");
        assert_eq!(duration_us(1), "1 µs");
        assert_eq!(duration_ms(10_000), "10 s");
        assert_eq!(duration_ms(250), "250 ms");
    }

    #[test]
    fn rounding_carries_into_the_whole_part_and_never_overflows() {
        assert_eq!(duration_us(1_999_600), "2 s", "1.9996 s rounds up to 2 s");
        assert_eq!(duration_us(1_000_400), "1 s");
        assert_eq!(duration_us(1_000_600), "1.001 s");
        assert_eq!(duration_us(u64::MAX), "213503982.335 d");
        assert_eq!(duration_ms(u64::MAX), duration_us(u64::MAX), "saturates");
    }
}
