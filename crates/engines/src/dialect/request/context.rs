//! A request against the context window, by the engine's [`ContextRule`].

use super::ContextRule;
use crate::dialect::api_error::ApiError;

/// `max_tokens` against the context window `limit` by the engine's rule: refused, or cut
/// where the engine stops at the window.
pub(super) fn fit_context(
    rule: ContextRule,
    prompt: u64,
    max_tokens: u32,
    limit: u32,
) -> Result<u32, ApiError> {
    let limit = u64::from(limit);
    let total = prompt + u64::from(max_tokens);
    match rule {
        ContextRule::Total if total > limit => Err(ApiError::context(
            format!(
                "This model's maximum context length is {limit} tokens. However, you \
                 requested {total} tokens ({prompt} in the prompt, {max_tokens} in the \
                 completion). Please reduce the length of the prompt or completion."
            ),
            prompt,
            u64::from(max_tokens),
            limit,
        )),
        ContextRule::PromptOnly | ContextRule::CutMaxTokens if prompt >= limit => {
            Err(ApiError::context(
                format!(
                    "request ({prompt} tokens) exceeds the available context size ({limit} \
                 tokens), try increasing it"
                ),
                prompt,
                u64::from(max_tokens),
                limit,
            ))
        }
        // Generation stops when the prompt and the output fill the window but one token.
        ContextRule::PromptOnly => {
            Ok(max_tokens.min(u32::try_from(limit - prompt - 1).unwrap_or(u32::MAX).max(1)))
        }
        ContextRule::CutMaxTokens => {
            Ok(max_tokens.min(u32::try_from(limit - prompt).unwrap_or(u32::MAX)))
        }
        ContextRule::Total => Ok(max_tokens),
    }
}
