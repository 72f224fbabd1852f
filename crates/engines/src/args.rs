//! Reading a server argument back from what the engine reports: a flat JSON object of
//! arguments (SGLang's `/server_info`), or a start-up log line holding a Python dict
//! (`server_args={'moe_runner_backend': 'flashinfer_cutedsl', …}`, vLLM's `non-default args:
//! {…}`) or a Python dataclass repr (`server_args=ServerArgs(moe_runner_backend='…', …)`).

use serde_json::Value;

/// The argument `name` in a flat JSON object of arguments.
pub fn from_json<'a>(doc: &'a Value, name: &str) -> Option<&'a Value> {
    doc.as_object()?.get(name)
}

/// The argument `name` in the first log line that holds `marker` and the argument: for a
/// dict (`dict: true`) the entry `'name': value`, for a repr the field `name=value`. The value
/// as JSON: a quoted Python string is a JSON string, `True`/`False`/`None` are booleans and
/// null, a number is a number, anything else (a list, a nested dict) its text. Also returns
/// the line, as evidence.
pub fn from_log(log: &str, marker: &str, dict: bool, name: &str) -> Option<(Value, String)> {
    for line in log.lines() {
        let Some(at) = line.find(marker) else {
            continue;
        };
        let rest = &line[at + marker.len()..];
        if let Some(v) = find_entry(rest, dict, name) {
            return Some((v, line.trim().to_owned()));
        }
    }
    None
}

/// The value of `name` at the top level of the Python literal that starts `text` (a dict's
/// `{`, or the fields after a repr's `(`).
fn find_entry(text: &str, dict: bool, name: &str) -> Option<Value> {
    let bytes = text.as_bytes();
    let mut depth = 0i32;
    let mut i = 0;
    // For a dict, the first `{` opens the level the entries are at; a repr's text starts
    // inside its parentheses.
    let top = if dict {
        // The dict must follow the marker (a repr's nested dicts are not it).
        let open = text.len() - text.trim_start().len();
        if bytes.get(open) != Some(&b'{') {
            return None;
        }
        i = open + 1;
        depth = 1;
        1
    } else {
        0
    };
    let mut at_key = true;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\'' | b'"' => {
                let end = skip_string(bytes, i)?;
                if at_key && depth == top && dict {
                    let key = &text[i + 1..end - 1];
                    let after = text[end..].trim_start();
                    if key == name && after.starts_with(':') {
                        let v = after[1..].trim_start();
                        return Some(parse_value(v));
                    }
                }
                i = end;
                continue;
            }
            b'{' | b'[' | b'(' => depth += 1,
            b'}' | b']' | b')' => {
                depth -= 1;
                if depth < top {
                    return None;
                }
            }
            b',' if depth == top => at_key = true,
            _ if !dict && depth == top && at_key && is_ident_start(c) => {
                let end = i + text[i..]
                    .bytes()
                    .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                    .count();
                if &text[i..end] == name && text[end..].starts_with('=') {
                    return Some(parse_value(&text[end + 1..]));
                }
                at_key = false;
                i = end;
                continue;
            }
            _ => {}
        }
        if !c.is_ascii_whitespace() && c != b',' {
            at_key = false;
        }
        i += 1;
    }
    None
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

