//! llama.cpp's `/tokenize` answers `{"prompt": …}` with 200 and no tokens, and counts BOS
//! only with `add_special`: the server counter must find the `content` key and ask for
//! special tokens, so fitted lengths equal the server's `usage.prompt_tokens`.

use axum::Json;
use axum::routing::post;
use serde_json::{Value, json};
use servebench_runner::dataset::{ServerTokenizer, TokenCounter, TokenizeStyle};

async fn llamacpp_tokenize(Json(body): Json<Value>) -> Json<Value> {
    let Some(text) = body.get("content").and_then(Value::as_str) else {
        return Json(json!({"tokens": []}));
    };
    let mut tokens: Vec<u32> = text.split_whitespace().map(|_| 7).collect();
    if body.get("add_special").and_then(Value::as_bool) == Some(true) {
        tokens.insert(0, 2); // BOS
    }
    Json(json!({ "tokens": tokens }))
}

#[tokio::test]
async fn auto_style_finds_content_and_counts_bos_like_llamacpp() {
    let app = axum::Router::new().route("/tokenize", post(llamacpp_tokenize));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    let mut t = ServerTokenizer::new(
        &format!("http://{addr}"),
        "/tokenize",
        None,
        None,
        TokenizeStyle::Auto,
    )
    .expect("url");
    // Three words plus BOS, as llama.cpp's usage.prompt_tokens counts them.
    assert_eq!(t.count("hello there friend").await.expect("count"), 4);
    // The style that worked is kept: one round trip from now on.
    let before = t.round_trips();
    assert_eq!(t.count("one two").await.expect("count"), 3);
    assert_eq!(t.round_trips(), before + 1);
}
