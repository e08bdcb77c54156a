//! A sweep file's `[[targets]]` (url, socket or managed server, TLS keys) and `[[configs]]`
//! (server variables as SQL literals, my.cnf templates): names checked, kinds resolved.

use super::raw::{self, RawSweep};
use super::target::{self, ConnInfo, TargetKind};
use super::{
    name_ok, parse_duration, toml_literal, unknown_field_hint, Config, Ctx, SpecError, SweepSpec,
    Target,
};
use crate::engine::config::SslMode;
use std::path::PathBuf;
use toml::Spanned;

/// The longest point (and warmup) a synthetic target computes: each second is a sample.
const MAX_SYNTHETIC_S: u64 = 3600;

impl SweepSpec {
    pub(super) fn targets(cx: &Ctx<'_>, raw: &RawSweep) -> Result<Vec<Target>, SpecError> {
        let mut targets = Vec::new();
        let mut proxies = Vec::new();
        let proxied = |name: &str| {
            raw.targets
                .iter()
                .any(|r| r.name.get_ref() == name && r.proxy.is_some())
        };
        for t in &raw.targets {
            let tname = t.name.get_ref().clone();
            if !name_ok(&tname) {
                return Err(cx.err(
                    t.name.span(),
                    format!("target name '{tname}': {}", super::NAME_RULE),
                ));
            }
            if targets.iter().any(|x: &Target| x.name == tname) {
                return Err(cx.err(t.name.span(), format!("target '{tname}' is defined twice")));
            }
            if let Some(p) = &t.proxy {
                let spec: target::ProxySpec =
                    p.get_ref()
                        .clone()
                        .try_into()
                        .map_err(|e: toml::de::Error| {
                            cx.err(
                                p.span(),
                                format!("proxy: {}", unknown_field_hint(e.message())),
                            )
                        })?;
                if spec.kind != "haproxy" && spec.kind != "mysqlrouter" {
                    return Err(cx.err(p.span(), format!("proxy.kind = '{}': expected \"haproxy\" or \"mysqlrouter\" (ProxySQL is not supported: sweepbench cannot start or test it here; give a running ProxySQL as a url target)", spec.kind)));
                }
                if spec.kind == "haproxy"
                    && (spec.tls.is_some()
                        || spec.connection_sharing.is_some()
                        || spec.binary.is_some())
                {
                    return Err(cx.err(p.span(), "proxy: tls, connection_sharing and binary are mysqlrouter's (HAProxy in TCP mode passes everything through)".to_string()));
                }
                if let Some(t) = &spec.tls {
                    if crate::pipeline::server::proxy::RouterTls::parse(t).is_none() {
                        return Err(cx.err(p.span(), format!("proxy.tls = '{t}': expected \"passthrough\", \"end\" or \"disabled\"")));
                    }
                }
                if spec.connection_sharing == Some(true)
                    && spec.tls.as_deref().is_none_or(|t| t == "passthrough")
                {
                    return Err(cx.err(p.span(), "proxy.connection_sharing needs the router to read the protocol: set tls = \"end\" or \"disabled\"".to_string()));
                }
                if spec.max_connections == Some(0) {
                    return Err(cx.err(p.span(), "proxy.max_connections = 0: give the limit the proxy takes, or leave it out to size it to the sweep".to_string()));
                }
                if t.url.is_some()
                    || t.socket.is_some()
                    || t.server.is_some()
                    || t.synthetic.is_some()
                {
                    return Err(cx.err(p.span(), format!("target '{tname}': a proxy target takes its server from proxy.target; remove url, socket, server and synthetic")));
                }
                proxies.push((targets.len(), spec, p.span()));
                // Filled in from proxy.target below, once every target is read.
                targets.push(Target {
                    name: tname,
                    kind: TargetKind::Managed(Default::default()),
                    proxy: None,
                    storage_engine: Self::target_engine(cx, t)?,
                    cores: None,
                    memory: None,
                });
                continue;
            }
            let kind = match (&t.url, &t.socket, &t.server) {
                (None, None, None) if t.synthetic.is_some() => {
                    let s = t.synthetic.as_ref().expect("matched");
                    let m: crate::pipeline::server::synthetic::Model = s
                        .get_ref()
                        .clone()
                        .try_into()
                        .map_err(|e: toml::de::Error| {
                            cx.err(
                                s.span(),
                                format!("synthetic: {}", unknown_field_hint(e.message())),
                            )
                        })?;
                    m.check().map_err(|e| cx.err(s.span(), e))?;
                    TargetKind::Synthetic(Box::new(m))
                }
                _ if t.synthetic.is_some() => {
                    return Err(cx.err(
                        t.name.span(),
                        format!(
                        "target '{tname}': give exactly one of url, socket, server or synthetic"
                    ),
                    ))
                }
                (Some(u), None, None) => TargetKind::External(
                    ConnInfo::from_url(u.get_ref())
                        .map_err(|m| cx.err(u.span(), format!("url: {m}")))?,
                ),
                (None, Some(s), None) => TargetKind::External(ConnInfo::from_socket(s.get_ref())),
                (None, None, Some(s)) => {
                    let mut m: target::ManagedTarget =
                        s.get_ref()
                            .clone()
                            .try_into()
                            .map_err(|e: toml::de::Error| {
                                cx.err(
                                    s.span(),
                                    format!("server: {}", unknown_field_hint(e.message())),
                                )
                            })?;
                    match m.restart.as_deref() {
                        None | Some("per-point") | Some("never") => {}
                        Some(other) => {
                            return Err(cx.err(
                                s.span(),
                                format!(
                            "server.restart = '{other}': expected \"per-point\" or \"never\""
                        ),
                            ))
                        }
                    }
                    if let Some(c) = &m.cluster {
                        let max = crate::pipeline::server::cluster::MAX_NODES;
                        if !(2..=max).contains(&c.nodes) {
                            return Err(cx.err(s.span(), format!("server.cluster.nodes = {}: a cluster has 2 to {max} nodes on this host (one node is server = {{}})", c.nodes)));
                        }
                    }
                    if let Some(c) = &m.class {
                        c.parse().map_err(|e| cx.err(s.span(), e))?;
                    }
                    if let Some(t) = &m.startup_timeout {
                        if parse_duration(t).is_none() {
                            return Err(cx.err(s.span(), format!("server.startup_timeout = '{t}': expected a duration such as \"120s\"")));
                        }
                    }
                    // "~/…" is the reader's home, so a shipped sweep file names an unpacked
                    // version (scripts/unpack-mariadb.sh's cache) without one machine's path.
                    m.basedir = m.basedir.map(|b| home_relative(&b));
                    if let Some(v) = &m.mariadb {
                        if m.basedir.is_some() {
                            return Err(cx.err(s.span(), format!("server: give mariadb = \"{v}\" or basedir, not both (mariadb finds the basedir of that version)")));
                        }
                        let found = crate::pipeline::server::versions::resolve(v).map_err(|e| {
                            cx.err(s.span(), format!("server.mariadb = \"{v}\": {e}"))
                        })?;
                        m.basedir = Some(found.basedir);
                        m.mariadb = Some(found.version);
                    }
                    if let Some(b) = &m.basedir {
                        if !b.is_dir() {
                            return Err(cx.err(s.span(), format!("server.basedir {} is not a directory (scripts/unpack-mariadb.sh unpacks a version)", b.display())));
                        }
                    }
                    TargetKind::Managed(m)
                }
                _ => {
                    return Err(cx.err(
                        t.name.span(),
                        format!(
                        "target '{tname}': give exactly one of url, socket, server or synthetic"
                    ),
                    ))
                }
            };
            let kind = Self::target_tls(cx, t, kind)?;
            targets.push(Target {
                name: tname,
                kind,
                proxy: None,
                storage_engine: Self::target_engine(cx, t)?,
                cores: None,
                memory: None,
            });
        }
        for (i, spec, span) in proxies {
            let Some(of) = targets
                .iter()
                .find(|x| {
                    x.name == spec.target
                        && x.proxy.is_none()
                        && !proxied(&x.name)
                        && !x.kind.is_synthetic()
                })
                .cloned()
            else {
                let names: Vec<&str> = targets.iter().map(|x| x.name.as_str()).collect();
                return Err(cx.err(span, format!("proxy.target = '{}': expected another target of this sweep with its own url, socket or server (targets: {})", spec.target, names.join(", "))));
            };
            targets[i].kind = of.kind;
            // Its server is made as the proxied target's is: the same engine unless it names
            // its own.
            if targets[i].storage_engine.is_none() {
                targets[i].storage_engine = of.storage_engine.clone();
            }
            targets[i].proxy = Some(spec);
        }
        Self::check_same_server(cx, raw, &targets)?;
        Ok(targets)
    }

