//! The swept keys: parsing `--set KEY=V1,V2,...` and enumerating the variants.

/// One `--set`: a key path and the values it takes, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    /// The scenario key path.
    pub key: String,
    /// Its values, as TOML.
    pub values: Vec<String>,
}

/// Parses `KEY=V1,V2,...` (commas inside brackets or quotes belong to a value).
pub fn parse_axis(s: &str) -> Result<Axis, String> {
    let (k, v) = s.split_once('=').ok_or_else(|| {
        format!("`{s}` is not KEY=V1,V2,..., e.g. client.retry.max_attempts=1,3,5")
    })?;
    let key = k.trim();
    if key.is_empty() {
        return Err(format!("`{s}` has an empty key"));
    }
    let values = split_values(v).map_err(|m| format!("{key}: {m}"))?;
    Ok(Axis {
        key: key.to_string(),
        values,
    })
}

/// Splits on commas outside brackets, braces and quotes, so TOML arrays and
/// strings stay whole: `[0,100],50` is two values.
pub fn split_values(s: &str) -> Result<Vec<String>, String> {
    let mut values = Vec::new();
    let mut current = String::new();
    let mut depth = 0u32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in s.chars() {
        if let Some(q) = quote {
            current.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' && q == '"' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => {
                quote = Some(c);
                current.push(c);
            }
            '[' | '{' => {
                depth += 1;
                current.push(c);
            }
            ']' | '}' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| format!("`{s}` closes a bracket it never opened"))?;
                current.push(c);
            }
            ',' if depth == 0 => values.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    if quote.is_some() {
        return Err(format!("`{s}` has an unterminated string"));
    }
    if depth != 0 {
        return Err(format!("`{s}` leaves a bracket open"));
    }
    values.push(current);
    let values: Vec<String> = values.iter().map(|v| v.trim().to_string()).collect();
    if values.iter().any(String::is_empty) {
        return Err(format!(
            "`{s}` has an empty value; separate values with single commas"
        ));
    }
    Ok(values)
}

/// Every combination of the axes' values, the first axis varying slowest.
pub(super) fn cross_product(axes: &[Axis]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new()];
    for axis in axes {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                (0..axis.values.len()).map(move |i| {
                    let mut p = prefix.clone();
                    p.push(i);
                    p
                })
            })
            .collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_split_on_top_level_commas_only() {
        assert_eq!(split_values("1,3, 5").unwrap(), ["1", "3", "5"]);
        assert_eq!(
            split_values("[0,100],50,[10, 20]").unwrap(),
            ["[0,100]", "50", "[10, 20]"]
        );
        assert_eq!(split_values(r#""a,b",none"#).unwrap(), [r#""a,b""#, "none"]);
        assert!(split_values("1,,2").is_err());
        assert!(split_values("[0,1").is_err());
        assert!(split_values("0]").is_err());
    }

    #[test]
    fn the_cross_product_varies_the_first_key_slowest() {
        let axes = [
            Axis {
                key: "a".into(),
                values: vec!["1".into(), "2".into()],
            },
            Axis {
                key: "b".into(),
                values: vec!["x".into(), "y".into(), "z".into()],
            },
        ];
        let c = cross_product(&axes);
        assert_eq!(c.len(), 6);
        assert_eq!(c[0], [0, 0]);
        assert_eq!(c[1], [0, 1]);
        assert_eq!(c[3], [1, 0]);
    }
}
