//! Each engine's wire shapes, replayed by small in-test servers (127.0.0.1, port 0) as the
//! engine's source writes them (the version and file are named at each), against the
//! profile-driven tokenizer, detection and request bodies. Each of these failed before the
//! engine profiles existed.

use axum::Json;
use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use servebench_engines::profile;
use servebench_runner::dataset::{AnyCounter, ChatMessage, TokenCounter, TokenizerSpec};
use servebench_runner::engine::{BlockPlan, Endpoint, resolve};
use servebench_runner::loadgen::{ApiKind, MinTokens, Target, run_trial};
use servebench_spec::Engine;

use crate::loadgen_support::{config, prompts};

async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

fn spec(tokenizer: &str, api: &str) -> servebench_spec::SpecFile {
    let yaml = format!(
        "apiVersion: servebench/v1alpha1\nkind: Experiment\nmetadata: {{name: t}}\nspec:\n  target: {{base_url: http://127.0.0.1:1, model: m, api: {api}, tokenizer: {tokenizer}}}\n  variants: [{{name: a, baseline: true}}]\n  workload: {{dataset: {{kind: random, input_tokens: 8, output_tokens: 8}}, requests: 1}}\n"
    );
    servebench_spec::parse_str(&yaml, "t.yaml")
        .expect("valid")
        .file
}

fn target(base: &str, api: ApiKind) -> Target {
    Target {
        base_url: base.to_owned(),
        api,
        model: "m".into(),
        api_key: None,
        headers: Vec::new(),
        ca_file: None,
    }
}

/// The tokenizer a block of `engine` uses.
fn tokenizer_for(engine: Engine, base: &str) -> TokenizerSpec {
    let p = profile(engine).expect("profile");
    let t = target(base, ApiKind::Completions);
    BlockPlan::new(
        &spec("server", "openai-completions"),
        &t,
        std::path::Path::new("."),
        p,
    )
    .tokenizer
}

fn user(text: &str) -> Vec<ChatMessage> {
    vec![ChatMessage {
        role: "user".into(),
        content: text.into(),
    }]
}

/// llama.cpp (llama-cpp-python 0.3.36, tools/server/server-context.cpp:5065-5103): a body
/// without `content` answers 200 `{"tokens": []}`.
async fn llamacpp_tokenize(Json(body): Json<Value>) -> Json<Value> {
    let Some(text) = body.get("content").and_then(Value::as_str) else {
        return Json(json!({"tokens": []}));
    };
    let mut tokens: Vec<u32> = text.split_whitespace().map(|_| 7).collect();
    if body.get("add_special").and_then(Value::as_bool) == Some(true) {
        tokens.insert(0, 2);
    }
    Json(json!({ "tokens": tokens }))
}

/// llama.cpp b11434 `POST /v1/chat/completions/input_tokens` (server-context.cpp:5950-5998):
/// the rendered chat counted, `{"input_tokens": N, "object": "response.input_tokens"}`.
async fn llamacpp_input_tokens(Json(body): Json<Value>) -> Json<Value> {
    let words: usize = body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|x| {
                    x["content"]
                        .as_str()
                        .unwrap_or("")
                        .split_whitespace()
                        .count()
                        + 2
                })
                .sum()
        })
        .unwrap_or(0);
    Json(json!({"input_tokens": words, "object": "response.input_tokens"}))
}

