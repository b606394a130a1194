//! Configuration errors: each names the field (dotted path, or `file:line`) and what is allowed.

use thiserror::Error;

/// A configuration value that cannot be used. Displayed to users as one line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// A numeric value outside its allowed range.
    #[error("{field} = {value} is out of range (allowed: {allowed})")]
    OutOfRange {
        field: String,
        value: String,
        allowed: String,
    },
    /// A value that breaks a rule involving other fields.
    #[error("{field} = {value}: {reason} (allowed: {allowed})")]
    Invalid {
        field: String,
        value: String,
        reason: String,
        allowed: String,
    },
    /// A key that no section defines, or a value of the wrong type.
    #[error("{field}: {message}")]
    Field { field: String, message: String },
    /// A name that is not in a registry (preset, FTL, workload kind).
    #[error("unknown {kind} `{name}` (known: {known})")]
    Unknown {
        kind: &'static str,
        name: String,
        known: String,
    },
    /// A TOML file or `--set` expression that does not parse.
    #[error("{location}: {message}")]
    Syntax { location: String, message: String },
    /// A file that cannot be read.
    #[error("{path}: {message}")]
    Io { path: String, message: String },
}

impl ConfigError {
    /// Shorthand for [`ConfigError::Invalid`].
    pub fn invalid(
        field: impl Into<String>,
        value: impl ToString,
        reason: impl Into<String>,
        allowed: impl Into<String>,
    ) -> Self {
        ConfigError::Invalid {
            field: field.into(),
            value: value.to_string(),
            reason: reason.into(),
            allowed: allowed.into(),
        }
    }
}