    /// `same_server_as` names another external target of the sweep, from an external one:
    /// two urls that reach one server (one of them through a proxy the user runs).
    fn check_same_server(
        cx: &Ctx<'_>,
        raw: &raw::RawSweep,
        targets: &[Target],
    ) -> Result<(), SpecError> {
        let external = |n: &str| {
            targets
                .iter()
                .find(|t| t.name == n)
                .is_some_and(|t| t.proxy.is_none() && matches!(t.kind, TargetKind::External(_)))
        };
        for t in &raw.targets {
            let Some(of) = &t.same_server_as else {
                continue;
            };
            let me = t.name.get_ref();
            if !external(me) {
                return Err(cx.err(of.span(), format!("target '{me}': same_server_as is for a url or socket target that reaches another's server through a proxy you run; a managed proxy is proxy = {{ kind = …, target = … }}")));
            }
            if of.get_ref() == me || !external(of.get_ref()) {
                let names: Vec<&str> = targets
                    .iter()
                    .filter(|x| &x.name != me && external(&x.name))
                    .map(|x| x.name.as_str())
                    .collect();
                return Err(cx.err(of.span(), format!("same_server_as = '{}': expected another url or socket target of this sweep (targets: {})", of.get_ref(), names.join(", "))));
            }
        }
        Ok(())
    }

