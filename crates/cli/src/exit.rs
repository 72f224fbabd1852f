//! Exit codes, as docs/architecture.md fixes them for every command.

/// The process exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// Success; warnings may have been printed.
    Ok = 0,
    /// What was checked failed: an invalid spec, a failed run, a tripped `--fail-on` gate.
    Failed = 1,
    /// Usage or I/O error.
    Usage = 2,
    /// Interrupted; partial results were kept.
    Interrupted = 130,
}
