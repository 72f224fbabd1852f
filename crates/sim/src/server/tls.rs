//! HTTPS for the simulator (`--tls-cert`, `--tls-key`): a server that serves only HTTPS, as
//! many production endpoints do, so that the runner's `https://` path (probes of a launched
//! server, the load generator's TLS reads) is tested end to end.
//!
//! TLS (rustls with `ring`, TLS 1.2 and 1.3) is terminated in the simulator's process, on top
//! of the same stamped TCP connections as plain HTTP (`arrival.rs`): an arrival is still the
//! kernel's stamp of the read that brought the request's last encrypted bytes. Handshakes run
//! in tasks of their own, so a slow or failed handshake holds up no other connection; one
//! that fails or takes longer than [`HANDSHAKE_TIMEOUT`] is dropped.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::serve::Listener;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use axum::extract::connect_info::Connected;
use axum::serve::IncomingStream;

use super::arrival::{Arrival, StampedListener, StampedStream};
use crate::SimError;
use crate::config::TlsFiles;

/// Longest a client may take to finish its handshake.
pub(crate) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The rustls server configuration of `files`; a file that cannot be read or holds no
/// certificate or key is an error naming it.
pub(crate) fn server_config(files: &TlsFiles) -> Result<Arc<rustls::ServerConfig>, SimError> {
    let bad = |what: &str, path: &Path, e: &dyn std::fmt::Display| {
        SimError::InvalidConfig(format!(
            "--tls-{what} {}: {e}; give a PEM file (e.g. from `openssl req -x509 -newkey ec \
             -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout key.pem -out cert.pem -subj \
             /CN=localhost -addext subjectAltName=IP:127.0.0.1 -addext \
             basicConstraints=critical,CA:FALSE`, then trust cert.pem as the CA)",
            path.display()
        ))
    };
    let certs = CertificateDer::pem_file_iter(&files.cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| bad("cert", &files.cert, &e))?;
    if certs.is_empty() {
        return Err(bad("cert", &files.cert, &"no certificate in it"));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key).map_err(|e| bad("key", &files.key, &e))?;
    config_of(certs, key).map_err(|e| {
        SimError::InvalidConfig(format!(
            "--tls-cert {} with --tls-key {}: {e}",
            files.cert.display(),
            files.key.display()
        ))
    })
}

/// A server configuration (ring, TLS 1.2/1.3, HTTP/1.1) for a chain and its key.
fn config_of(
    certs: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<Arc<rustls::ServerConfig>, rustls::Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(certs, key))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// A certificate for `localhost` and `127.0.0.1` signed by a CA made on the spot (rcgen), in
/// PEM: what the tests and benchmarks of `https://` targets serve (`--tls-cert`/`--tls-key`
/// from [`TestPki::write`], or [`TestPki::server_config`] in process) and trust (`ca_pem`).
#[derive(Debug, Clone)]
pub struct TestPki {
    /// The CA's certificate: what a client trusts (`target.tls.ca_file`).
    pub ca_pem: String,
    /// The server's certificate.
    pub cert_pem: String,
    /// The server's private key (PKCS#8).
    pub key_pem: String,
}

impl TestPki {
    /// A fresh CA and a server certificate it signed.
    pub fn generate() -> Result<TestPki, rcgen::Error> {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair, SanType};
        let ca_key = KeyPair::generate()?;
        let mut ca = CertificateParams::new(Vec::<String>::new())?;
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca_cert = ca.self_signed(&ca_key)?;
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(vec!["localhost".to_owned()])?;
        params
            .subject_alt_names
            .push(SanType::IpAddress([127, 0, 0, 1].into()));
        let cert = params.signed_by(&key, &ca_cert, &ca_key)?;
        Ok(TestPki {
            ca_pem: ca_cert.pem(),
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }

    /// Writes `cert.pem`, `key.pem` and `ca.pem` into `dir`: the files to serve with, and the
    /// CA's path.
    pub fn write(&self, dir: &Path) -> std::io::Result<(TlsFiles, PathBuf)> {
        let files = TlsFiles {
            cert: dir.join("cert.pem"),
            key: dir.join("key.pem"),
        };
        let ca = dir.join("ca.pem");
        std::fs::write(&files.cert, &self.cert_pem)?;
        std::fs::write(&files.key, &self.key_pem)?;
        std::fs::write(&ca, &self.ca_pem)?;
        Ok((files, ca))
    }

    /// The server configuration serving this certificate.
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, SimError> {
        let bad = |e: &dyn std::fmt::Display| SimError::InvalidConfig(format!("test PKI: {e}"));
        let certs =
            vec![CertificateDer::from_pem_slice(self.cert_pem.as_bytes()).map_err(|e| bad(&e))?];
        let key = PrivateKeyDer::from_pem_slice(self.key_pem.as_bytes()).map_err(|e| bad(&e))?;
        config_of(certs, key).map_err(|e| bad(&e))
    }
}

/// A listener whose connections are TLS over stamped TCP.
#[derive(Debug)]
pub(crate) struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<StampedStream>, SocketAddr)>,
    local: SocketAddr,
    accept: JoinHandle<()>,
}

impl TlsListener {
    /// Accepts on `tcp` and hands over each connection whose handshake with `config`
    /// completed.
    pub(crate) fn new(tcp: StampedListener, config: Arc<rustls::ServerConfig>) -> io::Result<Self> {
        let local = tcp.local_addr()?;
        let (tx, ready) = mpsc::channel(1024);
        let acceptor = TlsAcceptor::from(config);
        let accept = tokio::spawn(async move {
            let mut tcp = tcp;
            loop {
                let (io, addr) = Listener::accept(&mut tcp).await;
                if tx.is_closed() {
                    return;
                }
                let (tx, acceptor) = (tx.clone(), acceptor.clone());
                tokio::spawn(async move {
                    let shake = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(io));
                    if let Ok(Ok(tls)) = shake.await {
                        let _ = tx.send((tls, addr)).await;
                    }
                });
            }
        });
        Ok(TlsListener {
            ready,
            local,
            accept,
        })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl Connected<IncomingStream<'_, TlsListener>> for Arrival {
    fn connect_info(stream: IncomingStream<'_, TlsListener>) -> Self {
        // The stamped TCP connection under the TLS session: its reads carry the kernel's
        // stamps of the encrypted bytes.
        stream.io().get_ref().0.arrival()
    }
}

impl Listener for TlsListener {
    type Io = TlsStream<StampedStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(conn) => conn,
            // The accepting task ended (it only does when the listener is dropped).
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local)
    }
}
