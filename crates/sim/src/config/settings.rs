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

/// A settings section that documents its fields (implemented by [`settings!`]).
pub trait Documented {
    fn documented_fields(&self) -> Vec<FieldDoc>;
    /// Checks every field that declares a range.
    fn check_ranges(&self) -> Result<(), ConfigError>;
}

/// Deserializes `table` into `T`, with errors in the user's terms: a whole number written as
/// a float (`1e6`) is taken as the integer it is, and a value of the wrong type is named
/// with the field (`prefix` + its path), the value as given and what is allowed (from `docs`).
pub fn deserialize_table<T: serde::de::DeserializeOwned>(
    mut table: toml::Table,
    prefix: &str,
    docs: &[FieldDoc],
) -> Result<T, ConfigError> {
    loop {
        let err = match serde_path_to_error::deserialize(toml::Value::Table(table.clone())) {
            Ok(value) => return Ok(value),
            Err(err) => err,
        };
        let path = err.path().to_string();
        let message = super::first_line(&err.inner().to_string());
        if whole_float_to_integer(&mut table, &path, &message)
            || number_to_text(&mut table, &path, &message)
        {
            continue;
        }
        let field = match (path.as_str(), prefix.strip_suffix('.')) {
            (".", Some(section)) => section.to_string(),
            (".", None) => String::from("config"),
            _ => format!("{prefix}{path}"),
        };
        let documented = documented_path(&field);
        let allowed = docs
            .iter()
            .find(|d| d.path == documented)
            .map(|d| d.allowed.as_str());
        return Err(field_type_error(
            &field,
            value_at(&table, &path),
            &message,
            allowed,
        ));
    }
}

/// One step of a deserializer's path: a key, then the array indices after it
/// (`tasks[0]` is the key `tasks` and the index 0).
fn path_steps(path: &str) -> Vec<(&str, Vec<usize>)> {
    path.split('.')
        .map(|segment| {
            let (key, rest) = segment.split_at(segment.find('[').unwrap_or(segment.len()));
            let indices = rest
                .split(['[', ']'])
                .filter_map(|i| i.parse().ok())
                .collect();
            (key, indices)
        })
        .collect()
}

/// The value at a dotted `path` of `table` (`tasks[0].pages` goes into arrays).
fn value_at<'a>(table: &'a toml::Table, path: &str) -> Option<&'a toml::Value> {
    let mut node: Option<&toml::Value> = None;
    for (key, indices) in path_steps(path) {
        let table = match node {
            None => table,
            Some(v) => v.as_table()?,
        };
        let mut v = table.get(key)?;
        for i in indices {
            v = v.as_array()?.get(i)?;
        }
        node = Some(v);
    }
    node
}

/// The value at a dotted `path` of `table`, to change it.
fn value_mut<'a>(table: &'a mut toml::Table, path: &str) -> Option<&'a mut toml::Value> {
    let steps = path_steps(path);
    let ((first, first_indices), rest) = steps.split_first()?;
    let mut v = table.get_mut(*first)?;
    for &i in first_indices {
        v = v.as_array_mut()?.get_mut(i)?;
    }
    for (key, indices) in rest {
        v = v.as_table_mut()?.get_mut(*key)?;
        for &i in indices {
            v = v.as_array_mut()?.get_mut(i)?;
        }
    }
    Some(v)
}

/// A field's documented path: its dotted path without array indices (the documentation of
/// `workload.tasks[2].pages` is that of `workload.tasks.pages`).
fn documented_path(field: &str) -> String {
    path_steps(field)
        .iter()
        .map(|(key, _)| *key)
        .collect::<Vec<_>>()
        .join(".")
}

/// Replaces a number where a text field refused it (`--set trace.devices=7`) by its text;
/// true when it did.
fn number_to_text(table: &mut toml::Table, path: &str, message: &str) -> bool {
    if !(message.starts_with("invalid type: integer")
        || message.starts_with("invalid type: floating point"))
        || !message.ends_with("expected a string")
    {
        return false;
    }
    let Some(value) = value_mut(table, path) else {
        return false;
    };
    let text = match value {
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        _ => return false,
    };
    *value = toml::Value::String(text);
    true
}

/// Replaces a float that is a whole number (`1e6`) by that integer where an integer field
/// refused it; true when it did.
fn whole_float_to_integer(table: &mut toml::Table, path: &str, message: &str) -> bool {
    let integer_expected = message.starts_with("invalid type: floating point")
        && ["u8", "u16", "u32", "u64", "usize"]
            .iter()
            .any(|t| message.ends_with(&format!("expected {t}")));
    if !integer_expected {
        return false;
    }
    let Some(value) = value_mut(table, path) else {
        return false;
    };
    match *value {
        toml::Value::Float(f) if f.fract() == 0.0 && f >= 0.0 && f <= i64::MAX as f64 => {
            *value = toml::Value::Integer(f as i64);
            true
        }
        _ => false,
    }
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
            value: shown_value(&value.to_string()),
            allowed: format!("{lo} ..= {hi}"),
        });
    }
    Ok(())
}

/// Longest value echoed whole in a message; longer ones are shortened.
const SHOWN_CHARS: usize = 40;

/// A value as given, for a message: whole when short, a long number in scientific notation
/// (`1e300`, not 301 digits), other long text cut with its length.
pub fn shown_value(text: &str) -> String {
    let chars = text.chars().count();
    if chars <= SHOWN_CHARS {
        return text.to_string();
    }
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => format!("{v:e}"),
        _ => {
            let head: String = text.chars().take(SHOWN_CHARS - 8).collect();
            format!("{head}... ({chars} characters)")
        }
    }
}

