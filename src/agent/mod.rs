//! Agent: what git-handoff knows about agent sessions outside git — the
//! context meter ([`usage`]), draft briefs ([`draft`]) and the session's
//! health signals ([`health`]), all read from session transcripts,
//! continue summaries ([`summary`]), fork and hand-back files ([`fork`])
//! and pipeline templates ([`pipeline`]). Files under `.claude/` or the
//! OS temp dir; no refs.

pub mod draft;
pub mod fork;
pub mod health;
pub mod pipeline;
pub mod summary;
pub mod usage;
pub mod window;
