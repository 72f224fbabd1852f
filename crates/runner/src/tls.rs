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
            rustls::Error::InvalidCertificate(c) => Some(format!("{c:?}")),
            _ => None,
        });
    match cert {
        Some(c) => TlsError::Untrusted(describe_cert_error(&c)),
        None => TlsError::Handshake {
            host: host.to_owned(),
            message: e.to_string(),
        },
    }
}

/// rustls' certificate errors, in words.
fn describe_cert_error(debug: &str) -> String {
    match debug {
        "UnknownIssuer" => "it is signed by an unknown issuer".into(),
        "Expired" => "it has expired".into(),
        "NotValidYet" => "it is not valid yet".into(),
        "BadSignature" => "its signature does not verify".into(),
        d if d.starts_with("NotValidForName") => "it is not valid for the host name".into(),
        d if d.contains("CaUsedAsEndEntity") => {
            "it is a CA's certificate served as the server's own (a self-signed certificate made \
             with CA:TRUE); serve a leaf certificate that a CA signed"
                .into()
        }
        d => d.to_owned(),
    }
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
