//! servebench-stats: pure statistics over slices and histograms (no I/O).

pub mod bootstrap;
pub mod cochran;
pub mod distributions;
pub mod error;
pub mod estimate;
pub mod histogram;
pub mod histogram_codec;
pub mod holm;
pub mod interval;
pub mod mann_whitney;
pub mod order_stat;
pub mod percentile;
pub mod power;
pub mod rank;
pub mod robust;
pub mod spearman;
pub mod summary;
pub mod verdict;
pub mod welch;

pub use percentile::percentile_sorted;
