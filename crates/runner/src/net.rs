//! What a failed HTTP request or an error reply says, in words a person can act on: shared
//! by the probes of a server, the tokenizer and the engine checks.

use std::error::Error as _;

/// A reqwest error with its causes, the innermost said plainly: "connection refused
/// (nothing listens there)", "timed out", "dns error: …".
pub(crate) fn describe(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return "timed out".to_owned();
    }
    let mut parts = vec![e.to_string()];
    let mut src = e.source();
    while let Some(s) = src {
        let t = s.to_string();
        if !parts.iter().any(|p| p.contains(&t)) {
            parts.push(t);
        }
        src = s.source();
    }
    if parts
        .iter()
        .any(|p| p.to_ascii_lowercase().contains("connection refused"))
    {
        return "connection refused (nothing listens there)".to_owned();
    }
    // rustls read a reply that is not TLS at all: a plain-HTTP server behind `https://`.
    if parts.iter().any(|p| {
        p.contains("InvalidContentType") || p.contains("corrupt message") || p.contains("HTTP/1.")
    }) && e.url().is_some_and(|u| u.scheme() == "https")
    {
        let inner = parts.pop().unwrap_or_default();
        return format!(
            "the server answered the TLS handshake with something that is not TLS ({inner}): \
             it serves plain HTTP there, so write the URL with `http://`, or enable TLS on the \
             server"
        );
    }
    // The innermost cause is what a person needs.
    parts.pop().unwrap_or_default()
}

/// The start of an error reply's body, as text on one line (at most 300 characters), or
/// "an empty body".
pub(crate) fn body_excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.is_empty() {
        return "an empty body".to_owned();
    }
    let mut out: String = one_line.chars().take(300).collect();
    if out.len() < one_line.len() {
        out.push('…');
    }
    out
}

/// What an HTTP answer was, for a message that refuses it: its status, its content type and
/// the start of its body ("HTTP 404, text/html, body `<!DOCTYPE html> …`"), so a person sees
/// what the server said rather than what servebench missed in it.
pub(crate) fn answer_words(status: u16, content_type: Option<&str>, body: &[u8]) -> String {
    let kind = content_type.map_or_else(|| "no content type".to_owned(), |t| t.trim().to_owned());
    let bytes = if body.is_empty() {
        "an empty body".to_owned()
    } else {
        format!(
            "{} bytes starting `{}`",
            body.len(),
            body_excerpt(&body[..body.len().min(120)])
        )
    };
    format!("HTTP {status}, {kind}, {bytes}")
}

/// What to write instead of a base URL that already ends in `/v1`: servebench adds
/// `/v1/models`, `/v1/completions`, … itself, so `http://host:8000/v1` asks for
/// `/v1/v1/models`. `None` for any other URL.
pub(crate) fn v1_suffix_hint(base_url: &str) -> Option<String> {
    let trimmed = base_url.trim_end_matches('/');
    let bare = trimmed.strip_suffix("/v1")?;
    Some(format!(
        "the URL ends in `/v1`, and servebench adds `/v1/…` itself: give `{bare}`"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_excerpt_is_one_bounded_line() {
        assert_eq!(body_excerpt(b""), "an empty body");
        assert_eq!(
            body_excerpt(b"{\"error\":\n  \"The model `default` does not exist\"}"),
            "{\"error\": \"The model `default` does not exist\"}"
        );
        let long = vec![b'x'; 1000];
        assert_eq!(body_excerpt(&long).chars().count(), 301);
    }

    #[test]
    fn an_answer_is_said_by_status_type_and_first_bytes() {
        assert_eq!(
            answer_words(
                404,
                Some("text/html"),
                b"<html>\n<body>Not Found</body></html>"
            ),
            "HTTP 404, text/html, 36 bytes starting `<html> <body>Not Found</body></html>`"
        );
        assert_eq!(
            answer_words(500, None, b""),
            "HTTP 500, no content type, an empty body"
        );
        assert_eq!(
            v1_suffix_hint("http://h:8000/v1/").as_deref(),
            Some("the URL ends in `/v1`, and servebench adds `/v1/…` itself: give `http://h:8000`")
        );
        assert_eq!(v1_suffix_hint("http://h:8000"), None);
    }

    #[tokio::test]
    async fn nothing_listening_is_said_as_connection_refused() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            l.local_addr().expect("addr").port()
        };
        let client = crate::tls::reqwest_builder(None)
            .expect("TLS config")
            .build()
            .expect("client");
        let e = client
            .get(format!("http://127.0.0.1:{port}/v1/models"))
            .send()
            .await
            .expect_err("nothing listens");
        assert_eq!(describe(&e), "connection refused (nothing listens there)");
    }
}
