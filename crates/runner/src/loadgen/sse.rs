//! Server-sent events framing (WHATWG HTML §9.2 "event stream interpretation"), pure and
//! incremental.
//!
//! Bytes arrive in arbitrary network chunks: an event may be split across chunks, several
//! events may share one, lines end in LF, CRLF or CR (a CR at the end of one chunk and the LF
//! at the start of the next are one line end). Comment lines (`: ping`) and the `id`/`retry`
//! fields are skipped. `data` lines are joined with `\n`; an event is dispatched at a blank
//! line when its data is non-empty (or its type is `error`), and once more at end of input
//! for servers that omit the final blank line.
//!
//! Cost: no regex, no allocation once the two internal buffers have grown to the largest
//! line and event seen; lines that arrive whole are scanned in place, and each event's data
//! is copied once into the reused data buffer (events are ~100–300 bytes).

/// The `event:` field of an event, reduced to what the load generator acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// No `event` field, or `event: message`.
    Message,
    /// `event: error`.
    Error,
    /// Any other name (ignored by the client).
    Other,
}

/// One dispatched event; `data` borrows the parser's buffer until the callback returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The event's type.
    pub kind: EventType,
    /// The event's data, lines joined by `\n`.
    pub data: &'a [u8],
}

/// Incremental SSE parser. Feed it chunks in order; it calls back once per event.
#[derive(Debug)]
pub struct SseParser {
    /// The unterminated tail of the previous chunk.
    line: Vec<u8>,
    /// Data of the event being assembled.
    data: Vec<u8>,
    has_data: bool,
    kind: EventType,
    /// The previous chunk ended in CR: a leading LF of the next one belongs to that line end.
    pending_cr: bool,
}

impl Default for SseParser {
    fn default() -> Self {
        Self::new()
    }
}

impl SseParser {
    /// A parser with an empty buffer.
    pub fn new() -> Self {
        SseParser {
            line: Vec::with_capacity(256),
            data: Vec::with_capacity(512),
            has_data: false,
            kind: EventType::Message,
            pending_cr: false,
        }
    }

