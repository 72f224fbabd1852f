//! HTTP/1.1 response framing, pure and incremental: the response head, and the body by
//! `Transfer-Encoding: chunked`, `Content-Length` or connection close (RFC 9112 §6–7).
//!
//! The chunked decoder is a byte-level state machine: it consumes every byte it is given and
//! hands out body data as slices of the input, so the caller can reuse its read buffer after
//! each read and nothing is copied.

/// The parts of a response head the client acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// The status code.
    pub status: u16,
    /// The `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// How the body ends.
    pub framing: Framing,
    /// The connection may carry another request after this response.
    pub keep_alive: bool,
}

/// How the body's end is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// `Content-Length`: this many bytes.
    Length(u64),
    /// Until the server closes the connection.
    Close,
}

/// A response that is not HTTP/1.1 as expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed HTTP response: {0}")]
pub struct FramingError(pub &'static str);

/// Longest response head accepted.
pub const MAX_HEAD: usize = 64 << 10;

/// Parses a response head at the start of `buf`: `Ok(None)` until `\r\n\r\n` has arrived,
/// else the head and the number of bytes it took. Informational (1xx) heads are returned
/// like others; the caller skips them.
pub fn parse_head(buf: &[u8]) -> Result<Option<(Head, usize)>, FramingError> {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return if buf.len() > MAX_HEAD {
            Err(FramingError("head too long"))
        } else {
            Ok(None)
        };
    };
    let text = std::str::from_utf8(&buf[..end]).map_err(|_| FramingError("head is not UTF-8"))?;
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    let http10 = match version {
        "HTTP/1.1" => false,
        "HTTP/1.0" => true,
        _ => return Err(FramingError("not an HTTP/1.x status line")),
    };
    let status: u16 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .filter(|s| (100..1000).contains(s))
        .ok_or(FramingError("bad status code"))?;
    let (mut content_type, mut chunked, mut length, mut close) = (None, false, None, http10);
    for line in lines {
        let (name, value) = line
            .split_once(':')
            .ok_or(FramingError("header without a colon"))?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value
                .rsplit(',')
                .next()
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("chunked"));
        } else if name.eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .parse::<u64>()
                    .map_err(|_| FramingError("bad content-length"))?,
            );
        } else if name.eq_ignore_ascii_case("content-type") {
            content_type = Some(value.to_owned());
        } else if name.eq_ignore_ascii_case("connection") {
            for token in value.split(',') {
                let t = token.trim();
                if t.eq_ignore_ascii_case("close") {
                    close = true;
                } else if t.eq_ignore_ascii_case("keep-alive") && http10 {
                    close = false;
                }
            }
        }
    }
    let bodiless = status < 200 || status == 204 || status == 304;
    let framing = match (bodiless, chunked, length) {
        (true, _, _) => Framing::Length(0),
        (false, true, _) => Framing::Chunked,
        (false, false, Some(n)) => Framing::Length(n),
        (false, false, None) => Framing::Close,
    };
    let keep_alive = !close && framing != Framing::Close;
    Ok(Some((
        Head {
            status,
            content_type,
            framing,
            keep_alive,
        },
        end + 4,
    )))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Size {
        value: u64,
        digits: u8,
    },
    /// A chunk extension (`;name=value`) or whitespace after the size: skipped.
    Extension {
        value: u64,
    },
    SizeLf {
        value: u64,
    },
    Data {
        left: u64,
    },
    DataCr,
    DataLf,
    /// Trailer fields, ended by an empty line.
    Trailer {
        at_line_start: bool,
    },
    Done,
}

/// Incremental decoder of a chunked body. Line ends are CRLF; a bare LF is accepted too.
#[derive(Debug, Clone)]
pub struct ChunkedDecoder {
    state: State,
}

impl Default for ChunkedDecoder {
    fn default() -> Self {
        ChunkedDecoder {
            state: State::Size {
                value: 0,
                digits: 0,
            },
        }
    }
}

impl ChunkedDecoder {
    /// The terminating chunk and trailer section have been read.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Decodes `input`, calling `on_data` with each run of body bytes. Bytes after the
    /// end of the body are ignored (a well-behaved server sends none).
    pub fn feed(
        &mut self,
        input: &[u8],
        mut on_data: impl FnMut(&[u8]),
    ) -> Result<(), FramingError> {
        let mut i = 0;
        while i < input.len() {
            if let State::Data { left } = self.state {
                let n = (input.len() - i).min(usize::try_from(left).unwrap_or(usize::MAX));
                on_data(&input[i..i + n]);
                i += n;
                let left = left - n as u64;
                self.state = if left == 0 {
                    State::DataCr
                } else {
                    State::Data { left }
                };
                continue;
            }
            let b = input[i];
            i += 1;
            self.state = match self.state {
                State::Size { value, digits } => match (hex(b), b) {
                    (Some(d), _) if digits < 15 => State::Size {
                        value: value << 4 | u64::from(d),
                        digits: digits + 1,
                    },
                    (Some(_), _) => return Err(FramingError("chunk size too large")),
                    (None, _) if digits == 0 => return Err(FramingError("chunk size missing")),
                    (None, b'\r') => State::SizeLf { value },
                    (None, b'\n') => after_size(value),
                    (None, b';' | b' ' | b'\t') => State::Extension { value },
                    (None, _) => return Err(FramingError("bad chunk size")),
                },
                State::Extension { value } => match b {
                    b'\r' => State::SizeLf { value },
                    b'\n' => after_size(value),
                    _ => State::Extension { value },
                },
                State::SizeLf { value } => match b {
                    b'\n' => after_size(value),
                    _ => return Err(FramingError("chunk size line without LF")),
                },
                State::DataCr => match b {
                    b'\r' => State::DataLf,
                    b'\n' => State::Size {
                        value: 0,
                        digits: 0,
                    },
                    _ => return Err(FramingError("chunk data longer than its size")),
                },
                State::DataLf => match b {
                    b'\n' => State::Size {
                        value: 0,
                        digits: 0,
                    },
                    _ => return Err(FramingError("chunk data without CRLF")),
                },
                State::Trailer { at_line_start } => match b {
                    b'\r' => State::Trailer { at_line_start },
                    b'\n' if at_line_start => State::Done,
                    b'\n' => State::Trailer {
                        at_line_start: true,
                    },
                    _ => State::Trailer {
                        at_line_start: false,
                    },
                },
                State::Data { .. } | State::Done => return Ok(()),
            };
        }
        Ok(())
    }
}

