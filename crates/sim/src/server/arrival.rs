//! When a request arrived: connections whose reads carry the kernel's receive stamp.
//!
//! The simulator's reported TTFT (`timings.ttft_ms`) starts when the request arrived. Its
//! handler runs only when its single core gets to it: at concurrency 256 a 10 ms step hands
//! 256 events to 256 connections at once, and a request that comes in meanwhile waits for a
//! millisecond or more before it is parsed. That wait is the server's, as it would be in a
//! real engine, so it belongs inside the server's TTFT: each accepted socket has
//! `SO_TIMESTAMPNS` set, every read records the kernel's stamp of the data it returned, and
//! the handler takes the stamp of the read that completed its request.
//!
//! The stamp is `CLOCK_REALTIME`; it is turned into an age (realtime now − stamp) at the read
//! and subtracted from the monotonic clock read then. An age outside `0..MAX_AGE` is not
//! trusted and the read is dated now.

use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use nix::sys::socket::{
    ControlMessageOwned, MsgFlags, recvmsg, setsockopt, sockopt::ReceiveTimestampns,
};
use nix::sys::time::TimeSpec;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

/// Longest believable time between arrival and read.
const MAX_AGE: Duration = Duration::from_secs(10);

/// A TCP listener whose connections set TCP_NODELAY and date their reads.
#[derive(Debug)]
pub(crate) struct StampedListener(pub(crate) TcpListener);

impl Listener for StampedListener {
    type Io = StampedStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let (tcp, addr) = Listener::accept(&mut self.0).await;
        // Streaming wants every event on the wire at once, not held back by Nagle.
        let _ = tcp.set_nodelay(true);
        let stamped = setsockopt(&tcp, ReceiveTimestampns, &true).is_ok();
        let io = StampedStream {
            tcp,
            stamped,
            control: nix::cmsg_space!(TimeSpec),
            last: Arc::default(),
        };
        (io, addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.0.local_addr()
    }
}

/// An accepted connection; reads record when their data arrived.
#[derive(Debug)]
pub(crate) struct StampedStream {
    tcp: TcpStream,
    stamped: bool,
    control: Vec<u8>,
    last: Arc<Mutex<Option<Instant>>>,
}

/// Handed to each request of a connection (axum's `ConnectInfo`): when the data of the
/// connection's latest read arrived.
#[derive(Debug, Clone)]
pub(crate) struct Arrival(Arc<Mutex<Option<Instant>>>);

impl Arrival {
    /// When the last read's data arrived (the read that completed the request, when asked
    /// from its handler); `None` before any stamped read.
    pub(crate) fn latest(&self) -> Option<Instant> {
        self.0.lock().ok().and_then(|g| *g)
    }
}

impl Connected<IncomingStream<'_, StampedListener>> for Arrival {
    fn connect_info(stream: IncomingStream<'_, StampedListener>) -> Self {
        stream.io().arrival()
    }
}

impl StampedStream {
    /// The connection's [`Arrival`], for the requests it carries (also under TLS: `tls.rs`).
    pub(crate) fn arrival(&self) -> Arrival {
        Arrival(Arc::clone(&self.last))
    }
}

impl AsyncRead for StampedStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.stamped {
            return Pin::new(&mut this.tcp).poll_read(cx, buf);
        }
        let fd = this.tcp.as_raw_fd();
        loop {
            ready!(this.tcp.poll_read_ready(cx))?;
            let control = &mut this.control;
            let dst = buf.initialize_unfilled();
            match this
                .tcp
                .try_io(Interest::READABLE, || recv(fd, dst, control))
            {
                Ok((n, age)) => {
                    buf.advance(n);
                    if n > 0 {
                        let at = Instant::now();
                        let at = age.and_then(|a| at.checked_sub(a)).unwrap_or(at);
                        if let Ok(mut last) = this.last.lock() {
                            *last = Some(at);
                        }
                    }
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl AsyncWrite for StampedStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_shutdown(cx)
    }
}

/// One `recvmsg`: bytes read and, when the kernel stamped them, their age.
fn recv(fd: i32, dst: &mut [u8], control: &mut [u8]) -> io::Result<(usize, Option<Duration>)> {
    let mut iov = [IoSliceMut::new(dst)];
    let msg =
        recvmsg::<()>(fd, &mut iov, Some(control), MsgFlags::empty()).map_err(io::Error::from)?;
    let stamp = msg.cmsgs().ok().and_then(|cmsgs| {
        cmsgs
            .filter_map(|c| match c {
                ControlMessageOwned::ScmTimestampns(ts) => Some(ts),
                _ => None,
            })
            .last()
    });
    Ok((msg.bytes, stamp.and_then(|ts| age(ts, SystemTime::now()))))
}

/// `now − stamp`, when that is a believable age.
fn age(stamp: TimeSpec, now: SystemTime) -> Option<Duration> {
    let secs = u64::try_from(stamp.tv_sec()).ok()?;
    let nanos = u32::try_from(stamp.tv_nsec()).ok()?;
    let at = UNIX_EPOCH.checked_add(Duration::new(secs, nanos))?;
    now.duration_since(at).ok().filter(|a| *a < MAX_AGE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn ages_out_of_range_are_not_trusted() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        assert_eq!(
            age(TimeSpec::new(999_999, 500_000_000), now),
            Some(Duration::from_millis(500))
        );
        assert_eq!(age(TimeSpec::new(1_000_001, 0), now), None);
        assert_eq!(age(TimeSpec::new(1, 0), now), None);
    }

    /// A request that waited 40 ms in the socket is dated at its arrival.
    #[tokio::test]
    async fn a_read_records_when_its_data_arrived() {
        let mut listener = StampedListener(TcpListener::bind("127.0.0.1:0").await.unwrap());
        let addr = listener.local_addr().unwrap();
        let mut client = TcpStream::connect(addr).await.unwrap();
        let (mut server, _) = Listener::accept(&mut listener).await;
        assert!(server.stamped, "SO_TIMESTAMPNS is available on Linux");
        let arrival = Arrival(Arc::clone(&server.last));
        let mut buf = [0u8; 64];
        // Stamps are switched on for the host from a kernel work queue: the first packets
        // after the first socket asks may come unstamped, so try a few times.
        for _ in 0..50 {
            client.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
            tokio::time::sleep(Duration::from_millis(40)).await;
            let before_read = Instant::now();
            let n = server.read(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], b"GET / HTTP/1.1\r\n\r\n");
            let at = arrival.latest().expect("a read was recorded");
            if before_read.duration_since(at) >= Duration::from_millis(35) {
                return;
            }
        }
        panic!("no read of 50 was dated at its arrival");
    }
}
