//! Servers whose certificate is X.509 version 1 — what the MySQL and MariaDB manuals' openssl
//! recipe makes on OpenSSL 3 and what MySQL 5.7 generates — which webpki refuses to parse at
//! all, so rustls alone cannot talk TLS to them in any mode. The mysql client can: encrypted
//! and unverified (REQUIRED), or with the chain checked against the CA (VERIFY_CA). Here the
//! certificate is read with x509-cert, and the two checks a v1 certificate still needs are
//! made on its public key with rustls's own algorithms: the handshake's signature (the server
//! holds the certificate's key: a tampered handshake fails) and, for VERIFY_CA, the CA's
//! signature over the certificate and its validity period. VERIFY_IDENTITY stays webpki's:
//! a v1 certificate carries no subjectAltName to check the name against.

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, SubjectPublicKeyInfoDer, UnixTime};
use rustls::{CertificateError, Error, PeerMisbehaved, SignatureScheme};
use x509_cert::der::{Decode, Encode};
use x509_cert::Certificate;

/// A certificate webpki cannot read because it is version 1, decoded.
pub struct V1 {
    cert: Certificate,
}

impl V1 {
    /// The certificate if it is a well-formed version 1 one; None for any other (those go to
    /// webpki, which gives its own answer).
    pub fn of(der: &CertificateDer<'_>) -> Option<V1> {
        let cert = Certificate::from_der(der.as_ref()).ok()?;
        (cert.tbs_certificate.version == x509_cert::Version::V1).then_some(V1 { cert })
    }

    fn spki(&self) -> Result<Vec<u8>, Error> {
        self.cert
            .tbs_certificate
            .subject_public_key_info
            .to_der()
            .map_err(|_| Error::InvalidCertificate(CertificateError::BadEncoding))
    }

    /// The handshake's signature, made with the key the certificate names (TLS 1.2: any
    /// algorithm of the scheme; TLS 1.3: its first, and only schemes TLS 1.3 allows, as
    /// rustls does).
    pub fn verify_handshake(
        &self,
        message: &[u8],
        scheme: SignatureScheme,
        signature: &[u8],
        algs: &WebPkiSupportedAlgorithms,
        tls13: bool,
    ) -> Result<HandshakeSignatureValid, Error> {
        if tls13 && !allowed_in_tls13(scheme) {
            return Err(PeerMisbehaved::SignedHandshakeWithUnadvertisedSigScheme.into());
        }
        let spki = self.spki()?;
        let spki = SubjectPublicKeyInfoDer::from(spki.as_slice());
        let key = webpki::RawPublicKeyEntity::try_from(&spki)
            .map_err(|_| Error::InvalidCertificate(CertificateError::BadEncoding))?;
        let candidates = algs
            .mapping
            .iter()
            .find(|(s, _)| *s == scheme)
            .map(|(_, a)| *a)
            .ok_or(PeerMisbehaved::SignedHandshakeWithUnadvertisedSigScheme)?;
        let tried = if tls13 {
            &candidates[..candidates.len().min(1)]
        } else {
            candidates
        };
        if tried
            .iter()
            .any(|alg| key.verify_signature(*alg, message, signature).is_ok())
        {
            Ok(HandshakeSignatureValid::assertion())
        } else {
            Err(Error::InvalidCertificate(CertificateError::BadSignature))
        }
    }

