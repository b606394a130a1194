//! The complete description of one run ([`ExperimentConfig`]) and the loader that layers a
//! preset, an optional TOML file and `--set key=value` overrides, in that order.
//!
//! ```toml
//! preset = "cosmos"            # base device (all its fields), then the tables below override
//! [timing]
//! read_latency_ns = 60000
//! [ftl]
//! name = "pagemap"
//! over_provisioning = 0.1
//! [workload]
//! pattern = "uniform"
//! read_fraction = 0.7
//! [run]
//! seed = 7
//! ```

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::settings::shown_value;
use super::{
    preset, preset_names, settings, ConfigError, CpuConfig, DeviceConfig, Geometry, HostConfig,
    NandRules, Timing, MAX_CONFIG_INTEGER, MAX_SIMULATED_NS,
};
use crate::settings;
use crate::trace::TraceConfig;
use crate::workload::WorkloadConfig;

settings! {
    /// How a run is carried out: seed, preconditioning, modes.
    pub struct RunConfig in "run" {
        /// Seed of every random choice; one seed reproduces a run exactly.
        seed: u64 = 1, unit "", range 0 ..= MAX_CONFIG_INTEGER;
        /// Fraction of the logical space written before measuring: a sequential fill, then random overwrites to steady state (0 = fresh device).
        precondition: f64 = 1.0, unit "fraction", range 0.0 ..= 1.0;
        /// Budget of the random-overwrite phase, in multiples of the filled space; it stops earlier once write amplification is steady.
        precondition_max_passes: f64 = 4.0, unit "passes", range 0.0 ..= 100.0;
        /// Functional simulation only: flash, link and CPU take no time (fast; latencies are zero).
        functional_only: bool = false, unit "";
        /// Store a data version per sector, so reads return what was written.
        payloads: bool = false, unit "";
        /// Check every read against a shadow copy of the last data written and the FTL invariants at the end (turns payloads on).
        verify: bool = false, unit "";
        /// Refuse a device whose simulator state would take more memory than this (0: no limit of its own; `flashlab run` then refuses more than the memory available).
        max_memory_bytes: u64 = 0, unit "bytes", range 0 ..= MAX_CONFIG_INTEGER;
        /// Length of the intervals of the report's time series (bandwidth, latency and deadline misses per interval; 0: no time series); at most 100,000 intervals are kept: a longer run doubles the interval until they fit (the report's timeseries.interval_ns says which).
        timeseries_interval_ns: u64 = 0, unit "ns", range 0 ..= MAX_SIMULATED_NS;
        /// Real-time admission of a periodic run on part-ftl, wao-gc or rtgc (what `flashlab admit` computes): "report" runs the scheme's test and puts its verdict, terms and bounds in the report's `admission` beside the measured misses; "enforce" also refuses to run a task set the test refuses (exit 2, the failing test named); "off" skips it.
        admission: AdmissionMode = AdmissionMode::Report, unit "", choices "enforce | report | off";
    }
}

/// What a periodic run on a real-time FTL does with the scheme's admission test
/// (`run.admission`). The default is `report`: a simulator's user often runs sets the test
/// refuses on purpose (the paper's own Table III is one, and how pessimistic a test is can
/// only be seen by running refused sets), so refusing by default would hide exactly the
/// comparison of analysis and simulation; `enforce` is the paper's `open()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AdmissionMode {
    /// Refuse to run a set the test refuses.
    Enforce,
    /// Run it, and report the verdict beside what the run measured.
    Report,
    /// No admission test.
    Off,
}

/// Everything one run needs: device + FTL + workload + run settings. A run is a pure function
/// of this value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExperimentConfig {
    /// Preset the device (and FTL defaults) started from.
    pub preset: String,
    pub geometry: Geometry,
    pub nand: NandRules,
    pub timing: Timing,
    pub host: HostConfig,
    pub cpu: CpuConfig,
    /// FTL name and its settings (checked by the FTL's registry entry).
    pub ftl: toml::Table,
    pub workload: WorkloadConfig,
    /// Trace replay; when `trace.path` is set it replaces the synthetic workload.
    pub trace: TraceConfig,
    pub run: RunConfig,
}

impl Default for ExperimentConfig {
    fn default() -> Self {
        let mut ftl = toml::Table::new();
        ftl.insert("name".into(), toml::Value::String("pagemap".into()));
        ftl.insert("over_provisioning".into(), toml::Value::Float(0.07));
        ExperimentConfig {
            preset: "default".into(),
            geometry: Geometry::default(),
            nand: NandRules::default(),
            timing: Timing::default(),
            host: HostConfig::default(),
            cpu: CpuConfig::default(),
            ftl,
            workload: WorkloadConfig::default(),
            trace: TraceConfig::default(),
            run: RunConfig::default(),
        }
    }
}

