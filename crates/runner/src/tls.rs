//! TLS for `https://` targets: one rustls client configuration (the `ring` provider) shared by
//! both transports, the `/tokenize` client and the probes, and a handshake made before a run
//! starts so that a certificate that does not verify is refused before anything is measured.
//!
//! The system's roots (rustls-native-certs) are trusted, plus the PEM certificates of
//! `target.tls.ca_file` when it is given.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rustls::ClientConfig;
use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};

/// Failure to set up TLS, or a server whose certificate does not verify.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// `target.tls.ca_file` cannot be read.
    #[error("reading target.tls.ca_file `{}`", path.display())]
    CaFile {
        /// The file.
        path: PathBuf,
        /// Why it cannot be read.
        #[source]
        error: io::Error,
    },
    /// `target.tls.ca_file` holds no usable PEM certificate.
    #[error("target.tls.ca_file `{}` holds no usable PEM certificate: {message}", path.display())]
    BadCaFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The server's certificate does not verify against the trusted roots.
    #[error(
        "the server's certificate is not trusted: {0}; if it is signed by a private CA, set \
         target.tls.ca_file: PATH"
    )]
    Untrusted(String),
    /// The TLS handshake failed for another reason.
    #[error("TLS handshake with {host} failed: {message}")]
    Handshake {
        /// The host name or address.
        host: String,
        /// Why.
        message: String,
    },
    /// The provider refused the protocol versions (not expected with `ring`).
    #[error("setting up TLS: {0}")]
    Config(String),
    /// The target could not be reached to check its certificate.
    #[error("connecting to {host} to check its certificate: {message}")]
    Connect {
        /// The host and port.
        host: String,
        /// Why.
        message: String,
    },
}

/// The system's roots, loaded once per process (certificates that do not parse are skipped).
fn system_roots() -> &'static [CertificateDer<'static>] {
    static ROOTS: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    ROOTS.get_or_init(|| rustls_native_certs::load_native_certs().certs)
}

/// The client configuration for a target: the system's roots plus `ca_file`'s certificates,
/// on the `ring` provider, HTTP/1.1 (no ALPN).
pub fn client_config(ca_file: Option<&Path>) -> Result<Arc<ClientConfig>, TlsError> {
    let mut roots = RootCertStore::empty();
    let _ = roots.add_parsable_certificates(system_roots().iter().cloned());
    if let Some(path) = ca_file {
        let pem = std::fs::read(path).map_err(|error| TlsError::CaFile {
            path: path.to_owned(),
            error,
        })?;
        let bad = |message: String| TlsError::BadCaFile {
            path: path.to_owned(),
            message,
        };
        let certs = CertificateDer::pem_slice_iter(&pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(e.to_string()))?;
        if certs.is_empty() {
            return Err(bad("no `BEGIN CERTIFICATE` block".into()));
        }
        for c in certs {
            roots.add(c).map_err(|e| bad(e.to_string()))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// A reqwest client builder that speaks TLS with [`client_config`]`(ca_file)`.
pub(crate) fn reqwest_builder(ca_file: Option<&Path>) -> Result<reqwest::ClientBuilder, TlsError> {
    let config = client_config(ca_file)?;
    Ok(reqwest::Client::builder().tls_backend_preconfigured(ClientConfig::clone(&config)))
}

/// The name rustls checks the certificate against: a DNS name or an IP address (`[::1]`
/// without its brackets).
pub(crate) fn server_name(host: &str) -> Result<ServerName<'static>, TlsError> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(bare.to_owned()).map_err(|e| TlsError::Handshake {
        host: host.to_owned(),
        message: format!("not a valid server name: {e}"),
    })
}

/// Says a failed handshake plainly: a certificate error becomes [`TlsError::Untrusted`].
pub(crate) fn handshake_error(host: &str, e: &io::Error) -> TlsError {
    let cert = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .and_then(|r| match r {
            rustls::Error::InvalidCertificate(c) => Some(describe_cert_error(c)),
            _ => None,
        });
    match cert {
        Some(c) => TlsError::Untrusted(c),
        None => TlsError::Handshake {
            host: host.to_owned(),
            message: e.to_string(),
        },
    }
}

