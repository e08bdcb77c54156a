//! The HTML report in a real browser: headless Chromium loads report.html and the test
//! asserts on the rendered DOM (tables and charts present, no script errors); the documented
//! screenshot script writes a PNG.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn chromium() -> PathBuf {
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
    .expect(
        "headless Chromium is needed for this test: apt-get install chromium (.ci/run installs it)",
    )
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn imported_run(dir: &Path) -> PathBuf {
    let out = dir.join("imported");
    let st = Command::cargo_bin("sweepbench")
        .unwrap()
        .arg("import")
        .arg(fixtures().join("sysbench-1.0-full.log"))
        .arg(fixtures().join("sysbench-0.5.log"))
        .arg(fixtures().join("sysbench-0.4.log"))
        .args(["--out", out.to_str().unwrap(), "--target", "legacy"])
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    out
}

#[test]
fn report_html_renders_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let run = imported_run(dir.path());
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", run.join("report.html").display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {log}");
    assert!(dom.contains("<h1>imported"), "{dom}");
    for class in ["tps", "latency", "peaks"] {
        assert!(
            dom.contains(&format!("<table class=\"{class}\">")),
            "table {class} missing"
        );
    }
    assert!(dom.matches("<svg").count() >= 2, "charts missing");
    assert!(dom.contains("1242"), "0.5 log's tps shown");
    assert!(
        !log.contains("Uncaught") && !log.contains("CONSOLE"),
        "script errors: {log}"
    );
}

#[test]
fn screenshot_script_writes_a_png() {
    chromium();
    let dir = tempfile::tempdir().unwrap();
    let run = imported_run(dir.path());
    let png = dir.path().join("shot.png");
    let out = std::process::Command::new(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/screenshot-report.sh"),
    )
    .arg(&run)
    .arg(&png)
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&png).unwrap();
    assert!(
        bytes.len() > 10_000,
        "a real page, not a blank one: {} bytes",
        bytes.len()
    );
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
}
