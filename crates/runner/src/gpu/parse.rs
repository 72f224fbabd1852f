//! Parsers of `nvidia-smi` output: `--query-gpu` / `--query-compute-apps` CSV (with a header
//! line, with or without units) and the `CUDA Version` line of `nvidia-smi -q`.
//!
//! The CSV header names differ from the query names (`used_memory` comes back as
//! `used_gpu_memory [MiB]`, `clocks.sm` as `clocks.current.sm [MHz]`), and unless `nounits` is
//! given the unit also sits inside each value (`143771 MiB`). Columns are therefore found by
//! their header name, the bracketed unit removed, and numbers read from the value's first word.

use super::{Accelerator, ComputeApp, GpuError};

/// One CSV table: normalised header names and the rows' trimmed cells.
#[derive(Debug)]
struct Table<'a> {
    columns: Vec<String>,
    rows: Vec<(usize, Vec<&'a str>)>,
}

impl<'a> Table<'a> {
    fn parse(what: &'static str, text: &'a str) -> Result<Self, GpuError> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let (_, header) = lines.next().ok_or(GpuError::Parse {
            what,
            line: 1,
            reason: "the output is empty (expected a CSV header line)".to_owned(),
        })?;
        let columns = header.split(',').map(normalise_header).collect::<Vec<_>>();
        let mut rows = Vec::new();
        for (i, line) in lines {
            let cells: Vec<&str> = line.split(',').map(str::trim).collect();
            if cells.len() != columns.len() {
                return Err(GpuError::Parse {
                    what,
                    line: i + 1,
                    reason: format!(
                        "{} fields where the header has {}: `{line}`",
                        cells.len(),
                        columns.len()
                    ),
                });
            }
            rows.push((i + 1, cells));
        }
        Ok(Table { columns, rows })
    }

    /// Index of the first column among `names`.
    fn column(&self, what: &'static str, names: &[&str]) -> Result<usize, GpuError> {
        self.optional_column(names).ok_or_else(|| GpuError::Parse {
            what,
            line: 1,
            reason: format!(
                "no `{}` column in the header ({})",
                names.first().copied().unwrap_or_default(),
                self.columns.join(", ")
            ),
        })
    }

    fn optional_column(&self, names: &[&str]) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| names.contains(&c.as_str()))
    }
}

/// `memory.total [MiB]` → `memory.total`.
fn normalise_header(h: &str) -> String {
    let h = h.trim();
    let h = match h.find(" [") {
        Some(i) if h.ends_with(']') => &h[..i],
        _ => h,
    };
    h.trim().to_ascii_lowercase()
}

/// `[N/A]`, `N/A`, `[Not Supported]`, `[Insufficient Permissions]` and empty cells hold no value.
fn present(cell: &str) -> Option<&str> {
    let c = cell.trim();
    if c.is_empty() || c.starts_with('[') || c.eq_ignore_ascii_case("N/A") {
        None
    } else {
        Some(c)
    }
}

/// A whole number, with or without its unit (`143771 MiB` or `143771`).
fn number(
    what: &'static str,
    line: usize,
    field: &str,
    cell: &str,
) -> Result<Option<u64>, GpuError> {
    let Some(c) = present(cell) else {
        return Ok(None);
    };
    let word = c.split_whitespace().next().unwrap_or(c);
    word.parse::<u64>().map(Some).map_err(|_| GpuError::Parse {
        what,
        line,
        reason: format!("`{field}` is `{c}`, not a whole number"),
    })
}

/// Parses `nvidia-smi --query-gpu=index,name,uuid,memory.total,driver_version[,…] --format=csv`
/// (header required; units optional; extra columns ignored). `cuda_version` is left empty: it
/// comes from `nvidia-smi -q` ([`parse_cuda_version`]).
pub fn parse_query_gpu(csv: &str) -> Result<Vec<Accelerator>, GpuError> {
    const WHAT: &str = "nvidia-smi --query-gpu output";
    let t = Table::parse(WHAT, csv)?;
    let index = t.column(WHAT, &["index"])?;
    let name = t.column(WHAT, &["name"])?;
    let memory = t.column(WHAT, &["memory.total"])?;
    let driver = t.column(WHAT, &["driver_version"])?;
    let uuid = t.optional_column(&["uuid"]);
    let bus = t.optional_column(&["pci.bus_id"]);
    let cap = t.optional_column(&["compute_cap"]);
    let mut out = Vec::with_capacity(t.rows.len());
    for (line, cells) in &t.rows {
        let missing = |field: &str| GpuError::Parse {
            what: WHAT,
            line: *line,
            reason: format!("`{field}` has no value"),
        };
        let idx = number(WHAT, *line, "index", cells[index])?.ok_or_else(|| missing("index"))?;
        let optional = |col: Option<usize>| col.and_then(|c| present(cells[c])).map(str::to_owned);
        out.push(Accelerator {
            index: u32::try_from(idx).map_err(|_| missing("index"))?,
            name: present(cells[name])
                .ok_or_else(|| missing("name"))?
                .to_owned(),
            uuid: optional(uuid),
            memory_total_mib: number(WHAT, *line, "memory.total", cells[memory])?
                .ok_or_else(|| missing("memory.total"))?,
            driver_version: present(cells[driver])
                .ok_or_else(|| missing("driver_version"))?
                .to_owned(),
            cuda_version: None,
            pci_bus_id: optional(bus),
            compute_cap: optional(cap),
        });
    }
    Ok(out)
}

/// Parses `nvidia-smi --query-compute-apps=pid[,process_name],used_memory --format=csv`
/// (header required; units optional). A header alone means no process uses a GPU.
/// `used_memory` is `[N/A]` in some containers and MIG set-ups: it is then `None`.
pub fn parse_compute_apps(csv: &str) -> Result<Vec<ComputeApp>, GpuError> {
    const WHAT: &str = "nvidia-smi --query-compute-apps output";
    let t = Table::parse(WHAT, csv)?;
    let pid = t.column(WHAT, &["pid"])?;
    let used = t.column(WHAT, &["used_gpu_memory", "used_memory"])?;
    let name = t.optional_column(&["process_name", "name"]);
    let mut out = Vec::with_capacity(t.rows.len());
    for (line, cells) in &t.rows {
        let p = number(WHAT, *line, "pid", cells[pid])?.ok_or(GpuError::Parse {
            what: WHAT,
            line: *line,
            reason: "`pid` has no value".to_owned(),
        })?;
        out.push(ComputeApp {
            pid: u32::try_from(p).map_err(|_| GpuError::Parse {
                what: WHAT,
                line: *line,
                reason: format!("pid {p} is out of range"),
            })?,
            process_name: name.and_then(|c| present(cells[c])).map(str::to_owned),
            used_mib: number(WHAT, *line, "used_memory", cells[used])?,
        });
    }
    Ok(out)
}

/// The value of a top-level `Key : value` line of `nvidia-smi -q`.
fn q_value<'a>(q: &'a str, key: &str) -> Option<&'a str> {
    q.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim()).and_then(present)
    })
}

/// The `CUDA Version` line of `nvidia-smi -q` (the highest CUDA version the driver supports),
/// e.g. `13.0`.
pub fn parse_cuda_version(q: &str) -> Option<String> {
    q_value(q, "CUDA Version").map(str::to_owned)
}

/// The `Driver Version` line of `nvidia-smi -q`.
pub fn parse_driver_version(q: &str) -> Option<String> {
    q_value(q, "Driver Version").map(str::to_owned)
}
