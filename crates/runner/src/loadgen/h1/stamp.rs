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

use std::io::{self, IoSliceMut};
use std::os::fd::AsRawFd;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nix::sys::socket::{
    ControlMessageOwned, MsgFlags, recvmsg, setsockopt, sockopt::ReceiveTimestampns,
};
use nix::sys::time::TimeSpec;
use tokio::io::Interest;
use tokio::net::TcpStream;

/// Longest believable time between arrival and read.
const MAX_AGE: Duration = Duration::from_secs(10);

/// Asks the kernel to stamp what this socket receives; false where it cannot.
pub(super) fn enable(stream: &TcpStream) -> bool {
    setsockopt(stream, ReceiveTimestampns, &true).is_ok()
}

/// Space for the control message of one stamped read.
pub(super) fn control_buffer() -> Vec<u8> {
    nix::cmsg_space!(TimeSpec)
}

/// What one read returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Received {
    /// Bytes read (0: the peer closed).
    pub n: usize,
    /// How long before the read the data arrived, when the kernel stamped it.
    pub age: Option<Duration>,
}

/// Reads once into `buf`, waiting until the socket is readable.
pub(super) async fn read(
    stream: &TcpStream,
    buf: &mut [u8],
    control: &mut [u8],
) -> io::Result<Received> {
    let fd = stream.as_raw_fd();
    loop {
        stream.readable().await?;
        match stream.try_io(Interest::READABLE, || recv(fd, buf, control)) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            other => return other,
        }
    }
}

fn recv(fd: i32, buf: &mut [u8], control: &mut [u8]) -> io::Result<Received> {
    let mut iov = [IoSliceMut::new(buf)];
    let msg =
        recvmsg::<()>(fd, &mut iov, Some(control), MsgFlags::empty()).map_err(io::Error::from)?;
    let mut stamp = None;
    if let Ok(cmsgs) = msg.cmsgs() {
        for c in cmsgs {
            if let ControlMessageOwned::ScmTimestampns(ts) = c {
                stamp = Some(ts);
            }
        }
    }
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
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpListener;

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
        if !enable(&client) {
            eprintln!("SO_TIMESTAMPNS not supported here: nothing to check");
            return;
        }
        let (mut buf, mut control) = (vec![0u8; 64], control_buffer());
        // The first socket to ask for stamps switches them on for the host, which the kernel
        // does from a work queue: the first packets may come unstamped, so try a few times.
        let mut age = None;
        for _ in 0..50 {
            server.write_all(b"data: x\n\n").await.unwrap();
            tokio::time::sleep(Duration::from_millis(30)).await;
            let got = read(&client, &mut buf, &mut control).await.unwrap();
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
        drop(server);
        let end = read(&client, &mut buf, &mut control).await.unwrap();
        assert_eq!(end.n, 0);
    }
}
