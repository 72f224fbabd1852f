//! A plain OpenAI-compatible server (`openai`; the simulator's `generic` dialect): its room. Its facts as data ([`GENERIC`], each read in the engine's source;
//! docs/engines.md is generated from them); the simulator's dialect of it is
//! `servebench-sim`'s `server::dialect::generic` for now.

// check-layers: room

mod facts;

pub use facts::GENERIC;
