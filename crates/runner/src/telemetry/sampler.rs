//! The GPU sampler: one thread for the whole run that owns the [`GpuSource`] (NVML is opened
//! once: opening it can take a second on a GPU without persistence mode), idle between
//! trials, and during a trial reads a sample of every GPU each interval.

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

use servebench_result::telemetry::{GpuDevice, MAX_SAMPLES};
use servebench_spec::GpuSampling;
use tokio::sync::oneshot;

use super::gpu::{self, GpuSource, Occupancy, Stamped};

enum Cmd {
    Begin {
        variant: String,
    },
    End(oneshot::Sender<Vec<Stamped>>),
    Occupancy {
        variant: String,
        reply: oneshot::Sender<Result<Occupancy, String>>,
    },
}

/// The sampler thread's handle.
#[derive(Debug)]
pub(crate) struct GpuSampler {
    tx: Sender<Cmd>,
    /// Every GPU the source sees.
    pub(crate) devices: Vec<GpuDevice>,
    /// The source's name (`nvml`, `nvidia-smi`, `fake`).
    pub(crate) source: &'static str,
}

impl std::fmt::Debug for Cmd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cmd")
    }
}

impl GpuSampler {
    /// Opens the source `setting` asks for on the sampler's thread; `Err` says why there is
    /// no GPU to sample (recorded in each trial, not an error of the run).
    pub(crate) fn start(setting: GpuSampling, interval: Duration) -> Result<Self, String> {
        let (tx, rx) = channel::<Cmd>();
        let (ready_tx, ready_rx) = channel();
        std::thread::Builder::new()
            .name("servebench-gpu-sampler".into())
            .spawn(move || {
                let mut source = match gpu::open(setting) {
                    Ok(s) => s,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                match source.devices() {
                    Ok(d) if !d.is_empty() => {
                        let _ = ready_tx.send(Ok((d, source.name())));
                    }
                    Ok(_) => {
                        let _ = ready_tx.send(Err(format!("{} reports no GPU", source.name())));
                        return;
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                }
                run(source.as_mut(), &rx, interval);
            })
            .map_err(|e| format!("cannot start the GPU sampler: {e}"))?;
        let (devices, source) = ready_rx
            .recv()
            .map_err(|_| "the GPU sampler stopped while opening its source".to_owned())??;
        Ok(GpuSampler {
            tx,
            devices,
            source,
        })
    }

    /// Starts recording (a trial of `variant` begins).
    pub(crate) fn begin(&self, variant: &str) {
        let _ = self.tx.send(Cmd::Begin {
            variant: variant.to_owned(),
        });
    }

    /// Stops recording and hands over what was recorded.
    pub(crate) async fn end(&self) -> Vec<Stamped> {
        let (reply, rx) = oneshot::channel();
        if self.tx.send(Cmd::End(reply)).is_err() {
            return Vec::new();
        }
        rx.await.unwrap_or_default()
    }

    /// Memory in use and the processes holding it, now.
    pub(crate) async fn occupancy(&self, variant: &str) -> Result<Occupancy, String> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Cmd::Occupancy {
                variant: variant.to_owned(),
                reply,
            })
            .map_err(|_| "the GPU sampler has stopped".to_owned())?;
        rx.await
            .map_err(|_| "the GPU sampler has stopped".to_owned())?
    }
}

/// The sampler's loop: idle until a trial begins, then a sample each `interval` until it ends.
fn run(source: &mut dyn GpuSource, rx: &Receiver<Cmd>, interval: Duration) {
    let interval_ms = u64::try_from(interval.as_millis()).unwrap_or(200);
    let mut recording = false;
    let mut buf: Vec<Stamped> = Vec::new();
    let cap = MAX_SAMPLES.saturating_mul(64);
    loop {
        let cmd = if recording {
            match rx.recv_timeout(interval) {
                Ok(c) => Some(c),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            }
        } else {
            match rx.recv() {
                Ok(c) => Some(c),
                Err(_) => break,
            }
        };
        match cmd {
            None => {
                buf.extend(source.sample());
                if buf.len() > cap {
                    // A trial far longer than any bound: keep every other sample.
                    let mut i = 0;
                    buf.retain(|_| {
                        i += 1;
                        i % 2 == 1
                    });
                }
            }
            Some(Cmd::Begin { variant }) => {
                buf.clear();
                source.begin(&variant, interval_ms);
                buf.extend(source.sample());
                recording = true;
            }
            Some(Cmd::End(reply)) => {
                if recording {
                    buf.extend(source.sample());
                    source.end();
                }
                recording = false;
                let _ = reply.send(std::mem::take(&mut buf));
            }
            Some(Cmd::Occupancy { variant, reply }) => {
                let _ = reply.send(source.occupancy(&variant));
            }
        }
    }
    source.end();
}
