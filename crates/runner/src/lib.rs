//! servebench-runner
