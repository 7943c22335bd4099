//! The embedded demo database: generated IoT telemetry (the shape of
//! `benches/data/gen_telemetry.py`) and a few families in the Cosmos DB documentation's style.
//!
//! The documents are written straight as NDJSON text and loaded with `ContainerClient::import`, which
//! parses and inserts on two threads: 100,000 readings load in a fraction of a second in release.

use cosmoql::{ContainerClient, ContainerProperties, ContainerSettings, DatabaseClient, ImportOptions};
use std::fmt::Write as _;
use std::io::Cursor;

/// Readings in the demo's `telemetry` container.
pub const TELEMETRY_ITEMS: usize = 100_000;
/// Devices in the demo (`dev-00000` .. `dev-01999`).
pub const DEVICES: usize = 2_000;
/// Zipf exponent of device popularity: `dev-00000` is the hottest, so `.stats` has skew to show.
pub const SKEW: f64 = 0.8;

const METRICS: [(&str, &str); 6] = [
    ("Temperature", "celsius"),
    ("Humidity", "percent"),
    ("Pressure", "hPa"),
    ("Voltage", "V"),
    ("Speed", "km/h"),
    ("Vibration", "mm/s"),
];
const TAGS: [&str; 16] = [
    "critical",
    "indoor",
    "outdoor",
    "calibrated",
    "fw-1.2",
    "fw-2.0",
    "battery",
    "solar",
    "north",
    "south",
    "east",
    "west",
    "test",
    "prod",
    "edge",
    "gateway",
];
const CITIES: [(&str, &str); 48] = [
    ("Seattle", "981"),
    ("Redmond", "980"),
    ("Portland", "972"),
    ("Boise", "837"),
    ("San Francisco", "941"),
    ("Oakland", "946"),
    ("San Jose", "951"),
    ("Los Angeles", "900"),
    ("San Diego", "921"),
    ("Phoenix", "850"),
    ("Tucson", "857"),
    ("Las Vegas", "891"),
    ("Salt Lake City", "841"),
    ("Denver", "802"),
    ("Albuquerque", "871"),
    ("Austin", "787"),
    ("Dallas", "752"),
    ("Houston", "770"),
    ("San Antonio", "782"),
    ("Oklahoma City", "731"),
    ("Kansas City", "641"),
    ("Omaha", "681"),
    ("Minneapolis", "554"),
    ("Chicago", "606"),
    ("Milwaukee", "532"),
    ("Detroit", "482"),
    ("Cleveland", "441"),
    ("Columbus", "432"),
    ("Indianapolis", "462"),
    ("St. Louis", "631"),
    ("Nashville", "372"),
    ("Memphis", "381"),
    ("Atlanta", "303"),
    ("Miami", "331"),
    ("Orlando", "328"),
    ("Tampa", "336"),
    ("Charlotte", "282"),
    ("Raleigh", "276"),
    ("Richmond", "232"),
    ("Washington", "200"),
    ("Baltimore", "212"),
    ("Philadelphia", "191"),
    ("New York", "100"),
    ("Boston", "021"),
    ("Providence", "029"),
    ("Hartford", "061"),
    ("Pittsburgh", "152"),
    ("Buffalo", "142"),
];
const VIN_ALPHABET: &[u8] = b"ABCDEFGHJKLMNPRSTUVWXYZ0123456789";
/// 2024-06-01 as days since 1970-01-01.
const START_EPOCH_DAYS: i64 = 19_875;
const SPAN_MS: u64 = 30 * 86_400 * 1000;

/// A small, fast, deterministic generator (SplitMix64).
#[derive(Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn random(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.random() * n as f64) as usize
    }
}

