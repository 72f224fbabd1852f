//! `probe --spec` with a `request_body`: one request per distinct body (the workload's
//! merged with each variant's), saying whether the engine accepted it.

use servebench_result::checks::{CheckOutcome, CheckRecord, Guarantee};
use servebench_spec::SpecFile;

use super::super::checks::BlockPlan;
use super::generate_with;
use crate::loadgen::Target;

/// Output tokens of a body check's request: enough to see the stream work.
const TOKENS: u32 = 4;

/// One check per distinct request body of the spec's variants; none without a body.
pub(super) async fn request_body_checks(
    target: &Target,
    plan: &BlockPlan,
    spec: &SpecFile,
    deadline: std::time::Duration,
) -> Vec<CheckRecord> {
    if !spec.has_request_body() {
        return Vec::new();
    }
    let mut seen: Vec<(serde_json::Map<String, serde_json::Value>, Vec<String>)> = Vec::new();
    for v in &spec.spec.variants {
        let body = spec.request_body(&v.name);
        match seen.iter_mut().find(|(b, _)| *b == body) {
            Some((_, names)) => names.push(v.name.clone()),
            None => seen.push((body, vec![v.name.clone()])),
        }
    }
    let mut out = Vec::with_capacity(seen.len());
    for (body, names) in seen {
        let shown = serde_json::Value::Object(body.clone()).to_string();
        let rec = generate_with(target, plan, TOKENS, deadline, body).await;
        let who = format!("variant {}", names.join(", "));
        let check = match (&rec.error, &rec.error_detail) {
            (None, _) => CheckRecord::new(
                Guarantee::RequestBody,
                CheckOutcome::Holds,
                format!("{who}: a request with {shown} was accepted"),
            ),
            (Some(kind), detail) => CheckRecord::new(
                Guarantee::RequestBody,
                CheckOutcome::Fails,
                format!(
                    "{who}: a request with {shown} was refused ({kind:?}: {}); every request of \
                     the run would be: remove the field the engine names, or check the engine \
                     takes it",
                    detail.as_deref().unwrap_or("no detail")
                ),
            ),
        };
        out.push(check.needed(true));
    }
    out
}
