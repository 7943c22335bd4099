//! Date and time functions.
//!
//! Cosmos DB keeps dates as ISO 8601 UTC strings and works in UTC only. The accepted input forms
//! are those the `IS_DATETIME` reference describes: `YYYY-MM-DD`, optionally followed by `Z`, or
//! followed by `T` or a space and `hh:mm:ss`, an optional fraction of 1 to 7 digits after a `.`,
//! and an optional `Z`. No offsets, no `hh:mm` without seconds. Outputs are always
//! `YYYY-MM-DDThh:mm:ss.fffffffZ`. Anything invalid (bad string, bad part name, non-integer count,
//! a result outside the years 1–9999) gives `undefined`.
//!
//! Internally an instant is an `i64` count of 100 ns ticks since the Unix epoch, which is also
//! what `DateTimeToTicks`/`TicksToDateTime` use (`TicksToDateTime(0)` is 1970-01-01). Timestamps
//! are milliseconds since the Unix epoch. Numeric results are doubles, so tick counts above 2^53
//! round like Cosmos DB's (`DateTimeToTicks("2020-01-02T03:04:05.6789123Z")` is
//! `15779342456789124`).
//!
//! `GetCurrentDateTime`, `NOW` and `AGO` read the clock on each call; the `GetCurrent*Static`
//! forms give the query's start time ([`FunctionContext::query_ticks`], set once per query by the
//! executor), so every row of a query sees one value.

use std::time::{SystemTime, UNIX_EPOCH};

use cosmoql_value::Value;

use super::body::{Builtin, FunctionContext};
use crate::error::FunctionError;

type Out = Result<Value, FunctionError>;

pub(crate) const FUNCTIONS: &[Builtin] = &[
    Builtin { name: "GetCurrentDateTime", eval: get_current_date_time },
    Builtin { name: "GetCurrentDateTimeStatic", eval: |_, ctx| Ok(date_value(Some(query_ticks(ctx)))) },
    Builtin { name: "GetCurrentTicks", eval: get_current_ticks },
    Builtin { name: "GetCurrentTicksStatic", eval: |_, ctx| Ok(Value::from(query_ticks(ctx) as f64)) },
    Builtin { name: "GetCurrentTimestamp", eval: get_current_timestamp },
    Builtin {
        name: "GetCurrentTimestampStatic",
        eval: |_, ctx| Ok(Value::from(query_ticks(ctx).div_euclid(TICKS_PER_MS) as f64)),
    },
    Builtin { name: "NOW", eval: now },
    Builtin { name: "AGO", eval: ago },
    Builtin { name: "DateTimeAdd", eval: date_time_add },
    Builtin { name: "DateTimeBin", eval: date_time_bin },
    Builtin { name: "DateTimeDiff", eval: date_time_diff },
    Builtin { name: "DateTimeFormat", eval: date_time_format },
    Builtin { name: "DateTimeFromParts", eval: date_time_from_parts },
    Builtin { name: "DateTimePart", eval: date_time_part },
    Builtin { name: "DateTimeToTicks", eval: date_time_to_ticks },
    Builtin { name: "DateTimeToTimestamp", eval: date_time_to_timestamp },
    Builtin { name: "TicksToDateTime", eval: ticks_to_date_time },
    Builtin { name: "TimestampToDateTime", eval: timestamp_to_date_time },
    Builtin { name: "YEAR", eval: year },
    Builtin { name: "MONTH", eval: month },
    Builtin { name: "DAY", eval: day },
];

// ---------------------------------------------------------------------------------------------
// Civil calendar (proleptic Gregorian, UTC)

const TICKS_PER_MS: i64 = 10_000;
const TICKS_PER_SECOND: i64 = 10_000_000;
const TICKS_PER_MINUTE: i64 = 60 * TICKS_PER_SECOND;
const TICKS_PER_HOUR: i64 = 60 * TICKS_PER_MINUTE;
const TICKS_PER_DAY: i64 = 24 * TICKS_PER_HOUR;
/// 0001-01-01T00:00:00Z.
const MIN_TICKS: i64 = -719_162 * TICKS_PER_DAY;
/// 9999-12-31T23:59:59.9999999Z.
const MAX_TICKS: i64 = 2_932_897 * TICKS_PER_DAY - 1;
/// 1601-01-01T00:00:00Z, the earliest `DateTimeBin` origin.
const WINDOWS_EPOCH_TICKS: i64 = -134_774 * TICKS_PER_DAY;

/// Days since 1970-01-01 of a civil date (Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(y) => 29,
        _ => 28,
    }
}

/// The broken-down form of an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Civil {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    /// 100 ns ticks within the second, 0..10^7.
    fraction: u32,
}

impl Civil {
    fn from_ticks(t: i64) -> Civil {
        let days = t.div_euclid(TICKS_PER_DAY);
        let rem = t.rem_euclid(TICKS_PER_DAY);
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: (rem / TICKS_PER_HOUR) as u32,
            minute: (rem % TICKS_PER_HOUR / TICKS_PER_MINUTE) as u32,
            second: (rem % TICKS_PER_MINUTE / TICKS_PER_SECOND) as u32,
            fraction: (rem % TICKS_PER_SECOND) as u32,
        }
    }

    /// The instant, if every field is in range (years 1–9999).
    fn to_ticks(self) -> Option<i64> {
        let ok = (1..=9999).contains(&self.year)
            && (1..=12).contains(&self.month)
            && self.day >= 1
            && self.day <= days_in_month(self.year, self.month)
            && self.hour < 24
            && self.minute < 60
            && self.second < 60
            && i64::from(self.fraction) < TICKS_PER_SECOND;
        ok.then(|| {
            days_from_civil(self.year, self.month, self.day) * TICKS_PER_DAY
                + i64::from(self.hour) * TICKS_PER_HOUR
                + i64::from(self.minute) * TICKS_PER_MINUTE
                + i64::from(self.second) * TICKS_PER_SECOND
                + i64::from(self.fraction)
        })
    }
}

fn in_range(t: i64) -> Option<i64> {
    (MIN_TICKS..=MAX_TICKS).contains(&t).then_some(t)
}