/// Inputs of [`ExperimentConfig::load`]: a preset, a TOML file and `--set` overrides.
#[derive(Debug, Clone, Default)]
pub struct ConfigSource<'a> {
    /// Preset name; the file's `preset` key, then `default`, when absent.
    pub preset: Option<&'a str>,
    /// TOML file layered over the preset.
    pub file: Option<&'a Path>,
    /// `key.path=value` overrides, applied last, in order.
    pub sets: &'a [String],
}

impl ExperimentConfig {
    /// The device part.
    pub fn device(&self) -> DeviceConfig {
        DeviceConfig {
            geometry: self.geometry.clone(),
            nand: self.nand.clone(),
            timing: self.timing.clone(),
            host: self.host.clone(),
            cpu: self.cpu.clone(),
        }
    }

    /// Name of the selected FTL.
    pub fn ftl_name(&self) -> &str {
        self.ftl
            .get("name")
            .and_then(|v| v.as_str())
            .unwrap_or(DEFAULT_FTL)
    }

    /// Builds a configuration from a preset, a file and overrides, and validates it.
    pub fn load(source: &ConfigSource<'_>) -> Result<Self, ConfigError> {
        let file = match source.file {
            Some(path) => Some(ConfigFile::read(path)?),
            None => None,
        };
        let file_preset = match &file {
            Some(f) => f.preset()?,
            None => None,
        };
        let preset_name = source
            .preset
            .map(str::to_string)
            .or(file_preset)
            .unwrap_or_else(|| "default".to_string());
        let mut table = preset_table(&preset_name)?;
        if let Some(f) = &file {
            merge(&mut table, f.table.clone());
        }
        table.insert("preset".into(), toml::Value::String(preset_name.clone()));
        for set in source.sets {
            apply_set(&mut table, set)?;
        }
        apply_ftl_suggestions(&mut table, &preset_name);
        let mut config = from_table(table).map_err(|e| match &file {
            Some(f) => f.locate(e),
            None => e,
        })?;
        config.validate().map_err(|e| match &file {
            Some(f) => f.locate(e),
            None => e,
        })?;
        config.ftl = crate::ftl::registry::resolve(&config)?;
        Ok(config)
    }

    /// Loads the default experiment with `sets` applied (handy in tests and from Python).
    pub fn with_sets(preset: &str, sets: &[&str]) -> Result<Self, ConfigError> {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        Self::load(&ConfigSource {
            preset: Some(preset),
            file: None,
            sets: &sets,
        })
    }

    /// Checks every section, including the FTL's own settings against this device.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.device().validate()?;
        self.run.check_ranges()?;
        self.workload.validate()?;
        if !self.trace.enabled() {
            self.workload
                .check_sector_size(u64::from(self.host.sector_bytes))?;
        }
        self.trace.validate()?;
        crate::ftl::registry::validate(self)?;
        Ok(())
    }

    /// A configuration written by [`ExperimentConfig::to_table`] (a flash image's
    /// superblock), checked as [`ExperimentConfig::load`] checks one.
    pub fn from_full_table(table: toml::Table) -> Result<Self, ConfigError> {
        let mut config = from_table(table)?;
        config.validate()?;
        config.ftl = crate::ftl::registry::resolve(&config)?;
        Ok(config)
    }

    /// The configuration as a TOML table (what `--config` accepts).
    pub fn to_table(&self) -> toml::Table {
        toml::Table::try_from(self).expect("configuration serializes to TOML")
    }
}

/// Adds the settings the preset suggests for the chosen FTL (`ftl.name`, else `pagemap`)
/// where the file and the overrides left them unset.
fn apply_ftl_suggestions(table: &mut toml::Table, preset_name: &str) {
    let Some(p) = preset(preset_name) else {
        return;
    };
    let ftl = table
        .entry("ftl")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    // A non-table `ftl` is reported by deserialization, with its location.
    let Some(ftl) = ftl.as_table_mut() else {
        return;
    };
    let name = ftl
        .get("name")
        .and_then(toml::Value::as_str)
        .unwrap_or(DEFAULT_FTL)
        .to_string();
    for (key, value) in p.settings_for(&name) {
        ftl.entry(key).or_insert_with(|| parse_value(value));
    }
}

/// The FTL of a configuration that names none.
pub const DEFAULT_FTL: &str = "pagemap";