/// The index just after the Python string literal starting at `start` (its quote).
fn skip_string(bytes: &[u8], start: usize) -> Option<usize> {
    let quote = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            c if c == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// A Python literal at the start of `v`, up to its end at this level.
fn parse_value(v: &str) -> Value {
    let bytes = v.as_bytes();
    if let Some(&q) = bytes.first()
        && (q == b'\'' || q == b'"')
    {
        if let Some(end) = skip_string(bytes, 0) {
            return Value::String(unescape(&v[1..end - 1]));
        }
        return Value::String(v.to_owned());
    }
    // Up to the `,` or closing bracket of this level.
    let mut depth = 0i32;
    let mut end = v.len();
    for (i, c) in v.bytes().enumerate() {
        match c {
            b'{' | b'[' | b'(' => depth += 1,
            b'}' | b']' | b')' if depth == 0 => {
                end = i;
                break;
            }
            b'}' | b']' | b')' => depth -= 1,
            b',' if depth == 0 => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let raw = v[..end].trim();
    match raw {
        "True" => Value::Bool(true),
        "False" => Value::Bool(false),
        "None" => Value::Null,
        _ => match serde_json::from_str::<serde_json::Number>(raw) {
            Ok(n) => Value::Number(n),
            Err(_) => Value::String(raw.to_owned()),
        },
    }
}

/// A Python string literal's escapes that matter in argument values (`\\'`, `\\\\`).
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // SGLang ≥ 0.5.19 (checked in 0.5.23, srt/entrypoints/engine.py:311): the resolved dict.
    const SGLANG_DICT: &str = "[2026-12-01 10:00:00] server_args={'model_path': 'lukealonso/GLM-5-NVFP4', 'tp_size': 8, 'moe_runner_backend': 'flashinfer_cutedsl', 'enable_metrics': False, 'json_model_override_args': '{}', 'lora_paths': None, 'cuda_graph_bs': [1, 2, 4], 'context_length': None}";
    // SGLang ≤ 0.5.18: the dataclass repr.
    const SGLANG_REPR: &str = "[2026-12-01 10:00:00] server_args=ServerArgs(model_path='lukealonso/GLM-5-NVFP4', tp_size=8, cuda_graph_bs=[1, 2, (3, 4)], moe_runner_backend='flashinfer_cutlass', enable_metrics=False, context_length=None)";
    // vLLM 0.33.0 common/startup.py:94-96, printed by the head.
    const VLLM_HEAD: &str = "(APIServer pid=4242) INFO 12-01 10:00:00 [utils.py:253] non-default args: {'model_tag': 'lukealonso/GLM-5-NVFP4', 'served_model_name': ['glm-5'], 'tensor_parallel_size': 8, 'moe_backend': 'flashinfer_cutedsl', 'nnodes': 2}";

    #[test]
    fn reads_both_sglang_log_forms_and_vllm_non_default_args() {
        let (v, line) =
            from_log(SGLANG_DICT, "server_args=", true, "moe_runner_backend").expect("dict form");
        assert_eq!(v, json!("flashinfer_cutedsl"));
        assert!(line.contains("server_args={"));
        assert_eq!(
            from_log(SGLANG_DICT, "server_args=", true, "tp_size").map(|x| x.0),
            Some(json!(8))
        );
        assert_eq!(
            from_log(SGLANG_DICT, "server_args=", true, "enable_metrics").map(|x| x.0),
            Some(json!(false))
        );
        assert_eq!(
            from_log(SGLANG_DICT, "server_args=", true, "context_length").map(|x| x.0),
            Some(json!(null))
        );
        assert_eq!(
            from_log(SGLANG_DICT, "server_args=", true, "cuda_graph_bs").map(|x| x.0),
            Some(json!("[1, 2, 4]"))
        );
        // A dict form is no repr, and the other way round.
        assert!(from_log(SGLANG_DICT, "server_args=ServerArgs(", false, "tp_size").is_none());
        assert!(from_log(SGLANG_REPR, "server_args=", true, "tp_size").is_none());
        let (v, _) = from_log(
            SGLANG_REPR,
            "server_args=ServerArgs(",
            false,
            "moe_runner_backend",
        )
        .expect("repr form");
        assert_eq!(v, json!("flashinfer_cutlass"));
        assert_eq!(
            from_log(
                SGLANG_REPR,
                "server_args=ServerArgs(",
                false,
                "context_length"
            )
            .map(|x| x.0),
            Some(json!(null))
        );
        let (v, _) =
            from_log(VLLM_HEAD, "non-default args:", true, "moe_backend").expect("vLLM head");
        assert_eq!(v, json!("flashinfer_cutedsl"));
        assert!(from_log(VLLM_HEAD, "non-default args:", true, "missing").is_none());
    }

    #[test]
    fn a_name_inside_a_value_or_a_nested_dict_is_not_an_entry() {
        let log = "server_args={'a': 'moe_runner_backend', 'nested': {'moe_runner_backend': 'x'}, 'moe_runner_backend_extra': 'y'}";
        assert!(from_log(log, "server_args=", true, "moe_runner_backend").is_none());
        let repr = "ServerArgs(a='moe_runner_backend=x', b=(moe_runner_backend=1), c=2)";
        assert!(from_log(repr, "ServerArgs(", false, "moe_runner_backend").is_none());
        assert_eq!(
            from_log(repr, "ServerArgs(", false, "c").map(|x| x.0),
            Some(json!(2))
        );
        assert!(from_log("server_args={'a': 'unterminated", "server_args=", true, "b").is_none());
    }

    #[test]
    fn reads_a_flat_json_object() {
        let doc = json!({"moe_runner_backend": "flashinfer_cutedsl", "version": "0.5.23"});
        assert_eq!(
            from_json(&doc, "moe_runner_backend"),
            Some(&json!("flashinfer_cutedsl"))
        );
        assert_eq!(from_json(&doc, "tp_size"), None);
        assert_eq!(from_json(&json!([1]), "x"), None);
    }

    // vLLM 0.26.0's real head line (vllm/transcripts/0.26.0/startup.log, api_utils.py:273):
    // a dict holding an object's repr, `ProfilerConfig(profiler='torch', …)`.
    #[test]
    fn reads_vllm_0_26_0s_real_non_default_args() {
        let log = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/vllm/transcripts/0.26.0/startup.log"
        ))
        .expect("startup.log");
        let read = |name: &str| from_log(&log, "non-default args:", true, name).map(|x| x.0);
        assert_eq!(read("moe_backend"), Some(json!("cutlass")));
        assert_eq!(read("quantization"), Some(json!("fp8_per_channel")));
        assert_eq!(read("enforce_eager"), Some(json!(true)));
        assert_eq!(read("enable_prefix_caching"), Some(json!(false)));
        assert_eq!(read("gpu_memory_utilization"), Some(json!(0.5)));
        assert_eq!(read("served_model_name"), Some(json!("['qwen3moe-dummy']")));
        let profiler = read("profiler_config").expect("profiler_config");
        let text = profiler.as_str().expect("its text");
        assert!(
            text.starts_with("ProfilerConfig(profiler='torch', "),
            "{text}"
        );
        assert!(text.ends_with("wait_iterations=0)"), "{text}");
        // A field of the nested repr is not an argument of the dict.
        assert_eq!(read("ignore_frontend"), None);
        assert_eq!(read("torch_profiler_dir"), None);
    }

    // SGLang 0.5.17's real start-up line (sglang/transcripts/0.5.17/startup.log; the repr of
    // `logger.info(f"{server_args=}")`, entrypoints/engine.py of ≤ 0.5.18): strings, booleans,
    // numbers, `None`, and nested reprs (`cuda_graph_config=CudaGraphConfig(decode=
    // PhaseConfig(backend='full', max_bs=64, …), …)`) whose fields are not arguments.
    #[test]
    fn reads_sglang_0_5_17s_real_server_args_repr() {
        let log = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/sglang/transcripts/0.5.17/startup.log"
        ))
        .expect("startup.log");
        let read = |name: &str| from_log(&log, "server_args=ServerArgs(", false, name).map(|x| x.0);
        assert_eq!(read("moe_runner_backend"), Some(json!("cutlass")));
        assert_eq!(read("attention_backend"), Some(json!("triton")));
        assert_eq!(read("sampling_backend"), Some(json!("pytorch")));
        assert_eq!(read("disable_radix_cache"), Some(json!(true)));
        assert_eq!(read("enable_metrics"), Some(json!(true)));
        assert_eq!(read("skip_tokenizer_init"), Some(json!(false)));
        assert_eq!(read("mem_fraction_static"), Some(json!(0.5)));
        assert_eq!(read("context_length"), Some(json!(4096)));
        assert_eq!(read("cuda_graph_max_bs_decode"), Some(json!(64)));
        assert_eq!(read("quantization"), Some(json!(null)));
        assert_eq!(read("served_model_name"), Some(json!("qwen3moe-dummy")));
        // The last field, before the repr's closing parenthesis.
        assert_eq!(read("msprobe_dump_config"), Some(json!(null)));
        let graphs = read("cuda_graph_config").expect("cuda_graph_config");
        let text = graphs.as_str().expect("its text");
        assert!(
            text.starts_with("CudaGraphConfig(decode=PhaseConfig(backend='full', max_bs=64, "),
            "{text}"
        );
        // Fields of the nested reprs are not arguments of the dataclass.
        assert_eq!(read("max_bs"), None);
        assert_eq!(read("backend"), None);
        // The dict form's marker finds nothing in the repr form.
        assert!(from_log(&log, "server_args={", true, "moe_runner_backend").is_none());
    }
}
