//! The context meter's line.

/// The meter's line: `context: 41% of 200k (82,310 tokens) — over 40%: time to hand off`.
pub fn usage_text(m: &crate::agent::usage::Meter) -> String {
    use crate::agent::usage::{grouped, short_tokens};
    let verdict = if m.usage.is_none() {
        "no assistant message with usage yet".to_string()
    } else if m.over {
        format!("over {}%: time to hand off", m.threshold)
    } else {
        format!("under {}%", m.threshold)
    };
    format!(
        "context: {}% of {} ({} tokens) — {verdict}\n",
        m.percent,
        short_tokens(m.window),
        grouped(m.tokens)
    )
}
