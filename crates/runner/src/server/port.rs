//! Ports: picking a free one for `${port}`, checking that one is free, waiting until it is.

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::AsRawFd;
use std::time::Duration;

use nix::sys::socket::{
    AddressFamily, SockFlag, SockType, SockaddrIn, bind, getsockname, setsockopt, socket, sockopt,
};
use rand::Rng;
use tokio::time::Instant;

/// Lowest port [`pick_free_port`] draws from.
const PICK_FLOOR: u16 = 15_000;

/// A port that is free right now on this machine, for `${port}`.
///
/// It is drawn at random below the kernel's ephemeral range
/// (`/proc/sys/net/ipv4/ip_local_port_range`), from which outgoing connections take their
/// local ports: a server may bind its port only minutes later, after loading a model, and a
/// port from the ephemeral range could meanwhile be taken by any connection on the host (the
/// load generator's included). Falls back to a kernel-chosen port (bind port 0) when that
/// range is too small or busy. [`port_is_free`] is checked again just before the start.
pub fn pick_free_port() -> io::Result<u16> {
    let low = ephemeral_range_start().unwrap_or(32_768);
    if low > PICK_FLOOR + 1_000 {
        let mut rng = rand::rng();
        for _ in 0..64 {
            let p = rng.random_range(PICK_FLOOR..low);
            if port_is_free(p) {
                return Ok(p);
            }
        }
    }
    bind_check(Ipv4Addr::LOCALHOST, 0)
}

/// First port of the ephemeral range, from `/proc/sys/net/ipv4/ip_local_port_range`.
fn ephemeral_range_start() -> Option<u16> {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Whether nothing listens on `port`: it can be bound on 127.0.0.1 and on 0.0.0.0 (so a
/// server bound to any IPv4 address, or to `[::]` dual-stack, counts as holding it).
/// Connections left in `TIME_WAIT` do not count (the bind uses `SO_REUSEADDR`, as servers do).
pub fn port_is_free(port: u16) -> bool {
    port != 0
        && bind_check(Ipv4Addr::LOCALHOST, port).is_ok()
        && bind_check(Ipv4Addr::UNSPECIFIED, port).is_ok()
}

/// Binds a TCP socket to `ip:port` with `SO_REUSEADDR`, closes it, and returns the port it
/// got. The socket never listens: a listening probe socket, inherited for a moment by a child
/// that another thread forks before it execs, would keep the port busy after it is closed.
fn bind_check(ip: Ipv4Addr, port: u16) -> io::Result<u16> {
    let fd = socket(
        AddressFamily::Inet,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    setsockopt(&fd, sockopt::ReuseAddr, &true)?;
    bind(
        fd.as_raw_fd(),
        &SockaddrIn::from(SocketAddrV4::new(ip, port)),
    )?;
    let bound: SockaddrIn = getsockname(fd.as_raw_fd())?;
    Ok(bound.port())
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
