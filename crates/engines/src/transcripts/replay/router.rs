//! llama.cpp's router (b11434, `llamacpp/transcripts/b11434-router/`, written by hand from
//! `tools/server/server-models.cpp`) against the dialect with `--router-model`.

use axum::http::StatusCode;
use serde_json::Value;

use super::http::{get, json_shape};
use super::served;
use crate::Engine;
use crate::dialect::Served;
use crate::transcripts::read;

const DIR: &str = "llamacpp/transcripts/b11434-router";

/// The router of the transcripts: `qwen3-0.6b` loaded (`--ctx-size 8192 --parallel 2`,
/// 4096 tokens a slot), `gemma-3-1b` listed.
fn router() -> Served {
    let mut c = served(Engine::Llamacpp, "qwen3-0.6b");
    c.wire.router_models = vec!["gemma-3-1b".into()];
    c.max_model_len = 4096;
    c.max_num_seqs = 2;
    c
}

#[tokio::test]
async fn the_router_lists_its_models_as_b11434_does() {
    let (status, got) = get(router(), "/v1/models").await;
    assert_eq!(status, StatusCode::OK);
    let want = read(&format!("{DIR}/models.json"));
    assert_eq!(
        json_shape(&got, "/v1/models"),
        json_shape(&want, "models.json"),
        "{got}"
    );
    let pick = |t: &str| -> Vec<(Value, Value)> {
        let v: Value = serde_json::from_str(t).expect("json");
        v["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|m| (m["id"].clone(), m["status"]["value"].clone()))
            .collect()
    };
    assert_eq!(pick(&got), pick(&want));
}

#[tokio::test]
async fn the_routers_own_props_and_a_models_props() {
    let (status, got) = get(router(), "/props").await;
    assert_eq!(status, StatusCode::OK);
    let want = read(&format!("{DIR}/props-router.json"));
    assert_eq!(
        json_shape(&got, "/props"),
        json_shape(&want, "props-router.json"),
        "{got}"
    );
    // A model's props come from its own server: what the client reads of them.
    let (status, got) = get(router(), "/props?model=qwen3-0.6b").await;
    assert_eq!(status, StatusCode::OK);
    let want: Value =
        serde_json::from_str(&read(&format!("{DIR}/props-model.json"))).expect("json");
    let got: Value = serde_json::from_str(&got).expect("json");
    for pointer in ["/default_generation_settings/n_ctx", "/total_slots"] {
        assert_eq!(
            got.pointer(pointer),
            want.pointer(pointer),
            "{pointer}: {got}"
        );
    }
}

#[tokio::test]
async fn the_routers_metrics_need_a_model() {
    let (status, got) = get(router(), "/metrics").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        got,
        read(&format!("{DIR}/metrics-no-model-400.json")).trim_end()
    );
}
