//! `sweepbench k8s render` against the Kubernetes schema: kubernetes-validate --strict (from
//! PyPI; .ci/run installs it) accepts the manifests of a two-client point and of a 20-part
//! sharded sweep, and refuses a manifest with a field Kubernetes does not know.

mod common;
use common::text;
use std::path::Path;
use std::process::Command;

fn validate(file: &Path) -> std::process::Output {
    Command::new("kubernetes-validate")
        .arg("--strict")
        .arg(file)
        .output()
        .expect("kubernetes-validate is needed by this test: pip install kubernetes-validate (.ci/run does)")
}

fn render(sweep: &Path, extra: &[&str]) -> String {
    let out = assert_cmd::Command::cargo_bin("sweepbench")
        .unwrap()
        .args(["k8s", "render", sweep.to_str().unwrap()])
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn rendered_manifests_pass_the_kubernetes_schema_strictly() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("two.toml");
    std::fs::write(
        &sweep,
        "name = \"two\"\n[data]\ntables = 2\ntable_size = 5000\n[run]\nworkloads = [\"oltp_read_only\"]\nthreads = [8]\nclients = 2\nduration = \"10s\"\nrepeats = 1\n[[targets]]\nname = \"local\"\nserver = {}\n",
    )
    .unwrap();
    let yaml = render(&sweep, &[]);
    assert_eq!(yaml.matches("\nkind: Job\n").count(), 1, "{yaml}");
    assert!(
        yaml.contains("completionMode: Indexed\n  completions: 2\n"),
        "{yaml}"
    );
    assert!(
        yaml.contains("# note: target 'local' is a managed server"),
        "{yaml}"
    );
    let f = dir.path().join("two.yaml");
    std::fs::write(&f, &yaml).unwrap();
    let out = validate(&f);
    assert!(out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("passed for resource job/")
            && said.contains("passed for resource configmap/"),
        "{said}"
    );

    let shards = render(&sweep, &["--shards", "20"]);
    assert!(shards.contains("completions: 20\n"), "{shards}");
    let f = dir.path().join("shards.yaml");
    std::fs::write(&f, &shards).unwrap();
    let out = validate(&f);
    assert!(out.status.success(), "{}", text(&out));

    // The validator is strict: a field Kubernetes does not know fails it.
    let f = dir.path().join("bad.yaml");
    std::fs::write(
        &f,
        yaml.replace("  backoffLimit: 0\n", "  backoffLimit: 0\n  retries: 3\n"),
    )
    .unwrap();
    assert!(!validate(&f).status.success());
}