/// Days since 1970-01-01 -> (y, m, d), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `n` telemetry readings as NDJSON, the shape of `gen_telemetry.py` (a different random stream:
/// the same distributions, not the same bytes). `skew` 0 spreads readings evenly over the
/// devices; s > 0 makes device k's share proportional to 1/(k+1)^s.
pub fn telemetry_ndjson(n: usize, devices: usize, skew: f64, seed: u64) -> String {
    let devices = devices.max(1);
    let mut drng = Rng::new(seed.wrapping_mul(1_000_003).wrapping_add(7));
    let locations: Vec<String> = (0..devices)
        .map(|_| {
            let (city, zip3) = CITIES[drng.below(CITIES.len())];
            format!("{{\"city\":\"{city}\",\"zip\":\"{zip3}{:02}\"}}", drng.below(100))
        })
        .collect();
    let cumulative: Option<Vec<f64>> = (skew > 0.0).then(|| {
        let mut total = 0.0;
        (0..devices)
            .map(|k| {
                total += 1.0 / ((k + 1) as f64).powf(skew);
                total
            })
            .collect()
    });
    let dates: Vec<String> = (0..31)
        .map(|day| {
            let (y, m, d) = civil_from_days(START_EPOCH_DAYS + day);
            format!("{y:04}-{m:02}-{d:02}")
        })
        .collect();
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(n * 280);
    for i in 0..n {
        let dev = match &cumulative {
            None => rng.below(devices),
            Some(cum) => {
                let target = rng.random() * cum[cum.len() - 1];
                cum.partition_point(|&c| c <= target).min(devices - 1)
            }
        };
        let r = rng.next_u64();
        let r2 = rng.next_u64();
        let ms = (rng.random() * SPAN_MS as f64) as u64;
        let (day, rem) = (ms / 86_400_000, ms % 86_400_000);
        let date = &dates[day as usize];
        let (hh, rem) = (rem / 3_600_000, rem % 3_600_000);
        let (mi, rem) = (rem / 60_000, rem % 60_000);
        let (ss, mss) = (rem / 1000, rem % 1000);
        let (metric, unit) = METRICS[rng.below(6)];
        let value = (rng.random() * 100.0 * 1e6).round() / 1e6;
        // uuid4 layout; the last 12 hex digits carry the row number, so ids are unique.
        let _ = write!(
            out,
            "{{\"id\":\"{:08x}-{:04x}-4{:03x}-{:x}{:03x}-{:012x}\",\"deviceId\":\"dev-{dev:05}\",\
             \"readingTime\":\"{date}T{hh:02}:{mi:02}:{ss:02}.{mss:03}Z\",\"date\":\"{date}\",\
             \"metricType\":\"{metric}\",\"unit\":\"{unit}\",\"metricValue\":{}",
            r >> 32,
            (r >> 16) & 0xffff,
            r & 0xfff,
            8 | (r2 & 3),
            (r2 >> 8) & 0xfff,
            i,
            cosmoql::value::format_number(value),
        );
        if rng.random() < 0.20 {
            out.push_str(",\"vin\":\"");
            for _ in 0..17 {
                out.push(VIN_ALPHABET[rng.below(VIN_ALPHABET.len())] as char);
            }
            out.push('"');
        }
        let k = rng.below(5);
        out.push_str(",\"tags\":[");
        let mut chosen: Vec<usize> = Vec::with_capacity(k);
        while chosen.len() < k {
            let t = rng.below(TAGS.len());
            if !chosen.contains(&t) {
                if !chosen.is_empty() {
                    out.push(',');
                }
                chosen.push(t);
                let _ = write!(out, "\"{}\"", TAGS[t]);
            }
        }
        let _ = writeln!(out, "],\"location\":{}}}", locations[dev]);
    }
    out
}

