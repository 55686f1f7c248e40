//! What an agent hook run adds to [`crate::hook::run_claude`]: the start context of a client
//! that keeps only so many tokens of it (Codex CLI keeps about 2,500) cut until it fits.

use crate::error::{Error, Result};
use crate::hook::{ClaudeEvent, HookConfig, HookInput, HookOutcome, run_claude};

/// The `additionalContext` of a hook's output, if any.
pub fn added_context(outcome: &HookOutcome) -> Option<&str> {
    outcome.stdout.as_ref()?["hookSpecificOutput"]["additionalContext"].as_str()
}

/// Cuts the SessionStart context of `outcome` further (a smaller character budget than
/// `budget`, never under [`crate::context::MIN_BUDGET_CHARS`], at most four rounds, each a new
/// [`run_claude`] with `config` and `input`) until it has at most `cap` tokens (o200k); each
/// cut is added to the outcome's problems (the hook log).
///
/// Errors: [`run_claude`]'s; [`Error::Refused`] when the context does not fit even at the
/// smallest budget.
pub async fn fit_tokens(
    outcome: &mut HookOutcome,
    config: &mut HookConfig,
    input: &HookInput,
    cap: usize,
    budget: usize,
) -> Result<()> {
    let counter = mem_core::TokenCounter::default();
    let min = crate::context::MIN_BUDGET_CHARS;
    // The budget in force: the start context never goes under `MIN_BUDGET_CHARS`.
    let mut chars = budget.max(min);
    for _ in 0..4 {
        let Some(text) = added_context(outcome) else {
            return Ok(());
        };
        // A token stands for at least one byte: a text of at most `cap` bytes fits without
        // loading the vocabulary (~75 ms of a new process).
        if text.len() <= cap {
            return Ok(());
        }
        let tokens = counter.count(text);
        if tokens <= cap {
            return Ok(());
        }
        if chars <= min {
            // Already at the smallest budget: nothing more to cut.
            break;
        }
        let next = (chars as f64 * cap as f64 / tokens as f64 * 0.95) as usize;
        chars = next.clamp(min, chars - 1);
        config.context.budget_chars = Some(chars);
        *outcome = run_claude(ClaudeEvent::SessionStart, input, config).await?;
        outcome.problems.push(format!(
            "start context over {cap} tokens ({tokens}): cut to {chars} characters"
        ));
    }
    if let Some(text) = added_context(outcome)
        && text.len() > cap
        && counter.count(text) > cap
    {
        return Err(Error::Refused(format!(
            "the start context does not fit {cap} tokens even cut to {chars} characters"
        )));
    }
    Ok(())
}
