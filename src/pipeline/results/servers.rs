//! servers/<target>__<config>/ of a run: each series' server as the run found it — its
//! version, SHOW GLOBAL VARIABLES (a synthetic target's model parameters) and the my.cnf it
//! was started with — and which of those differ between two servers.

use std::path::Path;

/// Writes one series' files, each whole or not at all (a full disk must not leave a cut-off
/// list that looks complete). `servers` is the run's servers/ directory.
pub fn write_server(
    servers: &Path,
    key: &str,
    version: &str,
    variables: &[(String, String)],
    mycnf: Option<&str>,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let dir = servers.join(key.replace('/', "__"));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let write = super::write_atomic;
    write(&dir.join("version.txt"), format!("{version}\n").as_bytes())?;
    let mut tsv = String::from("variable\tvalue\n");
    for (k, v) in variables {
        let v = v.replace(['\t', '\n'], " ");
        tsv.push_str(&format!("{k}\t{v}\n"));
    }
    write(&dir.join("variables.tsv"), tsv.as_bytes())?;
    if let Some(text) = mycnf {
        write(&dir.join("my.cnf"), text.as_bytes())?;
    }
    Ok(())
}

/// servers/<target>__<config>/variables.tsv of a run, keyed by `target/config`.
pub fn load_variables(run: &Path) -> std::collections::BTreeMap<String, Variables> {
    let mut out = std::collections::BTreeMap::new();
    let Ok(dirs) = std::fs::read_dir(run.join("servers")) else {
        return out;
    };
    for d in dirs.flatten() {
        let name = d.file_name().to_string_lossy().replacen("__", "/", 1);
        let Ok(text) = std::fs::read_to_string(d.path().join("variables.tsv")) else {
            continue;
        };
        let vars = text
            .lines()
            .skip(1)
            .filter_map(|l| l.split_once('\t'))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        out.insert(name, vars);
    }
    out
}

/// One server's SHOW GLOBAL VARIABLES, by name.
pub type Variables = std::collections::BTreeMap<String, String>;

/// The variables whose values differ between `sides` (a missing one is empty), with each
/// side's value, by name; those that differ by nature between instances are left out.
pub fn variable_diffs(sides: &[&Variables]) -> Vec<(String, Vec<String>)> {
    let names: std::collections::BTreeSet<&String> = sides.iter().flat_map(|m| m.keys()).collect();
    let mut out = Vec::new();
    for n in names {
        let values: Vec<String> = sides
            .iter()
            .map(|m| m.get(n).cloned().unwrap_or_default())
            .collect();
        if values.iter().any(|v| *v != values[0]) && !incidental(n, &values) {
            out.push((n.clone(), values));
        }
    }
    out
}

/// Variables that differ by nature between instances (paths, ports, ids) and say nothing
/// about the configuration compared.
fn incidental(name: &str, values: &[String]) -> bool {
    const NAMES: &[&str] = &[
        "port",
        "socket",
        "pid_file",
        "hostname",
        "server_uuid",
        "timestamp",
        "tmpdir",
        "log_error",
        "datadir",
        "general_log_file",
        "slow_query_log_file",
        "server_id",
        "gtid_domain_id",
        "rand_seed1",
        "rand_seed2",
        "report_port",
        "server_uid",
    ];
    NAMES.contains(&name) || values.iter().any(|v| v.starts_with('/'))
}
