//! Axis ticks on round values, for the sweep page's charts: every tick is
//! 1, 2 or 5 times a power of ten times its index, from zero to the first
//! tick at or above the highest value, so an axis never reads 1.3 or 3.8.

use serde_json::{json, Map, Value};

/// Ticks from 0 to at least `max`, about `target` steps apart, each step
/// 1, 2 or 5 × 10^k. `max` of zero or less (or not a number) gives `[0, 1]`.
pub fn ticks(max: f64, target: usize) -> Vec<f64> {
    if max.is_nan() || max <= 0.0 || !max.is_finite() {
        return vec![0.0, 1.0];
    }
    let raw = max / target.max(1) as f64;
    let mut exp = raw.log10().floor() as i32;
    let mut mult = [1u64, 2, 5, 10]
        .into_iter()
        .find(|&m| m as f64 * 10f64.powi(exp) >= raw * (1.0 - 1e-12))
        .unwrap_or(10);
    if mult == 10 {
        mult = 1;
        exp += 1;
    }
    // Index × multiple, then the power of ten: exact for every tick, where
    // adding steps of 0.1 would print 0.30000000000000004.
    let at = |i: u64| {
        let n = (i * mult) as f64;
        if exp >= 0 {
            n * 10f64.powi(exp)
        } else {
            n / 10f64.powi(-exp)
        }
    };
    let mut out = vec![0.0];
    let mut i = 0;
    while out[out.len() - 1] < max * (1.0 - 1e-12) {
        i += 1;
        out.push(at(i));
    }
    out
}

/// The size in µs of the unit a duration axis is shown in: the largest of
/// d, h, min, s, ms, µs that its highest value fills once (as `sweep.js`).
fn time_unit_us(max: f64) -> f64 {
    [86_400e6, 3_600e6, 60e6, 1e6, 1e3, 1.0]
        .into_iter()
        .find(|&size| max >= size)
        .unwrap_or(1.0)
}

/// The ticks of one metric's axis: durations get round values in the unit
/// they are shown in (`2, 4, 6 s`, not `2000000 µs` steps).
pub fn axis(max: f64, shape: &str) -> Vec<f64> {
    if shape == "time_us" && max > 0.0 {
        let size = time_unit_us(max);
        return ticks(max / size, 4).into_iter().map(|t| t * size).collect();
    }
    ticks(max, 4)
}

/// The y ticks of every chart of a sweep's `data`, by metric name: the
/// violation rate's reach the top of its highest interval.
pub fn sweep_ticks(data: &Value) -> Value {
    let rows = data["rows"].as_array().map_or(&[][..], Vec::as_slice);
    let highest =
        |f: &dyn Fn(&Value) -> Option<f64>| rows.iter().filter_map(f).fold(f64::NAN, f64::max);
    let mut out = Map::new();
    out.insert(
        "violation_rate".into(),
        json!(axis(highest(&|r| r["hi"].as_f64()), "percent")),
    );
    let metrics = data["metrics"].as_array().map_or(&[][..], Vec::as_slice);
    for (j, m) in metrics.iter().enumerate() {
        let max = highest(&|r| r["metrics"][j].as_f64());
        if max.is_nan() {
            continue;
        }
        let name = m["name"].as_str().unwrap_or("").to_string();
        out.insert(name, json!(axis(max, m["shape"].as_str().unwrap_or(""))));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_fall_on_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(ticks(5.0, 4), [0.0, 2.0, 4.0, 6.0]);
        assert_eq!(ticks(3.8, 4), [0.0, 1.0, 2.0, 3.0, 4.0]);
        assert_eq!(ticks(0.37, 4), [0.0, 0.1, 0.2, 0.3, 0.4]);
        assert_eq!(ticks(1.0, 4), [0.0, 0.5, 1.0]);
        assert_eq!(ticks(4.0, 4), [0.0, 1.0, 2.0, 3.0, 4.0]);
        assert_eq!(ticks(1234.0, 4), [0.0, 500.0, 1000.0, 1500.0]);
        assert_eq!(ticks(0.003, 4), [0.0, 0.001, 0.002, 0.003]);
        assert_eq!(ticks(0.0, 4), [0.0, 1.0]);
        assert_eq!(ticks(f64::NAN, 4), [0.0, 1.0]);
        for max in [0.07, 0.9, 7.3, 19.0, 86.0, 1e9 + 1.0] {
            let t = ticks(max, 4);
            assert!(t[t.len() - 1] >= max && t.len() <= 7, "{max}: {t:?}");
            let step = t[1];
            let mant = step / 10f64.powf(step.log10().floor());
            assert!(
                [1.0, 2.0, 5.0].iter().any(|m| (mant - m).abs() < 1e-9),
                "{max}: step {step}"
            );
        }
    }

    #[test]
    fn a_duration_axis_has_round_ticks_in_its_unit_and_rates_stop_at_one() {
        assert_eq!(axis(2_600_000.0, "time_us"), [0.0, 1e6, 2e6, 3e6]);
        assert_eq!(axis(90e6, "time_us"), [0.0, 30e6, 60e6, 90e6]);
        let data = json!({
            "metrics": [{"name": "a", "shape": "ratio"}, {"name": "empty", "shape": "ratio"}],
            "rows": [{"hi": 0.9, "metrics": [3.8, null]}, {"hi": 0.2, "metrics": [1.0, null]}],
        });
        let t = sweep_ticks(&data);
        assert_eq!(t["violation_rate"], json!([0.0, 0.5, 1.0]));
        assert_eq!(ticks(0.6, 3), [0.0, 0.2, 0.4, 0.6], "exact decimals");
        assert_eq!(t["a"], json!([0.0, 1.0, 2.0, 3.0, 4.0]));
        assert!(t.get("empty").is_none(), "no value in any variant: no axis");
    }
}
