//! TensorRT-LLM's `trtllm-serve`: its room. Its facts as data ([`TRTLLM`], each read in the engine's source;
//! docs/engines.md is generated from them); the simulator's dialect of it is
//! `servebench-sim`'s `server::dialect::trtllm` for now.

// check-layers: room

mod facts;

pub(crate) use facts::TRTLLM;