    /// A target's own `storage_engine`, checked as `[data]`'s is (a name spliced into CREATE
    /// TABLE); a proxy's tables are its server's.
    fn target_engine(cx: &Ctx<'_>, t: &raw::RawTarget) -> Result<Option<String>, SpecError> {
        let Some(e) = &t.storage_engine else {
            return Ok(None);
        };
        if t.synthetic.is_some() {
            return Err(cx.err(
                e.span(),
                "storage_engine: a synthetic target has no tables; remove it",
            ));
        }
        crate::engine::config::check_engine_name(e.get_ref())
            .map_err(|why| cx.err(e.span(), format!("storage_engine: {why}")))?;
        Ok(Some(e.get_ref().to_ascii_lowercase()))
    }

    /// `ssl_mode`, `ssl_ca`, `ssl_cert`, `ssl_key`, `ssl_cipher` in a target's table: for url and socket
    /// targets (a managed server is local and plain).
    fn target_tls(
        cx: &Ctx<'_>,
        t: &raw::RawTarget,
        kind: TargetKind,
    ) -> Result<TargetKind, SpecError> {
        let given = [
            &t.ssl_mode,
            &t.ssl_ca,
            &t.ssl_cert,
            &t.ssl_key,
            &t.ssl_cipher,
        ];
        let Some(first) = given.iter().find_map(|g| g.as_ref()) else {
            return Ok(kind);
        };
        let TargetKind::External(mut c) = kind else {
            return Err(cx.err(
                first.span(),
                "ssl_* keys are for url or socket targets; a managed server is local (and a synthetic one is a model)",
            ));
        };
        if let Some(m) = &t.ssl_mode {
            c.tls.mode = m
                .get_ref()
                .parse()
                .map_err(|e| cx.err(m.span(), format!("ssl_mode: {e}")))?;
        }
        let path = |v: &Option<Spanned<String>>| v.as_ref().map(|p| PathBuf::from(p.get_ref()));
        c.tls.ca = path(&t.ssl_ca).or(c.tls.ca);
        c.tls.cert = path(&t.ssl_cert).or(c.tls.cert);
        c.tls.key = path(&t.ssl_key).or(c.tls.key);
        if let Some(list) = &t.ssl_cipher {
            crate::engine::wire::tls::cipher_suites(list.get_ref())
                .map_err(|e| cx.err(list.span(), e.replace("--mysql-ssl-cipher", "ssl_cipher")))?;
            c.tls.cipher = Some(list.get_ref().clone());
        }
        Ok(TargetKind::External(c))
    }

