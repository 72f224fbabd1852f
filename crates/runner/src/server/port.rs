//! Ports: picking a free one for `${port}`, checking that one is free, waiting until it is.

use std::io;
use std::net::{Ipv4Addr, TcpListener};
use std::time::Duration;

use tokio::time::Instant;

/// A port that is free right now on 127.0.0.1 (bind port 0, read the port, close). Another
/// process may take it before the server binds it; [`port_is_free`] checks again just before
/// the start.
pub fn pick_free_port() -> io::Result<u16> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(l.local_addr()?.port())
}

/// Whether nothing listens on `port`: it can be bound on 127.0.0.1 and on 0.0.0.0 (so a
/// server bound to any IPv4 address, or to `[::]` dual-stack, counts as holding it).
/// Connections left in `TIME_WAIT` do not count (the bind uses `SO_REUSEADDR`, as servers do).
pub fn port_is_free(port: u16) -> bool {
    port != 0
        && TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok()
        && TcpListener::bind((Ipv4Addr::UNSPECIFIED, port)).is_ok()
}

/// Polls [`port_is_free`] until it holds or `timeout` passed; returns whether it became free.
pub(crate) async fn wait_port_free(port: u16, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if port_is_free(port) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
