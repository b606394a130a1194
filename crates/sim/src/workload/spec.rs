//! The compact workload syntax of `--workload`, e.g. `randwrite:bs=4k,qd=32,count=1e6`, and
//! request-size specifications (`4k`, `4k:70,64k:30`, `4k-128k`).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Arrival, FsTrace, Pacing, Pattern, PeriodicTask, TaskOp, TaskPattern, WorkloadConfig};
use crate::config::settings::shown_value;
use crate::config::{ConfigError, MAX_CONFIG_INTEGER, MAX_SIMULATED_NS};

/// Help text for the workload syntax (shown by `flashlab run --help`).
pub const SPEC_HELP: &str = "\
WORKLOAD SYNTAX:  --workload KIND[:KEY=VALUE,...]
  KIND      randwrite | randread | randrw | seqwrite | seqread | seqrw | zipf | hotcold | custom
            | desktop | web | fsbench | periodic
            (rand* = uniform offsets; rw kinds default to 50% reads; custom keeps the defaults:
            uniform, 70% reads; desktop = a PC installing programs, browsing, editing documents:
            small random and large sequential I/O, 1.3x more bytes written than read, over 60% of
            the range with holes; it takes only qd, rate, pacing, arrival, count, duration, range,
            deadline; web = a web browser's disk cache on a FAT32 volume: small files written
            whole, evicted and read back, hot FAT, directory and index writes, plus cache, used,
            hit; fsbench = Andrew, Postmark and IOzone on a FAT32 volume (nftl-lookup-pagecache
            section 4), ends with the benchmarks, plus phases, util; periodic = real-time tasks,
            open loop, each job's deadline the end of its period unless given; it takes only
            tasks, count (jobs of all tasks), duration (release times), range)
  tasks     periodic: TASK+TASK+...  TASK = [Nx]OP SIZE@PERIOD[/offset=T][/deadline=T][/seq]
            N identical tasks (ids in order from 0); OP r | w; SIZE 12p (device pages) or bytes
            (96k); PERIOD, T: 15ms, 500us; /seq: sequential addresses (default uniform random,
            page-aligned). part-ftl.txt Table III: tasks=4xw12p@60ms+4xr3p@15ms
  cache     web: the cache's quota, share of the volume (0.0001..0.9)   default 0.03
  used      web: share of the volume other files hold (0..0.95)       default 0.5
  hit       web: share of objects found in the disk cache (0..1)      default 0.4
  phases    fsbench: combo (Andrew, Postmark, long Postmark, IOzone) | atopm (Andrew,
            Postmark)                                               default combo
  util      fsbench: share of the volume files fill (0..1; 0 = the paper's: combo 0.94, atopm
            0.23)                                                   default 0
  bs        request size: 4k | 4k:70,64k:30 (weighted mix; use / inside the spec: 4k:70/64k:30)
            | 4k-128k (uniform range, multiples of align)          sizes: 512, 4k, 1m, 2MiB ...
  qd        requests kept outstanding (closed loop)                default 32
  rate      open loop at this many requests/s (1e5, 50k, 2M)       default 0 = closed loop
  pacing    auto | closed | open | bounded-open                    default auto (open if rate)
            (bounded-open: arrivals at rate, at most qd in the device, the rest wait host-side;
            their wait counts in the response time)
  arrival   open-loop inter-arrival times: poisson | fixed | bursty default poisson
            (bursty: bursts and idle gaps at the same mean rate)   (desktop: bursty)
  count     requests to issue (1e6, 250k); 0 = unlimited           default 1e6
  duration  simulated time limit: 500ms, 2s, 100us, 1min           default none
  read      fraction of reads among reads and writes (0..1)
  trim      fraction of requests that are trims (0..1)             default 0
  flush     a flush after every N writes                           default 0 = never
  pattern   sequential | uniform | zipf | hotcold
  theta     zipf exponent                                          default 0.99
  hot       hot/cold split SPACE:ACCESS, e.g. 0.2:0.8 (20% of the space gets 80% of requests)
  align     offset alignment in bytes (0 = the request size)      default 4k
  range     fraction of the logical space addressed               default 1.0
  deadline  relative deadline of each request (EDF queues, the report's misses): 5ms  default none
Examples: randwrite:bs=4k,qd=32,count=1e6   seqread:bs=128k,qd=8,duration=2s
          zipf:theta=1.2,read=0.9,bs=4k,qd=64   randrw:read=0.7,rate=20k,count=1e5
          desktop:qd=8,count=1e5   desktop:rate=2k,count=1e5
          desktop:rate=20,qd=8,pacing=bounded-open,count=1e4
          web:qd=1,count=2e4   web:cache=0.05,hit=0.3   fsbench:phases=atopm,qd=1
          periodic:tasks=4xw12p@60ms+4xr3p@15ms,duration=10s
          periodic:tasks=w12p@60ms/offset=5ms/deadline=30ms+2xr16k@10ms/seq,count=1e4";

/// Request sizes: one size, a weighted mix, or a uniform range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SizeSpec {
    Fixed(u64),
    /// `(size, weight)` pairs.
    Mix(Vec<(u64, u32)>),
    /// Uniform over multiples of the alignment in `[min, max]`.
    Range(u64, u64),
}

impl SizeSpec {
    pub fn fixed(bytes: u64) -> Self {
        SizeSpec::Fixed(bytes)
    }

    /// Largest size the spec can produce.
    pub fn max_bytes(&self) -> u64 {
        match self {
            SizeSpec::Fixed(b) => *b,
            SizeSpec::Mix(m) => m.iter().map(|(b, _)| *b).max().unwrap_or(0),
            SizeSpec::Range(_, hi) => *hi,
        }
    }

    /// Smallest size the spec can produce.
    pub fn min_bytes(&self) -> u64 {
        match self {
            SizeSpec::Fixed(b) => *b,
            SizeSpec::Mix(m) => m.iter().map(|(b, _)| *b).min().unwrap_or(0),
            SizeSpec::Range(lo, _) => *lo,
        }
    }

