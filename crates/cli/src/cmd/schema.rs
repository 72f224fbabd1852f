//! `servebench schema`

use anyhow::Result;

use crate::exit::Exit;

/// Arguments of `schema`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Which schema: the spec (default), a result file, or a requests sidecar.
    #[arg(value_enum, default_value_t = Which::Spec)]
    which: Which,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Which {
    Spec,
}

/// Print the schema.
pub fn run(args: Args) -> Result<Exit> {
    match args.which {
        Which::Spec => print!("{}", servebench_spec::schema::spec_schema_json()),
    }
    Ok(Exit::Ok)
}
