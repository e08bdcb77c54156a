//! A first line that agrees with the points beneath it (#66 item 3): a candidate whose
//! change differs by thread count (+8, +27, +7 and +8 % at 1, 4, 16 and 64 threads, a
//! synthetic model's `threads` factors) is never headed "undecided" above its decided points —
//! the points' own verdicts lead, the pooled interval is said to be wider than theirs — and
//! its A/A twin (the same model) is never called higher or faster. Three seeds each.

mod common;
use common::{run_in, text};

fn sweep(seed: u32) -> String {
    let m = format!("seed = {seed}, noise = 0.03, burst = 0.1");
    format!(
        "name = \"fl\"\nbaseline = \"base/default\"\n[run]\nworkloads = [\"oltp_read_write\"]\nthreads = [1, 4, 16, 64]\ndesign = \"paired\"\nslice = \"2s\"\nbudget = \"10m\"\n[[targets]]\nname = \"base\"\nsynthetic = {{ {m} }}\n[[targets]]\nname = \"cand\"\nsynthetic = {{ {m}, threads = {{ \"1\" = 1.08, \"4\" = 1.27, \"16\" = 1.07, \"64\" = 1.084 }} }}\n[[targets]]\nname = \"twin\"\nsynthetic = {{ {m} }}\n"
    )
}

#[test]
fn an_effect_that_differs_by_thread_count_is_headed_by_its_points() {
    for seed in [5, 6, 7] {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("fl.toml");
        std::fs::write(&f, sweep(seed)).unwrap();
        let out = run_in(dir.path(), &f, &["--quiet"]);
        assert!(out.status.success(), "{}", text(&out));
        let summary =
            std::fs::read_to_string(dir.path().join("results/fl/latest/summary.txt")).unwrap();
        let line = |series: &str| {
            summary
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{series}/default ")))
                .unwrap_or_else(|| panic!("seed {seed}: no answer for {series}: {summary}"))
                .to_string()
        };
        let cand = line("cand");
        assert!(!cand.contains("undecided"), "seed {seed}: {cand}");
        assert!(
            cand.contains("improved at 4 threads"),
            "seed {seed}: {cand}"
        );
        assert!(
            cand.contains("wider than the points' own") || cand.contains(": improved"),
            "seed {seed}: {cand}"
        );
        let twin = line("twin");
        for word in ["higher than", "faster", "improved", "regressed", "slower"] {
            assert!(!twin.contains(word), "seed {seed}: the A/A twin: {twin}");
        }
        // The report's first answers say the same.
        let md = std::fs::read_to_string(dir.path().join("results/fl/latest/report.md")).unwrap();
        let head: String = md.lines().take(20).collect::<Vec<_>>().join("\n");
        assert!(head.contains(cand.trim()), "seed {seed}: {head}");
    }
}
