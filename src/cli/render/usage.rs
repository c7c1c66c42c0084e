//! The context meter's line.

/// The advice over the threshold, as the method gives it: past the
/// context ceiling the work continues (a brief, then a fresh session);
/// forking is for an out-of-scope side task only, never for a full context.
pub const OVER_ADVICE: &str = "time to hand off: write the brief and continue in a fresh session (fork only an out-of-scope side task)";

/// The meter's line: `context: 41% of 200k (82,310 tokens) — over 40%: time
/// to hand off: …` ([`OVER_ADVICE`]).
pub fn usage_text(m: &crate::agent::usage::Meter) -> String {
    use crate::agent::usage::{grouped, short_tokens};
    let verdict = if m.usage.is_none() {
        "no assistant message with usage yet".to_string()
    } else if m.over {
        format!("over {}%: {OVER_ADVICE}", m.threshold)
    } else {
        format!("under {}%", m.threshold)
    };
    format!(
        "context: {}% of {} ({}; {} tokens) — {verdict}\n",
        m.percent,
        short_tokens(m.window),
        window_source(m.window_source),
        grouped(m.tokens)
    )
}

/// Where the window came from, in the meter's words.
fn window_source(source: crate::agent::usage::WindowSource) -> &'static str {
    use crate::agent::usage::WindowSource;
    match source {
        WindowSource::Flag => "--window",
        WindowSource::Config => "handoff.contextWindow",
        WindowSource::Harness => "from the harness",
        WindowSource::Transcript => "from the transcript",
        WindowSource::Observed => "observed: more in use than 200k",
        WindowSource::Model => "guessed from the model",
    }
}
