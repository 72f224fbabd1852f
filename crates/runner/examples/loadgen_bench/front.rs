//! A front for the simulator, to measure what TLS adds: a proxy in the simulator's process
//! that terminates TLS (a certificate for 127.0.0.1 signed by a CA made at start, servebench_sim::TestPki) or
//! only relays TCP, so that HTTPS and HTTP are compared through the same extra hop.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::{TcpListener, TcpStream};

type BoxError = Box<dyn std::error::Error>;

/// A server configuration for 127.0.0.1 and the PEM of the CA that signed it.
pub(crate) fn pki() -> Result<(Arc<rustls::ServerConfig>, String), BoxError> {
    let pki = servebench_sim::TestPki::generate()?;
    Ok((pki.server_config()?, pki.ca_pem))
}

/// Relays connections on a new 127.0.0.1 port to `upstream`, terminating TLS with `tls`.
pub(crate) async fn serve(
    upstream: SocketAddr,
    tls: Option<Arc<rustls::ServerConfig>>,
) -> Result<SocketAddr, BoxError> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let _ = client.set_nodelay(true);
                let Ok(mut server) = TcpStream::connect(upstream).await else {
                    return;
                };
                let _ = server.set_nodelay(true);
                match acceptor {
                    Some(a) => {
                        if let Ok(mut c) = a.accept(client).await {
                            let _ = tokio::io::copy_bidirectional(&mut c, &mut server).await;
                        }
                    }
                    None => {
                        let mut c = client;
                        let _ = tokio::io::copy_bidirectional(&mut c, &mut server).await;
                    }
                }
            });
        }
    });
    Ok(addr)
}
