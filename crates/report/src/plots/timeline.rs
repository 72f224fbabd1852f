//! `telemetry-<variant>-t<trial>-p<point>.svg`: one trial over time, from the telemetry
//! sidecar (`spec.telemetry`) and the request sidecar: the SM clock and the power of each of
//! the server's GPUs, and the engine's running and waiting requests beside the client's
//! in-flight count — where a point's load went, and what the GPUs did meanwhile.

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;

use plotters::style::{BLACK, Color, RGBColor};
use servebench_result::telemetry::TrialTelemetry;
use servebench_result::{read_requests, read_telemetry, sidecar_path, telemetry_path};

use crate::Exporter;
use crate::error::ReportError;
use crate::model::Report;

use super::axis::{Axis, Panel, Ticks};
use super::canvas::{Key, arm_color, svg};

const SIZE: (u32, u32) = (960, 860);

/// What one result's sidecars hold, read once for all of its trials' figures.
#[derive(Debug, Default)]
pub struct SourceData {
    /// Each trial's telemetry, by `seq`.
    pub telemetry: BTreeMap<usize, TrialTelemetry>,
    /// Each trial's measured requests as `[send, end)` in ms from its start, by `seq`.
    pub requests: BTreeMap<usize, Vec<(f64, f64)>>,
}

impl SourceData {
    /// Reads the sidecars beside `result_file` (what cannot be read is left out).
    pub fn read(result_file: &Path) -> Self {
        let mut out = SourceData::default();
        for line in read_telemetry(&telemetry_path(result_file)).unwrap_or_default() {
            out.telemetry.insert(line.seq, line);
        }
        for r in read_requests(&sidecar_path(result_file)).unwrap_or_default() {
            if r.warmup {
                continue;
            }
            if let Some(s) = r.record.send_ns {
                let e = r.record.end_ns.unwrap_or(s).max(s);
                out.requests
                    .entry(r.seq)
                    .or_default()
                    .push((s as f64 / 1e6, e as f64 / 1e6));
            }
        }
        out
    }
}

/// The figure of one trial.
#[derive(Debug)]
pub struct Timeline {
    /// The trial's `seq`.
    pub seq: usize,
    /// Its file name.
    pub name: String,
    /// Its title.
    pub title: String,
    /// The result file's sidecars, shared by its trials' figures.
    pub data: Rc<OnceCell<SourceData>>,
    /// The result file.
    pub file: String,
}

/// The client's in-flight count at each of `at` (ms).
fn in_flight(requests: &[(f64, f64)], at: &[f64]) -> Vec<f64> {
    at.iter()
        .map(|t| requests.iter().filter(|(s, e)| s <= t && t < e).count() as f64)
        .collect()
}

impl Exporter for Timeline {
    fn file_name(&self) -> String {
        self.name.clone()
    }