    pub(crate) fn validate(&self, field: &str) -> Result<(), ConfigError> {
        let bad = |reason: &str| ConfigError::invalid(field, self, reason, SIZE_ALLOWED);
        let sizes: Vec<u64> = match self {
            SizeSpec::Fixed(b) => vec![*b],
            SizeSpec::Mix(m) => {
                if m.is_empty() || m.iter().all(|(_, w)| *w == 0) {
                    return Err(bad("a mix needs at least one positive weight"));
                }
                m.iter().map(|(b, _)| *b).collect()
            }
            SizeSpec::Range(lo, hi) => {
                if lo > hi {
                    return Err(bad("range minimum above maximum"));
                }
                vec![*lo, *hi]
            }
        };
        for s in sizes {
            if s == 0 {
                return Err(bad("zero-sized requests"));
            }
            if s % 512 != 0 || s > 1 << 30 {
                return Err(bad("size out of range"));
            }
        }
        Ok(())
    }
}

impl fmt::Display for SizeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeSpec::Fixed(b) => write!(f, "{}", show_size(*b)),
            SizeSpec::Mix(m) => {
                let parts: Vec<String> = m
                    .iter()
                    .map(|(b, w)| format!("{}:{w}", show_size(*b)))
                    .collect();
                write!(f, "{}", parts.join(","))
            }
            SizeSpec::Range(lo, hi) => write!(f, "{}-{}", show_size(*lo), show_size(*hi)),
        }
    }
}

/// Allowed forms of a request size, for error messages.
const SIZE_ALLOWED: &str =
    "512 ..= 1 GiB in multiples of 512, as 4k, a mix 4k:70,64k:30 or a range 4k-128k";

impl std::str::FromStr for SizeSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_size_spec(s).map_err(|e| format!("{e} (allowed: {SIZE_ALLOWED})"))
    }
}

fn parse_size_spec(s: &str) -> Result<SizeSpec, String> {
    let s = s.trim();
    if s.starts_with('-') {
        return Err(format!("`{s}`: a size cannot be negative"));
    }
    if let Some((lo, hi)) = s.split_once('-') {
        return Ok(SizeSpec::Range(parse_size(lo)?, parse_size(hi)?));
    }
    if s.contains(':') {
        let mut mix = Vec::new();
        for part in s.split([',', '/']) {
            let (size, weight) = part
                .split_once(':')
                .ok_or_else(|| format!("`{part}`: expected SIZE:WEIGHT"))?;
            let weight: u32 = weight
                .trim()
                .parse()
                .map_err(|_| format!("`{weight}`: weight must be a whole number"))?;
            mix.push((parse_size(size)?, weight));
        }
        return Ok(SizeSpec::Mix(mix));
    }
    Ok(SizeSpec::Fixed(parse_size(s)?))
}

impl Serialize for SizeSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for SizeSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SizeSpecVisitor)
    }
}

/// Accepts a byte count or a size text; negative numbers are named as such.
struct SizeSpecVisitor;

impl serde::de::Visitor<'_> for SizeSpecVisitor {
    type Value = SizeSpec;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a request size ({SIZE_ALLOWED})")
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<SizeSpec, E> {
        Ok(SizeSpec::Fixed(v))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<SizeSpec, E> {
        u64::try_from(v).map(SizeSpec::Fixed).map_err(|_| {
            E::custom(format!(
                "`{v}`: a size cannot be negative (allowed: {SIZE_ALLOWED})"
            ))
        })
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<SizeSpec, E> {
        v.parse().map_err(E::custom)
    }
}

/// Parses `4096`, `4k`, `4KiB`, `1m`, `2MiB`, `1g` (binary multiples) into bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let shown = shown_value(t);
    if t.starts_with('-') {
        return Err(format!("`{shown}`: a size cannot be negative"));
    }
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        other => {
            return Err(format!(
                "`{shown}`: unknown size unit `{}` (use k, m, g, t)",
                shown_value(other)
            ))
        }
    };
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{shown}`: expected a size such as 4k or 65536"))?;
    let bytes = value * mult as f64;
    if !(bytes.is_finite() && bytes >= 0.0 && bytes.fract() == 0.0 && bytes <= u64::MAX as f64) {
        return Err(format!("`{shown}`: not a whole number of bytes below 2^64"));
    }
    Ok(bytes as u64)
}

pub(super) fn show_size(b: u64) -> String {
    match b {
        0 => "0".into(),
        b if b % (1 << 40) == 0 => format!("{}t", b >> 40),
        b if b % (1 << 30) == 0 => format!("{}g", b >> 30),
        b if b % (1 << 20) == 0 => format!("{}m", b >> 20),
        b if b % (1 << 10) == 0 => format!("{}k", b >> 10),
        b => b.to_string(),
    }
}

/// Parses counts and rates: `1000`, `1e6`, `250k`, `2M`, `1G` (decimal multiples).
pub fn parse_number(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let shown = shown_value(t);
    let (num, mult) = match t.chars().last() {
        Some('k') | Some('K') => (&t[..t.len() - 1], 1e3),
        Some('M') => (&t[..t.len() - 1], 1e6),
        Some('G') => (&t[..t.len() - 1], 1e9),
        _ => (t, 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{shown}`: expected a number such as 1000, 1e6 or 250k"))?;
    let v = v * mult;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("`{shown}`: must be a non-negative number"));
    }
    Ok(v)
}

/// Parses a whole count (`1000`, `1e6`, `250k`); at most 2^63 - 1 (what a configuration
/// holds).
pub fn parse_count(text: &str) -> Result<u64, String> {
    let v = parse_number(text)?;
    if v.fract() != 0.0 {
        return Err(format!(
            "`{}`: must be a whole number",
            shown_value(text.trim())
        ));
    }
    if v > MAX_CONFIG_INTEGER as f64 {
        return Err(format!(
            "`{}`: too large (allowed: 0 ..= {MAX_CONFIG_INTEGER})",
            shown_value(text.trim())
        ));
    }
    Ok(v as u64)
}

