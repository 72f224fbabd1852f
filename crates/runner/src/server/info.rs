//! What a server says about itself (version, arguments), read back for the result file.

use std::time::Duration;

use servebench_result::server::ServerInfo;

use super::RunningServer;
use super::http;

/// Endpoints tried in order; the richest first, `/v1/models` last as every OpenAI-compatible
/// server has it:
/// `/get_server_info` (SGLang: every server argument), `/server_info` (newer SGLang, the
/// simulator), `/props` (llama.cpp), `/v1/sim/info` (the simulator), `/version` (vLLM,
/// SGLang), `/v1/models`.
pub const INFO_ENDPOINTS: &[&str] = &[
    "/get_server_info",
    "/server_info",
    "/props",
    "/v1/sim/info",
    "/version",
    "/v1/models",
];

/// Timeout of each endpoint's request.
const INFO_TIMEOUT: Duration = Duration::from_secs(3);

/// The first JSON answer (2xx, a JSON object or array) of [`INFO_ENDPOINTS`] on `server`, or
/// `None` when none answers. Best effort: failures are not errors.
pub async fn server_info(server: &RunningServer) -> Option<ServerInfo> {
    server_info_at(&server.base_url(), server.ca_file()).await
}

/// [`server_info`] for a server at `base_url` (e.g. a spec's `target.base_url`), trusting
/// `ca_file` besides the system's roots for an `https://` URL.
pub async fn server_info_at(
    base_url: &str,
    ca_file: Option<&std::path::Path>,
) -> Option<ServerInfo> {
    let client = http::client(ca_file).ok()?;
    let base = base_url.trim_end_matches('/');
    for endpoint in INFO_ENDPOINTS {
        let url = format!("{base}{endpoint}");
        if let Ok(info) = http::get_json(&client, &url, INFO_TIMEOUT).await
            && (info.is_object() || info.is_array())
        {
            return Some(ServerInfo {
                endpoint: (*endpoint).to_owned(),
                info,
            });
        }
    }
    None
}