#[tokio::test]
async fn llamacpp_chat_messages_are_no_count_not_zero_tokens() {
    let base = serve(
        Router::new()
            .route("/tokenize", post(llamacpp_tokenize))
            .route(
                "/v1/chat/completions/input_tokens",
                post(llamacpp_input_tokens),
            ),
    )
    .await;
    // Through the generic profile (engine unknown): `{"messages"}` is tried and its 200
    // `{"tokens": []}` is "no chat tokenization", not 0 tokens (it was `Some(0)`).
    let mut c = AnyCounter::from_spec(&tokenizer_for(Engine::Openai, &base)).expect("counter");
    assert_eq!(
        c.count_chat(&user("hello there friend")).await.expect("ok"),
        None
    );
    assert_eq!(c.count("hello there friend").await.expect("count"), 4);
    // Through llama.cpp's profile (b11434): chats are counted at input_tokens, in one request.
    let mut c = AnyCounter::from_spec(&tokenizer_for(Engine::Llamacpp, &base)).expect("counter");
    let before = c.round_trips();
    assert_eq!(
        c.count_chat(&user("hello there friend")).await.expect("ok"),
        Some(5)
    );
    assert_eq!(c.round_trips(), before + 1, "one request");
    assert_eq!(c.count("one two").await.expect("count"), 3, "content + BOS");
}

#[tokio::test]
async fn tgi_tokenizes_inputs_into_an_array_and_chat_at_chat_tokenize() {
    // TGI git db931fcf router/src/server.rs:1304-1324 (`/tokenize` takes a GenerateRequest,
    // answers a JSON array of {id, text, start, stop}) and `/chat_tokenize`
    // ({tokenize_response, templated_text}); a body without `inputs` fails axum's Json
    // extraction with 422.
    async fn tokenize(Json(body): Json<Value>) -> Response {
        let Some(text) = body.get("inputs").and_then(Value::as_str) else {
            return (StatusCode::UNPROCESSABLE_ENTITY, "missing field `inputs`").into_response();
        };
        let mut at = 0;
        let toks: Vec<Value> = text
            .split_whitespace()
            .enumerate()
            .map(|(i, w)| {
                let t = json!({"id": 100 + i, "text": w, "start": at, "stop": at + w.len()});
                at += w.len() + 1;
                t
            })
            .collect();
        Json(Value::Array(toks)).into_response()
    }
    async fn chat_tokenize(Json(body): Json<Value>) -> Json<Value> {
        let words = body["messages"][0]["content"]
            .as_str()
            .unwrap_or("")
            .split_whitespace()
            .count();
        let toks: Vec<Value> = (0..words + 3)
            .map(|i| json!({"id": i, "text": "x", "start": 0, "stop": 1}))
            .collect();
        Json(json!({"tokenize_response": toks, "templated_text": "<|user|>…"}))
    }
    let base = serve(
        Router::new()
            .route("/tokenize", post(tokenize))
            .route("/chat_tokenize", post(chat_tokenize)),
    )
    .await;
    let mut c = AnyCounter::from_spec(&tokenizer_for(Engine::Tgi, &base)).expect("counter");
    assert_eq!(c.count("the quick brown fox").await.expect("an array"), 4);
    assert_eq!(
        c.count_chat(&user("the quick brown fox"))
            .await
            .expect("ok"),
        Some(7)
    );
    // The generic profile's `{"prompt"}`/`{"content"}` get TGI's 422: the error says so.
    let mut c = AnyCounter::from_spec(&tokenizer_for(Engine::Openai, &base)).expect("counter");
    let err = c
        .count("the quick")
        .await
        .expect_err("TGI wants inputs")
        .to_string();
    assert!(err.contains("HTTP 422") && err.contains("inputs"), "{err}");
}

