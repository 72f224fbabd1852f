//! Aggregating a trace's events: by name, by category, and the busy time as the union of
//! intervals per lane.

use std::collections::HashMap;
use std::path::Path;

use super::trace::{EventKind, TraceError, TraceEvent, read_trace};
use super::{
    Category, CategoryStat, EvidenceSource, KernelStat, MAX_NAMES, RankKernels, categorize,
};

/// Collects events; [`Aggregator::finish`] makes the rank's record. Device events and CPU
/// operators are kept apart: a trace with any device event is aggregated on those.
#[derive(Debug, Default)]
pub struct Aggregator {
    device: Side,
    cpu: Side,
}

#[derive(Debug, Default)]
struct Side {
    by_name: HashMap<String, (u64, f64)>,
    intervals: HashMap<(i64, i64), Vec<(f64, f64)>>,
    events: u64,
}

impl Side {
    fn add(&mut self, e: TraceEvent) {
        self.events += 1;
        let slot = self.by_name.entry(e.name).or_insert((0, 0.0));
        slot.0 += 1;
        slot.1 += e.dur;
        self.intervals
            .entry(e.lane)
            .or_default()
            .push((e.ts, e.ts + e.dur));
    }
}

impl Aggregator {
    /// Adds one event.
    pub fn add(&mut self, e: TraceEvent) {
        match e.kind {
            EventKind::Kernel | EventKind::Copy => self.device.add(e),
            EventKind::CpuOp => self.cpu.add(e),
        }
    }

    /// The rank's record, named `file`.
    pub fn finish(self, file: &str) -> RankKernels {
        let (side, source) = if self.device.events > 0 {
            (self.device, EvidenceSource::Kernels)
        } else if self.cpu.events > 0 {
            (self.cpu, EvidenceSource::CpuOps)
        } else {
            (Side::default(), EvidenceSource::Empty)
        };
        let lanes = side.intervals.len() as u32;
        let (mut busy, mut first, mut last) = (0.0, f64::INFINITY, f64::NEG_INFINITY);
        for mut iv in side.intervals.into_values() {
            busy += union_length(&mut iv);
            for (a, b) in iv {
                first = first.min(a);
                last = last.max(b);
            }
        }
        let share = |t: f64| if busy > 0.0 { t / busy } else { 0.0 };
        let mut names: Vec<(String, u64, f64)> = side
            .by_name
            .into_iter()
            .map(|(n, (c, t))| (n, c, t))
            .collect();
        names.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
        let total: f64 = names.iter().map(|n| n.2).sum();
        let mut cats: HashMap<Category, (u64, f64)> = HashMap::new();
        let mut kernels = Vec::with_capacity(names.len().min(MAX_NAMES + 1));
        let mut rest = (0usize, 0u64, 0.0f64);
        for (i, (name, calls, t)) in names.into_iter().enumerate() {
            let category = categorize(&name);
            let c = cats.entry(category).or_insert((0, 0.0));
            c.0 += calls;
            c.1 += t;
            if i < MAX_NAMES {
                kernels.push(KernelStat {
                    name,
                    category,
                    calls,
                    total_us: t,
                    share: share(t),
                });
            } else {
                rest = (rest.0 + 1, rest.1 + calls, rest.2 + t);
            }
        }
        if rest.0 > 0 {
            kernels.push(KernelStat {
                name: format!("({} other names)", rest.0),
                category: Category::Other,
                calls: rest.1,
                total_us: rest.2,
                share: share(rest.2),
            });
        }
        let categories = Category::ALL
            .iter()
            .filter_map(|c| {
                cats.get(c).map(|(calls, t)| CategoryStat {
                    category: *c,
                    calls: *calls,
                    total_us: *t,
                    share: share(*t),
                })
            })
            .collect();
        RankKernels {
            file: file.to_owned(),
            source,
            events: side.events,
            lanes,
            total_us: total,
            busy_us: busy,
            span_us: if last > first { last - first } else { 0.0 },
            kernels,
            categories,
        }
    }
}

/// The length of the union of `intervals` (sorted here).
fn union_length(intervals: &mut [(f64, f64)]) -> f64 {
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut total = 0.0;
    let mut cur: Option<(f64, f64)> = None;
    for &(a, b) in intervals.iter() {
        cur = match cur {
            Some((s, e)) if a <= e => Some((s, e.max(b))),
            Some((s, e)) => {
                total += e - s;
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    if let Some((s, e)) = cur {
        total += e - s;
    }
    total
}

/// Reads the trace at `path` as a stream and aggregates it (its file name is the rank's).
pub fn read_rank(path: &Path) -> Result<RankKernels, TraceError> {
    let mut agg = Aggregator::default();
    read_trace(path, &mut |e| agg.add(e))?;
    let file = path.file_name().map_or_else(
        || path.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    Ok(agg.finish(&file))
}

#[cfg(test)]
pub(super) fn union_for_test(iv: &mut [(f64, f64)]) -> f64 {
    union_length(iv)
}