/// rustls' certificate errors, in words: what is wrong with the certificate, with the names
/// of the algorithms involved (rustls 0.23's `CertificateError`).
fn describe_cert_error(c: &rustls::CertificateError) -> String {
    use rustls::CertificateError as C;
    let date = |t: &rustls_pki_types::UnixTime| {
        i64::try_from(t.as_secs())
            .ok()
            .and_then(|s| time::OffsetDateTime::from_unix_timestamp(s).ok())
            .map_or_else(
                || format!("{} s after 1970", t.as_secs()),
                |d| format!("{} UTC", d.date()),
            )
    };
    match c {
        C::UnknownIssuer => "it is signed by an unknown issuer".into(),
        C::Expired => "it has expired".into(),
        C::ExpiredContext { not_after, .. } => {
            format!("it expired on {}", date(not_after))
        }
        C::NotValidYet => "it is not valid yet".into(),
        C::NotValidYetContext { not_before, .. } => {
            format!(
                "it is not valid before {} (is this host's clock right?)",
                date(not_before)
            )
        }
        C::BadSignature => "its signature does not verify".into(),
        C::BadEncoding => "it is not a well-formed X.509 certificate (bad DER encoding)".into(),
        C::Revoked => "it has been revoked".into(),
        C::UnhandledCriticalExtension => {
            "it has an extension marked critical that rustls does not understand".into()
        }
        C::InvalidPurpose | C::InvalidPurposeContext { .. } => {
            "its extended key usage does not allow TLS server authentication (serverAuth)".into()
        }
        C::NotValidForName => "it is not valid for the host name".into(),
        C::NotValidForNameContext {
            expected,
            presented,
        } => format!(
            "it is not valid for {}: it names {} (a certificate for an IP address needs that \
             address as an IP SAN)",
            expected.to_str(),
            if presented.is_empty() {
                "no host name or address".to_owned()
            } else {
                presented.join(", ")
            }
        ),
        C::UnsupportedSignatureAlgorithmContext {
            signature_algorithm_id,
            supported_algorithms,
        } => {
            let mut supported: Vec<String> = supported_algorithms
                .iter()
                .map(|a| algorithm_name(a.as_ref()))
                .collect();
            supported.dedup();
            format!(
                "it is signed with {}, which this client does not verify; sign it with one of: \
                 {}",
                algorithm_name(signature_algorithm_id),
                supported.join(", ")
            )
        }
        C::UnsupportedSignatureAlgorithmForPublicKeyContext {
            signature_algorithm_id,
            public_key_algorithm_id,
        } => format!(
            "it is signed with {}, which does not fit its issuer's {} key",
            algorithm_name(signature_algorithm_id),
            algorithm_name(public_key_algorithm_id)
        ),
        C::UnknownRevocationStatus => "its revocation status is unknown".into(),
        C::ExpiredRevocationList | C::ExpiredRevocationListContext { .. } => {
            "the revocation list that covers it has expired".into()
        }
        C::ApplicationVerificationFailure => "the application's own check refused it".into(),
        C::Other(o) if format!("{o:?}").contains("CaUsedAsEndEntity") => {
            "it is a CA's certificate served as the server's own (a self-signed certificate made \
             with CA:TRUE); serve a leaf certificate that a CA signed"
                .into()
        }
        C::Other(o) => format!("it was refused ({o})"),
        other => format!("it was refused ({other})"),
    }
}

/// An X.509 algorithm identifier (DER, as rustls reports it) by name: every object
/// identifier in it, named where known (`ecdsa-with-SHA512`, `id-ecPublicKey P-521`), in
/// dotted form otherwise.
fn algorithm_name(der: &[u8]) -> String {
    let mut oids = Vec::new();
    collect_oids(der, &mut oids, 0);
    let names: Vec<String> = oids
        .iter()
        .map(|o| match oid_name(o) {
            Some(n) => n.to_owned(),
            None => o.clone(),
        })
        .collect();
    match names.as_slice() {
        [] => format!("an algorithm servebench cannot name ({der:02x?})"),
        [one] => one.clone(),
        // RSASSA-PSS names its hash (and MGF1 with it again): say the first.
        [pss, hash, ..] if pss == "RSASSA-PSS" => format!("RSASSA-PSS with {hash}"),
        [first, rest @ ..] => format!("{first} {}", rest.join(" ")),
    }
}

