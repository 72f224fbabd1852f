//! Each engine's tokenize routes and what tells engines apart, replayed by small in-test
//! servers (127.0.0.1, port 0) as the engine's source writes them (the version and file are
//! named at each), against the profile-driven tokenizer and detection; its request bodies and
//! streams are in `engine_streams.rs`. Each of these failed before the engine profiles
//! existed.

use axum::Json;
use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use servebench_engines::Engine;
use servebench_engines::profile;
use servebench_runner::dataset::{AnyCounter, ChatMessage, TokenCounter, TokenizerSpec};
use servebench_runner::engine::{BlockPlan, Endpoint, resolve};
use servebench_runner::loadgen::{ApiKind, Target};

pub(crate) async fn serve(app: Router) -> String {
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

pub(crate) fn target(base: &str, api: ApiKind) -> Target {
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
