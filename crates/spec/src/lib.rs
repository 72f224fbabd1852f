//! servebench-spec
