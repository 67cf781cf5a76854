//! Kubernetes resource quantities (`100m`, `512Mi`, `1.5`, `2e3`), enough to compare them.

/// The value of a quantity in base units, or `None` when it is not a quantity.
pub fn parse(quantity: &str) -> Option<f64> {
    let s = quantity.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(split);
    let value: f64 = number.parse().ok()?;
    let scale = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        exponent if exponent.starts_with(['e', 'E']) => 10f64.powi(exponent[1..].parse().ok()?),
        _ => return None,
    };
    Some(value * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_scale() {
        assert_eq!(parse("100m"), Some(0.1));
        assert_eq!(parse("2"), Some(2.0));
        assert_eq!(parse("512Mi"), Some(512.0 * 1024.0 * 1024.0));
        assert_eq!(parse("1G"), Some(1e9));
        assert_eq!(parse("2e3"), Some(2000.0));
        assert_eq!(parse("1.5"), Some(1.5));
        assert!(parse("256Mi").unwrap() < parse("1Gi").unwrap());
        assert!(parse("600m").unwrap() > parse("500m").unwrap());
    }

    #[test]
    fn garbage_is_not_a_quantity() {
        assert_eq!(parse("lots"), None);
        assert_eq!(parse("5Q"), None);
        assert_eq!(parse(""), None);
    }
}
