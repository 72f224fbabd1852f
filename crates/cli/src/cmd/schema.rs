//! `servebench schema`

use anyhow::Result;

use crate::exit::Exit;

/// Arguments of `schema`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Which schema: the spec (default), a result file, or a requests sidecar.
    #[arg(value_enum, default_value_t = Which::Spec)]
    which: Which,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Which {
    /// The experiment spec (`schemas/spec.schema.json`).
    Spec,
    /// A result file (`schemas/result.schema.json`).
    Result,
    /// One line of a result's requests sidecar (`schemas/requests.schema.json`).
    Requests,
    /// The metric catalogue: every name a spec's `compare.metrics` may list, with its unit,
    /// direction and description (JSON; the spec schema carries the same names as an enum).
    Metrics,
}

/// Print the schema.
pub(crate) fn run(args: Args) -> Result<Exit> {
    match args.which {
        Which::Spec => print!("{}", servebench_spec::schema::spec_schema_json()),
        Which::Result => print!("{}", servebench_result::result_schema_json()),
        Which::Requests => print!("{}", servebench_result::requests_schema_json()),
        Which::Metrics => println!(
            "{}",
            serde_json::to_string_pretty(&servebench_spec::metrics::catalogue())?
        ),
    }
    Ok(Exit::Ok)
}
