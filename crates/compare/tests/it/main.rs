//! The integration tests of servebench-compare, in one test binary.

mod gate;
mod renderers;
