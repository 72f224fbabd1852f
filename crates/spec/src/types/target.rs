//! `spec.target`: where the load goes.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use servebench_engines::Engine;

/// `target.model`'s value that means "the one model the server lists".
pub const AUTO_MODEL: &str = "auto";

/// The API the load generator talks to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// Base URL when no server is launched, e.g. `http://10.0.0.5:8000`. With a `server`
    /// block the default is `http://127.0.0.1:${port}`; set it to reach the launched server
    /// elsewhere, e.g. `https://127.0.0.1:${port}` for one that serves only HTTPS (probes,
    /// verify rules and load all go there). Host-specific: not part of the hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// `openai-completions` (`/v1/completions`) or `openai-chat` (`/v1/chat/completions`).
    #[serde(default)]
    pub api: ApiKind,
    /// The model name sent in every request, or `auto`: the one model the server's
    /// `/v1/models` lists, read at each server start, said and recorded in the result's
    /// checks (a server listing several is refused, with their names).
    pub model: String,
    /// Which engine serves it: `auto` (default: detected from what the server answers, and
    /// said), `sglang`, `vllm`, `llamacpp`, `trtllm`, `tgi`, `transformers`, or `openai` (a
    /// plain OpenAI-compatible server: nothing engine-specific assumed). The engine's profile
    /// decides the request fields sent (e.g. no `ignore_eos` where the engine refuses it),
    /// where prompts are tokenized, where the context limit and server arguments are read
    /// (docs/engines.md).
    #[serde(default, skip_serializing_if = "Engine::is_auto")]
    pub engine: Engine,
    /// Where input lengths are counted: `server` (its `/tokenize`), `local`
    /// (`tokenizer_path`, a tokenizer.json) or `none` (approximate lengths, flagged).
    #[serde(default)]
    pub tokenizer: TokenizerSource,
    /// Path of a local Hugging Face tokenizer.json (relative to the spec file), with
    /// `tokenizer: local`: for servers without a `/tokenize` endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer_path: Option<String>,
    /// Name of the environment variable holding the API key (never the key itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Extra request headers sent with every generation and `/tokenize` request (not with
    /// the readiness and verify probes of a launched server), e.g. `{X-Tenant: bench}`. A value may read the environment with
    /// `${env.NAME}`; resolved values are never written anywhere. A header whose name holds
    /// a secret (`Authorization`, `Cookie`, `*key*`, `*token*`…) must take its value from
    /// `${env.NAME}`, so the spec and result never hold it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// TLS settings of `https://` targets (the system's roots are trusted without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<Tls>,
}

/// How an `https://` target's certificate is checked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tls {
    /// A PEM file of CA certificates to trust besides the system's roots (relative to the
    /// spec file): for an endpoint whose certificate a private CA signed. Host-specific: not
    /// part of the hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<String>,
}

/// Which OpenAI-compatible API is used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ApiKind {
    /// `POST /v1/completions` with a `prompt`.
    #[default]
    OpenaiCompletions,
    /// `POST /v1/chat/completions` with `messages`.
    OpenaiChat,
}

/// Where token counts of prompts come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TokenizerSource {
    /// The server's own tokenize endpoint, where its engine profile says it is (SGLang,
    /// vLLM, llama.cpp, TGI, TensorRT-LLM, the simulator; transformers serve has none).
    #[default]
    Server,
    /// A local tokenizer.json at `tokenizer_path`.
    Local,
    /// No tokenizer: prompt lengths are approximate and results say so.
    None,
}

impl TokenizerSource {
    /// What a peer tool's tokenizer (bench_serving's or `vllm bench serve`'s `--tokenizer`,
    /// the `tokenizer_id` a result records) is in a spec: a `tokenizer.json` file is `local`
    /// with that path; a hub id, a model folder or none is `server` (the served model's own
    /// counting, which a hub id of that model counts alike). One rule for `from` and
    /// `import`, so that the two of one experiment have one fingerprint.
    pub fn of_peer(tokenizer: Option<&str>) -> (TokenizerSource, Option<String>) {
        match tokenizer {
            Some(t) if t.ends_with(".json") => (TokenizerSource::Local, Some(t.to_owned())),
            _ => (TokenizerSource::Server, None),
        }
    }
}
