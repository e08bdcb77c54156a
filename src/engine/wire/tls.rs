//! TLS for the workload's client (rustls with ring: no OpenSSL to build): what each of
//! MySQL's `--ssl-mode` levels verifies, and the client configuration that does it.

use super::tls_v1::V1;
use crate::engine::config::TlsOptions;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, CipherSuite, ClientConfig, DigitallySignedStruct, RootCertStore,
    SignatureScheme, SupportedCipherSuite,
};
use std::path::Path;
use std::sync::Arc;

/// What the server's certificate must prove.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// Encrypt only (REQUIRED, PREFERRED, sysbench's `--mysql-ssl=on`).
    Nothing,
    /// Signed by the given CA, whatever name it carries (VERIFY_CA).
    Ca,
    /// Signed by the CA and naming the host connected to (VERIFY_IDENTITY).
    Identity,
}

/// How one login uses TLS.
#[derive(Clone)]
pub struct Tls {
    pub config: Arc<ClientConfig>,
    /// Fail when the server cannot do TLS (every mode but PREFERRED).
    pub required: bool,
}

/// A TLS failure in words a DBA can act on: rustls names a version 1 certificate only by an
/// enum's name, and it reaches here only under VERIFY_IDENTITY (REQUIRED and VERIFY_CA take
/// one: `tls_v1`).
pub fn explain(why: &str) -> String {
    if why.contains("UnsupportedCertVersion") {
        format!("{why}: the server's certificate is X.509 version 1, which carries no subjectAltName for VERIFY_IDENTITY to check the host against; give the server a version 3 certificate naming the host (ssl_cert, ssl_key), or use VERIFY_CA or REQUIRED, which take version 1 certificates")
    } else {
        why.to_string()
    }
}

/// Accepts any certificate, still checking the handshake's signatures.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.0.signature_verification_algorithms;
        match V1::of(cert) {
            Some(v1) => v1.verify_handshake(message, dss.scheme, dss.signature(), algs, false),
            None => verify_tls12_signature(message, cert, dss, algs),
        }
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.0.signature_verification_algorithms;
        match V1::of(cert) {
            Some(v1) => v1.verify_handshake(message, dss.scheme, dss.signature(), algs, true),
            None => verify_tls13_signature(message, cert, dss, algs),
        }
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// VERIFY_CA: the chain must lead to the CA; the name may be anything. A version 1
/// certificate, which webpki cannot read, is checked against the CA's certificates by
/// `tls_v1` instead.
struct CaOnly {
    webpki: Arc<WebPkiServerVerifier>,
    cas: Vec<x509_cert::Certificate>,
    provider: Arc<CryptoProvider>,
}

impl std::fmt::Debug for CaOnly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CaOnly({} CA certificate(s))", self.cas.len())
    }
}

