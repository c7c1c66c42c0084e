//! git-handoff: save and restore the working state of a coding session as
//! typed briefs stored in git (`refs/handoffs/<key>`), with every version in
//! the notes history (`refs/notes/handoffs`) and a narrative log in the
//! working tree (`.claude/PROJECT_STATE.md`).
//!
//! The source is folders by layer, each depending only on those before it
//! (see ARCHITECTURE.md; `layers_point_one_way` below enforces it):
//! `support` ← `brief` ← `git` ← `store` ← `drift` / `narrative` / `sync` /
//! `agent` ← `cli`. Only `cli` prints.

pub mod agent;
pub mod brief;
pub mod cli;
pub mod drift;
pub mod git;
pub mod narrative;
pub mod store;
pub mod support;
pub mod sync;

pub use brief::{lint, redact};
pub use cli::{Cli, Command, Output, cleaned, manual, render, run};
pub use drift::bloom;
pub use narrative::merge as narrative_merge;
pub use support::escape;
