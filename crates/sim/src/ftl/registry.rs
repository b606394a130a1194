//! The FTL registry: every FTL by name, with its summary, settings documentation, validation
//! and constructor. Adding an FTL means one entry here and one module under `ftl/`.

use super::mapping::headroom;
use super::{demand, logblock, mtftl, nftl, pagemap, part, rtgc, waogc, Ftl};
use crate::config::settings::Documented;
use crate::config::{ConfigError, ExperimentConfig, FieldDoc};

/// One registered FTL.
pub struct FtlEntry {
    pub name: &'static str,
    pub summary: &'static str,
    /// Documentation of the `[ftl]` settings, rendered with the values of a configuration.
    pub field_docs: fn(&ExperimentConfig) -> Vec<FieldDoc>,
    /// Checks the `[ftl]` settings against the device.
    pub validate: fn(&ExperimentConfig) -> Result<(), ConfigError>,
    /// The complete `[ftl]` table, defaults included (what a report records).
    pub resolve: fn(&ExperimentConfig) -> Result<toml::Table, ConfigError>,
    pub build: fn(&ExperimentConfig) -> Result<Box<dyn Ftl>, ConfigError>,
}

/// All FTLs, in listing order.
pub fn entries() -> &'static [FtlEntry] {
    static ENTRIES: [FtlEntry; 15] = [
        pagemap::ENTRY,
        mtftl::MT_ENTRY,
        mtftl::ST_ENTRY,
        logblock::BAST_ENTRY,
        logblock::FAST_ENTRY,
        logblock::SAST_ENTRY,
        logblock::KAST_ENTRY,
        nftl::ENTRY,
        demand::DFTL_ENTRY,
        demand::DFTL_ENTRY_LEVEL_ENTRY,
        demand::CDFTL_ENTRY,
        demand::FMMU_ENTRY,
        part::ENTRY,
        waogc::ENTRY,
        rtgc::ENTRY,
    ];
    &ENTRIES
}

/// The FTLs whose [`Ftl::recover`] rebuilds their state from a flash image (power-loss
/// recovery); the others refuse an image with [`crate::SimError::RecoveryUnsupported`].
/// [`Ftl::supports_recovery`] reads it; `tests/recovery_every_ftl.rs` checks that each FTL
/// listed recovers and each other one refuses.
pub const RECOVERABLE: &[&str] = &[
    "pagemap",
    "mt-ftl",
    "st-ftl",
    "nftl",
    "wao-gc",
    "rtgc",
    "dftl",
    "dftl-entry",
    "cdftl",
    "fmmu",
];

/// Names of all FTLs, comma separated.
pub fn names() -> String {
    entries()
        .iter()
        .map(|e| e.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The entry of the FTL a configuration selects.
pub fn entry(config: &ExperimentConfig) -> Result<&'static FtlEntry, ConfigError> {
    let name = config.ftl_name();
    entries()
        .iter()
        .find(|e| e.name == name)
        .ok_or_else(|| ConfigError::Unknown {
            kind: "FTL",
            name: name.to_string(),
            known: names(),
        })
}

/// FTLs whose garbage collection pads the last page of each victim (`ftl/mtftl/gc.rs`), so
/// their over-provisioning must outweigh that padding ([`headroom::check_padded_gc_pages`]).
const PADDED_GC_PAGES: &[&str] = &["mt-ftl", "st-ftl"];

/// Validates the FTL part of a configuration.
pub fn validate(config: &ExperimentConfig) -> Result<(), ConfigError> {
    let entry = entry(config)?;
    (entry.validate)(config)?;
    if PADDED_GC_PAGES.contains(&entry.name) {
        let (cfg, sizing) = mtftl::MtFtlConfig::from_experiment(config)?;
        headroom::check_padded_gc_pages(
            &config.geometry,
            sizing.units_per_page,
            cfg.over_provisioning,
            entry.name,
        )?;
    }
    Ok(())
}

/// The complete `[ftl]` table of a configuration, with the FTL's defaults filled in.
pub fn resolve(config: &ExperimentConfig) -> Result<toml::Table, ConfigError> {
    (entry(config)?.resolve)(config)
}

/// Builds the FTL a configuration selects.
pub fn build(config: &ExperimentConfig) -> Result<Box<dyn Ftl>, ConfigError> {
    (entry(config)?.build)(config)
}

/// An FTL's `[ftl]` settings, parsed and checked against the device by [`FtlSettings::checked`].
/// The generic [`settings_docs`], [`settings_valid`] and [`settings_table`] then fill an
/// [`FtlEntry`]'s `field_docs`, `validate` and `resolve`.
pub trait FtlSettings: Documented + Default + serde::Serialize + Sized {
    /// Parses the `[ftl]` table and checks it against the device.
    fn checked(config: &ExperimentConfig) -> Result<Self, ConfigError>;
}

/// The registry entry of an FTL whose `[ftl]` settings are `S`: their docs, checks and
/// resolved table come from [`FtlSettings`].
pub const fn settings_entry<S: FtlSettings>(
    name: &'static str,
    summary: &'static str,
    build: fn(&ExperimentConfig) -> Result<Box<dyn Ftl>, ConfigError>,
) -> FtlEntry {
    FtlEntry {
        name,
        summary,
        field_docs: settings_docs::<S>,
        validate: settings_valid::<S>,
        resolve: settings_table::<S>,
        build,
    }
}

/// [`FtlEntry::field_docs`] of settings `S`: the configuration's values, else the defaults.
pub fn settings_docs<S: FtlSettings>(config: &ExperimentConfig) -> Vec<FieldDoc> {
    S::checked(config).unwrap_or_default().documented_fields()
}

/// [`FtlEntry::validate`] of settings `S`.
pub fn settings_valid<S: FtlSettings>(config: &ExperimentConfig) -> Result<(), ConfigError> {
    S::checked(config).map(|_| ())
}

/// [`FtlEntry::resolve`] of settings `S`: the complete table, defaults included.
pub fn settings_table<S: FtlSettings>(
    config: &ExperimentConfig,
) -> Result<toml::Table, ConfigError> {
    let settings = S::checked(config)?;
    Ok(toml::Table::try_from(&settings).expect("FTL settings serialize to TOML"))
}

/// Deserializes an FTL's `[ftl]` table, naming the offending key, the value as given and
/// what is allowed on error.
pub fn parse_section<T>(config: &ExperimentConfig) -> Result<T, ConfigError>
where
    T: serde::de::DeserializeOwned + Default + Documented,
{
    let docs = T::default().documented_fields();
    crate::config::settings::deserialize_table(config.ftl.clone(), "ftl.", &docs)
}