impl ServerCertVerifier for CaOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(v1) = V1::of(end_entity) {
            let algs = &self.provider.signature_verification_algorithms;
            return v1
                .verify_issued_by(&self.cas, algs, now)
                .map(|()| ServerCertVerified::assertion());
        }
        match self.webpki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.provider.signature_verification_algorithms;
        match V1::of(cert) {
            Some(v1) => v1.verify_handshake(message, dss.scheme, dss.signature(), algs, false),
            None => self.webpki.verify_tls12_signature(message, cert, dss),
        }
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.provider.signature_verification_algorithms;
        match V1::of(cert) {
            Some(v1) => v1.verify_handshake(message, dss.scheme, dss.signature(), algs, true),
            None => self.webpki.verify_tls13_signature(message, cert, dss),
        }
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// OpenSSL's names of the suites rustls offers with ring (TLS 1.3's are the IANA names).
const OPENSSL_NAMES: [(&str, CipherSuite); 6] = [
    (
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    ),
    (
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    ),
    (
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
    (
        "ECDHE-RSA-AES128-GCM-SHA256",
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    ),
    (
        "ECDHE-RSA-AES256-GCM-SHA384",
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    ),
    (
        "ECDHE-RSA-CHACHA20-POLY1305",
        CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
];

/// The suites a `--mysql-ssl-cipher` list names (colon-separated, as OpenSSL's cipher
/// lists; OpenSSL's or IANA's names, any case). A name rustls does not offer is an error that
/// lists the ones it does: a benchmark must not silently run another cipher than asked.
pub fn cipher_suites(list: &str) -> Result<Vec<SupportedCipherSuite>, String> {
    let all = rustls::crypto::ring::ALL_CIPHER_SUITES;
    let iana = |s: &SupportedCipherSuite| {
        let n = format!("{:?}", s.suite());
        // rustls spells TLS 1.3's suites TLS13_…; their IANA and OpenSSL names are TLS_….
        n.strip_prefix("TLS13_")
            .map_or(n.clone(), |r| format!("TLS_{r}"))
    };
    let mut out = Vec::new();
    for name in list
        .split([':', ','])
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        let by_openssl = OPENSSL_NAMES
            .iter()
            .find(|(o, _)| o.eq_ignore_ascii_case(name))
            .map(|(_, s)| *s);
        let suite = all
            .iter()
            .find(|s| by_openssl == Some(s.suite()) || iana(s).eq_ignore_ascii_case(name));
        match suite {
            Some(s) if !out.contains(s) => out.push(*s),
            Some(_) => {}
            None => {
                let offered: Vec<String> = all
                    .iter()
                    .map(|s| {
                        let i = iana(s);
                        match OPENSSL_NAMES.iter().find(|(_, c)| *c == s.suite()) {
                            Some((o, _)) => format!("{o} ({i})"),
                            None => i,
                        }
                    })
                    .collect();
                return Err(format!(
                    "--mysql-ssl-cipher: '{name}' is not a cipher sweepbench's TLS (rustls) offers; use one or more of, separated by ':': {}",
                    offered.join(", ")
                ));
            }
        }
    }
    if out.is_empty() {
        return Err("--mysql-ssl-cipher names no cipher".into());
    }
    Ok(out)
}

fn read(what: &str, path: &Path) -> String {
    format!("{what} {}", path.display())
}

/// The client configuration for `verify`, trusting `o.ca` (a PEM file), presenting
/// `o.cert`/`o.key` when given, and offering only `o.cipher`'s suites when given. Errors name
/// the file or the cipher and what is wrong with it.
pub fn client_config(verify: Verify, o: &TlsOptions) -> Result<Arc<ClientConfig>, String> {
    let (ca, cert, key) = (o.ca.as_deref(), o.cert.as_deref(), o.key.as_deref());
    let mut provider = rustls::crypto::ring::default_provider();
    let mut versions: Vec<&'static rustls::SupportedProtocolVersion> =
        rustls::DEFAULT_VERSIONS.to_vec();
    if let Some(list) = &o.cipher {
        provider.cipher_suites = cipher_suites(list)?;
        versions.retain(|v| provider.cipher_suites.iter().any(|s| s.version() == *v));
    }
    let provider = Arc::new(provider);
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| e.to_string())?;
    let builder = match verify {
        Verify::Nothing => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider.clone()))),
        Verify::Ca | Verify::Identity => {
            let ca = ca.ok_or("VERIFY_CA and VERIFY_IDENTITY need the CA: give --mysql-ssl-ca")?;
            let mut roots = RootCertStore::empty();
            let mut ders = Vec::new();
            for c in CertificateDer::pem_file_iter(ca)
                .map_err(|e| format!("{}: {e}", read("reading the CA", ca)))?
            {
                let c = c.map_err(|e| format!("{}: {e}", read("reading the CA", ca)))?;
                ders.push(c.clone());
                roots
                    .add(c)
                    .map_err(|e| format!("{}: {e}", read("the CA", ca)))?;
            }
            if roots.is_empty() {
                return Err(format!("{} holds no certificate", ca.display()));
            }
            let webpki =
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()
                    .map_err(|e| e.to_string())?;
            if verify == Verify::Ca {
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(CaOnly {
                        webpki,
                        cas: super::tls_v1::decode_cas(&ders),
                        provider,
                    }))
            } else {
                builder.with_webpki_verifier(webpki)
            }
        }
    };
    let config = match (cert, key) {
        (Some(cert), Some(key_path)) => {
            let chain = CertificateDer::pem_file_iter(cert)
                .and_then(|i| i.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("{}: {e}", read("reading the certificate", cert)))?;
            let key = PrivateKeyDer::from_pem_file(key_path)
                .map_err(|e| format!("{}: {e}", read("reading the key", key_path)))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| match e {
                    rustls::Error::InconsistentKeys(_) => format!(
                        "the client certificate {} and the key {} do not belong together ({e}): give the key the certificate was made with",
                        cert.display(),
                        key_path.display()
                    ),
                    e => format!(
                        "the client certificate {} and key {}: {e}",
                        cert.display(),
                        key_path.display()
                    ),
                })?
        }
        (None, None) => builder.with_no_client_auth(),
        _ => return Err("give both --mysql-ssl-cert and --mysql-ssl-key, or neither".into()),
    };
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cipher_lists_take_openssl_and_iana_names_in_any_case() {
        let got = cipher_suites("ECDHE-RSA-AES128-GCM-SHA256:tls_aes_256_gcm_sha384, TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256:ECDHE-RSA-AES128-GCM-SHA256").unwrap();
        let names: Vec<CipherSuite> = got.iter().map(|s| s.suite()).collect();
        assert_eq!(
            names,
            [
                CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
                CipherSuite::TLS13_AES_256_GCM_SHA384,
                CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
            ]
        );
        let e = cipher_suites("AES128-SHA").unwrap_err();
        assert!(
            e.contains("'AES128-SHA'") && e.contains("TLS_AES_128_GCM_SHA256"),
            "{e}"
        );
        assert!(cipher_suites(" : ").is_err());
    }

    /// A list of TLS 1.2 suites alone builds a TLS 1.2-only configuration (rustls refuses a
    /// TLS 1.3 one with no TLS 1.3 suite).
    #[test]
    fn a_tls12_only_list_builds() {
        let o = TlsOptions {
            cipher: Some("ECDHE-RSA-AES256-GCM-SHA384".into()),
            ..Default::default()
        };
        assert!(client_config(Verify::Nothing, &o).is_ok());
        let o = TlsOptions {
            cipher: Some("TLS_CHACHA20_POLY1305_SHA256".into()),
            ..Default::default()
        };
        assert!(client_config(Verify::Nothing, &o).is_ok());
    }

    /// A client certificate with another key's file is refused naming both files and what
    /// is wrong (#22 N24), before anything connects.
    #[test]
    fn a_certificate_and_a_key_that_do_not_match_are_named() {
        let d = tempfile::tempdir().unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let other = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["client".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let (c, k) = (
            d.path().join("client-cert.pem"),
            d.path().join("other-key.pem"),
        );
        std::fs::write(&c, cert.pem()).unwrap();
        std::fs::write(&k, other.serialize_pem()).unwrap();
        let o = TlsOptions {
            cert: Some(c.clone()),
            key: Some(k.clone()),
            ..TlsOptions::default()
        };
        let e = client_config(Verify::Nothing, &o).unwrap_err();
        assert!(e.contains("do not belong together"), "{e}");
        assert!(
            e.contains(&c.display().to_string()) && e.contains(&k.display().to_string()),
            "{e}"
        );
        std::fs::write(&k, key.serialize_pem()).unwrap();
        assert!(client_config(Verify::Nothing, &o).is_ok());
    }
}