/// Parses a Cosmos DB date-time string (see the module docs for the accepted forms).
fn parse_date_time(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let digits = |from: usize, n: usize| -> Option<u32> {
        let part = b.get(from..from + n)?;
        part.iter().try_fold(0u32, |acc, &c| c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0')))
    };
    let year = digits(0, 4)?;
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let month = digits(5, 2)?;
    let day = digits(8, 2)?;
    let mut civil = Civil { year: i64::from(year), month, day, hour: 0, minute: 0, second: 0, fraction: 0 };
    match b.get(10) {
        None => return civil.to_ticks(),
        Some(b'Z') if b.len() == 11 => return civil.to_ticks(),
        Some(b'T' | b' ') => {}
        _ => return None,
    }
    civil.hour = digits(11, 2)?;
    if b.get(13) != Some(&b':') || b.get(16) != Some(&b':') {
        return None;
    }
    civil.minute = digits(14, 2)?;
    civil.second = digits(17, 2)?;
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let n = i - start;
        if !(1..=7).contains(&n) {
            return None;
        }
        civil.fraction = digits(start, n)? * 10u32.pow(7 - n as u32);
    }
    if b.get(i) == Some(&b'Z') {
        i += 1;
    }
    if i != b.len() {
        return None;
    }
    civil.to_ticks()
}

/// `YYYY-MM-DDThh:mm:ss.fffffffZ`, or `None` outside the years 1–9999.
fn format_date_time(t: i64) -> Option<String> {
    in_range(t)?;
    let c = Civil::from_ticks(t);
    Some(format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:07}Z",
        c.year, c.month, c.day, c.hour, c.minute, c.second, c.fraction
    ))
}

fn date_value(t: Option<i64>) -> Value {
    t.and_then(format_date_time).map_or(Value::Undefined, Value::from)
}

pub(crate) fn now_ticks() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => (d.as_nanos() / 100) as i64,
        Err(e) => -((e.duration().as_nanos() / 100) as i64),
    }
}

// ---------------------------------------------------------------------------------------------
// Arguments

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Millisecond,
    Microsecond,
    Nanosecond,
}

impl Part {
    fn parse(v: &Value) -> Option<Part> {
        let s = v.as_str()?.to_ascii_lowercase();
        Some(match s.as_str() {
            "year" | "yyyy" | "yy" => Part::Year,
            "month" | "mm" | "m" => Part::Month,
            "day" | "dd" | "d" => Part::Day,
            "hour" | "hh" => Part::Hour,
            "minute" | "mi" | "n" => Part::Minute,
            "second" | "ss" | "s" => Part::Second,
            "millisecond" | "ms" => Part::Millisecond,
            "microsecond" | "mcs" => Part::Microsecond,
            "nanosecond" | "ns" => Part::Nanosecond,
            _ => return None,
        })
    }

    /// The length of the part in nanoseconds, for the parts of fixed length.
    fn fixed_nanos(self) -> Option<i128> {
        Some(match self {
            Part::Year | Part::Month => return None,
            Part::Day => i128::from(TICKS_PER_DAY) * 100,
            Part::Hour => i128::from(TICKS_PER_HOUR) * 100,
            Part::Minute => i128::from(TICKS_PER_MINUTE) * 100,
            Part::Second => i128::from(TICKS_PER_SECOND) * 100,
            Part::Millisecond => 1_000_000,
            Part::Microsecond => 1_000,
            Part::Nanosecond => 1,
        })
    }
}

fn date_arg(v: &Value) -> Option<i64> {
    parse_date_time(v.as_str()?)
}

/// An integral number (as Cosmos DB requires for counts and parts).
fn int_arg(v: &Value) -> Option<i64> {
    let n = v.as_f64()?;
    (n.is_finite() && n.fract() == 0.0 && n.abs() < 9.2e18).then_some(n as i64)
}

/// `t` plus `months` calendar months; the day is clamped to the end of a shorter month.
fn add_months(t: i64, months: i64) -> Option<i64> {
    let c = Civil::from_ticks(t);
    let total = (c.year * 12 + i64::from(c.month) - 1).checked_add(months)?;
    let year = total.div_euclid(12);
    if !(1..=9999).contains(&year) {
        return None;
    }
    let month = (total.rem_euclid(12) + 1) as u32;
    let day = c.day.min(days_in_month(year, month));
    Civil { year, month, day, ..c }.to_ticks()
}