    /// A synthetic target is measured by its model in this process: not by the sysbench
    /// binary, not by client processes or pods, and it cannot be paired with real servers
    /// (a model's slice and a server's would share no machine).
    pub(super) fn synthetic_limits(
        cx: &Ctx<'_>,
        raw: &RawSweep,
        targets: &[Target],
        run: &super::RunSpec,
        executor: &super::distributed::Executor,
    ) -> Result<(), SpecError> {
        let synthetic = |t: &Target| t.kind.is_synthetic();
        let Some(i) = targets.iter().position(synthetic) else {
            return Ok(());
        };
        let span = raw.targets[i]
            .synthetic
            .as_ref()
            .map_or(raw.targets[i].name.span(), |s| s.span());
        let name = &targets[i].name;
        let why = if run.uses_sysbench() {
            Some("the sysbench driver needs a server: remove \"sysbench\" from run.drivers")
        } else if run.clients.iter().any(|&k| k > 1) {
            Some("its points are computed in this process: use clients = 1")
        } else if !matches!(executor, super::distributed::Executor::Local) {
            Some("its points are computed in this process: remove [executor]")
        } else if [run.duration_s, run.warmup_s, run.design.slice_s]
            .iter()
            .any(|&s| s > MAX_SYNTHETIC_S)
        {
            Some("its points are at most an hour long (each of their seconds is a computed sample): shorten run.duration, run.warmup and run.slice")
        } else if !targets.iter().all(synthetic)
            && raw
                .run
                .design
                .as_ref()
                .is_none_or(|d| d.get_ref().0 != super::design::Design::Sequential)
        {
            Some("it cannot share rounds with real servers (a model's slices and a server's share no machine): make every target synthetic, or set design = \"sequential\"")
        } else {
            None
        };
        match why {
            Some(why) => Err(cx.err(span, format!("target '{name}' is synthetic: {why}"))),
            None => Ok(()),
        }
    }

    /// sysbench 1.0.20's TLS is `--mysql-ssl=on`, which reads ./cacert.pem, ./client-cert.pem
    /// and ./client-key.pem (all three, or it cannot connect) and verifies nothing. A TLS
    /// target run by the sysbench driver must name those three files (the driver puts them
    /// where sysbench looks) and must not ask for verification, or it is refused here rather
    /// than run without what it asked for.
    pub(super) fn sysbench_tls(
        cx: &Ctx<'_>,
        raw: &RawSweep,
        targets: &[Target],
        run: &super::RunSpec,
    ) -> Result<(), SpecError> {
        if !run.uses_sysbench() {
            return Ok(());
        }
        for (t, r) in targets.iter().zip(&raw.targets) {
            let TargetKind::External(c) = &t.kind else {
                continue;
            };
            let tls = &c.tls;
            let why = match tls.mode {
                SslMode::Disabled => continue,
                SslMode::VerifyCa | SslMode::VerifyIdentity => "sysbench 1.0.20 does not verify the server's certificate: use ssl-mode=REQUIRED for it",
                _ if tls.ca.is_none() || tls.cert.is_none() || tls.key.is_none() => "sysbench 1.0.20's TLS needs a CA, a client certificate and its key (it reads ./cacert.pem, ./client-cert.pem, ./client-key.pem): give ssl-ca, ssl-cert and ssl-key",
                _ => continue,
            };
            return Err(cx.err(
                r.name.span(),
                format!("target '{}' uses TLS and run.drivers has \"sysbench\": {why}; or run it with the native driver alone", t.name),
            ));
        }
        Ok(())
    }