    fn export(&self, _report: &Report) -> Result<String, ReportError> {
        let data = self
            .data
            .get_or_init(|| SourceData::read(Path::new(&self.file)));
        let empty = TrialTelemetry::default();
        let line = data.telemetry.get(&self.seq).unwrap_or(&empty);
        let requests = data.requests.get(&self.seq).map_or(&[][..], Vec::as_slice);
        let end_ms = requests.iter().map(|r| r.1).fold(0.0_f64, f64::max);
        let x_values: Vec<f64> = vec![0.0, end_ms / 1e3];
        let x = || {
            Axis::fit(
                "seconds from the trial's start",
                &x_values,
                false,
                true,
                Ticks::Number,
            )
        };
        let file = self.name.as_str();
        svg(file, SIZE, |c| {
            let areas = c.root.split_evenly((3, 1));
            // Per GPU: SM clock, power.
            type Pick = fn(&servebench_result::telemetry::GpuSeries, usize) -> Option<f64>;
            let gpu_panels: [(&str, &str, Pick); 2] = [
                ("SM clock of each GPU", "SM clock (MHz)", |g, i| {
                    g.sm_clock_mhz[i].map(f64::from)
                }),
                ("Power of each GPU", "power (W)", |g, i| g.power_w[i]),
            ];
            for (k, (caption, desc, pick)) in gpu_panels.iter().enumerate() {
                let values: Vec<f64> = line
                    .gpus
                    .iter()
                    .flat_map(|g| (0..g.len()).filter_map(move |i| pick(g, i)))
                    .collect();
                let title = if k == 0 {
                    format!("{} — {caption}", self.title)
                } else {
                    (*caption).to_owned()
                };
                let p = Panel::new(
                    file,
                    &areas[k],
                    Some(&title),
                    x(),
                    Axis::fit(desc, &values, false, true, Ticks::Number),
                )?;
                let mut keys = Vec::new();
                for (gi, g) in line.gpus.iter().enumerate() {
                    let pts: Vec<(i32, i32)> = (0..g.len())
                        .filter_map(|i| Some(p.px(g.t_ms[i] as f64 / 1e3, pick(g, i)?)))
                        .collect();
                    c.line(&pts, arm_color(gi).to_rgba(), 2)?;
                    let name = line.devices.get(g.gpu).map_or_else(
                        || format!("GPU {gi}"),
                        |d| format!("GPU {} ({})", d.index, d.name),
                    );
                    keys.push(Key::Line {
                        label: name,
                        color: arm_color(gi),
                    });
                }
                if line.gpus.is_empty() {
                    let (l, t, _, _) = p.bounds();
                    let why = line.gpu_note.as_deref().unwrap_or("no GPU was sampled");
                    c.text(
                        (l + 12, t + 20),
                        why,
                        14,
                        BLACK,
                        plotters::style::text_anchor::HPos::Left,
                        false,
                    )?;
                }
                let (l, t, r, _) = p.bounds();
                c.legend(&keys, (l + 8, t + 4), r - l - 16, true)?;
            }
            // The engine's running and waiting, the client's in flight.
            let server = line.server.as_ref();
            let t_s: Vec<f64> =
                server.map_or_else(Vec::new, |s| s.t_ms.iter().map(|t| *t as f64).collect());
            let client = in_flight(requests, &t_s);
            let col = |v: &[Option<f64>]| v.to_vec();
            let running = server.map_or_else(Vec::new, |s| col(&s.running));
            let waiting = server.map_or_else(Vec::new, |s| col(&s.waiting));
            let mut values: Vec<f64> = client.clone();
            values.extend(running.iter().flatten());
            values.extend(waiting.iter().flatten());
            let p = Panel::new(
                file,
                &areas[2],
                Some("The engine's running and waiting requests, the client's in flight"),
                x(),
                Axis::fit("requests", &values, false, true, Ticks::Number),
            )?;
            let grey = RGBColor(0x66, 0x66, 0x66);
            let series: [(&str, Vec<Option<f64>>, RGBColor); 3] = [
                (
                    "client in flight",
                    client.iter().map(|v| Some(*v)).collect(),
                    grey,
                ),
                ("engine running", running, arm_color(0)),
                ("engine waiting", waiting, arm_color(1)),
            ];
            let mut keys = Vec::new();
            for (label, v, color) in &series {
                let pts: Vec<(i32, i32)> = t_s
                    .iter()
                    .zip(v)
                    .filter_map(|(t, v)| Some(p.px(t / 1e3, (*v)?)))
                    .collect();
                c.line(&pts, color.to_rgba(), 2)?;
                keys.push(Key::Line {
                    label: (*label).to_owned(),
                    color: *color,
                });
            }
            if server.is_none() {
                let (l, t, _, _) = p.bounds();
                let why = line
                    .server_note
                    .as_deref()
                    .unwrap_or("the server's metrics were not scraped");
                c.text(
                    (l + 12, t + 40),
                    why,
                    14,
                    BLACK,
                    plotters::style::text_anchor::HPos::Left,
                    false,
                )?;
            }
            let (l, t, r, _) = p.bounds();
            c.legend(&keys, (l + 8, t + 4), r - l - 16, true)?;
            Ok(())
        })
    }
}
