//! Unit tests of the sweep file's design keys: the paired design, its slices, budget, turns
//! and pinning, what it refuses, when several series are paired by default, and profiles.
use super::design::{Design, Isolate};
use super::tests::{err, parse};

pub(super) const PAIRED: &str = "name = \"p\"\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [1, 4]\ndesign = \"paired\"\nslice = \"3s\"\nbudget = \"4m\"\n[[targets]]\nname = \"m\"\nserver = {}\n[[configs]]\nname = \"a\"\n[[configs]]\nname = \"b\"\nvars = { innodb_flush_log_at_trx_commit = 2 }\n";

#[test]
fn the_paired_design_reads_its_slice_and_budget() {
    let s = parse(PAIRED).unwrap();
    assert!(s.run.design.paired());
    assert_eq!(s.run.design.slice_s, 3);
    assert_eq!(s.run.design.budget_s, Some(240));
    let s = parse(&PAIRED.replace("slice = \"3s\"\nbudget = \"4m\"\n", "")).unwrap();
    assert_eq!((s.run.design.slice_s, s.run.design.budget_s), (2, None));
}

#[test]
fn the_paired_design_reads_its_turns_and_pinning() {
    use crate::engine::config::WorkloadKind;
    use crate::pipeline::spec::design::{Pin, DEFAULT_INTERLEAVE_MS, DEFAULT_PIN};
    let s = parse(PAIRED).unwrap();
    assert_eq!(s.run.design.interleave_ms, DEFAULT_INTERLEAVE_MS);
    assert_eq!(s.run.design.pin, DEFAULT_PIN);
    // By default ("auto") turns for what writes nothing, one piece for what writes.
    assert!(s.run.design.interleave_auto);
    assert_eq!(s.run.design.turn_ms(WorkloadKind::ReadOnly), 100);
    assert_eq!(s.run.design.turn_ms(WorkloadKind::PointSelect), 100);
    assert_eq!(s.run.design.turn_ms(WorkloadKind::ReadWrite), 0);
    assert_eq!(s.run.design.turn_ms(WorkloadKind::Insert), 0);
    let with =
        |extra: &str| PAIRED.replace("budget = \"4m\"\n", &format!("budget = \"4m\"\n{extra}\n"));
    for (text, ms) in [
        ("500ms", 500),
        ("0.5s", 500),
        ("1s", 1000),
        ("3s", 3000),
        ("off", 0),
    ] {
        let s = parse(&with(&format!("interleave = \"{text}\""))).unwrap();
        assert_eq!(s.run.design.interleave_ms, ms, "{text}");
        // Named turns (or none) hold for every workload.
        assert!(!s.run.design.interleave_auto);
        assert_eq!(s.run.design.turn_ms(WorkloadKind::ReadWrite), ms, "{text}");
    }
    let s = parse(&with("interleave = \"auto\"")).unwrap();
    assert!(s.run.design.interleave_auto && s.run.design.interleave_ms == 100);
    for (text, pin) in [
        ("none", Pin::None),
        ("pairs", Pin::Pairs),
        ("apart", Pin::Apart),
    ] {
        let s = parse(&with(&format!("pin = \"{text}\""))).unwrap();
        assert_eq!(s.run.design.pin, pin, "{text}");
    }
    // Below the shortest turn, beyond the slice, not a duration: refused on their line.
    for bad in ["50ms", "4s", "fast", "-1s"] {
        let e = err(&with(&format!("interleave = \"{bad}\"")));
        assert_eq!(e.line, 8, "{bad}: {e}");
        assert!(
            e.message.contains("from 100ms to the slice (3s)"),
            "{bad}: {e}"
        );
    }
    let e = err(&with("pin = \"cores\""));
    assert!(e.message.contains("expected apart, pairs or none"), "{e}");
    // A duet shares its seconds already; a sequential design has no turns.
    for design in ["duet", "sequential"] {
        let text = with("interleave = \"250ms\"")
            .replace("design = \"paired\"", &format!("design = \"{design}\""))
            .replace("slice = \"3s\"\nbudget = \"4m\"\n", "");
        let e = err(&text);
        assert!(
            e.message
                .contains("run.interleave applies to design = \"paired\""),
            "{design}: {e}"
        );
    }
}