/// The preset as a full TOML table: every device field; the `[ftl]` table is left to the FTL
/// (see [`apply_ftl_suggestions`]).
fn preset_table(name: &str) -> Result<toml::Table, ConfigError> {
    let p = preset(name).ok_or_else(|| ConfigError::Unknown {
        kind: "preset",
        name: name.to_string(),
        known: preset_names(),
    })?;
    let mut config = ExperimentConfig {
        preset: name.to_string(),
        geometry: p.device.geometry,
        nand: p.device.nand,
        timing: p.device.timing,
        host: p.device.host,
        cpu: p.device.cpu,
        ..ExperimentConfig::default()
    };
    config.ftl = toml::Table::new();
    Ok(config.to_table())
}

fn from_table(table: toml::Table) -> Result<ExperimentConfig, ConfigError> {
    let d = ExperimentConfig::default();
    let mut docs = d.device().field_docs();
    docs.extend(d.workload.field_docs());
    docs.extend(d.trace.field_docs());
    docs.extend(d.run.field_docs());
    docs.extend(crate::workload::PeriodicTask::default().field_docs());
    settings::deserialize_table(table, "", &docs)
}

/// The first line of a deserializer message (TOML appends the key path on a second line,
/// which our errors already name).
pub(crate) fn first_line(message: &str) -> String {
    message
        .trim()
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string()
}

/// Deep merge: tables merge key by key, anything else in `over` replaces `base`.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(key, v);
            }
        }
    }
}

/// Parses the right-hand side of `--set`: a TOML value, or a bare string.
fn parse_value(text: &str) -> toml::Value {
    let text = text.trim();
    let doc = format!("v = {text}");
    match doc.parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").unwrap_or(toml::Value::String(text.into())),
        Err(_) => toml::Value::String(text.into()),
    }
}

/// Applies one `section.key=value` override to the table.
fn apply_set(table: &mut toml::Table, set: &str) -> Result<(), ConfigError> {
    let Some((path, value)) = set.split_once('=') else {
        return Err(ConfigError::Syntax {
            location: format!("--set {set}"),
            message: "expected key.path=value, e.g. timing.read_latency_ns=60000".into(),
        });
    };
    let path = path.trim();
    if path == "preset" {
        return Err(ConfigError::Field {
            field: "preset".into(),
            message: format!(
                "the device preset cannot be changed with --set (it would keep the values of the \
                 first preset): use --device {} (Python: the first argument of flashlab.run; in a \
                 --config file: preset = \"NAME\" at the top)",
                shown_value(value.trim().trim_matches('"'))
            ),
        });
    }
    let keys: Vec<&str> = path.split('.').collect();
    if keys.iter().any(|k| k.is_empty()) {
        return Err(ConfigError::Syntax {
            location: format!("--set {set}"),
            message: "empty key in the path".into(),
        });
    }
    let (last, parents) = keys.split_last().expect("split yields one key");
    let mut node = table;
    for key in parents {
        let entry = node
            .entry((*key).to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        node = match entry {
            toml::Value::Table(t) => t,
            _ => {
                return Err(ConfigError::Field {
                    field: path.to_string(),
                    message: format!("`{key}` is a value, not a section"),
                })
            }
        };
    }
    node.insert((*last).to_string(), parse_value(value));
    Ok(())
}

/// A TOML configuration file, kept as text so errors can point at the line of a key.
struct ConfigFile {
    path: String,
    text: String,
    table: toml::Table,
}

impl ConfigFile {
    fn read(path: &Path) -> Result<Self, ConfigError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Io {
            path: shown.clone(),
            message: e.to_string(),
        })?;
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].lines().count().max(1))
                .unwrap_or(1);
            ConfigError::Syntax {
                location: format!("{shown}:{line}"),
                message: e.message().to_string(),
            }
        })?;
        Ok(ConfigFile {
            path: shown,
            text,
            table,
        })
    }

    /// The file's `preset` key: a preset name, or an error at its line.
    fn preset(&self) -> Result<Option<String>, ConfigError> {
        match self.table.get("preset") {
            None => Ok(None),
            Some(toml::Value::String(name)) if preset(name).is_some() => Ok(Some(name.clone())),
            Some(toml::Value::String(name)) => Err(self.locate_line(
                "preset",
                ConfigError::Unknown {
                    kind: "preset",
                    name: shown_value(name),
                    known: preset_names(),
                },
            )),
            Some(value) => {
                let err = ConfigError::invalid(
                    "preset",
                    settings::shown_toml(value),
                    "expected the name of a device preset, in quotes",
                    preset_names(),
                );
                Err(self.locate(err))
            }
        }
    }

    /// Prefixes the error with `file:line` when its field is set in this file.
    fn locate(&self, err: ConfigError) -> ConfigError {
        let field = match &err {
            ConfigError::OutOfRange { field, .. }
            | ConfigError::Invalid { field, .. }
            | ConfigError::Field { field, .. } => field.clone(),
            _ => return err,
        };
        self.locate_line(&field, err)
    }

    /// Prefixes the error with `file:line` of `field` when it is set in this file.
    fn locate_line(&self, field: &str, err: ConfigError) -> ConfigError {
        match find_key_line(&self.text, field) {
            Some(line) => ConfigError::Syntax {
                location: format!("{}:{line}", self.path),
                message: err.to_string(),
            },
            None => err,
        }
    }
}

