//! The spec parser on arbitrary text: YAML syntax, JSON Schema, typed parse, semantic checks,
//! and for a spec that passes, its plan and canonical hash. Any panic, stack overflow or
//! runaway allocation is a bug: a spec is user input and must be refused with a message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use servebench_spec::{hash, parse_str, plan};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match parse_str(text, "fuzz.yaml") {
        Ok(spec) => {
            // Bounded by validation: a valid spec never plans more than its own limits.
            let p = plan::plan(&spec.file);
            assert_eq!(
                p.blocks.iter().map(|b| b.trials.len()).sum::<usize>(),
                p.trial_count,
                "the plan's trial count is the sum of its blocks"
            );
            let h = hash::spec_hash(&spec.file);
            assert!(h.starts_with("sha256:"), "{h}");
        }
        Err(errors) => {
            // Every refusal renders (file:line:column and a message) without panicking.
            let shown = errors.to_string();
            assert!(!shown.is_empty(), "an error without a message");
        }
    }
});
