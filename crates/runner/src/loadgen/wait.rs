//! Waiting for a send's due instant to well under a millisecond.
//!
//! Tokio's timer has a resolution of one millisecond and wakes at the first tick after the
//! deadline, so an open-loop schedule waited with `sleep_until` alone runs about a
//! millisecond late on average (docs/performance.md, "Trace replay: how late sends are").
//! [`until`] sleeps with tokio to a millisecond before the due instant, then races tokio's
//! own sleep to the due instant against a `timerfd` armed for it (the kernel's high-resolution
//! timer, woken through tokio's reactor): the first to fire ends the wait. No thread spins
//! and no thread blocks. The wait never ends before `due` by tokio's clock: under tokio's
//! paused test clock, where the real-time alarm may ring first, it then sleeps on to `due`,
//! so scheduling tests see the instants they saw before. A `timerfd` that cannot be made
//! leaves the tokio sleep alone, as before.

use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::time::Duration;

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use tokio::io::unix::AsyncFd;
use tokio::time::{Instant, sleep_until};

/// How far ahead of the due instant the coarse tokio sleep ends: one tick of its timer.
const FINE: Duration = Duration::from_millis(1);

/// Returns at `due` (at once if it has passed).
pub(crate) async fn until(due: Instant) {
    let now = Instant::now();
    if now >= due {
        return;
    }
    if due - now > FINE {
        sleep_until(due - FINE).await;
    }
    let now = Instant::now();
    if now >= due {
        return;
    }
    let fine = async {
        match Alarm::arm(due - now) {
            Ok(alarm) => alarm.rings().await,
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        () = sleep_until(due) => {}
        () = fine => {}
    }
    // The alarm runs on real time; under a paused test clock it can ring before tokio's
    // clock reaches `due`. Never early by tokio's clock:
    if Instant::now() < due {
        sleep_until(due).await;
    }
}

/// A one-shot `timerfd` on the monotonic clock, registered with tokio's reactor.
struct Alarm(AsyncFd<Fd>);

/// `TimerFd` as tokio's `AsyncFd` takes it (a raw fd).
struct Fd(TimerFd);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

impl Alarm {
    /// An alarm that rings `after` from now (`after` > 0: zero would disarm it).
    fn arm(after: Duration) -> std::io::Result<Alarm> {
        let fd = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        let after = after.max(Duration::from_nanos(1));
        fd.set(
            Expiration::OneShot(TimeSpec::from_duration(after)),
            TimerSetTimeFlags::empty(),
        )?;
        // `with_interest` is deprecated because a generic inner type could hand out a
        // different or closed fd; `Fd` owns its `TimerFd` and always returns that fd, open
        // until the `AsyncFd` drops it. The replacement is `unsafe`, which this workspace
        // denies (as for the sockets in `h1/stamp.rs`).
        #[allow(deprecated)]
        let fd = AsyncFd::with_interest(Fd(fd), tokio::io::Interest::READABLE)?;
        Ok(Alarm(fd))
    }

    /// Waits until the alarm has rung (never, if the reactor reports an error).
    async fn rings(&self) {
        loop {
            let Ok(mut guard) = self.0.readable().await else {
                return std::future::pending().await;
            };
            // The read succeeds once the timer has expired; before that it would block.
            match guard.try_io(|fd| fd.get_ref().0.wait().map_err(std::io::Error::from)) {
                Ok(_) => return,
                Err(_would_block) => continue,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn never_wakes_before_the_due_instant() {
        // Real time, through the alarm. How late it wakes is a benchmark's business
        // (bench/trace-lateness.py), not a timed test's.
        for i in 0..40u64 {
            let due = Instant::now() + Duration::from_micros(1500 + 37 * i);
            until(due).await;
            let now = Instant::now();
            assert!(now >= due, "woke {:?} early", due - now);
        }
    }

    #[test]
    fn an_alarm_rings_after_its_time() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let start = std::time::Instant::now();
            let alarm = Alarm::arm(Duration::from_micros(700)).expect("timerfd");
            alarm.rings().await;
            assert!(start.elapsed() >= Duration::from_micros(700));
        });
    }

    #[tokio::test(start_paused = true)]
    async fn under_a_paused_clock_the_wait_ends_where_a_tokio_sleep_would() {
        // The paused clock advances to tokio's own timer, which keeps whole milliseconds:
        // the wait ends at the due instant's tick, not a real-time alarm's.
        let start = Instant::now();
        for ms in [0u64, 1, 3, 250, 10_000] {
            let due = start + Duration::from_millis(ms) + Duration::from_micros(300);
            until(due).await;
            let now = Instant::now();
            assert!(now >= due && now - due < FINE, "{:?} after due", now - due);
        }
    }

    #[tokio::test]
    async fn a_due_instant_in_the_past_returns_at_once() {
        let due = Instant::now();
        tokio::time::sleep(Duration::from_millis(2)).await;
        let before = Instant::now();
        until(due).await;
        assert!(before.elapsed() < Duration::from_millis(50));
    }
}
