//! Reads stamped with the kernel's receive time.
//!
//! With `SO_TIMESTAMPNS` set on a TCP socket, Linux returns, with each `recvmsg`, the time
//! the last segment of the data read arrived in the socket (`CLOCK_REALTIME`). An event's
//! instant is then when its bytes reached this host, not when a busy client got round to
//! reading them: at concurrency 256 a 10 ms decode step delivers 256 events at once, and one
//! core reads the last of them a millisecond or more after it arrived. The stamp is of the
//! last segment in the read, so when several events are read together each gets the latest
//! one's time, as a user-space clock reading would give them all the read's time.
//!
//! The realtime stamp is turned into an age (realtime now − stamp) and subtracted from the
//! monotonic clock read at the same moment. An age outside `0..MAX_AGE` (a clock step
//! between arrival and read) is not trusted, and the read keeps the monotonic reading alone.

use std::io::{self, IoSliceMut, Read, Write};
use std::os::fd::AsRawFd;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nix::sys::socket::{
    ControlMessageOwned, MsgFlags, recvmsg, setsockopt, sockopt::ReceiveTimestampns,
};
use nix::sys::time::TimeSpec;
use tokio::io::unix::AsyncFd;

/// Longest believable time between arrival and read.
const MAX_AGE: Duration = Duration::from_secs(10);

/// What one read returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Received {
    /// Bytes read (0: the peer closed).
    pub n: usize,
    /// How long before the read the data arrived, when the kernel stamped it.
    pub age: Option<Duration>,
}

/// A connected socket whose reads are, where enabled, stamped by the kernel.
///
/// It holds the socket in an [`AsyncFd`] rather than a tokio `TcpStream` for one reason:
/// after a read that did not fill the buffer the socket's receive queue was empty, and
/// [`AsyncFd`]'s guard lets us say so (`clear_ready`), as tokio's own stream does inside its
/// `poll_read`. Through `TcpStream::try_io` the readiness would stay set, and the next event's
/// read would cost one more `recvmsg` that finds nothing.
#[derive(Debug)]
pub(super) struct Socket {
    io: AsyncFd<std::net::TcpStream>,
    /// Space for the stamp's control message; `None` when reads are not stamped.
    control: Option<Vec<u8>>,
}

impl Socket {
    /// Takes over a connected stream (TCP_NODELAY set); `stamps`: ask the kernel to stamp
    /// reads (ignored where it cannot).
    pub(super) fn new(tcp: tokio::net::TcpStream, stamps: bool) -> io::Result<Self> {
        tcp.set_nodelay(true)?;
        let tcp = tcp.into_std()?;
        let stamped = stamps && setsockopt(&tcp, ReceiveTimestampns, &true).is_ok();
        // `AsyncFd::new` is deprecated because a generic inner type could hand out a different
        // or closed fd; an owned `std::net::TcpStream` always returns its own, open until the
        // `AsyncFd` drops it. Its replacement, `register`, is `unsafe`, which this workspace
        // denies.
        #[allow(deprecated)]
        let io = AsyncFd::new(tcp)?;
        Ok(Socket {
            io,
            control: stamped.then(|| nix::cmsg_space!(TimeSpec)),
        })
    }

    /// Reads once into `buf`, waiting until the socket is readable.
    pub(super) async fn read(&mut self, buf: &mut [u8]) -> io::Result<Received> {
        let Socket { io, control } = self;
        loop {
            let mut guard = io.readable().await?;
            let control = control.as_deref_mut();
            if let Ok(got) = guard.try_io(|fd| recv(fd.get_ref(), buf, control)) {
                let got = got?;
                if got.n > 0 && got.n < buf.len() {
                    // Short read: the queue is drained. Data arriving from now on raises a new
                    // edge, which this only-older-events clear does not hide.
                    guard.clear_ready();
                }
                return Ok(got);
            }
        }
    }

    /// Writes all of `data`.
    pub(super) async fn write_all(&self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            let mut guard = self.io.writable().await?;
            match guard.try_io(|fd| fd.get_ref().write(data)) {
                Ok(Ok(0)) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(Ok(n)) => data = &data[n..],
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => {}
            }
        }
        Ok(())
    }
}

