//! `servebench sim`: the embedded simulator.

use anyhow::Result;

use crate::exit::Exit;

/// Serve until SIGTERM/SIGINT (or the exit-after-N fault).
pub(crate) fn run(args: servebench_sim::SimArgs) -> Result<Exit> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(servebench_sim::run(args))?;
    Ok(Exit::Ok)
}
