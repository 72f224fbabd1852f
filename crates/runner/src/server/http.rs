//! The small HTTP client of readiness probes, verify rules and the server-info read-back.

use std::time::Duration;

use servebench_spec::{HttpMethod, HttpProbe};

/// A client for probes (`ca_file`: a CA to trust besides the system's roots): no proxy (a `HTTP_PROXY` in the environment must not route
/// 127.0.0.1 through it), no connection pooling across probes.
pub(crate) fn client(ca_file: Option<&std::path::Path>) -> Result<reqwest::Client, String> {
    crate::tls::reqwest_builder(ca_file)
        .map_err(|e| e.to_string())?
        .no_proxy()
        .pool_max_idle_per_host(0)
        .connect_timeout(Duration::from_secs(5))
        .build()
        .map_err(|e| describe(&e))
}

/// `{base}{path}`, with one slash between (`base`: e.g. `http://127.0.0.1:8000`).
pub(crate) fn url(base: &str, path: &str) -> String {
    let base = base.trim_end_matches('/');
    let slash = if path.starts_with('/') { "" } else { "/" };
    format!("{base}{slash}{path}")
}

/// Sends one readiness probe; the response's status, or why there was none.
pub(crate) async fn probe(
    client: &reqwest::Client,
    p: &HttpProbe,
    url: &str,
    timeout: Duration,
) -> Result<u16, String> {
    let method = match p.method {
        HttpMethod::Get => reqwest::Method::GET,
        HttpMethod::Post => reqwest::Method::POST,
        HttpMethod::Head => reqwest::Method::HEAD,
    };
    let mut req = client.request(method, url).timeout(timeout);
    if let Some(body) = &p.body {
        req = req.json(body);
    }
    let resp = req.send().await.map_err(|e| describe(&e))?;
    Ok(resp.status().as_u16())
}

/// Failure to read a JSON document.
#[derive(Debug)]
pub(crate) enum GetJsonError {
    /// No response.
    Request(String),
    /// A response whose status is not 2xx; the start of its body.
    Status(u16, String),
    /// A 2xx response that is not JSON.
    NotJson(String),
}

/// `GET url` → its JSON body.
pub(crate) async fn get_json(
    client: &reqwest::Client,
    url: &str,
    timeout: Duration,
) -> Result<serde_json::Value, GetJsonError> {
    let resp = client
        .get(url)
        .timeout(timeout)
        .send()
        .await
        .map_err(|e| GetJsonError::Request(describe(&e)))?;
    let status = resp.status();
    let body = resp
        .bytes()
        .await
        .map_err(|e| GetJsonError::Request(describe(&e)))?;
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body);
        let start: String = text.chars().take(200).collect();
        return Err(GetJsonError::Status(
            status.as_u16(),
            start.trim().to_owned(),
        ));
    }
    serde_json::from_slice(&body).map_err(|e| GetJsonError::NotJson(e.to_string()))
}

/// A reqwest error with its causes, the innermost said plainly ([`crate::net::describe`]).
pub(crate) fn describe(e: &reqwest::Error) -> String {
    crate::net::describe(e)
}