    /// VERIFY_CA for a version 1 certificate: issued by one of `cas` (its issuer is the CA's
    /// subject and the CA's key made its signature) and valid now. Intermediates are not
    /// followed: a v1 certificate is signed by the CA directly in the recipes that make them.
    pub fn verify_issued_by(
        &self,
        cas: &[Certificate],
        algs: &WebPkiSupportedAlgorithms,
        now: UnixTime,
    ) -> Result<(), Error> {
        let tbs = &self.cert.tbs_certificate;
        let bad = |e| Error::InvalidCertificate(e);
        let signed = tbs
            .to_der()
            .map_err(|_| bad(CertificateError::BadEncoding))?;
        let alg_id = contents(
            &self
                .cert
                .signature_algorithm
                .to_der()
                .map_err(|_| bad(CertificateError::BadEncoding))?,
        )
        .to_vec();
        let signature = self
            .cert
            .signature
            .as_bytes()
            .ok_or(bad(CertificateError::BadEncoding))?;
        let mut issuer_known = false;
        for ca in cas
            .iter()
            .filter(|ca| ca.tbs_certificate.subject == tbs.issuer)
        {
            issuer_known = true;
            let Ok(spki) = ca.tbs_certificate.subject_public_key_info.to_der() else {
                continue;
            };
            let spki = SubjectPublicKeyInfoDer::from(spki.as_slice());
            let Ok(key) = webpki::RawPublicKeyEntity::try_from(&spki) else {
                continue;
            };
            let made_by_ca = algs
                .all
                .iter()
                .filter(|a| a.signature_alg_id().as_ref() == alg_id.as_slice())
                .any(|a| key.verify_signature(*a, &signed, signature).is_ok());
            if made_by_ca {
                let secs = now.as_secs();
                let v = &tbs.validity;
                return if secs < v.not_before.to_unix_duration().as_secs() {
                    Err(bad(CertificateError::NotValidYet))
                } else if secs > v.not_after.to_unix_duration().as_secs() {
                    Err(bad(CertificateError::Expired))
                } else {
                    Ok(())
                };
            }
        }
        Err(bad(if issuer_known {
            CertificateError::BadSignature
        } else {
            CertificateError::UnknownIssuer
        }))
    }
}

