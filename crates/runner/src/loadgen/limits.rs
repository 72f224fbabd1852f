//! Process limits a large trial needs: every open stream is a socket, so 10,000 concurrent
//! streams need more than the usual 1,024 open files.

use nix::sys::resource::{Resource, getrlimit, setrlimit};

/// Raises the soft open-file limit to the hard limit; returns the limit now in force.
pub fn raise_open_file_limit() -> Result<u64, nix::Error> {
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE)?;
    if soft < hard {
        setrlimit(Resource::RLIMIT_NOFILE, hard, hard)?;
    }
    Ok(soft.max(hard))
}

#[cfg(test)]
mod tests {
    #[test]
    fn soft_reaches_hard() {
        let n = super::raise_open_file_limit().expect("raising to the hard limit is allowed");
        let (soft, hard) =
            nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
                .expect("getrlimit");
        assert_eq!((soft, n), (hard, hard));
    }
}
