//! TLS test support: certificates made with rcgen, and a throwaway MariaDB that uses them.
#![allow(dead_code)]

use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
use std::path::{Path, PathBuf};
use sweepbench::pipeline::server::{managed::exec_root, ManagedServer, ServerSpec};

pub struct Pki {
    _dir: tempfile::TempDir,
    pub ca: PathBuf,
    pub other_ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

fn ca() -> (rcgen::Certificate, KeyPair) {
    let key = KeyPair::generate().unwrap();
    let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    (p.self_signed(&key).unwrap(), key)
}

/// A CA, a server certificate it signed for localhost and 127.0.0.1, and an unrelated CA.
pub fn pki() -> Pki {
    let dir = tempfile::tempdir().unwrap();
    let (ca_cert, ca_key) = ca();
    let (other, _) = ca();
    let key = KeyPair::generate().unwrap();
    let params = CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let cert = params.signed_by(&key, &ca_cert, &ca_key).unwrap();
    let put = |name: &str, pem: String| {
        let p = dir.path().join(name);
        std::fs::write(&p, pem).unwrap();
        p
    };
    Pki {
        ca: put("ca.pem", ca_cert.pem()),
        other_ca: put("other-ca.pem", other.pem()),
        cert: put("server-cert.pem", cert.pem()),
        key: put("server-key.pem", key.serialize_pem()),
        _dir: dir,
    }
}

/// A throwaway MariaDB with TLS from `p`, a `REQUIRE SSL` user tlsu / "tls pw" and tlsdb.
pub fn tls_server(p: &Pki) -> ManagedServer {
    let arg = |k: &str, v: &Path| format!("--{k}={}", v.display());
    let s = ManagedServer::start(&ServerSpec {
        options: vec![
            arg("ssl-ca", &p.ca),
            arg("ssl-cert", &p.cert),
            arg("ssl-key", &p.key),
        ],
        ..ServerSpec::default()
    })
    .unwrap();
    exec_root(
        &s,
        &[
            "CREATE USER 'tlsu'@'127.0.0.1' IDENTIFIED BY 'tls pw' REQUIRE SSL",
            "CREATE DATABASE tlsdb",
            "GRANT ALL ON tlsdb.* TO 'tlsu'@'127.0.0.1'",
        ],
    )
    .unwrap();
    s
}
