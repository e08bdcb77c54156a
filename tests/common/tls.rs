//! TLS test support: certificates made with rcgen, and a throwaway MariaDB that uses them.
#![allow(dead_code)]

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use std::path::{Path, PathBuf};
use sweepbench::pipeline::server::{managed::exec_root, ManagedServer, ServerSpec};

pub struct Pki {
    _dir: tempfile::TempDir,
    pub ca: PathBuf,
    pub other_ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
    /// A server certificate the CA signed for db.example only, and its key.
    pub elsewhere_cert: PathBuf,
    pub elsewhere_key: PathBuf,
    /// A directory holding client-cert.pem and client-key.pem (signed by `ca`), as sysbench
    /// 1.0.20's `--mysql-ssl=on` finds them in its working directory.
    pub client_dir: PathBuf,
}

/// Params named `cn`: a leaf must not carry its CA's name, or OpenSSL takes it for
/// self-signed.
fn named(sans: Vec<String>, cn: &str) -> CertificateParams {
    let mut p = CertificateParams::new(sans).unwrap();
    p.distinguished_name.push(DnType::CommonName, cn);
    p
}

fn ca(cn: &str) -> (rcgen::Certificate, KeyPair) {
    let key = KeyPair::generate().unwrap();
    let mut p = named(Vec::new(), cn);
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    (p.self_signed(&key).unwrap(), key)
}

/// A CA, a server certificate it signed for localhost and 127.0.0.1, and an unrelated CA.
pub fn pki() -> Pki {
    let dir = tempfile::tempdir().unwrap();
    let (ca_cert, ca_key) = ca("sweepbench test CA");
    let (other, _) = ca("another CA");
    let key = KeyPair::generate().unwrap();
    let params = named(vec!["localhost".into(), "127.0.0.1".into()], "localhost");
    let cert = params.signed_by(&key, &ca_cert, &ca_key).unwrap();
    let elsewhere_key = KeyPair::generate().unwrap();
    let elsewhere = named(vec!["db.example".into()], "db.example")
        .signed_by(&elsewhere_key, &ca_cert, &ca_key)
        .unwrap();
    let client_key = KeyPair::generate().unwrap();
    let client = named(vec!["client".into()], "client")
        .signed_by(&client_key, &ca_cert, &ca_key)
        .unwrap();
    let client_dir = dir.path().join("client");
    std::fs::create_dir(&client_dir).unwrap();
    std::fs::write(client_dir.join("client-cert.pem"), client.pem()).unwrap();
    std::fs::write(
        client_dir.join("client-key.pem"),
        client_key.serialize_pem(),
    )
    .unwrap();
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
        elsewhere_cert: put("elsewhere-cert.pem", elsewhere.pem()),
        elsewhere_key: put("elsewhere-key.pem", elsewhere_key.serialize_pem()),
        client_dir,
        _dir: dir,
    }
}

/// A throwaway MariaDB with TLS from `p`, a `REQUIRE SSL` user tlsu / "tls pw" and tlsdb.
pub fn tls_server(p: &Pki) -> ManagedServer {
    tls_server_with(p, &p.cert, &p.key)
}

/// The same with another server certificate and key.
pub fn tls_server_with(p: &Pki, cert: &Path, key: &Path) -> ManagedServer {
    let arg = |k: &str, v: &Path| format!("--{k}={}", v.display());
    let s = ManagedServer::start(&ServerSpec {
        options: vec![
            arg("ssl-ca", &p.ca),
            arg("ssl-cert", cert),
            arg("ssl-key", key),
        ],
        ..ServerSpec::default()
    })
    .unwrap();
    exec_root(
        &s,
        &[
            "CREATE USER 'tlsu'@'127.0.0.1' IDENTIFIED BY 'tls pw' REQUIRE SSL",
            "CREATE USER 'x509u'@'127.0.0.1' IDENTIFIED BY 'tls pw' REQUIRE X509",
            "CREATE DATABASE tlsdb",
            "GRANT ALL ON tlsdb.* TO 'tlsu'@'127.0.0.1'",
            "GRANT ALL ON tlsdb.* TO 'x509u'@'127.0.0.1'",
        ],
    )
    .unwrap();
    s
}