#[tokio::test]
async fn trtllm_tokenizes_at_internal_tokenize_only() {
    // TensorRT-LLM tensorrt_llm/serve/openai_protocol.py @0076e939: TokenizeRequest {model?,
    // prompt} (extra="forbid") → TokenizeResponse {count, tokens}, at `/_internal/tokenize`;
    // there is no `/tokenize` (404).
    async fn tokenize(Json(body): Json<Value>) -> Response {
        let allowed = ["model", "prompt"];
        if let Some(o) = body.as_object()
            && let Some(k) = o.keys().find(|k| !allowed.contains(&k.as_str()))
        {
            return (
                StatusCode::BAD_REQUEST,
                Json(json!({"error": format!("Extra inputs are not permitted: {k}")})),
            )
                .into_response();
        }
        let n = body["prompt"]
            .as_str()
            .unwrap_or("")
            .split_whitespace()
            .count()
            + 1;
        Json(json!({"count": n, "tokens": (0..n).collect::<Vec<_>>()})).into_response()
    }
    let base = serve(Router::new().route("/_internal/tokenize", post(tokenize))).await;
    let mut c = AnyCounter::from_spec(&tokenizer_for(Engine::Trtllm, &base)).expect("counter");
    assert_eq!(c.count("a b c").await.expect("count"), 4);
    assert_eq!(
        c.count_chat(&user("a b c")).await.expect("ok"),
        None,
        "no chat tokenization"
    );
    // The hard-coded `/tokenize` of before: a 404, with the server's reply in the error.
    let mut c = AnyCounter::from_spec(&tokenizer_for(Engine::Openai, &base)).expect("counter");
    let err = c.count("a b c").await.expect_err("404").to_string();
    assert!(err.contains("/tokenize answered HTTP 404"), "{err}");
}

#[tokio::test]
async fn a_refused_tokenize_request_carries_the_servers_reply() {
    // The simulator's answer to a model it does not serve (crates/sim/src/server/
    // endpoints.rs): the reply said what was wrong, and the error dropped it.
    async fn refuse() -> Response {
        (
            StatusCode::NOT_FOUND,
            Json(json!({"error": {"code": 404, "message": "The model `default` does not exist; this server serves `sim-model`.", "type": "not_found_error"}})),
        )
            .into_response()
    }
    let base = serve(Router::new().route("/tokenize", post(refuse))).await;
    let mut c = AnyCounter::from_spec(&tokenizer_for(Engine::Vllm, &base)).expect("counter");
    let err = c.count("hi").await.expect_err("404").to_string();
    assert!(
        err.contains("HTTP 404") && err.contains("this server serves `sim-model`"),
        "{err}"
    );
}

#[tokio::test]
async fn engines_are_told_apart_by_what_they_answer() {
    fn models(owner: &'static str) -> Router {
        Router::new().route(
            "/v1/models",
            get(move || async move {
                Json(json!({"object": "list", "data": [{"id": "m", "object": "model", "owned_by": owner, "max_model_len": 4096}]}))
            }),
        )
    }
    // SGLang 0.5.23: owned_by "sglang", `/server_info` with `version` (http_server.py:863).
    let sglang = models("sglang").route(
        "/server_info",
        get(|| async { Json(json!({"model_path": "m", "tp_size": 1, "version": "0.5.23"})) }),
    );
    let base = serve(sglang).await;
    let ep = Endpoint {
        base_url: base.clone(),
        ca_file: None,
        api_key: None,
        headers: Vec::new(),
    };
    let r = resolve(&ep, Engine::Auto).await.expect("answers");
    assert_eq!(r.record.engine, Engine::Sglang);
    assert_eq!(r.record.version.as_deref(), Some("0.5.23"));
    // vLLM 0.33.0: owned_by "vllm", `/version` (serve/instrumentator/basic.py:53).
    let vllm = models("vllm").route(
        "/version",
        get(|| async { Json(json!({"version": "0.33.0"})) }),
    );
    let ep = Endpoint {
        base_url: serve(vllm).await,
        ..ep.clone()
    };
    let r = resolve(&ep, Engine::Auto).await.expect("answers");
    assert_eq!(
        (r.record.engine, r.record.version.as_deref()),
        (Engine::Vllm, Some("0.33.0"))
    );
    // TGI db931fcf: owned_by is the model id; `/info` names the router.
    let tgi = Router::new()
        .route("/v1/models", get(|| async { Json(json!({"object": "list", "data": [{"id": "bigscience/bloom", "object": "model", "created": 0, "owned_by": "bigscience/bloom"}]})) }))
        .route("/info", get(|| async { Json(json!({"model_id": "bigscience/bloom", "max_total_tokens": 2048, "router": "text-generation-router", "version": "3.3.7"})) }));
    let ep = Endpoint {
        base_url: serve(tgi).await,
        ..ep.clone()
    };
    let r = resolve(&ep, Engine::Auto).await.expect("answers");
    assert_eq!(
        (r.record.engine, r.record.version.as_deref()),
        (Engine::Tgi, Some("3.3.7"))
    );
    assert!(r.record.evidence.contains("/info"), "{}", r.record.evidence);
    // Nothing engine-specific: the generic profile, said.
    let ep = Endpoint {
        base_url: serve(models("someone")).await,
        ..ep.clone()
    };
    let r = resolve(&ep, Engine::Auto).await.expect("answers");
    assert_eq!(r.record.engine, Engine::Openai);
    assert!(
        r.record.evidence.contains("nothing engine-specific"),
        "{}",
        r.record.evidence
    );
    // Nothing listening: connection refused, said so.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("a")
        .port();
    let ep = Endpoint {
        base_url: format!("http://127.0.0.1:{port}"),
        ..ep
    };
    let err = resolve(&ep, Engine::Auto)
        .await
        .expect_err("refused")
        .to_string();
    assert!(err.contains("connection refused"), "{err}");
}

