//! What a server says about itself (version, arguments), read back for the result file from
//! the endpoints its engine profile lists, richest first (servebench_engines, `info`):
//! SGLang `/server_info` (every server argument; `/get_server_info` on older versions),
//! llama.cpp `/props`, TGI `/info`, vLLM and TensorRT-LLM `/version`, then `/v1/models`, which
//! every OpenAI-compatible server has. A plain OpenAI-compatible server is asked every one of
//! them, the simulator's `/v1/sim/info` among them.

use std::time::Duration;

use servebench_engines::Profile;
use servebench_result::server::ServerInfo;

use super::RunningServer;
use super::http;

/// The endpoints tried for a server whose engine is not known: the generic profile's.
pub const INFO_ENDPOINTS: &[&str] = servebench_engines::GENERIC.info;

/// Timeout of each endpoint's request.
const INFO_TIMEOUT: Duration = Duration::from_secs(3);

/// The first JSON answer (2xx, a JSON object or array) of `profile`'s info endpoints on
/// `server`, or `None` when none answers. Best effort: failures are not errors.
pub async fn server_info(server: &RunningServer, profile: &Profile) -> Option<ServerInfo> {
    server_info_at(&server.base_url(), server.ca_file(), profile).await
}

/// [`server_info`] for a server at `base_url` (e.g. a spec's `target.base_url`), trusting
/// `ca_file` besides the system's roots for an `https://` URL.
pub async fn server_info_at(
    base_url: &str,
    ca_file: Option<&std::path::Path>,
    profile: &Profile,
) -> Option<ServerInfo> {
    let client = http::client(ca_file).ok()?;
    let base = base_url.trim_end_matches('/');
    for endpoint in profile.info {
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
