//! A trial's finished records read by the engine's profile (servebench_engines): its own
//! finish words put in one vocabulary, the engine's word kept beside it, and a stream cut
//! where the engine cuts one on a generation error counted as the server's failure
//! (docs/engines.md). Pure: no I/O.

use servebench_engines::Profile;
use servebench_result::record::{ErrorKind, RequestRecord};

use super::config::{ApiKind, LoadConfig, Target};

/// Reads a trial's measured and warm-up records by `cfg.engine`, where there is one.
pub(crate) fn read_trial(
    cfg: &LoadConfig,
    target: &Target,
    records: &mut [RequestRecord],
    warmup: &mut [RequestRecord],
) {
    if let Some(engine) = cfg.engine {
        let chat = target.api == ApiKind::Chat;
        read_by_engine(records, engine, chat);
        read_by_engine(warmup, engine, chat);
    }
}

/// Reads `records`, answers of `engine` on the chat API or completions.
pub fn read_by_engine(records: &mut [RequestRecord], engine: &Profile, chat: bool) {
    let cuts = engine.stream.error_cuts_stream.api(chat);
    for rec in records {
        finish(rec, engine, chat);
        if cuts && rec.error == Some(ErrorKind::StreamDisconnected) {
            rec.error = Some(ErrorKind::StreamCutByServer);
            let api = if chat { "chat" } else { "completions" };
            let said = rec.error_detail.take().unwrap_or_default();
            rec.error_detail = Some(format!(
                "{} ends a {api} stream this way when generation fails (no error event, no \
                 [DONE]): see its log; the transport said: {said}",
                engine.name
            ));
        }
    }
}

/// `finish_reason` in the one vocabulary, the engine's word in `finish_reason_sent` where
/// they differ.
fn finish(rec: &mut RequestRecord, engine: &Profile, chat: bool) {
    let Some(word) = rec.finish_reason.as_deref() else {
        return;
    };
    if let Some(e) = engine.ending(word, chat)
        && e.as_str() != word
    {
        rec.finish_reason_sent = rec.finish_reason.replace(e.as_str().to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use servebench_engines::{Engine, profile};

    fn rec(finish: Option<&str>, error: Option<ErrorKind>) -> RequestRecord {
        RequestRecord {
            finish_reason: finish.map(str::to_owned),
            error,
            error_detail: error.map(|_| "connection closed before the end of the body".into()),
            ..RequestRecord::default()
        }
    }

    #[test]
    fn tgis_own_finish_words_are_exported_as_the_openai_apis() {
        // TGI db931fcf: completions streams send `eos_token` (server.rs:858), chat streams
        // `stop` for it (chat.rs:97-100); `stop_sequence` on both.
        let tgi = profile(Engine::Tgi).expect("tgi");
        let mut rs = [
            rec(Some("eos_token"), None),
            rec(Some("stop_sequence"), None),
            rec(Some("length"), None),
        ];
        read_by_engine(&mut rs, tgi, false);
        let got: Vec<(Option<&str>, Option<&str>)> = rs
            .iter()
            .map(|r| (r.finish_reason.as_deref(), r.finish_reason_sent.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (Some("stop"), Some("eos_token")),
                (Some("stop"), Some("stop_sequence")),
                (Some("length"), None),
            ]
        );
        // `eos_token` is a completions word only; on chat it is not TGI's, kept as sent.
        let mut chat = [rec(Some("eos_token"), None)];
        read_by_engine(&mut chat, tgi, true);
        assert_eq!(chat[0].finish_reason.as_deref(), Some("eos_token"));
    }

    #[test]
    fn a_cut_trtllm_chat_stream_is_the_servers_failure_not_the_networks() {
        let trt = profile(Engine::Trtllm).expect("trtllm");
        let mut chat = [rec(None, Some(ErrorKind::StreamDisconnected))];
        read_by_engine(&mut chat, trt, true);
        assert_eq!(chat[0].error, Some(ErrorKind::StreamCutByServer));
        let detail = chat[0].error_detail.as_deref().unwrap_or_default();
        assert!(
            detail.contains("TensorRT-LLM") && detail.contains("connection closed"),
            "{detail}"
        );
        // Its completions stream sends an error event instead: a cut there is no failure
        // of the engine's making, nor is a cut on another engine.
        let mut cmpl = [rec(None, Some(ErrorKind::StreamDisconnected))];
        read_by_engine(&mut cmpl, trt, false);
        assert_eq!(cmpl[0].error, Some(ErrorKind::StreamDisconnected));
        let mut sg = [rec(None, Some(ErrorKind::StreamDisconnected))];
        read_by_engine(&mut sg, profile(Engine::Sglang).expect("sglang"), true);
        assert_eq!(sg[0].error, Some(ErrorKind::StreamDisconnected));
    }
}
