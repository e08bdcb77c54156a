//! TLS for the workload's client (rustls with ring: no OpenSSL to build): what each of
//! MySQL's `--ssl-mode` levels verifies, and the client configuration that does it.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
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

/// A TLS failure in words a DBA can act on: rustls names a version 1 certificate (what
/// MySQL 5.7's auto-generated certificates are) only by an enum's name.
pub fn explain(why: &str) -> String {
    if why.contains("UnsupportedCertVersion") {
        format!("{why}: the server's certificate is X.509 version 1, which rustls does not accept even unverified; give the server a version 3 certificate (ssl_cert, ssl_key), or connect without TLS")
    } else {
        why.to_string()
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
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
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// VERIFY_CA: the chain must lead to the CA; the name may be anything.
#[derive(Debug)]
struct CaOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for CaOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
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
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

fn read(what: &str, path: &Path) -> String {
    format!("{what} {}", path.display())
}

/// The client configuration for `verify`, trusting `ca` (a PEM file) and presenting
/// `cert`/`key` when given. Errors name the file and what is wrong with it.
pub fn client_config(
    verify: Verify,
    ca: Option<&Path>,
    cert: Option<&Path>,
    key: Option<&Path>,
) -> Result<Arc<ClientConfig>, String> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let builder = match verify {
        Verify::Nothing => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider.clone()))),
        Verify::Ca | Verify::Identity => {
            let ca = ca.ok_or("VERIFY_CA and VERIFY_IDENTITY need the CA: give --mysql-ssl-ca")?;
            let mut roots = RootCertStore::empty();
            for c in CertificateDer::pem_file_iter(ca)
                .map_err(|e| format!("{}: {e}", read("reading the CA", ca)))?
            {
                let c = c.map_err(|e| format!("{}: {e}", read("reading the CA", ca)))?;
                roots
                    .add(c)
                    .map_err(|e| format!("{}: {e}", read("the CA", ca)))?;
            }
            if roots.is_empty() {
                return Err(format!("{} holds no certificate", ca.display()));
            }
            let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| e.to_string())?;
            if verify == Verify::Ca {
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(CaOnly(webpki)))
            } else {
                builder.with_webpki_verifier(webpki)
            }
        }
    };
    let config = match (cert, key) {
        (Some(cert), Some(key)) => {
            let chain = CertificateDer::pem_file_iter(cert)
                .and_then(|i| i.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("{}: {e}", read("reading the certificate", cert)))?;
            let key = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| format!("{}: {e}", read("reading the key", key)))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("the client certificate and key: {e}"))?
        }
        (None, None) => builder.with_no_client_auth(),
        _ => return Err("give both --mysql-ssl-cert and --mysql-ssl-key, or neither".into()),
    };
    Ok(Arc::new(config))
}
