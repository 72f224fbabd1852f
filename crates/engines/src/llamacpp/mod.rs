//! llama.cpp's `llama-server`: its room. Its facts as data ([`LLAMACPP`], each read in the engine's source;
//! docs/engines.md is generated from them); the simulator's dialect of it is
//! `servebench-sim`'s `server::dialect::llamacpp` for now.

// check-layers: room

mod facts;

pub(crate) use facts::LLAMACPP;
