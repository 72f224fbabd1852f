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
use std::path::Path;
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
             /CN=localhost -addext subjectAltName=IP:127.0.0.1`)",
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
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(certs, key))
        .map_err(|e| {
            SimError::InvalidConfig(format!(
                "--tls-cert {} with --tls-key {}: {e}",
                files.cert.display(),
                files.key.display()
            ))
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
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