/// The object identifiers in DER `bytes`, in order, in dotted form (constructed values are
/// searched; depth-bounded).
fn collect_oids(mut bytes: &[u8], out: &mut Vec<String>, depth: usize) {
    while bytes.len() >= 2 && depth < 8 {
        let tag = bytes[0];
        let (len, head) = match bytes[1] {
            n if n < 0x80 => (usize::from(n), 2),
            0x81 if bytes.len() >= 3 => (usize::from(bytes[2]), 3),
            0x82 if bytes.len() >= 4 => (usize::from(bytes[2]) << 8 | usize::from(bytes[3]), 4),
            _ => return,
        };
        let Some(content) = bytes.get(head..head + len) else {
            return;
        };
        if tag == 0x06 {
            out.push(dotted(content));
        } else if tag & 0x20 != 0 {
            collect_oids(content, out, depth + 1);
        }
        bytes = &bytes[head + len..];
    }
}

/// An OID's content octets in dotted form.
fn dotted(content: &[u8]) -> String {
    let mut arcs: Vec<u64> = Vec::new();
    let mut v: u64 = 0;
    for &b in content {
        v = (v << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            if arcs.is_empty() {
                let first = (v / 40).min(2);
                arcs.push(first);
                arcs.push(v - first * 40);
            } else {
                arcs.push(v);
            }
            v = 0;
        }
    }
    arcs.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

/// Names of the signature, key and hash algorithms a server certificate may carry.
fn oid_name(dotted: &str) -> Option<&'static str> {
    Some(match dotted {
        "1.2.840.10045.4.1" => "ecdsa-with-SHA1",
        "1.2.840.10045.4.3.2" => "ecdsa-with-SHA256",
        "1.2.840.10045.4.3.3" => "ecdsa-with-SHA384",
        "1.2.840.10045.4.3.4" => "ecdsa-with-SHA512",
        "1.2.840.113549.1.1.1" => "rsaEncryption",
        "1.2.840.113549.1.1.4" => "md5WithRSAEncryption",
        "1.2.840.113549.1.1.5" => "sha1WithRSAEncryption",
        "1.2.840.113549.1.1.10" => "RSASSA-PSS",
        "1.2.840.113549.1.1.11" => "sha256WithRSAEncryption",
        "1.2.840.113549.1.1.12" => "sha384WithRSAEncryption",
        "1.2.840.113549.1.1.13" => "sha512WithRSAEncryption",
        "1.2.840.10045.2.1" => "id-ecPublicKey",
        "1.2.840.10045.3.1.7" => "P-256",
        "1.3.132.0.10" => "secp256k1",
        "1.3.132.0.34" => "P-384",
        "1.3.132.0.35" => "P-521",
        "1.3.101.112" => "Ed25519",
        "1.3.101.113" => "Ed448",
        "2.16.840.1.101.3.4.2.1" => "SHA-256",
        "2.16.840.1.101.3.4.2.2" => "SHA-384",
        "2.16.840.1.101.3.4.2.3" => "SHA-512",
        "2.16.840.1.101.3.4.3.17" => "ML-DSA-44",
        "2.16.840.1.101.3.4.3.18" => "ML-DSA-65",
        "2.16.840.1.101.3.4.3.19" => "ML-DSA-87",
        _ => return None,
    })
}

/// `(host, port)` of an `https://` base URL, `None` for any other scheme.
pub(crate) fn https_authority(base_url: &str) -> Option<(String, u16)> {
    let rest = base_url.strip_prefix("https://")?;
    let authority = rest.split('/').next().unwrap_or(rest);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    match authority.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && !p.contains(']') => {
            Some((h.to_owned(), p.parse().unwrap_or(443)))
        }
        _ => Some((authority.to_owned(), 443)),
    }
}

