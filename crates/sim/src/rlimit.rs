//! Open-file limit: thousands of concurrent streams need thousands of sockets.

use nix::sys::resource::{Resource, getrlimit, setrlimit};

use crate::SimError;

/// Raises the soft `RLIMIT_NOFILE` to the hard limit and returns the new soft limit.
pub fn raise_nofile_limit() -> Result<u64, SimError> {
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).map_err(SimError::Rlimit)?;
    if soft < hard {
        setrlimit(Resource::RLIMIT_NOFILE, hard, hard).map_err(SimError::Rlimit)?;
    }
    Ok(hard.max(soft))
}

#[cfg(test)]
mod tests {
    #[test]
    fn soft_limit_reaches_the_hard_limit() {
        let n = super::raise_nofile_limit().unwrap_or_else(|e| panic!("{e}"));
        let (soft, hard) =
            nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
                .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(soft, hard);
        assert_eq!(n, hard);
    }
}
