//! servebench-stats: pure statistics over slices and histograms (no I/O).
//!
//! Trials are the unit of analysis; see `STATISTICS.md` in the design folder and
//! `docs/statistics.md`.

pub mod percentile;

pub use percentile::percentile_sorted;