/// The CA certificates of a PEM file, decoded (those x509-cert cannot read are skipped:
/// webpki has already refused a file with none it can use).
pub fn decode_cas(ders: &[CertificateDer<'_>]) -> Vec<Certificate> {
    ders.iter()
        .filter_map(|d| Certificate::from_der(d.as_ref()).ok())
        .collect()
}

/// RFC 8446 4.2.3: TLS 1.3 signs with no PKCS#1 v1.5 RSA and no hash older than SHA-256
/// (the scheme's high byte is the legacy hash: none, MD5, SHA-1, SHA-224; its low byte 1 is
/// RSA PKCS#1).
fn allowed_in_tls13(scheme: SignatureScheme) -> bool {
    let v = u16::from(scheme);
    let (hash, sign) = ((v >> 8) as u8, v as u8);
    hash > 3 && sign != 1
}

/// A DER value's contents, without its tag and length.
fn contents(der: &[u8]) -> &[u8] {
    match der.get(1) {
        Some(&l) if l < 0x80 => &der[2..],
        Some(&l) => {
            let n = (l & 0x7f) as usize;
            der.get(2 + n..).unwrap_or(&[])
        }
        None => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contents_drop_the_tag_and_length() {
        assert_eq!(contents(&[0x30, 0x03, 1, 2, 3]), &[1, 2, 3]);
        let long: Vec<u8> = [0x30, 0x81, 0x80].into_iter().chain([7; 128]).collect();
        assert_eq!(contents(&long).len(), 128);
        assert!(contents(&[0x30]).is_empty());
    }

    /// A directory made by openssl as the MySQL manual's recipe makes a server's files
    /// (OpenSSL 3 leaves out the extensions, and with them the version): ca.pem, and cert.pem
    /// of version 1 it signed for key.pem; fake.pem, a CA of the same name with another key.
    fn v1_pki() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for args in [
            "req -x509 -newkey rsa:2048 -nodes -keyout ca-key.pem -out ca.pem -days 2 -subj /CN=same-name",
            "req -x509 -newkey rsa:2048 -nodes -keyout fake-key.pem -out fake.pem -days 2 -subj /CN=same-name",
            "req -newkey rsa:2048 -nodes -keyout key.pem -out req.csr -subj /CN=localhost",
            "x509 -req -in req.csr -CA ca.pem -CAkey ca-key.pem -set_serial 01 -out cert.pem -days 2",
        ] {
            let out = std::process::Command::new("openssl")
                .current_dir(d.path())
                .args(args.split_whitespace())
                .output()
                .expect("openssl (.ci/run installs it)");
            assert!(out.status.success(), "openssl {args}: {out:?}");
        }
        d
    }

    fn der(d: &tempfile::TempDir, file: &str) -> CertificateDer<'static> {
        use rustls::pki_types::pem::PemObject;
        CertificateDer::from_pem_file(d.path().join(file)).unwrap()
    }

    /// The handshake's signature is checked against the certificate's key: one made with
    /// that key verifies, a byte changed in it or in the signed message does not, and TLS 1.3
    /// refuses a scheme it does not allow.
    #[test]
    fn a_tampered_handshake_signature_is_refused() {
        use rustls::pki_types::pem::PemObject;
        let d = v1_pki();
        let v1 = V1::of(&der(&d, "cert.pem")).expect("a version 1 certificate");
        let key =
            rustls::pki_types::PrivateKeyDer::from_pem_file(d.path().join("key.pem")).unwrap();
        let provider = rustls::crypto::ring::default_provider();
        let algs = &provider.signature_verification_algorithms;
        let signer = provider
            .key_provider
            .load_private_key(key)
            .unwrap()
            .choose_scheme(&[SignatureScheme::RSA_PSS_SHA256])
            .unwrap();
        let msg = b"the handshake transcript";
        let sig = signer.sign(msg).unwrap();
        for tls13 in [false, true] {
            let ok = v1.verify_handshake(msg, SignatureScheme::RSA_PSS_SHA256, &sig, algs, tls13);
            assert!(ok.is_ok(), "{ok:?}");
            let mut bad = sig.clone();
            bad[7] ^= 1;
            let e = v1.verify_handshake(msg, SignatureScheme::RSA_PSS_SHA256, &bad, algs, tls13);
            assert!(e.is_err());
            let e = v1.verify_handshake(
                b"another transcript",
                SignatureScheme::RSA_PSS_SHA256,
                &sig,
                algs,
                tls13,
            );
            assert!(e.is_err());
        }
        let e = v1.verify_handshake(msg, SignatureScheme::RSA_PKCS1_SHA256, &sig, algs, true);
        assert!(
            e.is_err(),
            "TLS 1.3 allows no PKCS#1 v1.5 handshake signature"
        );
    }

    /// VERIFY_CA of a version 1 certificate: the CA that signed it is taken; an impostor CA
    /// with the same name, whose key did not sign it, is not; nor is the right CA once the
    /// certificate has expired or before it is valid.
    #[test]
    fn a_version_1_certificate_is_checked_against_the_key_of_its_ca() {
        let d = v1_pki();
        let v1 = V1::of(&der(&d, "cert.pem")).expect("a version 1 certificate");
        let provider = rustls::crypto::ring::default_provider();
        let algs = &provider.signature_verification_algorithms;
        let now = UnixTime::now();
        let ca = decode_cas(&[der(&d, "ca.pem")]);
        let fake = decode_cas(&[der(&d, "fake.pem")]);
        assert!(v1.verify_issued_by(&ca, algs, now).is_ok());
        assert_eq!(
            v1.verify_issued_by(&fake, algs, now),
            Err(Error::InvalidCertificate(CertificateError::BadSignature))
        );
        assert_eq!(
            v1.verify_issued_by(&[], algs, now),
            Err(Error::InvalidCertificate(CertificateError::UnknownIssuer))
        );
        let in_a_week =
            UnixTime::since_unix_epoch(std::time::Duration::from_secs(now.as_secs() + 7 * 86_400));
        assert_eq!(
            v1.verify_issued_by(&ca, algs, in_a_week),
            Err(Error::InvalidCertificate(CertificateError::Expired))
        );
        let last_year = UnixTime::since_unix_epoch(std::time::Duration::from_secs(
            now.as_secs() - 365 * 86_400,
        ));
        assert_eq!(
            v1.verify_issued_by(&ca, algs, last_year),
            Err(Error::InvalidCertificate(CertificateError::NotValidYet))
        );
    }

    /// A version 3 certificate is not taken here: webpki checks it as before.
    #[test]
    fn only_version_1_certificates_are_taken() {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["db.example".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        assert!(V1::of(cert.der()).is_none());
        assert!(V1::of(&CertificateDer::from(vec![0x30, 0x00])).is_none());
    }
}
