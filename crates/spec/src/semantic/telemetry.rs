//! `telemetry` and `model_facts`: a sampling interval the samplers can keep, a scrape path,
//! and model figures from which the decode ceiling can be computed.

use std::time::Duration;

use super::at;
use crate::diagnostics::Diagnostic;
use crate::types::SpecFile;

pub(super) fn check(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    if let Some(t) = &s.telemetry {
        let i = t.interval.get();
        if i < Duration::from_millis(50) || i > Duration::from_secs(5) {
            out.push(
                Diagnostic::error(
                    at("telemetry.interval"),
                    format!(
                        "a sampling interval of {} is outside 50ms to 5s",
                        t.interval
                    ),
                )
                .with_hint("write e.g. `interval: 200ms` (100ms to 250ms suits most trials)"),
            );
        }
        if let Some(p) = &t.metrics_path
            && !p.starts_with('/')
        {
            out.push(
                Diagnostic::error(
                    at("telemetry.metrics_path"),
                    format!("`{p}` is not a path on the server"),
                )
                .with_hint(format!("write `/{p}`")),
            );
        }
        if let Some(bw) = t.hbm_gb_per_s
            && !(bw.is_finite() && bw > 0.0)
        {
            out.push(Diagnostic::error(
                at("telemetry.hbm_gb_per_s"),
                format!("a bandwidth of {bw} GB/s: write the GPU's peak, e.g. `4800` for an H200"),
            ));
        }
    }
    if let Some(m) = &s.model_facts {
        let figures = [
            ("total_params", m.total_params),
            ("active_params", m.active_params),
            ("bytes_per_weight", m.bytes_per_weight),
            ("kv_bytes_per_token", m.kv_bytes_per_token),
            ("kv_bytes_per_element", m.kv_bytes_per_element),
        ];
        for (name, v) in figures {
            if let Some(v) = v
                && !(v.is_finite() && v >= 0.0)
            {
                out.push(Diagnostic::error(
                    at(&format!("model_facts.{name}")),
                    format!("{v} is not a size: write a number above 0"),
                ));
            }
        }
        if m.config.is_none() {
            for (name, v, example) in [
                ("total_params", m.total_params, "8.03e9"),
                ("bytes_per_weight", m.bytes_per_weight, "2"),
                ("kv_bytes_per_token", m.kv_bytes_per_token, "131072"),
            ] {
                if v.is_none() {
                    out.push(
                        Diagnostic::error(
                            at("model_facts"),
                            format!("`{name}` is missing and no `config` is named to read it from"),
                        )
                        .with_hint(format!(
                            "write `{name}: {example}`, or `config: path/to/config.json`"
                        )),
                    );
                }
            }
        }
        if let (Some(a), Some(t)) = (m.active_params, m.total_params)
            && a > t
        {
            out.push(Diagnostic::error(
                at("model_facts.active_params"),
                format!("{a:e} active parameters is more than the {t:e} in total"),
            ));
        }
    }
}
