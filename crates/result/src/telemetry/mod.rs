//! What the GPUs and the server were doing during each trial (`spec.telemetry`,
//! docs/gpu.md): the capture as stored in the telemetry sidecar ([`series`]), its summary in
//! the trial's summary ([`summary`]: spans, energy, throttling, the engine's queue while the
//! client held its limit), and the memory-bound decode ceiling ([`limit`]).

pub mod limit;
pub mod series;
pub mod summary;

pub use limit::{
    BANDWIDTH, CeilingInput, DecodeCeiling, bandwidth_of, decode_ceiling, gpus_bandwidth,
};
pub use series::{
    GpuCheck, GpuDevice, GpuProcess, GpuSample, GpuSeries, MAX_RAW_SERIES, MAX_SAMPLES,
    ServerSeries, THROTTLE_REASONS, THROTTLING_MASK, TrialTelemetry, reason_names,
};
pub use summary::{
    GpuSummary, ServerSummary, Span, TelemetrySummary, TelemetryWindow, summarize_telemetry,
};
