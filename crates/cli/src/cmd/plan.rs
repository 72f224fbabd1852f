//! `servebench plan SPEC [--set KEY=VALUE]…`: the trials in run order, and how long they will
//! take.

use std::path::PathBuf;

use anyhow::Result;
use servebench_result::estimate;

use crate::exit::Exit;

/// Arguments of `plan`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "The estimated duration comes from the workload where it fixes it \
                  (trials by duration, open-loop sends, cooldowns) and, when the spec has \
                  run before, from the newest result under `--results-dir`/<spec name>/: \
                  each trial at the pace its cell had there, server starts at what they \
                  took.\n\nExit codes: 0 planned; 1 invalid spec (or overrides); 2 usage or \
                  I/O error."
)]
pub(crate) struct Args {
    /// The spec file.
    spec: PathBuf,
    /// Print the plan as JSON (with an `estimate` object).
    #[arg(long)]
    json: bool,
    /// Where earlier results of the spec are (`<results-dir>/<spec name>/*.json`).
    #[arg(long, default_value = "results")]
    results_dir: PathBuf,
    /// The same overrides `run` takes: the plan is of the spec `run` would measure.
    #[command(flatten)]
    overrides: super::SpecOverrides,
}

/// Print the ordered plan and its estimated duration.
pub(crate) fn run(args: Args) -> Result<Exit> {
    let overrides = args.overrides.list()?;
    let Some(spec) = super::load_spec(&args.spec)? else {
        return Ok(Exit::Failed);
    };
    let file = args.spec.display().to_string();
    let Some(spec) = super::apply_overrides(spec, &overrides, &file)? else {
        return Ok(Exit::Failed);
    };
    super::print_warnings(&spec, &file);
    let plan = servebench_spec::plan::plan(&spec.file);
    let estimate =
        (plan.search.is_none()).then(|| estimate::estimate(&spec.file, &plan, &args.results_dir));
    if args.json {
        let mut v = serde_json::to_value(&plan)?;
        if let (serde_json::Value::Object(m), Some(e)) = (&mut v, &estimate) {
            m.insert("estimate".into(), serde_json::to_value(e)?);
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{plan}");
        match &estimate {
            Some(e) => print!("{}", e.render()),
            None => println!(
                "\nestimated duration: a capacity search chooses its loads as it goes; its \
                 length is bounded by `search.max_rounds` server starts per variant (docs/search.md)"
            ),
        }
    }
    Ok(Exit::Ok)
}