/// A transformers serve chat endpoint as 5.24.0 writes it: cli/serving/utils.py:1183-1187
/// answers 422 `{"detail": "Unexpected fields in the request: {…}"}` to a key outside
/// `TransformersCompletionCreateParamsStreaming` (chat_completion.py:63); `generation_config`
/// is a JSON string (utils.py:1246); the stream has a role chunk, content chunks, a final
/// chunk with `finish_reason` and `usage`, and no `[DONE]`. With `hold_back`, no content
/// chunk at all (seen on an H200 with 5.17.0 and a byte-level tokenizer).
async fn transformers_chat(
    axum::extract::State(hold_back): axum::extract::State<bool>,
    Json(body): Json<Value>,
) -> Response {
    const ALLOWED: [&str; 12] = [
        "model",
        "messages",
        "max_tokens",
        "stream",
        "stream_options",
        "temperature",
        "top_p",
        "seed",
        "generation_config",
        "chat_template_kwargs",
        "stop",
        "max_completion_tokens",
    ];
    if let Some(o) = body.as_object() {
        let unexpected: Vec<&str> = o
            .keys()
            .map(String::as_str)
            .filter(|k| !ALLOWED.contains(k))
            .collect();
        if !unexpected.is_empty() {
            let set = unexpected
                .iter()
                .map(|k| format!("'{k}'"))
                .collect::<Vec<_>>()
                .join(", ");
            return (
                StatusCode::UNPROCESSABLE_ENTITY,
                Json(json!({"detail": format!("Unexpected fields in the request: {{{set}}}")})),
            )
                .into_response();
        }
    }
    let max = body["max_tokens"].as_u64().unwrap_or(16);
    let n = body["generation_config"]
        .as_str()
        .and_then(|g| serde_json::from_str::<Value>(g).ok())
        .and_then(|g| g["min_new_tokens"].as_u64())
        .map_or(max.min(3), |m| m.min(max));
    let chunk = |delta: Value, fr: Option<&str>, usage: Option<Value>| {
        let mut c = json!({"id": "req-1", "choices": [{"delta": delta, "index": 0}], "created": 1, "model": "m", "object": "chat.completion.chunk"});
        if let Some(f) = fr {
            c["choices"][0]["finish_reason"] = json!(f);
        }
        if let Some(u) = usage {
            c["usage"] = u;
        }
        format!("data: {c}\n\n")
    };
    let mut out = chunk(json!({"role": "assistant"}), None, None);
    if !hold_back {
        for k in 0..n {
            out.push_str(&chunk(json!({"content": format!(" w{k}")}), None, None));
        }
    }
    let fr = if n == max { "length" } else { "stop" };
    out.push_str(&chunk(
        json!({}),
        Some(fr),
        Some(json!({"completion_tokens": n, "prompt_tokens": 5, "total_tokens": n + 5})),
    ));
    ([("content-type", "text/event-stream")], out).into_response()
}