    /// Parses one network chunk, calling `on_event` for each event it completes.
    pub fn feed(&mut self, chunk: &[u8], mut on_event: impl FnMut(SseEvent<'_>)) {
        let mut rest = chunk;
        if self.pending_cr {
            self.pending_cr = false;
            if let Some((&b'\n', tail)) = rest.split_first() {
                rest = tail;
            }
        }
        while let Some(i) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            let (head, term, tail) = (&rest[..i], rest[i], &rest[i + 1..]);
            if self.line.is_empty() {
                self.line_complete(head, &mut on_event);
            } else {
                self.line.extend_from_slice(head);
                let line = std::mem::take(&mut self.line);
                self.line_complete(&line, &mut on_event);
                self.line = line;
                self.line.clear();
            }
            rest = tail;
            if term == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.pending_cr = true,
                }
            }
        }
        self.line.extend_from_slice(rest);
    }

    /// Bytes held for the event being assembled: its unterminated line and its data so far.
    /// The caller bounds it (a server that never ends an event must not exhaust memory).
    pub fn pending_bytes(&self) -> usize {
        self.line.len() + self.data.len()
    }

    /// End of input: completes an unterminated last line and dispatches a pending event.
    pub fn finish(&mut self, mut on_event: impl FnMut(SseEvent<'_>)) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line_complete(&line, &mut on_event);
        }
        self.dispatch(&mut on_event);
        self.pending_cr = false;
    }

    fn line_complete(&mut self, line: &[u8], on_event: &mut impl FnMut(SseEvent<'_>)) {
        if line.is_empty() {
            self.dispatch(on_event);
            return;
        }
        if line[0] == b':' {
            return; // comment / keep-alive
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &[][..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => {
                self.kind = match value {
                    b"" | b"message" => EventType::Message,
                    b"error" => EventType::Error,
                    _ => EventType::Other,
                }
            }
            _ => {} // id, retry, unknown fields
        }
    }

    fn dispatch(&mut self, on_event: &mut impl FnMut(SseEvent<'_>)) {
        // An error event is dispatched even without data, so it cannot be lost.
        if !self.data.is_empty() || self.kind == EventType::Error {
            on_event(SseEvent {
                kind: self.kind,
                data: &self.data,
            });
        }
        self.data.clear();
        self.has_data = false;
        self.kind = EventType::Message;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_chunks(chunks: &[&[u8]]) -> Vec<(EventType, String)> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            p.feed(c, |e| {
                out.push((e.kind, String::from_utf8_lossy(e.data).into_owned()))
            });
        }
        p.finish(|e| out.push((e.kind, String::from_utf8_lossy(e.data).into_owned())));
        out
    }

    fn datas(chunks: &[&[u8]]) -> Vec<String> {
        parse_chunks(chunks).into_iter().map(|(_, d)| d).collect()
    }

    const STREAM: &[u8] = b": ping\n\ndata: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n";

    #[test]
    fn several_events_in_one_chunk() {
        assert_eq!(datas(&[STREAM]), ["{\"a\":1}", "{\"b\":2}", "[DONE]"]);
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        let whole = datas(&[STREAM]);
        for i in 0..=STREAM.len() {
            for j in i..=STREAM.len() {
                let got = datas(&[&STREAM[..i], &STREAM[i..j], &STREAM[j..]]);
                assert_eq!(got, whole, "split at {i},{j}");
            }
        }
    }

    #[test]
    fn crlf_and_cr_line_ends_including_split_crlf() {
        let crlf = b"data: x\r\n\r\ndata: y\r\n\r\n";
        assert_eq!(datas(&[crlf]), ["x", "y"]);
        for i in 0..=crlf.len() {
            assert_eq!(datas(&[&crlf[..i], &crlf[i..]]), ["x", "y"], "split at {i}");
        }
        assert_eq!(datas(&[b"data: x\r\rdata: y\r\r"]), ["x", "y"]);
    }

    #[test]
    fn comments_fields_and_multiline_data() {
        let s = b": keep-alive\nid: 7\nretry: 100\ndata: a\ndata:b\ndata\n\n";
        assert_eq!(datas(&[s]), ["a\nb\n"]);
        // A comment-only or empty event is not dispatched.
        assert!(datas(&[b": ping\n\n\n\n"]).is_empty());
    }

    #[test]
    fn error_events_and_unnamed_types() {
        let s = b"event: error\ndata: {\"message\":\"boom\"}\n\nevent: foo\ndata: z\n\n";
        let got = parse_chunks(&[s]);
        assert_eq!(got[0], (EventType::Error, "{\"message\":\"boom\"}".into()));
        assert_eq!(got[1], (EventType::Other, "z".into()));
        let got = parse_chunks(&[b"event: error\n\ndata: after\n\n"]);
        assert_eq!(got[0], (EventType::Error, String::new()));
        assert_eq!(got[1], (EventType::Message, "after".into()));
    }

    #[test]
    fn unterminated_last_event_is_flushed_at_the_end() {
        assert_eq!(datas(&[b"data: [DONE]"]), ["[DONE]"]);
        assert_eq!(datas(&[b"data: {}\n"]), ["{}"]);
    }

    proptest::proptest! {
        /// Any events, any line endings, any comments, any chunking: the same data out.
        #[test]
        fn any_framing_and_chunking_gives_the_events_back(
            events in proptest::collection::vec("[ -~]{1,40}", 0..8),
            ending in 0usize..3,
            comments in proptest::bool::ANY,
            cuts in proptest::collection::vec(0usize..400, 0..6),
        ) {
            let eol = ["\n", "\r\n", "\r"][ending];
            let mut wire = String::new();
            for e in &events {
                if comments {
                    wire.push_str(": ping");
                    wire.push_str(eol);
                }
                wire.push_str("data: ");
                wire.push_str(e);
                wire.push_str(eol);
                wire.push_str(eol);
            }
            let bytes = wire.as_bytes();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.sort_unstable();
            let mut parts = Vec::new();
            let mut last = 0;
            for c in cuts.into_iter().chain([bytes.len()]) {
                parts.push(&bytes[last..c]);
                last = c;
            }
            // `data: x` with a leading space in x keeps it (only one space is stripped).
            let want: Vec<String> = events.iter().filter(|e| !e.is_empty()).cloned().collect();
            proptest::prop_assert_eq!(datas(&parts), want);
        }
    }

    #[test]
    fn non_sse_body_yields_nothing() {
        assert!(datas(&[b"{\"error\": {\"message\": \"bad\"}}"]).is_empty());
        assert!(datas(&[b"Internal Server Error"]).is_empty());
    }
}