fn after_size(value: u64) -> State {
    if value == 0 {
        State::Trailer {
            at_line_start: true,
        }
    } else {
        State::Data { left: value }
    }
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(parts: &[&[u8]]) -> (Vec<u8>, bool) {
        let mut d = ChunkedDecoder::default();
        let mut out = Vec::new();
        for p in parts {
            d.feed(p, |x| out.extend_from_slice(x)).expect("valid");
        }
        (out, d.is_done())
    }

    const BODY: &[u8] = b"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nx-trailer: 1\r\n\r\n";

    #[test]
    fn chunked_at_every_split() {
        assert_eq!(decode(&[BODY]), (b"hello, world".to_vec(), true));
        for i in 0..=BODY.len() {
            for j in i..=BODY.len() {
                let got = decode(&[&BODY[..i], &BODY[i..j], &BODY[j..]]);
                assert_eq!(got, (b"hello, world".to_vec(), true), "split {i},{j}");
            }
        }
        let (_, done) = decode(&[b"5\r\nhello\r\n"]);
        assert!(!done, "no terminator yet");
        assert_eq!(
            decode(&[b"3\nabc\n0\n\n"]),
            (b"abc".to_vec(), true),
            "bare LF"
        );
        assert_eq!(
            decode(&[b"A\r\n0123456789\r\n0\r\n\r\n"]).0.len(),
            10,
            "hex"
        );
    }

    proptest::proptest! {
        /// Any body, cut into any chunk sizes, delivered in any pieces, decodes to itself.
        #[test]
        fn any_chunking_decodes_to_the_body(
            body in proptest::collection::vec(proptest::num::u8::ANY, 0..600),
            sizes in proptest::collection::vec(1usize..100, 1..20),
            cuts in proptest::collection::vec(0usize..2000, 0..8),
        ) {
            let mut wire = Vec::new();
            let mut rest = &body[..];
            let mut k = 0;
            while !rest.is_empty() {
                let n = sizes[k % sizes.len()].min(rest.len());
                wire.extend_from_slice(format!("{n:x}\r\n").as_bytes());
                wire.extend_from_slice(&rest[..n]);
                wire.extend_from_slice(b"\r\n");
                rest = &rest[n..];
                k += 1;
            }
            wire.extend_from_slice(b"0\r\n\r\n");
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(wire.len())).collect();
            cuts.sort_unstable();
            let mut parts = Vec::new();
            let mut last = 0;
            for c in cuts.into_iter().chain([wire.len()]) {
                parts.push(&wire[last..c]);
                last = c;
            }
            proptest::prop_assert_eq!(decode(&parts), (body, true));
        }
    }

    #[test]
    fn chunked_errors() {
        for bad in [
            &b"zz\r\n"[..],
            b"\r\n",
            b"3\r\nabcd\r\n",
            b"ffffffffffffffffff\r\n",
        ] {
            let mut d = ChunkedDecoder::default();
            assert!(
                d.feed(bad, |_| {}).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn heads() {
        let h = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\nrest";
        let (head, n) = parse_head(h).expect("valid").expect("complete");
        assert_eq!(&h[n..], b"rest");
        assert_eq!(head.status, 200);
        assert_eq!(head.framing, Framing::Chunked);
        assert!(head.keep_alive);
        assert_eq!(head.content_type.as_deref(), Some("text/event-stream"));
        assert_eq!(parse_head(&h[..20]).expect("valid"), None);
        let h = b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 12\r\nconnection: close\r\n\r\n";
        let (head, _) = parse_head(h).expect("valid").expect("complete");
        assert_eq!(
            (head.status, head.framing, head.keep_alive),
            (500, Framing::Length(12), false)
        );
        let h = b"HTTP/1.0 200 OK\r\n\r\n";
        let (head, _) = parse_head(h).expect("valid").expect("complete");
        assert_eq!((head.framing, head.keep_alive), (Framing::Close, false));
        assert!(parse_head(b"SSH-2.0-x\r\n\r\n").is_err());
        assert!(parse_head(b"HTTP/1.1 abc\r\n\r\n").is_err());
    }
}
