//! servebench-sim
