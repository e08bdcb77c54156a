//! Settings that are one of a few words (`prepare = "auto"`, `design = "paired"`): each
//! enum and its words, read as the enum where the sweep file is read; an unknown word is
//! refused at its line and column, with the words it could be.

use serde::de::{Deserialize, Deserializer, Error};
use std::fmt;

/// An enum a setting's words name.
pub trait Words: Sized + Copy + 'static {
    /// The key as the file names it (`data.prepare`).
    const KEY: &'static str;
    /// Each word and what it means.
    const WORDS: &'static [(&'static str, Self)];
    /// What an unknown word is told is expected.
    const EXPECTED: &'static str;
}

/// A setting read as its enum `T`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Word<T>(pub T);

impl<'de, T: Words> Deserialize<'de> for Word<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        T::WORDS
            .iter()
            .find(|(w, _)| *w == s)
            .map(|&(_, v)| Word(v))
            .ok_or_else(|| {
                D::Error::custom(format!("{} = '{s}': expected {}", T::KEY, T::EXPECTED))
            })
    }
}

/// The setting's value, or `default` where the file does not give it.
pub fn or<T: Words>(w: &Option<toml::Spanned<Word<T>>>, default: T) -> T {
    w.as_ref().map_or(default, |w| w.get_ref().0)
}

/// When `run` prepares the data set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PreparePolicy {
    /// Prepare when the tables are missing or their row counts differ.
    Auto,
    Always,
    Never,
}

impl fmt::Display for PreparePolicy {
    /// The sweep file's word.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(word(*self))
    }
}

/// The sweep file's word for `v`.
pub fn word<T: Words + PartialEq>(v: T) -> &'static str {
    T::WORDS
        .iter()
        .find(|(_, x)| *x == v)
        .map_or("", |(w, _)| w)
}

/// Order of points across targets and configs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// All points of one target × config, then the next.
    Sequential,
    /// Repeat r of every target × config before repeat r + 1 (A-B-A-B), so drift over time
    /// hits every side alike.
    Interleaved,
}

/// `run.design`: how a sweep's series are measured against each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Design {
    /// Every point of a series measured on its own, `repeats` times (`order` applies).
    Sequential,
    /// All series up at once; each point measured in rounds of one slice per series.
    Paired,
    /// As paired, but a round's slices run in the same seconds, each series with its own
    /// client threads: what interferes hits both sides of a pair alike.
    Duet,
}

/// `[run] isolate`, for a duet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Isolate {
    /// Where each side gets at least `ISOLATE_MIN_CPUS`.
    Auto,
    /// Wherever each side gets one CPU.
    Cpus,
    /// Never.
    None,
}

/// `run.pin`: where a paired design holds each client worker and its connection's server
/// thread (docs/statistics.md, "Where the threads run").
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pin {
    /// The scheduler decides.
    None,
    /// Both on one CPU: no wake-up crosses cores.
    Pairs,
    /// The server thread on the CPU after its client's: every wake-up crosses cores, as a
    /// client on another host's would arrive.
    Apart,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// No profiles (the default): nothing but the workload and the counters touch the server.
    #[default]
    Off,
    /// `perf record` on the server's process during the first repeat or round of each point.
    Perf,
}

impl Words for PreparePolicy {
    const KEY: &'static str = "data.prepare";
    const WORDS: &'static [(&'static str, Self)] = &[
        ("auto", PreparePolicy::Auto),
        ("always", PreparePolicy::Always),
        ("never", PreparePolicy::Never),
    ];
    const EXPECTED: &'static str = "auto, always or never";
}

impl Words for Order {
    const KEY: &'static str = "run.order";
    const WORDS: &'static [(&'static str, Self)] = &[
        ("sequential", Order::Sequential),
        ("interleaved", Order::Interleaved),
    ];
    const EXPECTED: &'static str = "sequential or interleaved";
}

impl Words for Design {
    const KEY: &'static str = "run.design";
    const WORDS: &'static [(&'static str, Self)] = &[
        ("sequential", Design::Sequential),
        ("paired", Design::Paired),
        ("duet", Design::Duet),
    ];
    const EXPECTED: &'static str = "sequential, paired or duet";
}

impl Words for Isolate {
    const KEY: &'static str = "run.isolate";
    const WORDS: &'static [(&'static str, Self)] = &[
        ("auto", Isolate::Auto),
        ("cpus", Isolate::Cpus),
        ("none", Isolate::None),
    ];
    const EXPECTED: &'static str = "auto, cpus or none";
}

impl Words for Pin {
    const KEY: &'static str = "run.pin";
    const WORDS: &'static [(&'static str, Self)] = &[
        ("apart", Pin::Apart),
        ("pairs", Pin::Pairs),
        ("none", Pin::None),
    ];
    const EXPECTED: &'static str = "apart, pairs or none";
}

impl Words for Profile {
    const KEY: &'static str = "run.profile";
    const WORDS: &'static [(&'static str, Self)] =
        &[("off", Profile::Off), ("perf", Profile::Perf)];
    const EXPECTED: &'static str = "\"perf\" (on-CPU profiles of managed servers) or \"off\"";
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each enum's words are the ones it serialises to (manifest.json, verdicts.json), so a
    /// run's files can be read back as a sweep file says them.
    #[test]
    fn every_word_is_its_enums_own_name() {
        fn check<T: Words + serde::Serialize>() {
            for (w, v) in T::WORDS {
                assert_eq!(serde_json::to_value(v).unwrap(), *w, "{}", T::KEY);
                assert!(T::EXPECTED.contains(w), "{}: {w}", T::KEY);
            }
        }
        check::<Order>();
        check::<Design>();
        check::<Isolate>();
        check::<Pin>();
        check::<Profile>();
        check::<PreparePolicy>();
        for (w, v) in PreparePolicy::WORDS {
            assert_eq!(v.to_string(), *w);
        }
    }

    #[test]
    fn an_unknown_word_is_refused_with_the_words_it_could_be() {
        #[derive(serde::Deserialize)]
        struct R {
            design: toml::Spanned<Word<Design>>,
        }
        let ok: R = toml::from_str("design = \"duet\"").unwrap();
        assert_eq!(ok.design.get_ref().0, Design::Duet);
        let e = toml::from_str::<R>("design = \"paried\"").err().unwrap();
        assert_eq!(
            e.message(),
            "run.design = 'paried': expected sequential, paired or duet"
        );
        assert_eq!(e.span(), Some(9..17));
    }
}