/// Line (1-based) where `section.key` is assigned in a TOML text, if it is.
fn find_key_line(text: &str, field: &str) -> Option<usize> {
    let (section, key) = field.rsplit_once('.').unwrap_or(("", field));
    let mut current = String::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.starts_with('[') {
            current = l.trim_matches(|c| c == '[' || c == ']').trim().to_string();
            continue;
        }
        if let Some((k, _)) = l.split_once('=') {
            let k = k.trim();
            let full = if current.is_empty() {
                k.to_string()
            } else {
                format!("{current}.{k}")
            };
            if full == field || (current == section && k == key) {
                return Some(i + 1);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_overrides_preset_values() {
        let c = ExperimentConfig::with_sets("cosmos", &["timing.read_latency_ns=60000"]).unwrap();
        assert_eq!(c.timing.read_latency_ns, 60_000);
        assert_eq!(c.geometry.channels, 4);
        assert_eq!(c.preset, "cosmos");
    }

    #[test]
    fn preset_suggests_ftl_settings_only_for_the_ftls_it_names_and_the_user_wins() {
        let op = |c: &ExperimentConfig| c.ftl.get("over_provisioning").and_then(|v| v.as_float());
        for ftl in ["pagemap", "mt-ftl", "st-ftl"] {
            let c = ExperimentConfig::with_sets("fmmu-16ch", &[&format!("ftl.name={ftl}")]);
            assert_eq!(op(&c.unwrap()), Some(0.15), "{ftl}");
        }
        let c = ExperimentConfig::with_sets("fmmu-16ch", &["ftl.over_provisioning=0.3"]).unwrap();
        assert_eq!(op(&c), Some(0.3));
        // The preset describes hardware: the FTL's own default elsewhere.
        let c = ExperimentConfig::with_sets("cosmos", &[]).unwrap();
        assert_eq!(op(&c), Some(0.07));
        assert_eq!(c.ftl_name(), "pagemap");
        // Not applied to an FTL the suggestion does not name.
        let mut table: toml::Table = "[ftl]\nname = \"block-ftl\"".parse().unwrap();
        apply_ftl_suggestions(&mut table, "nftl-samsung");
        assert_eq!(table["ftl"].as_table().unwrap().len(), 1, "{table}");
        apply_ftl_suggestions(&mut table, "fmmu-16ch");
        assert_eq!(table["ftl"].as_table().unwrap().len(), 1, "{table}");
        let mut table = toml::Table::new();
        apply_ftl_suggestions(&mut table, "nftl-samsung");
        assert_eq!(table["ftl"]["mapping_unit_bytes"].as_integer(), Some(512));
    }

    #[test]
    fn unknown_key_is_named() {
        let err = ExperimentConfig::with_sets("default", &["timing.read_latncy_ns=1"]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("timing"), "{msg}");
        assert!(msg.contains("read_latncy_ns"), "{msg}");
    }

    #[test]
    fn wrong_type_is_named() {
        let err = ExperimentConfig::with_sets("default", &["geometry.channels=many"]).unwrap_err();
        assert!(err.to_string().contains("geometry.channels"), "{err}");
    }

    #[test]
    fn unknown_preset_lists_known_ones() {
        let err = ExperimentConfig::with_sets("cosmso", &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("cosmso") && err.contains("cosmos"), "{err}");
    }

    #[test]
    fn file_errors_point_at_the_line() {
        let dir = std::env::temp_dir().join(format!("flashlab-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.toml");
        std::fs::write(
            &path,
            "preset = \"cosmos\"\n\n[timing]\nread_latency_ns = 0\n",
        )
        .unwrap();
        let err = ExperimentConfig::load(&ConfigSource {
            preset: None,
            file: Some(&path),
            sets: &[],
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains("bad.toml:4"), "{err}");
        assert!(err.contains("timing.read_latency_ns"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn round_trips_through_toml() {
        let c = ExperimentConfig::with_sets("kast-mlc", &["run.seed=9"]).unwrap();
        let text = toml::to_string(&c).unwrap();
        let back: ExperimentConfig = toml::from_str(&text).unwrap();
        assert_eq!(back, c);
    }
}