    pub(super) fn configs(cx: &Ctx<'_>, raw: &RawSweep) -> Result<Vec<Config>, SpecError> {
        let mut configs = Vec::new();
        for c in &raw.configs {
            let cname = c.name.get_ref().clone();
            if !name_ok(&cname) {
                return Err(cx.err(
                    c.name.span(),
                    format!("config name '{cname}': {}", super::NAME_RULE),
                ));
            }
            if configs.iter().any(|x: &Config| x.name == cname) {
                return Err(cx.err(c.name.span(), format!("config '{cname}' is defined twice")));
            }
            let mut vars = Vec::new();
            for (k, v) in &c.vars {
                let key = k.get_ref();
                if !super::var_name_ok(key) {
                    return Err(cx.err(
                        k.span(),
                        format!("vars: '{key}' is not a server variable name"),
                    ));
                }
                let lit = match v.get_ref() {
                    toml::Value::String(s)
                        if s.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b)) =>
                    {
                        format!("'{s}'")
                    }
                    toml::Value::String(_) => {
                        return Err(cx.err(
                            v.span(),
                            format!(
                                "vars.{key}: value may hold only letters, digits, '_', '.', '-'"
                            ),
                        ))
                    }
                    toml::Value::Boolean(b) => {
                        if *b {
                            "ON".into()
                        } else {
                            "OFF".into()
                        }
                    }
                    other => toml_literal(other).ok_or_else(|| {
                        cx.err(
                            v.span(),
                            format!("vars.{key}: expected a number, string or boolean"),
                        )
                    })?,
                };
                vars.push((key.clone(), lit));
            }
            configs.push(Config {
                name: cname,
                mycnf: c.mycnf.as_ref().map(|m| PathBuf::from(m.get_ref())),
                vars,
            });
        }
        if configs.is_empty() {
            configs.push(Config {
                name: "default".into(),
                mycnf: None,
                vars: Vec::new(),
            });
        }
        Ok(configs)
    }
}

/// A path starting with "~/" under $HOME; any other path as it is.
fn home_relative(p: &std::path::Path) -> std::path::PathBuf {
    match (p.strip_prefix("~"), std::env::var_os("HOME")) {
        (Ok(rest), Some(home)) => std::path::Path::new(&home).join(rest),
        _ => p.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::home_relative;
    use crate::pipeline::spec::SweepSpec;
    use std::path::Path;

    /// A target's own storage engine: read, lower-cased, inherited by a proxy in front of
    /// it, refused on a synthetic target and when not a name.
    #[test]
    fn a_targets_storage_engine_is_its_own_and_its_proxys() {
        let head = "name = \"e\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\n";
        let spec = SweepSpec::parse(
            Path::new("e.toml"),
            &format!("{head}[[targets]]\nname = \"inno\"\nserver = {{}}\n[[targets]]\nname = \"rocks\"\nserver = {{}}\nstorage_engine = \"RocksDB\"\n[[targets]]\nname = \"hap\"\nproxy = {{ kind = \"haproxy\", target = \"rocks\" }}\n"),
        )
        .unwrap();
        assert_eq!(spec.engine_of("inno"), "innodb");
        assert_eq!(spec.engine_of("rocks"), "rocksdb");
        assert_eq!(spec.engine_of("hap"), "rocksdb");
        for (target, says) in [
            (
                "name = \"m\"\nsynthetic = { seed = 1 }\nstorage_engine = \"rocksdb\"\n",
                "a synthetic target has no tables",
            ),
            (
                "name = \"m\"\nserver = {}\nstorage_engine = \"rocks db\"\n",
                "storage_engine: expected an engine name",
            ),
        ] {
            let e = SweepSpec::parse(Path::new("e.toml"), &format!("{head}[[targets]]\n{target}"))
                .expect_err("refused")
                .to_string();
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn a_basedir_under_home_is_the_readers() {
        let home = std::env::var_os("HOME").expect("HOME is set");
        assert_eq!(
            home_relative(Path::new("~/.cache/sweepbench/mariadb-10.11.18/usr")),
            Path::new(&home).join(".cache/sweepbench/mariadb-10.11.18/usr")
        );
        assert_eq!(
            home_relative(Path::new("/opt/m/usr")),
            Path::new("/opt/m/usr")
        );
        assert_eq!(
            home_relative(Path::new("~other/usr")),
            Path::new("~other/usr")
        );
        assert_eq!(home_relative(Path::new("rel/usr")), Path::new("rel/usr"));
    }
}
