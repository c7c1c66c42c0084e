//! UTC timestamps in the brief's `YYYY-MM-DDTHH:MM:SSZ` form, and the clock
//! (`GIT_HANDOFF_NOW` overrides it, for tests and replays).

use std::time::{SystemTime, UNIX_EPOCH};

/// The environment variable that replaces the system clock.
pub const NOW_ENV: &str = "GIT_HANDOFF_NOW";

/// Seconds since the Unix epoch, now: `GIT_HANDOFF_NOW` when set
/// (`YYYY-MM-DDTHH:MM:SSZ`, or `@<seconds>`), else the system clock.
pub fn now() -> Result<i64, String> {
    match std::env::var(NOW_ENV) {
        Ok(value) if !value.trim().is_empty() => parse_now(value.trim()).ok_or_else(|| {
            format!("{NOW_ENV}='{value}' is not a UTC time; use the form 2026-11-30T09:00:00Z or @<unix seconds>")
        }),
        _ => Ok(SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0)),
    }
}

fn parse_now(value: &str) -> Option<i64> {
    match value.strip_prefix('@') {
        Some(secs) => secs.parse().ok(),
        None => parse(value),
    }
}

/// Format Unix seconds as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Parse an RFC 3339 date-time into Unix seconds: `YYYY-MM-DDTHH:MM:SS`,
/// optional fraction, then `Z` or an offset `±HH:MM` (`T`/`Z` in either
/// case). `None` if malformed or out of range. Briefs are written with `Z`
/// ([`format`]); the other forms are accepted on read and import.
pub fn parse(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20
        || !s.is_ascii()
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = &s[r];
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || se > 60
    {
        return None;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest = &frac[digits..];
    }
    let offset = match rest.as_bytes() {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let two = |p: &str| -> Option<i64> {
                p.bytes()
                    .all(|c| c.is_ascii_digit())
                    .then(|| p.parse().ok())?
            };
            let (oh, om) = (two(&rest[1..3])?, two(&rest[4..6])?);
            if oh > 23 || om > 59 {
                return None;
            }
            let secs = oh * 3600 + om * 60;
            if *sign == b'+' { secs } else { -secs }
        }
        _ => return None,
    };
    Some(days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se - offset)
}

/// `timestamp` in the form briefs are written in (`YYYY-MM-DDTHH:MM:SSZ`,
/// UTC), when it is a valid RFC 3339 date-time in another form.
pub fn normalize(timestamp: &str) -> Option<String> {
    let secs = parse(timestamp)?;
    let z = format(secs);
    (z != timestamp).then_some(z)
}

/// The date part (`YYYY-MM-DD`) of a brief timestamp.
pub fn date_of(timestamp: &str) -> &str {
    timestamp.get(..10).unwrap_or(timestamp)
}

/// A short human age: `5m`, `3h`, `2d`.
pub fn age(seconds: i64) -> String {
    let s = seconds.max(0);
    if s < 3600 {
        format!("{}m", s / 60)
    } else if s < 48 * 3600 {
        format!("{}h", s / 3600)
    } else {
        format!("{}d", s / 86_400)
    }
}

/// The date `YYYY-MM-DD` of Unix seconds (UTC).
pub fn date(secs: i64) -> String {
    format(secs)[..10].to_string()
}

/// Unix seconds of midnight UTC of a `YYYY-MM-DD` date; `None` if malformed.
pub fn parse_date(date: &str) -> Option<i64> {
    parse(&format!("{date}T00:00:00Z"))
}

/// Parse an age in days: `30d`, `4w` (weeks) or a bare number of days.
pub fn parse_days(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let (num, unit) = match t.char_indices().last() {
        Some((i, 'd')) => (&t[..i], 1),
        Some((i, 'w')) => (&t[..i], 7),
        _ => (t, 1),
    };
    match num.parse::<i64>() {
        Ok(n) if (0..=100_000).contains(&n) => Ok(n * unit),
        _ => Err(format!(
            "'{s}' is not an age in days; write it like 30d, 4w or 30"
        )),
    }
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Howard Hinnant's algorithms for the proleptic Gregorian calendar.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_offsets_and_fractions_are_read_and_normalized_to_z() {
        let z = parse("2026-11-30T12:00:00Z").unwrap();
        assert_eq!(parse("2026-11-30T12:00:00+00:00"), Some(z));
        assert_eq!(parse("2026-11-30T14:30:00+02:30"), Some(z));
        assert_eq!(parse("2026-11-30T07:00:00-05:00"), Some(z));
        assert_eq!(parse("2026-11-30t12:00:00.123456z"), Some(z));
        assert_eq!(
            normalize("2026-11-30T13:00:00+01:00").as_deref(),
            Some("2026-11-30T12:00:00Z")
        );
        assert_eq!(normalize("2026-11-30T12:00:00Z"), None);
        for bad in [
            "2026-11-30T12:00:00",
            "2026-11-30T12:00:00+0000",
            "2026-11-30T12:00:00.Z",
            "2026-11-30T12:00:00+24:00",
            "2026-11-30 12:00:00Z",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn format_and_parse_round_trip() {
        for secs in [0, 951_782_400, 1_700_000_000, 4_102_444_799] {
            assert_eq!(parse(&format(secs)), Some(secs));
        }
        assert_eq!(format(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(parse("2000-02-29T00:00:00Z"), Some(951_782_400));
    }

    #[test]
    fn malformed_timestamps_are_refused() {
        for bad in [
            "",
            "2026-13-01T00:00:00Z",
            "2026-02-30T00:00:00Z",
            "2026-01-01 00:00:00Z",
            "2026-01-01T00:00:00",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn day_ages_parse() {
        assert_eq!(parse_days("30d"), Ok(30));
        assert_eq!(parse_days("4w"), Ok(28));
        assert_eq!(parse_days("90"), Ok(90));
        for bad in ["", "d", "-1d", "3x", "1.5d"] {
            assert!(parse_days(bad).is_err(), "{bad}");
        }
        assert_eq!(date(1_700_000_000), "2023-11-14");
        assert_eq!(parse_date("2023-11-14"), Some(1_699_920_000));
        assert_eq!(parse_date("2023-11-31"), None);
    }

    #[test]
    fn ages_switch_units() {
        assert_eq!(age(59 * 60), "59m");
        assert_eq!(age(47 * 3600), "47h");
        assert_eq!(age(48 * 3600), "2d");
    }
}