/// A number for a message: plain when short, scientific when plain would be long (`1e-9`,
/// `1e300`).
pub fn shown_number(v: f64) -> String {
    let plain = v.to_string();
    if plain.len() <= 12 || !v.is_finite() {
        plain
    } else {
        format!("{v:e}")
    }
}

/// A TOML value as the user wrote it (strings without quotes), shortened if long.
pub fn shown_toml(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => shown_value(s),
        toml::Value::Float(f) => shown_number(*f),
        other => shown_value(&other.to_string()),
    }
}

/// Turns a deserializer's message about `field` (it names Rust types: "invalid type: string
/// \"x\", expected u64") into one in the user's terms: the field, the value as given, what is
/// expected and the allowed range (`allowed`, from the field's documentation, else the
/// type's own range).
pub fn field_type_error(
    field: &str,
    given: Option<&toml::Value>,
    message: &str,
    allowed: Option<&str>,
) -> ConfigError {
    let allowed = allowed.filter(|a| !a.is_empty());
    if let Some(error) = unknown_name_error(field, message, allowed) {
        return error;
    }
    if let Some((number, expected)) = message
        .strip_prefix("invalid value: integer `")
        .and_then(|rest| rest.split_once("`, expected "))
    {
        // A whole number beyond the type (2^32 for a 32-bit field) is out of range, not
        // "not a whole number"; negative ones keep the message about whole numbers.
        if !number.starts_with('-') {
            let (_, type_range) = expected_in_user_terms(expected.trim(), field);
            return ConfigError::OutOfRange {
                field: field.to_string(),
                value: shown_value(number),
                allowed: allowed.map_or(type_range, str::to_string),
            };
        }
    }
    let Some(expected) = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))
        .and_then(|rest| rest.rsplit_once(", expected "))
        .map(|(_, expected)| expected.trim())
    else {
        return ConfigError::Field {
            field: field.to_string(),
            message: message.to_string(),
        };
    };
    let (what, type_range) = expected_in_user_terms(expected, field);
    let allowed = allowed.map_or(type_range, str::to_string);
    let value = given.map_or_else(|| String::from("?"), shown_toml);
    ConfigError::invalid(field, value, format!("expected {what}"), allowed)
}

/// The names between backticks of a deserializer's message (`` `a`, `b` or `c` ``).
fn backticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// A deserializer's "unknown variant `x`, expected one of ..." or "unknown field `x`, ..."
/// in the user's terms: an unknown choice of `field` or an unknown setting (section at the
/// top level), the name as given and the allowed ones (`allowed`, from the field's
/// documentation, else the deserializer's list).
fn unknown_name_error(field: &str, message: &str, allowed: Option<&str>) -> Option<ConfigError> {
    let (is_variant, rest) = if let Some(rest) = message.strip_prefix("unknown variant ") {
        (true, rest)
    } else {
        (false, message.strip_prefix("unknown field ")?)
    };
    let names = backticked(rest);
    let (name, known) = names.split_first()?;
    let name = shown_value(name);
    if is_variant {
        return Some(ConfigError::Invalid {
            field: field.to_string(),
            value: name,
            reason: String::from("unknown choice"),
            allowed: allowed.map_or_else(|| known.join(" | "), str::to_string),
        });
    }
    let what = if field.contains('.') {
        "setting"
    } else {
        "section"
    };
    Some(ConfigError::Field {
        field: field.to_string(),
        message: format!("unknown {what} `{name}` (allowed: {})", known.join(", ")),
    })
}

/// What a Rust type name means to a user, and the values it allows (integers stop at
/// 2^63 - 1, the largest a TOML file or `--set` can write).
fn expected_in_user_terms(expected: &str, field: &str) -> (String, String) {
    let whole = |range: String| (String::from("a whole number"), range);
    match expected {
        "u8" => whole(format!("0 ..= {}", u8::MAX)),
        "u16" => whole(format!("0 ..= {}", u16::MAX)),
        "u32" => whole(format!("0 ..= {}", u32::MAX)),
        "u64" | "usize" => whole(format!("0 ..= {}", i64::MAX)),
        "i8" | "i16" | "i32" | "i64" => whole(format!("{} ..= {}", i64::MIN, i64::MAX)),
        "f32" | "f64" => (
            String::from("a number"),
            String::from("a number such as 0.5 or 1e6"),
        ),
        "a boolean" => (String::from("true or false"), String::from("true | false")),
        "a string" => (
            String::from("text"),
            String::from("text, in quotes in a --config file"),
        ),
        e if e.starts_with("struct ") || e == "a map" || e == "a table" => (
            String::from("a section of settings"),
            format!("[{field}] in a --config file, {field}.KEY=VALUE with --set"),
        ),
        other => (other.to_string(), String::from("see `flashlab run --help`")),
    }
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
/// `/// doc` `name: Type = default, unit "u" [, range lo ..= hi] [, choices "a|b"];`
/// (`lo` and `hi`: literals or constants).
#[macro_export]
macro_rules! settings {
    (
        $(#[$meta:meta])*
        pub struct $name:ident in $section:literal {
            $(
                #[doc = $doc:literal]
                $field:ident : $ty:ty = $default:expr, unit $unit:literal
                    $(, range $lo:tt ..= $hi:tt)?
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

        impl $crate::config::settings::Documented for $name {
            fn documented_fields(&self) -> Vec<$crate::config::FieldDoc> {
                self.field_docs()
            }
            fn check_ranges(&self) -> Result<(), $crate::config::ConfigError> {
                $name::check_ranges(self)
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