/// Before a run: for an `https://` base URL, connects and completes a TLS handshake, so that
/// a certificate that does not verify is refused before anything is measured. Other URLs
/// pass untouched.
pub async fn check(base_url: &str, ca_file: Option<&Path>) -> Result<(), TlsError> {
    let Some((host, port)) = https_authority(base_url) else {
        return Ok(());
    };
    let config = client_config(ca_file)?;
    let name = server_name(&host)?;
    let at = format!("{host}:{port}");
    let connect = async {
        let tcp = tokio::net::TcpStream::connect(at.as_str())
            .await
            .map_err(|e| TlsError::Connect {
                host: at.clone(),
                message: e.to_string(),
            })?;
        tokio_rustls::TlsConnector::from(config)
            .connect(name, tcp)
            .await
            .map(drop)
            .map_err(|e| handshake_error(&host, &e))
    };
    match tokio::time::timeout(Duration::from_secs(10), connect).await {
        Ok(r) => r,
        Err(_) => Err(TlsError::Connect {
            host: at,
            message: "timed out after 10 s".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificate_errors_are_said_in_words() {
        use rustls::CertificateError as C;
        use rustls_pki_types::alg_id;
        // What a certificate signed with ECDSA P-521 / SHA-512 gets from rustls on ring: the
        // Debug form used to be printed (`UnsupportedSignatureAlgorithmContext {
        // signature_algorithm_id: [6, 8, 42, …] }`).
        let e = C::UnsupportedSignatureAlgorithmContext {
            signature_algorithm_id: alg_id::ECDSA_SHA512.as_ref().to_vec(),
            supported_algorithms: vec![
                alg_id::ECDSA_SHA256,
                alg_id::ECDSA_SHA384,
                alg_id::ED25519,
                alg_id::RSA_PSS_SHA256,
                alg_id::RSA_PKCS1_SHA256,
            ],
        };
        assert_eq!(
            describe_cert_error(&e),
            "it is signed with ecdsa-with-SHA512, which this client does not verify; sign it \
             with one of: ecdsa-with-SHA256, ecdsa-with-SHA384, Ed25519, RSASSA-PSS with \
             SHA-256, sha256WithRSAEncryption"
        );
        let e = C::UnsupportedSignatureAlgorithmForPublicKeyContext {
            signature_algorithm_id: alg_id::ECDSA_SHA256.as_ref().to_vec(),
            public_key_algorithm_id: alg_id::ECDSA_P521.as_ref().to_vec(),
        };
        assert_eq!(
            describe_cert_error(&e),
            "it is signed with ecdsa-with-SHA256, which does not fit its issuer's \
             id-ecPublicKey P-521 key"
        );
        let e = C::NotValidForNameContext {
            expected: ServerName::try_from("10.0.0.5").expect("ip"),
            presented: vec!["DnsName(\"bench.example\")".into()],
        };
        assert!(describe_cert_error(&e).starts_with("it is not valid for 10.0.0.5: it names"));
        let e = C::ExpiredContext {
            time: rustls_pki_types::UnixTime::since_unix_epoch(Duration::from_secs(1_800_000_000)),
            not_after: rustls_pki_types::UnixTime::since_unix_epoch(Duration::from_secs(
                1_700_000_000,
            )),
        };
        assert_eq!(describe_cert_error(&e), "it expired on 2023-11-14 UTC");
        for e in [
            C::UnknownIssuer,
            C::BadEncoding,
            C::Revoked,
            C::InvalidPurpose,
        ] {
            let words = describe_cert_error(&e);
            assert!(
                words.starts_with("it") && !words.contains(&format!("{e:?}")),
                "{words}"
            );
        }
        assert_eq!(
            dotted(&[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x04]),
            "1.2.840.10045.4.3.4"
        );
    }

    #[test]
    fn authority_of_https_urls() {
        assert_eq!(
            https_authority("https://h.example:8443/v"),
            Some(("h.example".into(), 8443))
        );
        assert_eq!(
            https_authority("https://h.example"),
            Some(("h.example".into(), 443))
        );
        assert_eq!(
            https_authority("https://[::1]:9"),
            Some(("[::1]".into(), 9))
        );
        assert_eq!(
            https_authority("https://[::1]"),
            Some(("[::1]".into(), 443))
        );
        assert_eq!(https_authority("http://h:1"), None);
    }
}