#[tokio::test]
async fn transformers_serve_gets_a_body_it_takes_and_fixed_lengths() {
    let app = Router::new()
        .route("/v1/chat/completions", post(transformers_chat))
        .with_state(false);
    let base = serve(app).await;
    let t = target(&base, ApiKind::Chat);
    // The default body of before: `ignore_eos: true` → 422 on every request.
    let before = run_trial(&t, &config(2), &prompts(2, 8))
        .await
        .expect("ran");
    assert!(
        before
            .records
            .iter()
            .all(|r| r.error == Some(servebench_result::record::ErrorKind::Http { status: 422 })),
        "{:?}",
        before.records[0].error_detail
    );
    assert!(
        before.records[0]
            .error_detail
            .as_deref()
            .unwrap_or("")
            .contains("Unexpected fields")
    );
    // The transformers profile's plan: no ignore_eos, generation_config fixing the length.
    let plan = profile(Engine::Transformers)
        .expect("profile")
        .body_plan(true, true);
    let mut cfg = config(2);
    cfg.ignore_eos = plan.ignore_eos;
    cfg.min_tokens = if plan.min_tokens {
        MinTokens::MatchMax
    } else {
        MinTokens::Omit
    };
    cfg.stream_options = plan.stream_options;
    cfg.generation_config = plan.generation_config;
    let after = run_trial(&t, &cfg, &prompts(2, 8)).await.expect("ran");
    for r in &after.records {
        assert_eq!(r.error, None, "{:?}", r.error_detail);
        assert_eq!(
            r.usage.map(|u| u.completion_tokens),
            Some(8),
            "asked 8, got 8"
        );
        assert_eq!(r.output_target, Some(8));
        assert_eq!(r.events.len(), 8);
    }
    assert_eq!(after.summary.all.completed, 2, "no [DONE] is a normal end");
}

#[tokio::test]
async fn a_held_back_stream_is_counted_with_its_share() {
    let app = Router::new()
        .route("/v1/chat/completions", post(transformers_chat))
        .with_state(true);
    let base = serve(app).await;
    let t = target(&base, ApiKind::Chat);
    let plan = profile(Engine::Transformers)
        .expect("profile")
        .body_plan(true, false);
    let mut cfg = config(3);
    cfg.ignore_eos = plan.ignore_eos;
    cfg.generation_config = plan.generation_config;
    let o = run_trial(&t, &cfg, &prompts(3, 6)).await.expect("ran");
    assert_eq!(o.summary.all.completed, 3, "{:?}", o.summary.errors);
    assert!(
        o.summary.errors.is_empty(),
        "not no_content: {:?}",
        o.summary.errors
    );
    assert_eq!(
        o.summary
            .flags
            .get(&servebench_result::record::RequestFlag::ContentHeldBack),
        Some(&3)
    );
    assert!(
        o.records
            .iter()
            .all(|r| r.content_held_back && r.events.len() == 1)
    );
}

#[tokio::test]
async fn a_tgi_stream_cut_after_empty_finish_reasons_is_disconnected() {
    // TGI db931fcf router/src/server.rs:857-875: `"finish_reason": ""` on every completions
    // chunk but the last. A stream that ends before the last must not count as finished.
    use crate::loadgen_support::{Script, now, serve as serve_script};
    let mid = br#"data: {"object":"text_completion","id":"","created":1,"model":"m","system_fingerprint":"3.3.7-native","choices":[{"index":0,"text":" a","logprobs":null,"finish_reason":""}]}

"#;
    let s = serve_script(Script::Stream(vec![now(mid), now(mid)])).await;
    let o = run_trial(&s.target(ApiKind::Completions), &config(1), &prompts(1, 8))
        .await
        .expect("ran");
    assert_eq!(
        o.records[0].error,
        Some(servebench_result::record::ErrorKind::StreamDisconnected),
        "{:?}",
        o.records[0].error_detail
    );
}
