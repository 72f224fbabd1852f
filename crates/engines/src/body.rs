//! Which fields a request carries, decided by the engine's profile from what the spec asks
//! (`workload.ignore_eos`, `workload.send_min_tokens`): a field the engine refuses is never
//! sent (transformers answers 422 to `ignore_eos`), one it ignores is not sent either, and
//! where the output length cannot be fixed the plan says so, once, as a warning.

use super::{Field, Profile};

/// The fields of every request of a run against one engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyPlan {
    /// Send `ignore_eos: true`.
    pub ignore_eos: bool,
    /// Send `min_tokens = max_tokens`.
    pub min_tokens: bool,
    /// Send `stream_options: {include_usage: true}`.
    pub stream_options: bool,
    /// Send `generation_config: "{\"min_new_tokens\": N, \"max_new_tokens\": N}"` (N =
    /// `max_tokens`): transformers' way to fix the length.
    pub generation_config: bool,
    /// Whether the output length is meant to be fixed at `max_tokens` (each request's N_out is
    /// then checked against it).
    pub lengths_fixed: bool,
    /// What the spec asked that this engine cannot do, and what it means, in words.
    pub warnings: Vec<String>,
}

impl Profile {
    /// The fields to send when the spec asks for `ignore_eos` and `send_min_tokens`.
    pub fn body_plan(&self, ignore_eos: bool, send_min_tokens: bool) -> BodyPlan {
        let r = &self.request;
        let mut warnings = Vec::new();
        let mut plan = BodyPlan {
            ignore_eos: false,
            min_tokens: false,
            stream_options: !matches!(r.stream_options, Field::Refused(_)),
            generation_config: false,
            lengths_fixed: false,
            warnings: Vec::new(),
        };
        if ignore_eos {
            match r.ignore_eos {
                Field::Honoured => plan.ignore_eos = true,
                _ if r.generation_config => {
                    plan.generation_config = true;
                    warnings.push(format!(
                        "{} has no `ignore_eos` ({}): output lengths are fixed with \
                         `generation_config: {{min_new_tokens, max_new_tokens}}` instead, which \
                         it does not apply under `--continuous-batching` (its continuous \
                         batching drops the min-new-tokens processor); `servebench probe` \
                         checks whether lengths hold",
                        self.name,
                        refusal(r.ignore_eos)
                    ));
                }
                f => warnings.push(format!(
                    "{} has no `ignore_eos` ({}): it is not sent, and output lengths are NOT \
                     fixed: each request ends at the model's end of sequence, so N_out varies \
                     from request to request and between the arms — compare their output \
                     token counts before their speeds (`workload.ignore_eos: false` silences \
                     this warning)",
                    self.name,
                    refusal(f)
                )),
            }
        }
        if send_min_tokens {
            match r.min_tokens {
                Field::Honoured => plan.min_tokens = true,
                f => warnings.push(format!(
                    "{} has no `min_tokens` ({}): it is not sent (`workload.send_min_tokens: \
                     false` silences this warning)",
                    self.name,
                    refusal(f)
                )),
            }
        }
        plan.lengths_fixed = plan.ignore_eos || plan.min_tokens || plan.generation_config;
        plan.warnings = warnings;
        plan
    }
}

fn refusal(f: Field) -> String {
    match f {
        Field::Refused(status) => format!("it answers HTTP {status} to the field"),
        Field::Ignored => "it accepts the field and does nothing with it".into(),
        Field::Honoured => "it honours it".into(),
    }
}

#[cfg(test)]
mod tests {
    use crate::{Engine, profile};

    fn plan(e: Engine, ignore_eos: bool, min: bool) -> super::BodyPlan {
        profile(e).expect("profile").body_plan(ignore_eos, min)
    }

    #[test]
    fn engines_that_honour_ignore_eos_get_it() {
        for e in [
            Engine::Sglang,
            Engine::Vllm,
            Engine::Llamacpp,
            Engine::Trtllm,
            Engine::Openai,
        ] {
            let p = plan(e, true, false);
            assert!(p.ignore_eos && p.lengths_fixed && p.stream_options, "{e}");
            assert!(p.warnings.is_empty(), "{e}: {:?}", p.warnings);
        }
        let p = plan(Engine::Vllm, false, false);
        assert!(!p.ignore_eos && !p.lengths_fixed && p.warnings.is_empty());
    }

    #[test]
    fn transformers_gets_generation_config_and_never_a_refused_field() {
        // transformers 5.17/5.24 cli/serving/utils.py: 422 on `ignore_eos` and `min_tokens`.
        let p = plan(Engine::Transformers, true, true);
        assert!(!p.ignore_eos && !p.min_tokens);
        assert!(p.generation_config && p.lengths_fixed);
        assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);
        assert!(
            p.warnings[0].contains("continuous-batching"),
            "{}",
            p.warnings[0]
        );
        assert!(p.warnings[1].contains("HTTP 422"), "{}", p.warnings[1]);
        let p = plan(Engine::Transformers, false, false);
        assert!(!p.generation_config && !p.lengths_fixed && p.warnings.is_empty());
    }

    #[test]
    fn tgi_has_no_way_to_fix_lengths_and_says_so() {
        // TGI db931fcf router/src/validation.rs:430: `ignore_eos_token: false` hard-coded.
        let p = plan(Engine::Tgi, true, false);
        assert!(!p.ignore_eos && !p.lengths_fixed);
        assert!(p.warnings[0].contains("NOT fixed"), "{}", p.warnings[0]);
        // Issue 41: the sentence read "so N_out varies and compare the output token counts".
        assert!(
            p.warnings[0].contains(
                "so N_out varies from request to request and between the arms — compare \
                 their output token counts before their speeds"
            ),
            "{}",
            p.warnings[0]
        );
        // llama.cpp ignores min_tokens: not sent, said.
        let p = plan(Engine::Llamacpp, true, true);
        assert!(p.ignore_eos && !p.min_tokens);
        assert!(p.warnings[0].contains("min_tokens"), "{:?}", p.warnings);
    }
}