/// One read: `recvmsg` with the stamp's control message when `control` is given, else a
/// plain `read`.
fn recv(
    mut tcp: &std::net::TcpStream,
    buf: &mut [u8],
    control: Option<&mut [u8]>,
) -> io::Result<Received> {
    let Some(control) = control else {
        return Ok(Received {
            n: tcp.read(buf)?,
            age: None,
        });
    };
    let mut iov = [IoSliceMut::new(buf)];
    let msg = recvmsg::<()>(tcp.as_raw_fd(), &mut iov, Some(control), MsgFlags::empty())
        .map_err(io::Error::from)?;
    let stamp = msg.cmsgs().ok().and_then(|cmsgs| {
        cmsgs
            .filter_map(|c| match c {
                ControlMessageOwned::ScmTimestampns(ts) => Some(ts),
                _ => None,
            })
            .last()
    });
    Ok(Received {
        n: msg.bytes,
        age: stamp.and_then(|ts| age_of(ts, SystemTime::now())),
    })
}

/// `now − stamp`, when that is a believable age.
fn age_of(stamp: TimeSpec, now: SystemTime) -> Option<Duration> {
    let secs = u64::try_from(stamp.tv_sec()).ok()?;
    let nanos = u32::try_from(stamp.tv_nsec()).ok()?;
    let at = UNIX_EPOCH.checked_add(Duration::new(secs, nanos))?;
    now.duration_since(at).ok().filter(|age| *age < MAX_AGE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    #[test]
    fn ages_out_of_range_are_not_trusted() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        let ts = |s: i64, ns: i64| TimeSpec::new(s, ns);
        assert_eq!(
            age_of(ts(999_999, 750_000_000), now),
            Some(Duration::from_millis(250))
        );
        assert_eq!(age_of(ts(1_000_001, 0), now), None, "a stamp in the future");
        assert_eq!(age_of(ts(999_000, 0), now), None, "older than MAX_AGE");
        assert_eq!(age_of(ts(-1, 0), now), None);
    }

    /// Data that sat in the socket for 30 ms before the read is dated 30 ms back.
    #[tokio::test]
    async fn a_late_read_is_dated_at_arrival() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = TcpStream::connect(addr).await.unwrap();
        let (mut server, _) = listener.accept().await.unwrap();
        let mut client = Socket::new(client, true).unwrap();
        assert!(
            client.control.is_some(),
            "SO_TIMESTAMPNS is available on Linux"
        );
        let mut buf = vec![0u8; 64];
        // The first socket to ask for stamps switches them on for the host, which the kernel
        // does from a work queue: the first packets may come unstamped, so try a few times.
        let mut age = None;
        for _ in 0..50 {
            server.write_all(b"data: x\n\n").await.unwrap();
            tokio::time::sleep(Duration::from_millis(30)).await;
            let got = client.read(&mut buf).await.unwrap();
            assert_eq!(&buf[..got.n], b"data: x\n\n");
            if got.age.is_some() {
                age = got.age;
                break;
            }
        }
        let age = age.expect("the kernel stamped none of 50 reads");
        assert!(
            age >= Duration::from_millis(25) && age < Duration::from_secs(5),
            "{age:?}"
        );
        // Writes go out, and a short read leaves the socket waiting for the next edge: the
        // next read still sees what arrives later, and the end of the stream.
        client.write_all(b"ping").await.unwrap();
        let mut got = [0u8; 4];
        server.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ping");
        server.write_all(b"later").await.unwrap();
        let later = client.read(&mut buf).await.unwrap();
        assert_eq!(&buf[..later.n], b"later");
        drop(server);
        assert_eq!(client.read(&mut buf).await.unwrap().n, 0);
    }

    /// Without stamps the same socket reads plainly, every read dated by the clock.
    #[tokio::test]
    async fn unstamped_reads_carry_no_age() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (mut server, _) = listener.accept().await.unwrap();
        let mut client = Socket::new(client, false).unwrap();
        server.write_all(b"data: y\n\n").await.unwrap();
        let mut buf = vec![0u8; 64];
        let got = client.read(&mut buf).await.unwrap();
        assert_eq!((&buf[..got.n], got.age), (&b"data: y\n\n"[..], None));
    }
}
