//! How one workload option is defined once: its name, value kind, default, help line and
//! sysbench 0.5 names (`Def`), the type that checks its value on the command line and in a
//! sweep file alike (`OptionValue`), and the `workload_options!` macro that turns one table
//! of them into `bench`'s option list and the sweep file's `[workload_options]` reader.

use super::{
    flag_word, IgnoreErrors, ParetoH, PerEvent, Percentile, PsMode, RandType, SpecIter,
    TableOptions,
};
use serde::{Deserialize, Serialize};

/// What an option's value must look like on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int,
    Float,
    Bool,
    Str,
}

/// An option as `bench --help` lists it: canonical name, value kind, default as sysbench
/// prints it, help line, and the sysbench 0.5 names that alias it.
#[derive(Debug)]
pub struct Def {
    pub name: &'static str,
    pub kind: Kind,
    pub default: &'static str,
    pub help: &'static str,
    pub legacy: &'static [&'static str],
}

/// A value type of a workload option: read from a command-line word (`bench`) or a TOML
/// value (a sweep file, through `Deserialize`), with the same checks and the same words.
pub trait OptionValue: Sized + Clone {
    const KIND: Kind;
    fn from_arg(word: &str) -> Result<Self, String>;
}

fn whole(word: &str) -> Result<u64, String> {
    word.parse()
        .map_err(|_| "expected a non-negative integer".to_string())
}

fn count(word: &str) -> Result<u32, String> {
    u32::try_from(whole(word)?).map_err(|_| "too large".to_string())
}

fn number(word: &str) -> Result<f64, String> {
    word.parse().map_err(|_| "expected a number".to_string())
}

impl OptionValue for u32 {
    const KIND: Kind = Kind::Int;
    fn from_arg(word: &str) -> Result<u32, String> {
        count(word)
    }
}

impl OptionValue for u64 {
    const KIND: Kind = Kind::Int;
    fn from_arg(word: &str) -> Result<u64, String> {
        whole(word)
    }
}

impl OptionValue for f64 {
    const KIND: Kind = Kind::Float;
    fn from_arg(word: &str) -> Result<f64, String> {
        number(word)
    }
}

/// Counts checked by the engine type that bounds them.
macro_rules! bounded_count {
    ($($t:ty),*) => {$(
        impl OptionValue for $t {
            const KIND: Kind = Kind::Int;
            fn from_arg(word: &str) -> Result<$t, String> {
                <$t>::try_from(count(word)?)
            }
        }
    )*};
}
bounded_count!(PerEvent, SpecIter, Percentile);

impl OptionValue for ParetoH {
    const KIND: Kind = Kind::Float;
    fn from_arg(word: &str) -> Result<ParetoH, String> {
        ParetoH::try_from(number(word)?)
    }
}

/// Words parsed by the engine type's `FromStr`.
macro_rules! word {
    ($($t:ty),*) => {$(
        impl OptionValue for $t {
            const KIND: Kind = Kind::Str;
            fn from_arg(word: &str) -> Result<$t, String> {
                word.parse()
            }
        }
    )*};
}
word!(RandType, PsMode, IgnoreErrors, TableOptions);

/// A boolean as sysbench takes one: true/false, or "on"/"off", "yes"/"no", "1"/"0".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "FlagValue")]
pub struct Flag(pub bool);

#[derive(Deserialize)]
#[serde(untagged)]
enum FlagValue {
    Bool(bool),
    Text(String),
}

impl TryFrom<FlagValue> for Flag {
    type Error = String;
    fn try_from(v: FlagValue) -> Result<Flag, String> {
        match v {
            FlagValue::Bool(b) => Ok(Flag(b)),
            FlagValue::Text(s) => Flag::from_arg(&s),
        }
    }
}

impl Serialize for Flag {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(self.0)
    }
}

impl OptionValue for Flag {
    const KIND: Kind = Kind::Bool;
    fn from_arg(word: &str) -> Result<Flag, String> {
        flag_word(word)
            .map(Flag)
            .ok_or_else(|| format!("'{word}': expected true/false or \"on\"/\"off\""))
    }
}