fn add(part: Part, n: i64, t: i64) -> Option<i64> {
    match part {
        Part::Year => add_months(t, n.checked_mul(12)?),
        Part::Month => add_months(t, n),
        _ => {
            let nanos = i128::from(n) * part.fixed_nanos()?;
            let t = i128::from(t) + nanos / 100;
            in_range(i64::try_from(t).ok()?)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Functions

/// The query's start time for the `*Static` functions (one value per query), else the clock.
fn query_ticks(ctx: &FunctionContext<'_>) -> i64 {
    ctx.query_ticks.unwrap_or_else(now_ticks)
}

fn get_current_date_time(_: &[Value], _: &FunctionContext<'_>) -> Out {
    Ok(date_value(Some(now_ticks())))
}

fn get_current_ticks(_: &[Value], _: &FunctionContext<'_>) -> Out {
    Ok(Value::from(now_ticks() as f64))
}

fn get_current_timestamp(_: &[Value], _: &FunctionContext<'_>) -> Out {
    Ok(Value::from(now_ticks().div_euclid(TICKS_PER_MS) as f64))
}

/// `NOW()` or `NOW(part, n)`: the current time, plus `n` parts.
fn now(args: &[Value], _: &FunctionContext<'_>) -> Out {
    let t = now_ticks();
    Ok(match args {
        [] => date_value(Some(t)),
        [part, n] => date_value((|| add(Part::parse(part)?, int_arg(n)?, t))()),
        _ => Value::Undefined,
    })
}

/// `AGO(part, n)`: the current time minus `n` parts.
fn ago(args: &[Value], _: &FunctionContext<'_>) -> Out {
    let t = now_ticks();
    Ok(date_value((|| add(Part::parse(&args[0])?, int_arg(&args[1])?.checked_neg()?, t))()))
}

fn date_time_add(args: &[Value], _: &FunctionContext<'_>) -> Out {
    Ok(date_value((|| add(Part::parse(&args[0])?, int_arg(&args[1])?, date_arg(&args[2])?))()))
}

/// `DateTimeBin(date, part [, size [, origin]])`: the start of the bin of `size` parts, counted
/// from `origin` (default the Unix epoch, never before 1601), that holds `date`.
fn date_time_bin(args: &[Value], _: &FunctionContext<'_>) -> Out {
    Ok(date_value((|| {
        let t = date_arg(&args[0])?;
        let part = Part::parse(&args[1])?;
        let size = match args.get(2) {
            None => 1,
            Some(v) => int_arg(v).filter(|&n| n > 0)?,
        };
        let origin = match args.get(3) {
            None => 0,
            Some(v) => date_arg(v).filter(|&o| o >= WINDOWS_EPOCH_TICKS)?,
        };
        match part.fixed_nanos() {
            Some(unit) => {
                let width = unit.checked_mul(i128::from(size))?;
                let elapsed = (i128::from(t) - i128::from(origin)) * 100;
                let start = elapsed.div_euclid(width) * width;
                i64::try_from(i128::from(origin) + start.div_euclid(100)).ok().and_then(in_range)
            }
            None => {
                let step = if part == Part::Year { 12 } else { 1 };
                let (c, o) = (Civil::from_ticks(t), Civil::from_ticks(origin));
                let mut steps = ((c.year * 12 + i64::from(c.month)) - (o.year * 12 + i64::from(o.month))) / step;
                // Whole steps elapsed: one fewer if the origin's day/time is not reached yet.
                while steps > i64::MIN && add_months(origin, steps * step).is_none_or(|s| s > t) {
                    steps -= 1;
                }
                add_months(origin, steps.div_euclid(size) * size * step)
            }
        }
    })()))
}

/// `DateTimeDiff(part, start, end)`: the number of part boundaries crossed from start to end.
fn date_time_diff(args: &[Value], _: &FunctionContext<'_>) -> Out {
    let diff = (|| {
        let part = Part::parse(&args[0])?;
        let (s, e) = (date_arg(&args[1])?, date_arg(&args[2])?);
        let (cs, ce) = (Civil::from_ticks(s), Civil::from_ticks(e));
        Some(match part {
            Part::Year => (ce.year - cs.year) as f64,
            Part::Month => ((ce.year * 12 + i64::from(ce.month)) - (cs.year * 12 + i64::from(cs.month))) as f64,
            Part::Nanosecond => ((i128::from(e) - i128::from(s)) * 100) as f64,
            Part::Microsecond => (e.div_euclid(10) - s.div_euclid(10)) as f64,
            _ => {
                let unit = (part.fixed_nanos()? / 100) as i64;
                (e.div_euclid(unit) - s.div_euclid(unit)) as f64
            }
        })
    })();
    Ok(diff.map_or(Value::Undefined, Value::from))
}

fn date_time_from_parts(args: &[Value], _: &FunctionContext<'_>) -> Out {
    Ok(date_value((|| {
        let mut n = [0i64; 7];
        for (slot, v) in n.iter_mut().zip(args) {
            *slot = int_arg(v)?;
        }
        let small = |x: i64| u32::try_from(x).ok();
        Civil {
            year: n[0],
            month: small(n[1])?,
            day: small(n[2])?,
            hour: small(n[3])?,
            minute: small(n[4])?,
            second: small(n[5])?,
            fraction: small(n[6])?,
        }
        .to_ticks()
    })()))
}

fn part_of(part: Part, t: i64) -> f64 {
    let c = Civil::from_ticks(t);
    match part {
        Part::Year => c.year as f64,
        Part::Month => f64::from(c.month),
        Part::Day => f64::from(c.day),
        Part::Hour => f64::from(c.hour),
        Part::Minute => f64::from(c.minute),
        Part::Second => f64::from(c.second),
        Part::Millisecond => f64::from(c.fraction / 10_000),
        Part::Microsecond => f64::from(c.fraction / 10),
        Part::Nanosecond => f64::from(c.fraction) * 100.0,
    }
}

fn date_time_part(args: &[Value], _: &FunctionContext<'_>) -> Out {
    let v = (|| Some(part_of(Part::parse(&args[0])?, date_arg(&args[1])?)))();
    Ok(v.map_or(Value::Undefined, Value::from))
}

fn year(args: &[Value], _: &FunctionContext<'_>) -> Out {
    Ok(date_arg(&args[0]).map_or(Value::Undefined, |t| Value::from(part_of(Part::Year, t))))
}

fn month(args: &[Value], _: &FunctionContext<'_>) -> Out {
    Ok(date_arg(&args[0]).map_or(Value::Undefined, |t| Value::from(part_of(Part::Month, t))))
}

fn day(args: &[Value], _: &FunctionContext<'_>) -> Out {
    Ok(date_arg(&args[0]).map_or(Value::Undefined, |t| Value::from(part_of(Part::Day, t))))
}

fn date_time_to_ticks(args: &[Value], _: &FunctionContext<'_>) -> Out {
    Ok(date_arg(&args[0]).map_or(Value::Undefined, |t| Value::from(t as f64)))
}

/// Milliseconds since the epoch; the sub-millisecond part is truncated (toward zero).
fn date_time_to_timestamp(args: &[Value], _: &FunctionContext<'_>) -> Out {
    Ok(date_arg(&args[0]).map_or(Value::Undefined, |t| Value::from((t / TICKS_PER_MS) as f64)))
}

/// A finite number, truncated toward zero, as an `i64` (outside the date range it fails later).
fn number_trunc(v: &Value) -> Option<i64> {
    let n = v.as_f64()?;
    (n.is_finite() && n.abs() < 9.2e18).then(|| n.trunc() as i64)
}

fn ticks_to_date_time(args: &[Value], _: &FunctionContext<'_>) -> Out {
    Ok(date_value(number_trunc(&args[0])))
}

fn timestamp_to_date_time(args: &[Value], _: &FunctionContext<'_>) -> Out {
    Ok(date_value((|| {
        let ms = args[0].as_f64().filter(|n| n.is_finite() && n.abs() < 1e15)?;
        let whole = ms.trunc() as i64;
        let frac = ((ms - ms.trunc()) * TICKS_PER_MS as f64).trunc() as i64;
        Some(whole * TICKS_PER_MS + frac)
    })()))
}

// ---------------------------------------------------------------------------------------------
// DateTimeFormat: .NET-style custom format specifiers, invariant culture, UTC.

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const WEEKDAYS: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

fn date_time_format(args: &[Value], _: &FunctionContext<'_>) -> Out {
    let out = (|| format_custom(date_arg(&args[0])?, args[1].as_str()?))();
    Ok(out.map_or(Value::Undefined, Value::from))
}

/// Formats `t` with a .NET custom date-time format string: `y M d h H m s f F t K z g`, quoted
/// literals (`'..'`, `".."`), `\` escapes and `%`; every other character is copied. `None` for a
/// malformed format (more than 7 `f`/`F`, a dangling `\`, `%` or quote).
fn format_custom(t: i64, fmt: &str) -> Option<String> {
    let c = Civil::from_ticks(t);
    let chars: Vec<char> = fmt.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let ch = chars[i];
        let mut run = 1;
        while i + run < chars.len() && chars[i + run] == ch {
            run += 1;
        }
        let pad = |n: u32, width: usize| format!("{n:0width$}");
        match ch {
            'y' => {
                let y = c.year as u32;
                out.push_str(&match run {
                    1 => (y % 100).to_string(),
                    2 => pad(y % 100, 2),
                    _ => pad(y, run),
                });
            }
            'M' => out.push_str(&match run {
                1 => c.month.to_string(),
                2 => pad(c.month, 2),
                3 => MONTHS[c.month as usize - 1][..3].to_string(),
                _ => MONTHS[c.month as usize - 1].to_string(),
            }),
            'd' => {
                let weekday = (t.div_euclid(TICKS_PER_DAY) + 4).rem_euclid(7) as usize; // 1970-01-01 was a Thursday
                out.push_str(&match run {
                    1 => c.day.to_string(),
                    2 => pad(c.day, 2),
                    3 => WEEKDAYS[weekday][..3].to_string(),
                    _ => WEEKDAYS[weekday].to_string(),
                });
            }
            'h' => {
                let h = if c.hour.is_multiple_of(12) { 12 } else { c.hour % 12 };
                out.push_str(&if run == 1 { h.to_string() } else { pad(h, 2) });
            }
            'H' => out.push_str(&if run == 1 { c.hour.to_string() } else { pad(c.hour, 2) }),
            'm' => out.push_str(&if run == 1 { c.minute.to_string() } else { pad(c.minute, 2) }),
            's' => out.push_str(&if run == 1 { c.second.to_string() } else { pad(c.second, 2) }),
            'f' | 'F' => {
                if run > 7 {
                    return None;
                }
                let digits = pad(c.fraction, 7);
                let digits = &digits[..run];
                out.push_str(if ch == 'f' { digits } else { digits.trim_end_matches('0') });
            }
            't' => out.push_str(match (run, c.hour < 12) {
                (1, true) => "A",
                (1, false) => "P",
                (_, true) => "AM",
                (_, false) => "PM",
            }),
            'K' => out.push_str(&"Z".repeat(run)),
            'z' => out.push_str(match run {
                1 => "+0",
                2 => "+00",
                _ => "+00:00",
            }),
            'g' => out.push_str("A.D."),
            '\'' | '"' => {
                // A quoted literal: up to the matching quote, with `\` escapes.
                let mut j = i + 1;
                loop {
                    match chars.get(j) {
                        None => return None,
                        Some(&q) if q == ch => break,
                        Some('\\') => {
                            out.push(*chars.get(j + 1)?);
                            j += 2;
                        }
                        Some(&other) => {
                            out.push(other);
                            j += 1;
                        }
                    }
                }
                i = j + 1;
                continue;
            }
            '\\' => {
                out.push(*chars.get(i + 1)?);
                i += 2;
                continue;
            }
            '%' => {
                // `%x` formats `x` as a single specifier.
                let next = *chars.get(i + 1)?;
                if next == '%' {
                    return None;
                }
                let single = format_custom(t, &next.to_string())?;
                out.push_str(&single);
                i += 2;
                continue;
            }
            _ => {
                for _ in 0..run {
                    out.push(ch);
                }
            }
        }
        i += run;
    }
    Some(out)
}

// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use crate::functions::test_support::call;

    fn s(v: &str) -> Value {
        Value::from(v)
    }

    fn n(v: f64) -> Value {
        Value::from(v)
    }

    #[track_caller]
    fn check(name: &str, args: &[Value], expected: Value) {
        assert_eq!(call(name, args), expected, "{name}({args:?})");
    }

    #[track_caller]
    fn undefined(name: &str, args: &[Value]) {
        check(name, args, Value::Undefined);
    }

    #[test]
    fn calendar_round_trips() {
        for days in [-719_162, -134_774, -1, 0, 1, 11_016, 18_262, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(civil_from_days(-719_162), (1, 1, 1));
        assert_eq!(civil_from_days(2_932_896), (9999, 12, 31));
        assert_eq!(civil_from_days(-134_774), (1601, 1, 1));
        assert_eq!(days_in_month(2000, 2), 29);
        assert_eq!(days_in_month(1900, 2), 28);
        assert_eq!(days_in_month(2024, 2), 29);
        assert_eq!(days_in_month(2023, 2), 28);
    }

    #[test]
    fn parsing_accepts_the_documented_forms() {
        // The IS_DATETIME reference examples.
        for ok in
            ["2024-12-12", "2024-12-12Z", "2024-12-12 20:21:25", "2024-12-12T20:21:25Z", "2024-12-12T20:21:25.123"]
        {
            assert!(parse_date_time(ok).is_some(), "{ok}");
        }
        assert!(parse_date_time("2024-12-12 20:21:25.123Z").is_some());
        for bad in [
            "2024-12-12T20Z",
            "2024-12-12 20:21:25.",
            "2024-12-12T20:21",
            "2024-12-12T20:21:25.12345678",
            "2024-12-12T20:21:25+01:00",
            "2024-12-12x",
            "2024-13-01",
            "2023-02-29",
            "2024-04-31",
            "0000-01-01",
            "2024-01-01T24:00:00",
            "2024-01-01T23:60:00",
            "2024-01-01T23:59:60",
            " 2024-01-01",
            "2024-1-01",
            "",
            "2024-01-01ZZ",
        ] {
            assert!(parse_date_time(bad).is_none(), "{bad}");
        }
        assert!(parse_date_time("2024-02-29").is_some());
        assert_eq!(parse_date_time("1970-01-01T00:00:00.0000001Z"), Some(1));
        assert_eq!(parse_date_time("1969-12-31T23:59:59.9999999"), Some(-1));
        assert_eq!(parse_date_time("0001-01-01"), Some(MIN_TICKS));
        assert_eq!(parse_date_time("9999-12-31T23:59:59.9999999Z"), Some(MAX_TICKS));
    }

    #[test]
    fn conformance_datetimeadd() {
        let base = s("2020-07-03T00:00:00.0000000");
        for (part, k, expected) in [
            ("yyyy", 1.0, "2021-07-03T00:00:00.0000000Z"),
            ("mm", 1.0, "2020-08-03T00:00:00.0000000Z"),
            ("dd", 1.0, "2020-07-04T00:00:00.0000000Z"),
            ("hh", 1.0, "2020-07-03T01:00:00.0000000Z"),
            ("yyyy", -1.0, "2019-07-03T00:00:00.0000000Z"),
            ("mm", -1.0, "2020-06-03T00:00:00.0000000Z"),
            ("dd", -1.0, "2020-07-02T00:00:00.0000000Z"),
            ("hh", -1.0, "2020-07-02T23:00:00.0000000Z"),
            ("ss", -25.0, "2020-07-02T23:59:35.0000000Z"),
        ] {
            check("DateTimeAdd", &[s(part), n(k), base.clone()], s(expected));
        }
        check("DateTimeAdd", &[s("hh"), n(-2.0), s("2020-07-09T23:20:13.4575530Z")], s("2020-07-09T21:20:13.4575530Z"));
        check("DateTimeAdd", &[s("mm"), n(1.0), s("2020-07-09T23:20:13.4575530Z")], s("2020-08-09T23:20:13.4575530Z"));
    }

    #[test]
    fn datetimeadd_edges() {
        // Month-end clamping and leap years.
        check("DateTimeAdd", &[s("mm"), n(1.0), s("2021-01-31")], s("2021-02-28T00:00:00.0000000Z"));
        check("DateTimeAdd", &[s("month"), n(1.0), s("2020-01-31")], s("2020-02-29T00:00:00.0000000Z"));
        check("DateTimeAdd", &[s("m"), n(-13.0), s("2020-03-31T10:00:00Z")], s("2019-02-28T10:00:00.0000000Z"));
        check("DateTimeAdd", &[s("yy"), n(1.0), s("2020-02-29")], s("2021-02-28T00:00:00.0000000Z"));
        check("DateTimeAdd", &[s("year"), n(4.0), s("2020-02-29")], s("2024-02-29T00:00:00.0000000Z"));
        check("DateTimeAdd", &[s("d"), n(1.0), s("2020-02-28")], s("2020-02-29T00:00:00.0000000Z"));
        check("DateTimeAdd", &[s("n"), n(90.0), s("2020-12-31T23:00:00")], s("2021-01-01T00:30:00.0000000Z"));
        check("DateTimeAdd", &[s("ms"), n(4.0), s("2024-10-14T14:20:30.6668888Z")], s("2024-10-14T14:20:30.6708888Z"));
        check("DateTimeAdd", &[s("mcs"), n(-1.0), s("2024-01-01")], s("2023-12-31T23:59:59.9999990Z"));
        check("DateTimeAdd", &[s("ns"), n(250.0), s("2024-01-01")], s("2024-01-01T00:00:00.0000002Z"));
        check("DateTimeAdd", &[s("HH"), n(1.0), s("2024-01-01")], s("2024-01-01T01:00:00.0000000Z"));
        // Out of range, bad part, non-integer count, wrong types.
        undefined("DateTimeAdd", &[s("yyyy"), n(1.0), s("9999-06-01")]);
        undefined("DateTimeAdd", &[s("dd"), n(-1.0), s("0001-01-01")]);
        undefined("DateTimeAdd", &[s("week"), n(1.0), s("2020-01-01")]);
        undefined("DateTimeAdd", &[s("dd"), n(1.5), s("2020-01-01")]);
        undefined("DateTimeAdd", &[s("dd"), s("1"), s("2020-01-01")]);
        undefined("DateTimeAdd", &[s("dd"), n(1.0), n(5.0)]);
        undefined("DateTimeAdd", &[Value::Undefined, n(1.0), s("2020-01-01")]);
        undefined("DateTimeAdd", &[s("dd"), n(1.0), s("not a date")]);
        undefined("DateTimeAdd", &[s("dd"), n(f64::NAN), s("2020-01-01")]);
        undefined("DateTimeAdd", &[s("yyyy"), n(1e18), s("2020-01-01")]);
    }

    #[test]
    fn conformance_datetimebin() {
        let t = s("2021-01-08T18:35:00.0000000");
        check("DateTimeBin", &[t.clone(), s("dd")], s("2021-01-08T00:00:00.0000000Z"));
        check("DateTimeBin", &[t.clone(), s("hh")], s("2021-01-08T18:00:00.0000000Z"));
        check("DateTimeBin", &[t.clone(), s("ss")], s("2021-01-08T18:35:00.0000000Z"));
        check("DateTimeBin", &[t.clone(), s("hh"), n(5.0)], s("2021-01-08T15:00:00.0000000Z"));
        check("DateTimeBin", &[t.clone(), s("dd"), n(7.0)], s("2021-01-07T00:00:00.0000000Z"));
        check(
            "DateTimeBin",
            &[t.clone(), s("dd"), n(7.0), s("1601-01-01T00:00:00.0000000")],
            s("2021-01-04T00:00:00.0000000Z"),
        );
    }

    #[test]
    fn datetimebin_edges() {
        check("DateTimeBin", &[s("2021-05-20T10:00:00"), s("yyyy")], s("2021-01-01T00:00:00.0000000Z"));
        check("DateTimeBin", &[s("2021-05-20T10:00:00"), s("yyyy"), n(10.0)], s("2020-01-01T00:00:00.0000000Z"));
        check("DateTimeBin", &[s("2021-05-20T10:00:00"), s("mm")], s("2021-05-01T00:00:00.0000000Z"));
        check("DateTimeBin", &[s("2021-05-20T10:00:00"), s("mm"), n(3.0)], s("2021-04-01T00:00:00.0000000Z"));
        // A custom origin inside a month: bins start on the origin's day of month.
        check(
            "DateTimeBin",
            &[s("2021-05-10"), s("mm"), n(1.0), s("2021-01-15T00:00:00")],
            s("2021-04-15T00:00:00.0000000Z"),
        );
        // Before the origin: bins extend backwards.
        check("DateTimeBin", &[s("1969-12-31T23:30:00"), s("hh")], s("1969-12-31T23:00:00.0000000Z"));
        check("DateTimeBin", &[s("1969-05-20"), s("yyyy")], s("1969-01-01T00:00:00.0000000Z"));
        check("DateTimeBin", &[s("2021-01-08T18:35:00.1234567"), s("ms")], s("2021-01-08T18:35:00.1230000Z"));
        check("DateTimeBin", &[s("2021-01-08T18:35:00.1234567"), s("mcs"), n(2.0)], s("2021-01-08T18:35:00.1234560Z"));
        check("DateTimeBin", &[s("2021-01-08T18:35:00.1234567"), s("ns"), n(500.0)], s("2021-01-08T18:35:00.1234565Z"));
        undefined("DateTimeBin", &[s("2021-01-08"), s("dd"), n(0.0)]);
        undefined("DateTimeBin", &[s("2021-01-08"), s("dd"), n(-1.0)]);
        undefined("DateTimeBin", &[s("2021-01-08"), s("dd"), n(1.5)]);
        undefined("DateTimeBin", &[s("2021-01-08"), s("dd"), n(1.0), s("1600-12-31")]);
        undefined("DateTimeBin", &[s("2021-01-08"), s("week")]);
        undefined("DateTimeBin", &[s("bad"), s("dd")]);
        undefined("DateTimeBin", &[n(1.0), s("dd")]);
    }

    #[test]
    fn conformance_datetimediff() {
        let (a, b) = (s("2019-02-04T16:00:00.0000000"), s("2018-03-05T05:00:00.0000000"));
        for (part, expected) in [("yyyy", -1.0), ("mm", -11.0), ("dd", -336.0), ("hh", -8075.0), ("ss", -29_070_000.0)]
        {
            check("DateTimeDiff", &[s(part), a.clone(), b.clone()], n(expected));
            check("DateTimeDiff", &[s(part), b.clone(), a.clone()], n(-expected));
        }
        check(
            "DateTimeDiff",
            &[s("day"), s("2020-01-01T01:02:03.1234527Z"), s("2020-01-03T01:02:03.1234567Z")],
            n(2.0),
        );
        check("DateTimeDiff", &[s("hh"), s("2020-01-01T01:00:00.1234527Z"), s("2020-01-01T01:59:59.1234567Z")], n(0.0));
        check(
            "DateTimeDiff",
            &[s("yyyy"), s("2028-01-01T01:02:03.1234527Z"), s("2020-01-03T01:02:03.1234567Z")],
            n(-8.0),
        );
    }

    #[test]
    fn datetimediff_boundaries() {
        check("DateTimeDiff", &[s("yyyy"), s("2020-12-31T23:59:59.9999999"), s("2021-01-01")], n(1.0));
        check("DateTimeDiff", &[s("month"), s("2020-01-31"), s("2020-02-01")], n(1.0));
        check("DateTimeDiff", &[s("dd"), s("2020-01-01T23:59:59"), s("2020-01-02T00:00:00")], n(1.0));
        check("DateTimeDiff", &[s("mi"), s("1969-12-31T23:59:59"), s("1970-01-01T00:00:00")], n(1.0));
        check("DateTimeDiff", &[s("second"), s("1969-12-31T23:59:59.9"), s("1970-01-01T00:00:00.1")], n(1.0));
        check("DateTimeDiff", &[s("ms"), s("2020-01-01T00:00:00.0009"), s("2020-01-01T00:00:00.0010")], n(1.0));
        check("DateTimeDiff", &[s("mcs"), s("2020-01-01T00:00:00.0000009"), s("2020-01-01T00:00:00.0000010")], n(1.0));
        check("DateTimeDiff", &[s("ns"), s("2020-01-01T00:00:00.0000001"), s("2020-01-01T00:00:00.0000010")], n(900.0));
        check("DateTimeDiff", &[s("dd"), s("2020-02-28"), s("2020-03-01")], n(2.0));
        check("DateTimeDiff", &[s("dd"), s("2019-02-28"), s("2019-03-01")], n(1.0));
        undefined("DateTimeDiff", &[s("weeks"), s("2020-01-01"), s("2020-01-02")]);
        undefined("DateTimeDiff", &[s("dd"), s("2020-01-01"), Value::Null]);
        undefined("DateTimeDiff", &[s("dd"), Value::Undefined, s("2020-01-01")]);
    }

    #[test]
    fn conformance_datetimefromparts() {
        check("DateTimeFromParts", &[n(2017.0), n(4.0), n(20.0)], s("2017-04-20T00:00:00.0000000Z"));
        let args: Vec<Value> = [2017.0, 4.0, 20.0, 0.0, 0.0, 0.0, 0.0].into_iter().map(n).collect();
        check("DateTimeFromParts", &args, s("2017-04-20T00:00:00.0000000Z"));
        let args: Vec<Value> = [2017.0, 4.0, 20.0, 13.0, 15.0, 20.0, 3_456_789.0].into_iter().map(n).collect();
        check("DateTimeFromParts", &args, s("2017-04-20T13:15:20.3456789Z"));
        let args: Vec<Value> = [2017.0, 4.0, 20.0, 13.0, 15.0].into_iter().map(n).collect();
        check("DateTimeFromParts", &args, s("2017-04-20T13:15:00.0000000Z"));
        undefined("DateTimeFromParts", &[n(-2000.0), n(-1.0), n(-1.0)]);
        let args: Vec<Value> = [2020.0, 9.0, 4.0, 10.0, 52.0, 12.0, 3_456_789.0].into_iter().map(n).collect();
        check("DateTimeFromParts", &args, s("2020-09-04T10:52:12.3456789Z"));
        check("DateTimeFromParts", &[n(2020.0), n(9.0), n(4.0)], s("2020-09-04T00:00:00.0000000Z"));
        let args: Vec<Value> = [2020.0, 9.0, 4.0, 10.0, 52.0].into_iter().map(n).collect();
        check("DateTimeFromParts", &args, s("2020-09-04T10:52:00.0000000Z"));
    }

    #[test]
    fn datetimefromparts_validation() {
        check("DateTimeFromParts", &[n(2024.0), n(2.0), n(29.0)], s("2024-02-29T00:00:00.0000000Z"));
        undefined("DateTimeFromParts", &[n(2023.0), n(2.0), n(29.0)]);
        undefined("DateTimeFromParts", &[n(2023.0), n(13.0), n(1.0)]);
        undefined("DateTimeFromParts", &[n(2023.0), n(1.0), n(1.0), n(24.0)]);
        undefined("DateTimeFromParts", &[n(2023.0), n(1.0), n(1.0), n(0.0), n(60.0)]);
        undefined("DateTimeFromParts", &[n(2023.0), n(1.0), n(1.0), n(0.0), n(0.0), n(60.0)]);
        undefined("DateTimeFromParts", &[n(2023.0), n(1.0), n(1.0), n(0.0), n(0.0), n(0.0), n(10_000_000.0)]);
        undefined("DateTimeFromParts", &[n(10000.0), n(1.0), n(1.0)]);
        undefined("DateTimeFromParts", &[n(0.0), n(1.0), n(1.0)]);
        undefined("DateTimeFromParts", &[n(2023.5), n(1.0), n(1.0)]);
        undefined("DateTimeFromParts", &[s("2023"), n(1.0), n(1.0)]);
        undefined("DateTimeFromParts", &[n(2023.0), Value::Null, n(1.0)]);
    }

    #[test]
    fn conformance_datetimepart() {
        let t = s("2016-05-29T08:30:00.1301617");
        for (part, expected) in [
            ("yyyy", 2016.0),
            ("mm", 5.0),
            ("dd", 29.0),
            ("hh", 8.0),
            ("mi", 30.0),
            ("ss", 0.0),
            ("ms", 130.0),
            ("mcs", 130_161.0),
            ("ns", 130_161_700.0),
        ] {
            check("DateTimePart", &[s(part), t.clone()], n(expected));
        }
        check("DateTimePart", &[s("mcs"), s("2020-01-02T03:04:05.6789123Z")], n(678_912.0));
        check("DateTimePart", &[s("m"), s("2020-01-02T03:04:05.6789123Z")], n(1.0));
        check("DateTimePart", &[s("n"), s("2020-01-02T03:04:05Z")], n(4.0));
        check("DateTimePart", &[s("second"), s("2020-01-02T03:04:05Z")], n(5.0));
        undefined("DateTimePart", &[s("quarter"), s("2020-01-02")]);
        undefined("DateTimePart", &[s("yyyy"), s("2020-01-02T03")]);
        undefined("DateTimePart", &[n(1.0), s("2020-01-02")]);
    }

    #[test]
    fn conformance_year_month_day() {
        check("YEAR", &[s("2000-10-10")], n(2000.0));
        check("YEAR", &[s("2024-01-10T14:15:20")], n(2024.0));
        check("YEAR", &[s("1989-03-03T12:12:12.1234567Z")], n(1989.0));
        check("MONTH", &[s("2024-01-10")], n(1.0));
        check("MONTH", &[s("2000-12-12T10:00:00")], n(12.0));
        check("MONTH", &[s("1989-03-03T12:12:12.1234567Z")], n(3.0));
        check("DAY", &[s("2024-01-10")], n(10.0));
        check("DAY", &[s("2000-12-12T10:00:00")], n(12.0));
        check("DAY", &[s("1989-03-03T12:12:12.1234567Z")], n(3.0));
        undefined("DAY", &[s("2024-02-30")]);
        undefined("YEAR", &[n(2024.0)]);
        undefined("MONTH", &[Value::Undefined]);
    }

    #[test]
    fn conformance_ticks_and_timestamps() {
        check("DateTimeToTicks", &[s("2015-05-19T12:00:00.0000000")], n(14_320_368_000_000_000.0));
        check("DateTimeToTicks", &[s("2020-01-02T03:04:05.6789123Z")], n(15_779_342_456_789_124.0));
        check("DateTimeToTicks", &[s("2020-01-02T03:04:05Z")], n(15_779_342_450_000_000.0));
        check("DateTimeToTimestamp", &[s("2015-05-19T12:00:00.0000000")], n(1_432_036_800_000.0));
        check("DateTimeToTimestamp", &[s("2020-07-09")], n(1_594_252_800_000.0));
        check("DateTimeToTimestamp", &[s("2020-07-09T23:20:13.4575530Z")], n(1_594_336_813_457.0));
        check("TicksToDateTime", &[n(15_973_607_943_002_652.0)], s("2020-08-13T23:19:54.3002652Z"));
        check("TicksToDateTime", &[n(0.0)], s("1970-01-01T00:00:00.0000000Z"));
        check("TicksToDateTime", &[n(-116_444_736_000_000_000.0)], s("1601-01-01T00:00:00.0000000Z"));
        check("TicksToDateTime", &[n(15_943_368_134_575_530.0)], s("2020-07-09T23:20:13.4575530Z"));
        check("TimestampToDateTime", &[n(1_597_360_794_300.0)], s("2020-08-13T23:19:54.3000000Z"));
        check("TimestampToDateTime", &[n(0.0)], s("1970-01-01T00:00:00.0000000Z"));
        check("TimestampToDateTime", &[n(-11_644_473_600_000.0)], s("1601-01-01T00:00:00.0000000Z"));
        check("TimestampToDateTime", &[n(1_594_227_912_345.0)], s("2020-07-08T17:05:12.3450000Z"));
    }

    #[test]
    fn ticks_and_timestamps_edges() {
        check("DateTimeToTicks", &[s("1969-12-31T23:59:59.9999999Z")], n(-1.0));
        check("DateTimeToTicks", &[s("0001-01-01")], n(-621_355_968_000_000_000.0));
        check("TicksToDateTime", &[n(-1.0)], s("1969-12-31T23:59:59.9999999Z"));
        check("TicksToDateTime", &[n(-621_355_968_000_000_000.0)], s("0001-01-01T00:00:00.0000000Z"));
        check("TicksToDateTime", &[n(1.9)], s("1970-01-01T00:00:00.0000001Z"));
        undefined("TicksToDateTime", &[n(-621_355_968_000_000_001.0 - 1000.0)]);
        undefined("TicksToDateTime", &[n(1e20)]);
        undefined("TicksToDateTime", &[n(f64::INFINITY)]);
        undefined("TicksToDateTime", &[s("0")]);
        check("TimestampToDateTime", &[n(1.5)], s("1970-01-01T00:00:00.0015000Z"));
        check("TimestampToDateTime", &[n(253_402_300_799_999.0)], s("9999-12-31T23:59:59.9990000Z"));
        undefined("TimestampToDateTime", &[n(253_402_300_800_000.0)]);
        undefined("TimestampToDateTime", &[Value::Null]);
        check("DateTimeToTimestamp", &[s("1969-12-31T23:59:59.9995")], n(0.0));
        check("DateTimeToTimestamp", &[s("1969-12-31T23:59:59.999")], n(-1.0));
        undefined("DateTimeToTimestamp", &[s("2020-07-09T")]);
        undefined("DateTimeToTicks", &[Value::Undefined]);
        undefined("DateTimeToTicks", &[s("2020-07-09T10:00:00+02:00")]);
    }

    #[test]
    fn conformance_datetimeformat() {
        let t = s("2024-10-10 14:40:20");
        check("DateTimeFormat", &[t.clone(), s("yyyyMMdd")], s("20241010"));
        check("DateTimeFormat", &[t.clone(), s("yyyy-MM-dd [HH:mm:ss]")], s("2024-10-10 [14:40:20]"));
        check(
            "DateTimeFormat",
            &[t.clone(), s("To\\da\\y i\\s: yyyy-MM-ddTHH:mm:ss.fff")],
            s("Today is: 2024-10-10T14:40:20.000"),
        );
        check(
            "DateTimeFormat",
            &[t, s("To\\da\\y i\\s: yyyy-MM-ddTHH:mm:ss.FFF")],
            s("Today is: 2024-10-10T14:40:20."),
        );
    }

    #[test]
    fn datetimeformat_specifiers() {
        let t = s("2024-03-05T07:08:09.1234500Z");
        check("DateTimeFormat", &[t.clone(), s("y yy yyy yyyyy")], s("24 24 2024 02024"));
        check("DateTimeFormat", &[t.clone(), s("M MM MMM MMMM")], s("3 03 Mar March"));
        check("DateTimeFormat", &[t.clone(), s("d dd ddd dddd")], s("5 05 Tue Tuesday"));
        check("DateTimeFormat", &[t.clone(), s("h hh H HH t tt")], s("7 07 7 07 A AM"));
        check("DateTimeFormat", &[t.clone(), s("m mm s ss")], s("8 08 9 09"));
        check("DateTimeFormat", &[t.clone(), s("f ff fffffff F FFFFFFF")], s("1 12 1234500 1 12345"));
        check("DateTimeFormat", &[t.clone(), s("'yyyy' \"MM\" %d K")], s("yyyy MM 5 Z"));
        check("DateTimeFormat", &[s("2024-03-05T19:00:00"), s("hh:mm tt")], s("07:00 PM"));
        check("DateTimeFormat", &[s("2024-03-05T00:00:00"), s("h tt")], s("12 AM"));
        undefined("DateTimeFormat", &[t.clone(), s("ffffffff")]);
        undefined("DateTimeFormat", &[t.clone(), s("yyyy\\")]);
        undefined("DateTimeFormat", &[t.clone(), s("'open")]);
        undefined("DateTimeFormat", &[t, n(1.0)]);
        undefined("DateTimeFormat", &[s("2024-03-05T"), s("yyyy")]);
    }

    #[test]
    fn current_time_functions() {
        let before = now_ticks();
        for name in ["GetCurrentDateTime", "GetCurrentDateTimeStatic", "NOW"] {
            let v = call(name, &[]);
            let t = parse_date_time(v.as_str().expect("a string")).expect("a valid date");
            assert!(t >= before && t - before < 60 * TICKS_PER_SECOND, "{name}");
            assert_eq!(v.as_str().map(str::len), Some(28));
        }
        for name in ["GetCurrentTicks", "GetCurrentTicksStatic"] {
            let t = call(name, &[]).as_f64().expect("a number");
            assert!(t >= before as f64 - 1e3 && t < (before + 60 * TICKS_PER_SECOND) as f64, "{name}");
        }
        for name in ["GetCurrentTimestamp", "GetCurrentTimestampStatic"] {
            let t = call(name, &[]).as_f64().expect("a number");
            assert!(t >= (before / TICKS_PER_MS) as f64 && t.fract() == 0.0, "{name}");
        }
        let year = |v: Value| part_of(Part::Year, parse_date_time(v.as_str().expect("a string")).expect("date"));
        let this_year = part_of(Part::Year, before);
        assert_eq!(year(call("NOW", &[s("yyyy"), n(1.0)])), this_year + 1.0);
        assert_eq!(year(call("AGO", &[s("yyyy"), n(1.0)])), this_year - 1.0);
        assert_eq!(year(call("AGO", &[s("yyyy"), n(-2.0)])), this_year + 2.0);
        undefined("NOW", &[s("yyyy")]);
        undefined("NOW", &[s("week"), n(1.0)]);
        undefined("AGO", &[s("yyyy"), n(0.5)]);
    }
}
