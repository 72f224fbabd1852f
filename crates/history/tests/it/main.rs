//! The integration tests of servebench-history, in one test binary: histories written as
//! result files into temporary folders (and a temporary git repository), read back and
//! analysed as `servebench history` does.

mod common;

mod bad_input;
mod baseline;
mod change_points;
mod gate;
mod git_range;
mod grouping;
