//! `servebench plan SPEC`

use std::path::PathBuf;

use anyhow::Result;

use crate::exit::Exit;

/// Arguments of `plan`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The spec file.
    spec: PathBuf,
    /// Print the plan as JSON.
    #[arg(long)]
    json: bool,
}

/// Print the ordered plan.
pub(crate) fn run(args: Args) -> Result<Exit> {
    let Some(spec) = super::load_spec(&args.spec)? else {
        return Ok(Exit::Failed);
    };
    super::print_warnings(&spec, &args.spec.display().to_string());
    let plan = servebench_spec::plan::plan(&spec.file);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&plan)?);
    } else {
        print!("{plan}");
    }
    Ok(Exit::Ok)
}