/// Families in the style of the Cosmos DB documentation: nested objects and arrays of objects.
pub const FAMILIES: &str = r#"[
{"id": "AndersenFamily", "lastName": "Andersen",
 "parents": [{"firstName": "Thomas"}, {"firstName": "Mary Kay"}],
 "children": [{"firstName": "Henriette Thaulow", "gender": "female", "grade": 5, "pets": [{"givenName": "Fluffy"}]}],
 "address": {"state": "WA", "county": "King", "city": "Seattle"},
 "creationDate": 1431620472, "isRegistered": true},
{"id": "WakefieldFamily", "lastName": "Wakefield",
 "parents": [{"familyName": "Wakefield", "givenName": "Robin"}, {"familyName": "Miller", "givenName": "Ben"}],
 "children": [
   {"familyName": "Merriam", "givenName": "Jesse", "gender": "female", "grade": 1,
    "pets": [{"givenName": "Goofy"}, {"givenName": "Shadow"}]},
   {"familyName": "Miller", "givenName": "Lisa", "gender": "female", "grade": 8}],
 "address": {"state": "NY", "county": "Manhattan", "city": "NY"},
 "creationDate": 1431620462, "isRegistered": false},
{"id": "SmithFamily", "lastName": "Smith",
 "parents": [{"firstName": "John"}, {"firstName": "Jane"}],
 "children": [
   {"firstName": "Emma", "gender": "female", "grade": 3, "pets": [{"givenName": "Rex", "type": "dog"}]},
   {"firstName": "Liam", "gender": "male", "grade": 6, "pets": []},
   {"firstName": "Noah", "gender": "male", "grade": 10}],
 "address": {"state": "WA", "county": "King", "city": "Redmond"},
 "creationDate": 1431620500, "isRegistered": true, "tags": ["newsletter", "premium"]},
{"id": "GarciaFamily", "lastName": "Garcia",
 "parents": [{"firstName": "Lucia"}],
 "children": [{"firstName": "Mateo", "gender": "male", "grade": 2,
   "pets": [{"givenName": "Luna", "type": "cat"}, {"givenName": "Sol", "type": "cat"}, {"givenName": "Pico", "type": "bird"}]}],
 "address": {"state": "TX", "county": "Travis", "city": "Austin"},
 "creationDate": 1431620600, "isRegistered": true},
{"id": "NguyenFamily", "lastName": "Nguyen",
 "parents": [{"firstName": "Minh"}, {"firstName": "Anh"}],
 "children": [],
 "address": {"state": "CA", "county": "Santa Clara", "city": "San Jose", "zip": null},
 "creationDate": 1431620700, "isRegistered": false, "tags": []},
{"id": "SmithFamily2", "lastName": "Smith",
 "parents": [{"firstName": "Robert"}],
 "children": [{"firstName": "Olivia", "gender": "female", "grade": 12, "pets": [{"givenName": "Max", "type": "dog"}]}],
 "address": {"state": "OR", "county": "Multnomah", "city": "Portland"},
 "creationDate": 1431620800, "isRegistered": true}
]"#;

/// Creates `telemetry` (key `/deviceId`) and `families` (key `/lastName`) in `db`.
pub fn load(db: &DatabaseClient) -> Result<Vec<ContainerClient>, String> {
    let text = telemetry_ndjson(TELEMETRY_ITEMS, DEVICES, SKEW, 42);
    let telemetry = db
        .create_container(
            ContainerProperties::new("telemetry", "/deviceId")
                .map_err(|e| e.to_string())?
                .settings(ContainerSettings::for_expected_items(TELEMETRY_ITEMS)),
        )
        .map_err(|e| e.to_string())?;
    telemetry
        .import(Cursor::new(text.as_bytes()), ImportOptions { fail_fast: true, ..ImportOptions::default() })
        .map_err(|e| format!("telemetry: {e}"))?;
    let families = db
        .create_container(ContainerProperties::new("families", "/lastName").map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    families
        .import(Cursor::new(FAMILIES.as_bytes()), ImportOptions { fail_fast: true, ..ImportOptions::default() })
        .map_err(|e| format!("families: {e}"))?;
    Ok(vec![telemetry, families])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn telemetry_lines_are_json_objects_with_unique_ids() {
        let text = telemetry_ndjson(2000, 50, 0.8, 1);
        let mut ids = std::collections::HashSet::new();
        for line in text.lines() {
            let v = cosmoql::value::parse_json(line).expect("valid JSON");
            assert!(v.get("deviceId").as_str().is_some_and(|d| d.starts_with("dev-000")), "{line}");
            assert!(v.get("tags").as_array().is_some());
            assert!(ids.insert(v.get("id").as_str().unwrap_or_default().to_string()));
        }
        assert_eq!(ids.len(), 2000);
    }

    #[test]
    fn dates_are_in_june_2024() {
        assert_eq!(civil_from_days(START_EPOCH_DAYS), (2024, 6, 1));
        assert_eq!(civil_from_days(START_EPOCH_DAYS + 29), (2024, 6, 30));
    }
}