#[test]
fn the_paired_design_refuses_what_it_cannot_pair() {
    let one = PAIRED.replace(
        "[[configs]]\nname = \"b\"\nvars = { innodb_flush_log_at_trx_commit = 2 }\n",
        "",
    );
    let e = err(&one);
    assert_eq!(e.line, 5, "{e}");
    assert!(e.message.contains("this sweep has one (m)"), "{e}");
    let s = parse(&PAIRED.replace("design = \"paired\"", "design = \"duet\"")).unwrap();
    assert!(s.run.design.paired() && s.run.design.duet());
    let e = err(&PAIRED.replace("design = \"paired\"", "design = \"pairs\""));
    assert!(
        e.message.contains("expected sequential, paired or duet"),
        "{e}"
    );
    let e = err(&PAIRED.replace("design = \"paired\"", "design = \"sequential\""));
    assert!(
        e.message
            .contains("run.slice applies to design = \"paired\""),
        "{e}"
    );
    assert_eq!(e.line, 6);
    let e = err(&PAIRED.replace("server = {}", "url = \"mysql://u@127.0.0.1:3306/db\""));
    assert!(
        e.message.contains("cannot hold 2 configs at the same time"),
        "{e}"
    );
    let e = err(&PAIRED.replace("threads = [1, 4]", "threads = \"auto\""));
    assert!(
        e.message.contains("rounds need a list of thread counts"),
        "{e}"
    );
    let e = err(&PAIRED.replace("slice = \"3s\"", "slice = \"0s\""));
    assert!(e.message.contains("run.slice must be at least 1s"), "{e}");
    // A duet's CPU isolation: on unless "none"; only for a duet.
    let duet = PAIRED.replace("design = \"paired\"", "design = \"duet\"");
    assert_eq!(parse(&duet).unwrap().run.design.isolate, Isolate::Auto);
    let s = parse(&duet.replace("[[targets]]", "isolate = \"none\"\n[[targets]]")).unwrap();
    assert_eq!(s.run.design.isolate, Isolate::None);
    let e = err(&PAIRED.replace("[[targets]]", "isolate = \"cpus\"\n[[targets]]"));
    assert!(
        e.message
            .contains("run.isolate applies to design = \"duet\""),
        "{e}"
    );
    let e = err(&duet.replace("[[targets]]", "isolate = \"cores\"\n[[targets]]"));
    assert!(e.message.contains("expected auto, cpus or none"), "{e}");
}

#[test]
fn several_series_are_paired_by_default_where_they_can_be() {
    let plain = PAIRED.replace("design = \"paired\"\nslice = \"3s\"\nbudget = \"4m\"\n", "");
    let s = parse(&plain).unwrap();
    assert!(s.run.design.paired() && !s.run.design.duet());
    assert_eq!(s.run.design.chosen, "default");
    assert!(s
        .run
        .design
        .said()
        .unwrap()
        .starts_with("design: paired, the default"));
    // slice and budget without a design: the default paired design takes them.
    let s = parse(&PAIRED.replace("design = \"paired\"\n", "")).unwrap();
    assert!(s.run.design.paired());
    assert_eq!(
        (s.run.design.slice_s, s.run.design.budget_s),
        (3, Some(240))
    );
    // An external server cannot hold two configs at once: sequential, and why.
    let ext = plain.replace("server = {}", "url = \"mysql://u@127.0.0.1:3306/db\"");
    let s = parse(&ext).unwrap();
    assert_eq!(s.run.design.design, Design::Sequential);
    assert!(
        s.run.design.why.contains("cannot hold 2 configs"),
        "{}",
        s.run.design.why
    );
    assert!(s
        .run
        .design
        .said()
        .unwrap()
        .starts_with("design: sequential, as this sweep has"));
    // … and slice or budget there is an error naming its line.
    let e = err(&PAIRED
        .replace("design = \"paired\"\n", "")
        .replace("server = {}", "url = \"mysql://u@127.0.0.1:3306/db\""));
    assert!(
        e.message
            .contains("run.slice and run.budget apply to the paired design"),
        "{e}"
    );
    assert_eq!(e.line, 5, "{e}");
    // order arranges a sequential design's repeats; one series has nothing to pair.
    let s = parse(&plain.replace("[run]\n", "[run]\norder = \"interleaved\"\n")).unwrap();
    assert_eq!(s.run.design.design, Design::Sequential);
    let one = plain.replace(
        "[[configs]]\nname = \"b\"\nvars = { innodb_flush_log_at_trx_commit = 2 }\n",
        "",
    );
    let s = parse(&one).unwrap();
    assert_eq!(s.run.design.design, Design::Sequential);
    assert_eq!(s.run.design.said(), None);
    // slice or budget where the default cannot pair is an error, not silently ignored.
    let e = err(&one.replace("[run]\n", "[run]\nslice = \"3s\"\n"));
    assert!(e.message.contains("this sweep has one series (m)"), "{e}");
    let e = err(&plain.replace(
        "[run]\n",
        "[run]\norder = \"interleaved\"\nbudget = \"4m\"\n",
    ));
    assert!(e.message.contains("run.order arranges"), "{e}");
}

#[test]
fn profile_is_perf_or_off_and_a_wrong_word_names_its_place() {
    use super::words::Profile;
    assert_eq!(parse(PAIRED).unwrap().run.profile, Profile::Off);
    let with = |v: &str| PAIRED.replace("[[targets]]", &format!("profile = \"{v}\"\n[[targets]]"));
    assert_eq!(parse(&with("perf")).unwrap().run.profile, Profile::Perf);
    assert_eq!(parse(&with("off")).unwrap().run.profile, Profile::Off);
    let e = err(&with("flame"));
    assert_eq!(e.line, 8, "{e}");
    assert!(
        e.message
            .contains("run.profile = 'flame': expected \"perf\""),
        "{e}"
    );
}