/// Parses `500ms`, `2s`, `100us`, `250ns`, `1min` into nanoseconds.
pub fn parse_duration_ns(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let shown = shown_value(t);
    if t.starts_with('-') {
        return Err(format!("`{shown}`: a duration cannot be negative"));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "min" => 60e9,
        "" => return Err(format!("`{shown}`: add a unit (ns, us, ms, s, min)")),
        other => {
            return Err(format!(
                "`{shown}`: unknown time unit `{}` (ns, us, ms, s, min)",
                shown_value(other)
            ))
        }
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{shown}`: expected a duration such as 500ms or 2s"))?;
    let ns = v * scale;
    if !ns.is_finite() || ns < 0.0 {
        return Err(format!("`{shown}`: must be a non-negative duration"));
    }
    if ns > MAX_SIMULATED_NS as f64 {
        return Err(format!(
            "`{shown}`: longer than the simulated clock holds (allowed: up to {MAX_SIMULATED_NS} ns, about 146 years)"
        ));
    }
    Ok(ns.round() as u64)
}

fn parse_fraction(text: &str) -> Result<f64, String> {
    text.trim().parse::<f64>().map_err(|_| {
        format!(
            "`{}`: expected a number such as 0.7",
            shown_value(text.trim())
        )
    })
}

/// The keys of the compact syntax (aliases first) and the `[workload]` field each sets
/// (`hot` sets hot_space and hot_access).
const KEYS: &[(&[&str], &str)] = &[
    (&["bs", "block_size"], "block_size"),
    (&["qd", "queue_depth"], "queue_depth"),
    (&["rate", "rate_iops"], "rate_iops"),
    (&["pacing"], "pacing"),
    (&["arrival"], "arrival"),
    (&["count"], "count"),
    (&["duration", "duration_ns"], "duration_ns"),
    (&["read", "read_fraction"], "read_fraction"),
    (&["trim", "trim_fraction"], "trim_fraction"),
    (&["flush", "flush_every"], "flush_every"),
    (&["pattern"], "pattern"),
    (&["theta", "zipf_theta"], "zipf_theta"),
    (&["hot"], "hot_space"),
    (&["align", "align_bytes"], "align_bytes"),
    (&["range", "range_fraction"], "range_fraction"),
    (&["deadline", "deadline_ns"], "deadline_ns"),
    (&["cache", "web_cache_fraction"], "web_cache_fraction"),
    (&["used", "web_used_fraction"], "web_used_fraction"),
    (&["hit", "web_hit_fraction"], "web_hit_fraction"),
    (&["phases", "fsbench_phases"], "fsbench_phases"),
    (&["util", "fsbench_utilisation"], "fsbench_utilisation"),
    (&["tasks"], "tasks"),
];

/// The field a key of the compact syntax sets.
fn field_of(key: &str) -> Option<&'static str> {
    KEYS.iter()
        .find(|(keys, _)| keys.contains(&key))
        .map(|(_, field)| *field)
}

/// The short names of every key, for messages.
fn key_names() -> String {
    KEYS.iter()
        .map(|(keys, _)| keys[0])
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses the compact workload syntax (see [`SPEC_HELP`]) into a checked configuration.
pub fn parse_spec(spec: &str) -> Result<WorkloadConfig, ConfigError> {
    let spec = spec.trim();
    let syntax = |message: String| ConfigError::Syntax {
        location: format!("--workload {}", shown_value(spec)),
        message,
    };
    if spec.is_empty() {
        return Err(syntax(
            "empty workload; expected KIND[:KEY=VALUE,...], e.g. randwrite:bs=4k,qd=32".into(),
        ));
    }
    let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
    let mut w = base_for_kind(kind.trim())?;
    // (field, value as given), to show in range errors.
    let mut given: Vec<(&'static str, String)> = Vec::new();
    for item in split_items(rest) {
        let (key, value) = item.split_once('=').ok_or_else(|| {
            syntax(format!(
                "`{}`: expected KEY=VALUE, e.g. bs=4k",
                shown_value(item.trim())
            ))
        })?;
        let (key, value) = (key.trim(), value.trim());
        let field = field_of(key).ok_or_else(|| ConfigError::Unknown {
            kind: "workload key",
            name: shown_value(key),
            known: key_names(),
        })?;
        if given.iter().any(|(f, _)| *f == field) {
            return Err(syntax(format!(
                "`{key}`: workload.{field} is already given"
            )));
        }
        if w.pattern.is_model() {
            refuse_for_model(w.pattern, key)?;
        }
        if w.pattern == Pattern::Periodic {
            refuse_for_periodic(key, field)?;
        }
        apply_key(&mut w, key, value)?;
        match (field, value.split_once(':')) {
            ("hot_space", Some((space, access))) => {
                given.push(("hot_space", space.to_string()));
                given.push(("hot_access", access.to_string()));
            }
            _ => given.push((field, value.to_string())),
        }
    }
    refuse_unused_keys(&w, kind.trim(), &given)?;
    w.validate().map_err(|e| as_given(e, &given))?;
    Ok(w)
}

/// Refuses keys the workload would silently ignore: a queue depth with a rate (open loop)
/// unless the pacing is bounded-open,
/// arrivals without a rate, a Zipf exponent without the Zipf pattern, a hot/cold split that
/// replaces the kind's pattern.
fn refuse_unused_keys(
    w: &WorkloadConfig,
    kind: &str,
    given: &[(&str, String)],
) -> Result<(), ConfigError> {
    let has = |field: &str| given.iter().any(|(f, _)| *f == field);
    let unused = |field: &str, reason: &str| ConfigError::Field {
        field: format!("workload.{field}"),
        message: reason.to_string(),
    };
    // A depth with a rate is a bounded open loop only when the pacing says so.
    if has("queue_depth") && has("rate_iops") && w.pacing != Pacing::BoundedOpen {
        return Err(unused(
            "queue_depth",
            "qd keeps requests outstanding in a closed loop, rate makes it an open loop: give qd \
             or rate, not both (or pacing=bounded-open: arrivals at the rate, at most qd in the \
             device)",
        ));
    }
    if has("arrival") && w.rate_iops == 0.0 {
        return Err(unused(
            "arrival",
            "arrival times apply to an open loop: add rate=REQUESTS_PER_S (or leave arrival out)",
        ));
    }
    if has("zipf_theta") && w.pattern != Pattern::Zipf {
        return Err(unused(
            "zipf_theta",
            "theta applies to the zipf pattern: use the zipf kind (zipf:theta=...) or pattern=zipf",
        ));
    }
    let kind_pattern = !matches!(
        kind,
        "randwrite" | "randread" | "randrw" | "custom" | "hotcold"
    );
    if has("hot_space") && (w.pattern != Pattern::Hotcold || kind_pattern) {
        return Err(unused(
            "hot_space",
            "hot makes the pattern hotcold, which replaces this kind's or pattern's own: use hotcold:hot=... or a rand* kind",
        ));
    }
    Ok(())
}

/// Shows a range error's value as the user wrote it (`1e12`, not the clamped number).
fn as_given(err: ConfigError, given: &[(&str, String)]) -> ConfigError {
    let lookup = |field: &str, value: String| {
        field
            .strip_prefix("workload.")
            .and_then(|f| given.iter().find(|(g, _)| *g == f))
            .map_or(value, |(_, text)| shown_value(text))
    };
    match err {
        ConfigError::OutOfRange {
            field,
            value,
            allowed,
        } => ConfigError::OutOfRange {
            value: lookup(&field, value),
            field,
            allowed,
        },
        ConfigError::Invalid {
            field,
            value,
            reason,
            allowed,
        } => ConfigError::Invalid {
            value: lookup(&field, value),
            field,
            reason,
            allowed,
        },
        other => other,
    }
}

/// Keys of the compact syntax that the desktop kind does not take, with their fields.
const NOT_FOR_DESKTOP: &[(&[&str], &str)] = &[
    (&["bs", "block_size"], "block_size"),
    (&["read", "read_fraction"], "read_fraction"),
    (&["trim", "trim_fraction"], "trim_fraction"),
    (&["flush", "flush_every"], "flush_every"),
    (&["pattern"], "pattern"),
    (&["theta", "zipf_theta"], "zipf_theta"),
    (&["hot"], "hot_space"),
    (&["align", "align_bytes"], "align_bytes"),
];

/// Refuses a key a file-system model kind (desktop, web, fsbench) does not take, naming it.
fn refuse_for_model(pattern: Pattern, key: &str) -> Result<(), ConfigError> {
    let kind = pattern.name();
    let own = match pattern {
        Pattern::Web => ", cache, used, hit",
        Pattern::Fsbench => ", phases, util",
        _ => "",
    };
    match NOT_FOR_DESKTOP.iter().find(|(keys, _)| keys.contains(&key)) {
        Some((_, field)) => Err(ConfigError::Field {
            field: format!("workload.{field}"),
            message: format!(
                "key `{key}` does not apply to the {kind} workload, whose sizes, offsets and read/write mix come from its model (it takes qd, rate, pacing, arrival, count, duration, range, deadline{own})"
            ),
        }),
        None => Ok(()),
    }
}

/// Fields the periodic kind takes from the compact syntax.
const PERIODIC_FIELDS: &[&str] = &["tasks", "count", "duration_ns", "range_fraction"];

/// Refuses a key the periodic kind does not take, naming it.
fn refuse_for_periodic(key: &str, field: &str) -> Result<(), ConfigError> {
    if PERIODIC_FIELDS.contains(&field) {
        return Ok(());
    }
    Err(ConfigError::Field {
        field: format!("workload.{field}"),
        message: format!(
            "key `{key}` does not apply to the periodic workload, whose tasks give sizes, operations, release times and deadlines (it takes tasks, count, duration, range)"
        ),
    })
}

/// Parses the `tasks` value: `TASK+TASK+...` (see [`SPEC_HELP`]).
pub fn parse_tasks(text: &str) -> Result<Vec<PeriodicTask>, String> {
    text.split('+').map(parse_task).collect()
}

/// Parses one `[Nx]OP SIZE@PERIOD[/offset=T][/deadline=T][/seq]`.
fn parse_task(text: &str) -> Result<PeriodicTask, String> {
    let t = text.trim();
    let shown = shown_value(t);
    let form = "[Nx]OP SIZE@PERIOD[/offset=T][/deadline=T][/seq], e.g. 4xw12p@60ms";
    if t.is_empty() {
        return Err(format!(
            "an empty task (two + in a row, or + at an end); expected {form}"
        ));
    }
    let mut parts = t.split('/');
    let head = parts.next().unwrap_or("");
    let (what, period) = head
        .split_once('@')
        .ok_or_else(|| format!("`{shown}`: no @PERIOD; expected {form}"))?;
    let mut task = PeriodicTask {
        period_ns: parse_duration_ns(period).map_err(|e| format!("`{shown}`: period {e}"))?,
        ..PeriodicTask::default()
    };
    let digits = what
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(what.len());
    let rest = match what[digits..].strip_prefix(['x', 'X']) {
        Some(rest) if digits > 0 => {
            task.count = what[..digits]
                .parse()
                .map_err(|_| format!("`{shown}`: task count `{}` is too large", &what[..digits]))?;
            rest
        }
        _ => what,
    };
    let letters = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    task.op = match rest[..letters].to_ascii_lowercase().as_str() {
        "r" | "read" => TaskOp::Read,
        "w" | "write" => TaskOp::Write,
        "" => {
            return Err(format!(
                "`{shown}`: no operation before the size; expected {form}"
            ))
        }
        other => {
            return Err(format!(
                "`{shown}`: unknown operation `{}` (r or w)",
                shown_value(other)
            ))
        }
    };
    let size = rest[letters..].trim();
    match size.strip_suffix(['p', 'P']) {
        Some(pages) => {
            task.pages = parse_count(pages).map_err(|e| format!("`{shown}`: pages {e}"))?
        }
        None if size.is_empty() => {
            return Err(format!(
                "`{shown}`: no request size (12p for pages, or bytes such as 96k)"
            ))
        }
        None => task.bytes = parse_size(size).map_err(|e| format!("`{shown}`: size {e}"))?,
    }
    let mut given: Vec<&str> = Vec::new();
    for option in parts {
        let option = option.trim();
        // An option given twice (or seq with rand) is ambiguous: the last would win silently.
        let name = task_option_name(option);
        if let Some(first) = given.iter().find(|g| task_option_name(g) == name) {
            return Err(format!(
                "`{shown}`: `/{}` and `/{}` both set the task's {}: give it once",
                shown_value(first),
                shown_value(option),
                if name == "pattern" {
                    "address pattern"
                } else {
                    name
                }
            ));
        }
        given.push(option);
        apply_task_option(&mut task, option).map_err(|e| format!("`{shown}`: {e}"))?;
    }
    Ok(task)
}

/// The setting a task's `/OPTION` sets: the name before `=`, or `pattern` for `seq` and
/// `rand` (and their long names).
fn task_option_name(option: &str) -> &str {
    match option.split_once('=') {
        Some((name, _)) => name,
        None if matches!(option, "seq" | "sequential" | "rand" | "uniform") => "pattern",
        None => option,
    }
}

/// Applies one `/OPTION` of a task.
fn apply_task_option(task: &mut PeriodicTask, option: &str) -> Result<(), String> {
    match option.split_once('=') {
        Some(("offset", t)) => task.offset_ns = parse_duration_ns(t)?,
        Some(("deadline", t)) => task.deadline_ns = parse_duration_ns(t)?,
        None if matches!(option, "seq" | "sequential") => task.pattern = TaskPattern::Sequential,
        None if matches!(option, "rand" | "uniform") => task.pattern = TaskPattern::Uniform,
        _ => {
            return Err(format!(
                "unknown task option `{}` (offset=T, deadline=T, seq, rand)",
                shown_value(option)
            ))
        }
    }
    Ok(())
}

/// A task in the `tasks` syntax (inverse of [`parse_task`]).
fn task_spec(t: &PeriodicTask) -> String {
    let op = match t.op {
        TaskOp::Read => "r",
        TaskOp::Write => "w",
    };
    let size = if t.pages > 0 {
        format!("{}p", t.pages)
    } else {
        show_size(t.bytes)
    };
    let mut s = format!("{}x{op}{size}@{}", t.count, show_duration(t.period_ns));
    if t.offset_ns > 0 {
        s += &format!("/offset={}", show_duration(t.offset_ns));
    }
    if t.deadline_ns > 0 {
        s += &format!("/deadline={}", show_duration(t.deadline_ns));
    }
    if t.pattern == TaskPattern::Sequential {
        s += "/seq";
    }
    s
}

/// Splits `k=v,k=v` at commas that start a new `key=`; a part without `=` continues only a
/// size mix (`bs=4k:70,64k:30` stays whole), anything else stands alone (and is refused as
/// not KEY=VALUE).
fn split_items(rest: &str) -> Vec<String> {
    let mut items: Vec<String> = Vec::new();
    for part in rest.split(',').filter(|p| !p.trim().is_empty()) {
        match items.last_mut() {
            Some(last) if !part.contains('=') && part.contains(':') && is_size_mix(last) => {
                last.push(',');
                last.push_str(part);
            }
            _ => items.push(part.to_string()),
        }
    }
    items
}

/// Whether `item` is `bs=` (or `block_size=`) with a weighted mix.
fn is_size_mix(item: &str) -> bool {
    item.split_once('=').is_some_and(|(key, value)| {
        matches!(key.trim(), "bs" | "block_size") && value.contains(':')
    })
}

fn base_for_kind(kind: &str) -> Result<WorkloadConfig, ConfigError> {
    let mut w = WorkloadConfig::default();
    let (pattern, read) =
        match kind {
            "randwrite" => (Pattern::Uniform, 0.0),
            "randread" => (Pattern::Uniform, 1.0),
            "randrw" => (Pattern::Uniform, 0.5),
            "seqwrite" => (Pattern::Sequential, 0.0),
            "seqread" => (Pattern::Sequential, 1.0),
            "seqrw" => (Pattern::Sequential, 0.5),
            "zipf" => (Pattern::Zipf, w.read_fraction),
            "hotcold" => (Pattern::Hotcold, w.read_fraction),
            "custom" => (w.pattern, w.read_fraction),
            "" => return Err(ConfigError::Syntax {
                location: "--workload".into(),
                message: "no workload kind before `:`; expected KIND[:KEY=VALUE,...] with KIND one of randwrite, randread, randrw, seqwrite, seqread, seqrw, zipf, hotcold, custom (the defaults), desktop, web, fsbench, periodic".into(),
            }),
            "desktop" => {
                w.arrival = Arrival::Bursty;
                (Pattern::Desktop, w.read_fraction)
            }
            "web" => (Pattern::Web, w.read_fraction),
            "fsbench" => (Pattern::Fsbench, w.read_fraction),
            "periodic" => (Pattern::Periodic, w.read_fraction),
            other => return Err(ConfigError::Unknown {
                kind: "workload kind",
                name: shown_value(other),
                known:
                    "randwrite, randread, randrw, seqwrite, seqread, seqrw, zipf, hotcold, custom, desktop, web, fsbench, periodic"
                        .into(),
            }),
        };
    w.pattern = pattern;
    w.read_fraction = read;
    Ok(w)
}

fn apply_key(w: &mut WorkloadConfig, key: &str, value: &str) -> Result<(), ConfigError> {
    let field = |name: &str| format!("workload.{name}");
    let wrap = |name: &str| {
        let f = field(name);
        move |message: String| ConfigError::Field {
            field: f.clone(),
            message,
        }
    };
    match key {
        "bs" | "block_size" => w.block_size = value.parse().map_err(wrap("block_size"))?,
        "tasks" => w.tasks = parse_tasks(value).map_err(wrap("tasks"))?,
        "qd" | "queue_depth" => {
            let qd = parse_count(value).map_err(wrap("queue_depth"))?;
            // Out of range either way; the range check names the value as given.
            w.queue_depth = u32::try_from(qd).unwrap_or(u32::MAX);
        }
        "rate" | "rate_iops" => w.rate_iops = parse_number(value).map_err(wrap("rate_iops"))?,
        "count" => w.count = parse_count(value).map_err(wrap("count"))?,
        "duration" | "duration_ns" => {
            w.duration_ns = parse_duration_ns(value).map_err(wrap("duration_ns"))?
        }
        "read" | "read_fraction" => {
            w.read_fraction = parse_fraction(value).map_err(wrap("read_fraction"))?
        }
        "trim" | "trim_fraction" => {
            w.trim_fraction = parse_fraction(value).map_err(wrap("trim_fraction"))?
        }
        "flush" | "flush_every" => {
            w.flush_every = parse_count(value).map_err(wrap("flush_every"))?
        }
        "theta" | "zipf_theta" => {
            w.zipf_theta = parse_fraction(value).map_err(wrap("zipf_theta"))?
        }
        "range" | "range_fraction" => {
            w.range_fraction = parse_fraction(value).map_err(wrap("range_fraction"))?
        }
        "align" | "align_bytes" => {
            w.align_bytes = parse_size(value).map_err(wrap("align_bytes"))?
        }
        "deadline" | "deadline_ns" => {
            w.deadline_ns = parse_duration_ns(value).map_err(wrap("deadline_ns"))?
        }
        "cache" | "web_cache_fraction" => {
            w.web_cache_fraction = parse_fraction(value).map_err(wrap("web_cache_fraction"))?
        }
        "used" | "web_used_fraction" => {
            w.web_used_fraction = parse_fraction(value).map_err(wrap("web_used_fraction"))?
        }
        "hit" | "web_hit_fraction" => {
            w.web_hit_fraction = parse_fraction(value).map_err(wrap("web_hit_fraction"))?
        }
        "util" | "fsbench_utilisation" => {
            w.fsbench_utilisation = parse_fraction(value).map_err(wrap("fsbench_utilisation"))?
        }
        "phases" | "fsbench_phases" => {
            w.fsbench_phases = match value {
                "combo" => FsTrace::Combo,
                "atopm" => FsTrace::AtoPm,
                other => {
                    return Err(ConfigError::invalid(
                        field("fsbench_phases"),
                        shown_value(other),
                        "unknown benchmark phases",
                        "combo | atopm",
                    ))
                }
            }
        }
        "hot" => {
            let (space, access) = value.split_once(':').ok_or_else(|| ConfigError::Field {
                field: field("hot_space"),
                message: format!(
                    "`{}`: expected SPACE:ACCESS, e.g. 0.2:0.8",
                    shown_value(value)
                ),
            })?;
            w.hot_space = parse_fraction(space).map_err(wrap("hot_space"))?;
            w.hot_access = parse_fraction(access).map_err(wrap("hot_access"))?;
            w.pattern = Pattern::Hotcold;
        }
        "pattern" => {
            w.pattern = match value {
                "sequential" | "seq" => Pattern::Sequential,
                "uniform" | "random" | "rand" => Pattern::Uniform,
                "zipf" => Pattern::Zipf,
                "hotcold" => Pattern::Hotcold,
                "desktop" | "web" | "fsbench" => {
                    return Err(ConfigError::invalid(
                        field("pattern"),
                        shown_value(value),
                        format!(
                            "{value} is a workload kind, not a pattern: use --workload {value}:..."
                        ),
                        "sequential | uniform | zipf | hotcold",
                    ))
                }
                other => {
                    return Err(ConfigError::invalid(
                        field("pattern"),
                        shown_value(other),
                        "unknown pattern",
                        "sequential | uniform | zipf | hotcold",
                    ))
                }
            }
        }
        "pacing" => {
            w.pacing = match value {
                "auto" => Pacing::Auto,
                "closed" => Pacing::Closed,
                "open" => Pacing::Open,
                "bounded-open" => Pacing::BoundedOpen,
                other => {
                    return Err(ConfigError::invalid(
                        field("pacing"),
                        shown_value(other),
                        "unknown pacing",
                        "auto | closed | open | bounded-open",
                    ))
                }
            }
        }
        "arrival" => {
            w.arrival = match value {
                "poisson" => Arrival::Poisson,
                "fixed" => Arrival::Fixed,
                "bursty" => Arrival::Bursty,
                other => {
                    return Err(ConfigError::invalid(
                        field("arrival"),
                        shown_value(other),
                        "unknown arrival",
                        "poisson | fixed | bursty",
                    ))
                }
            }
        }
        other => {
            return Err(ConfigError::Unknown {
                kind: "workload key",
                name: shown_value(other),
                known: key_names(),
            })
        }
    }
    Ok(())
}

/// The compact form of a configuration (inverse of [`parse_spec`] for reports).
pub(super) fn to_spec(w: &WorkloadConfig) -> String {
    if w.pattern == Pattern::Periodic {
        return periodic_spec(w);
    }
    let pattern = w.pattern.name();
    let mut s = if w.pattern.is_model() {
        let d = WorkloadConfig::default();
        let mut s = format!("{pattern}:");
        if w.pattern == Pattern::Web {
            s += &format!(
                "cache={},used={},hit={},",
                w.web_cache_fraction, w.web_used_fraction, w.web_hit_fraction
            );
        }
        if w.pattern == Pattern::Fsbench {
            s += &format!(
                "phases={},",
                crate::config::settings::render_value(&w.fsbench_phases)
            );
            if w.fsbench_utilisation != d.fsbench_utilisation {
                s += &format!("util={},", w.fsbench_utilisation);
            }
        }
        s
    } else {
        format!(
            "custom:pattern={pattern},read={},bs={},align={},",
            w.read_fraction,
            w.block_size.to_string().replace(',', "/"),
            w.align_bytes
        )
    };
    if w.rate_iops > 0.0 {
        s += &format!(
            "rate={},arrival={}",
            w.rate_iops,
            match w.arrival {
                Arrival::Poisson => "poisson",
                Arrival::Fixed => "fixed",
                Arrival::Bursty => "bursty",
            }
        );
    }
    if w.rate_iops == 0.0 || w.pacing == Pacing::BoundedOpen {
        let sep = if w.rate_iops > 0.0 { "," } else { "" };
        s += &format!("{sep}qd={}", w.queue_depth);
    }
    if w.pacing != Pacing::Auto {
        s += &format!(
            ",pacing={}",
            crate::config::settings::render_value(&w.pacing)
        );
    }
    s += &format!(",count={}", w.count);
    if w.duration_ns > 0 {
        s += &format!(",duration={}ns", w.duration_ns);
    }
    if w.trim_fraction > 0.0 {
        s += &format!(",trim={}", w.trim_fraction);
    }
    if w.flush_every > 0 {
        s += &format!(",flush={}", w.flush_every);
    }
    match w.pattern {
        Pattern::Zipf => s += &format!(",theta={}", w.zipf_theta),
        Pattern::Hotcold => s += &format!(",hot={}:{}", w.hot_space, w.hot_access),
        _ => {}
    }
    if w.range_fraction < 1.0 {
        s += &format!(",range={}", w.range_fraction);
    }
    if w.deadline_ns > 0 {
        s += &format!(",deadline={}ns", w.deadline_ns);
    }
    s
}

/// A duration in the largest unit that keeps it whole (`60ms`, `1500us`, `7ns`).
fn show_duration(ns: u64) -> String {
    match ns {
        0 => "0ns".into(),
        n if n % 1_000_000_000 == 0 => format!("{}s", n / 1_000_000_000),
        n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}

/// The compact form of a periodic workload.
fn periodic_spec(w: &WorkloadConfig) -> String {
    let tasks: Vec<String> = w.tasks.iter().map(task_spec).collect();
    let mut s = format!("periodic:tasks={},count={}", tasks.join("+"), w.count);
    if w.duration_ns > 0 {
        s += &format!(",duration={}", show_duration(w.duration_ns));
    }
    if w.range_fraction < 1.0 {
        s += &format!(",range={}", w.range_fraction);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::LoopMode;

    #[test]
    fn parses_the_issue_example() {
        let w = parse_spec("randwrite:bs=4k,qd=32,count=1e6").unwrap();
        assert_eq!(w.pattern, Pattern::Uniform);
        assert_eq!(w.read_fraction, 0.0);
        assert_eq!(w.block_size, SizeSpec::Fixed(4096));
        assert_eq!(w.queue_depth, 32);
        assert_eq!(w.count, 1_000_000);
    }

    #[test]
    fn parses_mixes_ranges_and_units() {
        let w = parse_spec("seqrw:bs=4k:70,64k:30,duration=2s,rate=50k,count=0").unwrap();
        assert_eq!(w.block_size, SizeSpec::Mix(vec![(4096, 70), (65536, 30)]));
        assert_eq!(w.duration_ns, 2_000_000_000);
        assert_eq!(w.rate_iops, 50_000.0);
        let w = parse_spec("randread:bs=4k-128k,hot=0.1:0.9").unwrap();
        assert_eq!(w.block_size, SizeSpec::Range(4096, 131072));
        assert_eq!(w.pattern, Pattern::Hotcold);
    }

    #[test]
    fn spec_round_trips() {
        for spec in [
            "randwrite:bs=4k,qd=32,count=1e6",
            "zipf:theta=1.2,read=0.9,bs=4k:70,64k:30,range=0.5",
        ] {
            let w = parse_spec(spec).unwrap();
            assert_eq!(
                parse_spec(&w.to_spec()).unwrap(),
                w,
                "{spec} -> {}",
                w.to_spec()
            );
        }
    }

    #[test]
    fn desktop_kind_takes_pacing_keys_and_round_trips() {
        let w = parse_spec("desktop:qd=8,count=1e5").unwrap();
        assert_eq!(w.pattern, Pattern::Desktop);
        assert_eq!(w.arrival, Arrival::Bursty);
        assert_eq!((w.queue_depth, w.count), (8, 100_000));
        assert_eq!(w.to_spec(), "desktop:qd=8,count=100000");
        for spec in [
            "desktop:qd=4",
            "desktop:rate=2k,count=1000,range=0.5,deadline=5ms,duration=2s",
            "desktop:rate=100,arrival=poisson",
            "desktop:rate=20,qd=8,pacing=bounded-open,count=1000",
            "randread:rate=1k,pacing=open",
            "randwrite:qd=4,pacing=closed",
        ] {
            let w = parse_spec(spec).unwrap();
            assert_eq!(
                parse_spec(&w.to_spec()).unwrap(),
                w,
                "{spec} -> {}",
                w.to_spec()
            );
        }
        let e = parse_spec("desktop:arrival=sometimes")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bursty"), "{e}");
    }

    #[test]
    fn pacing_resolves_to_a_loop_mode_and_must_agree_with_the_rate() {
        let mode = |spec: &str| parse_spec(spec).unwrap().loop_mode();
        assert_eq!(mode("randread:qd=4"), LoopMode::Closed { queue_depth: 4 });
        assert_eq!(mode("randread:rate=1k"), LoopMode::Open);
        for spec in ["randread:rate=1k,qd=4", "randread:rate=1k,qd=4,pacing=open"] {
            let e = parse_spec(spec).unwrap_err().to_string();
            assert!(
                e.contains("queue_depth") && e.contains("bounded-open"),
                "{e}"
            );
        }
        assert_eq!(
            mode("randread:rate=1k,qd=4,pacing=bounded-open"),
            LoopMode::BoundedOpen { queue_depth: 4 }
        );
        assert_eq!(
            mode("desktop:rate=20,qd=8,pacing=bounded-open"),
            LoopMode::BoundedOpen { queue_depth: 8 }
        );
        for spec in ["randread:pacing=bounded-open", "randread:pacing=open"] {
            let e = parse_spec(spec).unwrap_err().to_string();
            assert!(e.contains("workload.pacing") && e.contains("rate"), "{e}");
        }
        let e = parse_spec("randread:rate=1k,pacing=closed")
            .unwrap_err()
            .to_string();
        assert!(e.contains("workload.pacing") && e.contains("1000"), "{e}");
        let e = parse_spec("randread:rate=1k,pacing=bounded")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("workload.pacing") && e.contains("bounded-open"),
            "{e}"
        );
    }

    #[test]
    fn table_iii_fits_on_one_line_and_round_trips() {
        let w = parse_spec("periodic:tasks=4xw12p@60ms+4xr3p@15ms,duration=10s").unwrap();
        assert_eq!(w.pattern, Pattern::Periodic);
        assert_eq!(w.duration_ns, 10_000_000_000);
        let write = PeriodicTask {
            op: TaskOp::Write,
            pages: 12,
            period_ns: 60_000_000,
            count: 4,
            ..PeriodicTask::default()
        };
        let read = PeriodicTask {
            op: TaskOp::Read,
            pages: 3,
            period_ns: 15_000_000,
            count: 4,
            ..PeriodicTask::default()
        };
        assert_eq!(w.tasks, vec![write, read]);
        for spec in [
            "periodic:tasks=4xw12p@60ms+4xr3p@15ms,duration=10s",
            "periodic:tasks=write96k@1500us/offset=7ns/deadline=2s/seq+read3p@1min,count=50,range=0.5",
        ] {
            let w = parse_spec(spec).unwrap();
            assert_eq!(
                parse_spec(&w.to_spec()).unwrap(),
                w,
                "{spec} -> {}",
                w.to_spec()
            );
        }
        assert_eq!(
            parse_spec("periodic:tasks=w96k@1500us/offset=7ns/deadline=2s/seq,count=9")
                .unwrap()
                .to_spec(),
            "periodic:tasks=1xw96k@1500us/offset=7ns/deadline=2s/seq,count=9"
        );
    }

    #[test]
    fn bad_tasks_get_clear_errors() {
        let cases: &[(&str, &[&str])] = &[
            ("periodic", &["workload.tasks", "at least one task"]),
            (
                "periodic:tasks=4xq12p@60ms",
                &["workload.tasks", "unknown operation `q`", "r or w"],
            ),
            (
                "periodic:tasks=4xw12p",
                &["`4xw12p`", "no @PERIOD", "4xw12p@60ms"],
            ),
            ("periodic:tasks=4xw@60ms", &["no request size"]),
            ("periodic:tasks=12p@60ms", &["no operation"]),
            ("periodic:tasks=2x12p@60ms", &["no operation"]),
            ("periodic:tasks=w12p@60", &["period", "add a unit"]),
            (
                "periodic:tasks=w12p@0ms",
                &["workload.tasks[0].period_ns", "1 ..="],
            ),
            ("periodic:tasks=w1p@1ms+w12p@1ms+", &["an empty task"]),
            (
                "periodic:tasks=w12p@1ms/every=3",
                &["unknown task option `every=3`", "seq"],
            ),
            (
                "periodic:tasks=w1p@1ms+0xw12p@1ms",
                &["workload.tasks[1].count", "1 ..= 4096"],
            ),
            (
                "periodic:tasks=w1000@1ms",
                &["workload.tasks[0].bytes", "multiple of 512"],
            ),
            ("periodic:tasks=w1p@1ms/deadline=-1ms", &["negative"]),
            (
                "periodic:tasks=4000xw1p@1ms+4000xr1p@1ms",
                &["too many tasks"],
            ),
            (
                "periodic:tasks=w1p@1ms,qd=4",
                &["workload.queue_depth", "does not apply to the periodic"],
            ),
            (
                "periodic:tasks=w1p@1ms,bs=4k",
                &["workload.block_size", "periodic"],
            ),
            (
                "periodic:tasks=w1p@1ms,deadline=2ms",
                &["workload.deadline_ns", "periodic"],
            ),
            ("periodic:tasks=w1p@1ms,tasks=r1p@1ms", &["already given"]),
            (
                "randwrite:tasks=w1p@1ms",
                &["workload.tasks", "periodic workload only"],
            ),
            ("periodic:tasks=w1p@1ms,count=0", &["duration_ns"]),
        ];
        for (spec, needles) in cases {
            let e = parse_spec(spec).expect_err(spec).to_string();
            for needle in *needles {
                assert!(e.contains(needle), "{spec}: `{needle}` not in: {e}");
            }
        }
        let mut w = parse_spec("periodic:tasks=w1p@1ms").unwrap();
        w.tasks[0].bytes = 4096;
        let e = w.validate().unwrap_err().to_string();
        assert!(
            e.contains("workload.tasks[0].bytes") && e.contains("both"),
            "{e}"
        );
        w.tasks[0].pages = 0;
        w.tasks[0].bytes = 0;
        let e = w.validate().unwrap_err().to_string();
        assert!(
            e.contains("workload.tasks[0].pages") && e.contains("missing"),
            "{e}"
        );
        // A --config file reaches only the validation: it refuses the other kinds' keys too.
        let mut w = parse_spec("periodic:tasks=w1p@1ms").unwrap();
        w.queue_depth = 4;
        let e = w.validate().unwrap_err().to_string();
        assert!(
            e.contains("workload.queue_depth") && e.contains("periodic"),
            "{e}"
        );
        let mut w = parse_spec("periodic:tasks=w1p@1ms").unwrap();
        w.pacing = Pacing::Open;
        let e = w.validate().unwrap_err().to_string();
        assert!(
            e.contains("workload.pacing") && e.contains("periodic"),
            "{e}"
        );
    }

    #[test]
    fn errors_name_the_key() {
        let e = parse_spec("randwrite:bs=0").unwrap_err().to_string();
        assert!(
            e.contains("workload.block_size") && e.contains("zero"),
            "{e}"
        );
        let e = parse_spec("randwrite:blocksize=4k")
            .unwrap_err()
            .to_string();
        assert!(e.contains("blocksize") && e.contains("bs"), "{e}");
        let e = parse_spec("randwrte").unwrap_err().to_string();
        assert!(e.contains("randwrte") && e.contains("randwrite"), "{e}");
        let e = parse_spec("randwrite:qd=0").unwrap_err().to_string();
        assert!(
            e.contains("workload.queue_depth") && e.contains("1 ..= 1048576"),
            "{e}"
        );
        let e = parse_spec("randwrite:read=1.5").unwrap_err().to_string();
        assert!(e.contains("workload.read_fraction"), "{e}");
        let e = parse_spec("randwrite:duration=5").unwrap_err().to_string();
        assert!(e.contains("unit"), "{e}");
        let e = parse_spec("randwrite:bs=-4k").unwrap_err().to_string();
        assert!(e.contains("workload.block_size"), "{e}");
    }

    #[test]
    fn a_task_option_given_twice_is_refused() {
        for (spec, mentions) in [
            (
                "periodic:tasks=w1p@1ms/offset=1ms/offset=2ms,duration=10ms",
                &["/offset=1ms", "/offset=2ms", "give it once"][..],
            ),
            (
                "periodic:tasks=w1p@1ms/deadline=1ms/deadline=1ms,duration=10ms",
                &["/deadline=1ms", "deadline"],
            ),
            (
                "periodic:tasks=w1p@1ms/seq/rand,duration=10ms",
                &["/seq", "/rand", "address pattern"],
            ),
        ] {
            let e = parse_spec(spec).unwrap_err().to_string();
            for m in mentions {
                assert!(e.contains(m), "{spec}: {e}");
            }
        }
        // Each once is fine.
        parse_spec("periodic:tasks=w1p@1ms/offset=1ms/deadline=2ms/seq,duration=10ms").unwrap();
    }
}
