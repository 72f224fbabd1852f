//! `transformers serve`: its room. Its facts as data ([`TRANSFORMERS`], each read in the engine's source;
//! docs/engines.md is generated from them); the simulator's dialect of it
//! ([`dialect`], with the `dialect` feature), an implementation of `crate::dialect::Dialect`.

// check-layers: room

#[cfg(feature = "dialect")]
pub(crate) mod dialect;
mod facts;
#[cfg(feature = "dialect")]
mod profiler;

#[cfg(feature = "dialect")]
pub(crate) use dialect::Transformers;
pub(crate) use facts::TRANSFORMERS;
