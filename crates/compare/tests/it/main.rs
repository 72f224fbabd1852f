//! The integration tests of servebench-compare, in one test binary.

mod collapsed_probe;
mod from_and_import;
mod gate;
mod nested;
mod renderers;
mod served_and_probe;