/// The canonical name of `key` among `defs`: '-' and '_' alike, 0.5 names mapped.
pub fn canonical_in(defs: &'static [Def], key: &str) -> Option<&'static Def> {
    let key = key.replace('-', "_");
    defs.iter()
        .find(|d| d.name == key || d.legacy.contains(&key.as_str()))
}

/// Defines the workload options once. Each entry gives the field (sysbench's name), its value
/// type, the default as sysbench prints it, its 0.5 names, its help line, and how a value is
/// laid onto an `EngineConfig`. From that table come `WORKLOAD_OPTIONS` (what `bench` parses
/// and `--help` lists) and `Overrides` (a sweep file's `[workload_options]`, and `bench`'s
/// given values, laid over the defaults by one `apply`).
macro_rules! workload_options {
    ($(
        $field:ident : $ty:ty = $default:literal, [$($legacy:literal),*], $help:literal,
        |$c:ident, $v:ident| $apply:expr;
    )*) => {
        /// Every workload option, under sysbench 1.0.20's canonical name.
        pub const WORKLOAD_OPTIONS: &[$crate::engine::config::options::Def] = &[$(
            $crate::engine::config::options::Def {
                name: stringify!($field),
                kind: <$ty as $crate::engine::config::options::OptionValue>::KIND,
                default: $default,
                help: $help,
                legacy: &[$($legacy),*],
            },
        )*];

        /// The workload options that were given (a sweep file's `[workload_options]`, or
        /// `bench`'s command line), each with where it was written. Serialized (into
        /// manifest.json) as the keys that were given, by canonical name.
        #[derive(Debug, Clone, Default, serde::Serialize)]
        pub struct Overrides {
            $(
                #[serde(skip_serializing_if = "Option::is_none")]
                pub $field: Option<toml::Spanned<$ty>>,
            )*
        }

        impl Overrides {
            /// Lays the given options over `c` (sysbench's defaults plus what the sweep or
            /// the command line fixed).
            pub fn apply(&self, c: &mut $crate::engine::config::EngineConfig) {
                $(
                    if let Some(v) = &self.$field {
                        let $c = &mut *c;
                        let $v: $ty = v.get_ref().clone();
                        $apply;
                    }
                )*
                c.fit_workload();
            }

            /// Sets the option named canonically `name` from a command-line word.
            pub fn set_arg(&mut self, name: &str, word: &str) -> Result<(), String> {
                use $crate::engine::config::options::OptionValue;
                $(
                    if name == stringify!($field) {
                        let v = <$ty>::from_arg(word)?;
                        self.$field = Some(toml::Spanned::new(0..0, v));
                        return Ok(());
                    }
                )*
                Err(format!("'{name}' is not a workload option"))
            }

            /// Reads one value of the option named canonically `name`; false when none is.
            fn read_value<'de, A: serde::de::MapAccess<'de>>(
                &mut self,
                name: &'static str,
                map: &mut A,
            ) -> Result<bool, A::Error> {
                $(
                    if name == stringify!($field) {
                        if self.$field.is_some() {
                            return Err(serde::de::Error::duplicate_field(name));
                        }
                        self.$field = Some(map.next_value()?);
                        return Ok(true);
                    }
                )*
                Ok(false)
            }
        }

        /// The canonical names, as a refused key's message lists them.
        const NAMES: &[&str] = &[$(stringify!($field)),*];
    };
}
pub(crate) use workload_options;

/// A key of `[workload_options]`, read as its canonical name; unknown keys are refused at
/// the key (so the TOML reader points at it).
pub(super) struct Key(pub &'static str);

pub(super) struct KeySeed {
    pub defs: &'static [Def],
    pub names: &'static [&'static str],
}

impl<'de> serde::de::DeserializeSeed<'de> for KeySeed {
    type Value = Key;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for KeySeed {
    type Value = Key;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a workload option's name")
    }
    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<Key, E> {
        canonical_in(self.defs, key)
            .map(|d| Key(d.name))
            .ok_or_else(|| E::unknown_field(key, self.names))
    }
}
