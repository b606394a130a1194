//! The `settings!` macro: one declaration per configuration section gives the typed struct,
//! its defaults, serde (unknown keys rejected), the per-field documentation shown by
//! `flashlab run --help`, and the range checks run when a configuration is built.
//!
//! Keeping all four in one place is what guarantees that every settable field is documented
//! with its unit and that every error names the field and its allowed range.

use std::fmt::Display;

use super::ConfigError;

/// Documentation of one settable field, as listed by `--help` and `flashlab presets show`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDoc {
    /// Dotted path as accepted by `--set` (`timing.read_latency_ns`).
    pub path: String,
    /// Unit of the value (`ns`, `bytes`, `MB/s`, ...) or empty for plain counts and choices.
    pub unit: &'static str,
    /// Allowed range or choices, empty when any value of the type is accepted.
    pub allowed: String,
    /// Value in the configuration the docs were rendered from (a preset or the defaults).
    pub value: String,
    /// One-line description.
    pub doc: &'static str,
}

/// Checks `lo <= value <= hi`, naming the field in the error.
pub fn check_range<T: PartialOrd + Display + Copy>(
    path: &str,
    value: T,
    lo: T,
    hi: T,
) -> Result<(), ConfigError> {
    // Written so that NaN, which compares false with everything, is out of range.
    if !(value >= lo && value <= hi) {
        return Err(ConfigError::OutOfRange {
            field: path.to_string(),
            value: value.to_string(),
            allowed: format!("{lo} ..= {hi}"),
        });
    }
    Ok(())
}

/// Renders a field value for the docs (strings without quotes, enums by their config name).
pub fn render_value<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(v) => v.to_string(),
        Err(_) => String::from("?"),
    }
}

/// Declares a configuration section. Each field is
/// `/// doc` `name: Type = default, unit "u" [, range lo ..= hi] [, choices "a|b"];`.
#[macro_export]
macro_rules! settings {
    (
        $(#[$meta:meta])*
        pub struct $name:ident in $section:literal {
            $(
                #[doc = $doc:literal]
                $field:ident : $ty:ty = $default:expr, unit $unit:literal
                    $(, range $lo:literal ..= $hi:literal)?
                    $(, choices $choices:literal)? ;
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct $name {
            $( #[doc = $doc] pub $field: $ty, )*
        }

        impl Default for $name {
            fn default() -> Self {
                Self { $( $field: $default, )* }
            }
        }

        impl $name {
            /// Name of the TOML table holding this section.
            pub const SECTION: &'static str = $section;

            /// Documentation of every field, with the values of `self`.
            pub fn field_docs(&self) -> Vec<$crate::config::FieldDoc> {
                vec![ $(
                    $crate::config::FieldDoc {
                        path: format!("{}.{}", $section, stringify!($field)),
                        unit: $unit,
                        allowed: {
                            let allowed: Vec<String> = vec![
                                $( { let (lo, hi): ($ty, $ty) = ($lo, $hi); format!("{lo} ..= {hi}") }, )?
                                $( String::from($choices), )?
                            ];
                            allowed.into_iter().next().unwrap_or_default()
                        },
                        value: $crate::config::settings::render_value(&self.$field),
                        doc: $doc.trim(),
                    },
                )* ]
            }

            /// Checks every field that declares a range.
            pub fn check_ranges(&self) -> Result<(), $crate::config::ConfigError> {
                $( $(
                    $crate::config::settings::check_range(
                        concat!($section, ".", stringify!($field)),
                        self.$field,
                        $lo,
                        $hi,
                    )?;
                )? )*
                Ok(())
            }
        }
    };
}
