//! Settings that are one of a few words (`prepare = "auto"`, `design = "paired"`), read as
//! their enum where the sweep file is read: an unknown word is refused at its line and
//! column, with the words it could be.

use super::design::{Design, Isolate, Pin};
use super::profile::Profile;
use super::{Order, PreparePolicy};
use serde::de::{Deserialize, Deserializer, Error};

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
