//! The context window the harness itself states for a session, kept for
//! the commands that run without the harness's input (the MCP `usage`
//! tool, a plain `git handoff usage`): Claude Code's status line gives
//! `context_window.context_window_size`; its session-start hook names the
//! session's model (`claude-opus-4-6[1m]`), which the transcript's lines do
//! not mark as a 1M-context variant. Each is recorded under the session's
//! id in the worktree's git dir (`handoff-window`, a few sessions, newest
//! first), never in the working tree; the model table comes last.

use std::path::Path;

use anyhow::Result;
use serde_json::Value;

use crate::agent::usage::{LARGE_WINDOW, window_for_model};
use crate::git::sticky::valid_session;
use crate::support::atomic;

/// The file name in the worktree's git dir.
pub const FILE: &str = "handoff-window";

/// How many sessions' windows are kept.
const KEEP: usize = 8;

/// The window a harness's hook input states: its
/// `context_window.context_window_size`, else a model it names (`model`, a
/// string or `{ "id": … }`) when that is a 1M-context variant; `None` when
/// it states none (a model the table would guess is no statement).
pub fn stated(input: &Value) -> Option<u64> {
    if let Some(size) = input
        .pointer("/context_window/context_window_size")
        .and_then(Value::as_u64)
        .filter(|n| *n > 0)
    {
        return Some(size);
    }
    let model = input.get("model")?;
    let id = model
        .as_str()
        .or_else(|| model.get("id").and_then(Value::as_str))?;
    (window_for_model(Some(id)) == LARGE_WINDOW).then_some(LARGE_WINDOW)
}

/// Record `window` as the one `session` runs with (nothing is written when
/// it is already the newest record).
pub fn record(git_dir: &Path, session: &str, window: u64) -> Result<()> {
    let Some(session) = valid_session(session) else {
        return Ok(());
    };
    let file = git_dir.join(FILE);
    let old = std::fs::read_to_string(&file).unwrap_or_default();
    let line = format!("{session} {window}");
    if old.lines().next() == Some(line.as_str()) {
        return Ok(());
    }
    let mut text = format!("{line}\n");
    for kept in entries(&old).filter(|(s, _)| *s != session).take(KEEP - 1) {
        text.push_str(&format!("{} {}\n", kept.0, kept.1));
    }
    atomic::write(&file, text.as_bytes())
}

/// The window recorded for the first of `sessions` that has one.
pub fn recorded(git_dir: &Path, sessions: &[&str]) -> Option<u64> {
    let text = std::fs::read_to_string(git_dir.join(FILE)).ok()?;
    sessions
        .iter()
        .find_map(|want| entries(&text).find(|(s, _)| s == want).map(|(_, w)| w))
}

/// The well-formed lines of the file: session id and window.
fn entries(text: &str) -> impl Iterator<Item = (&str, u64)> {
    text.lines().filter_map(|line| {
        let (session, window) = line.split_once(' ')?;
        let window = window.trim().parse::<u64>().ok().filter(|w| *w > 0)?;
        Some((valid_session(session)?, window))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_harness_states_a_window_by_size_or_by_a_1m_model() {
        let v = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        assert_eq!(
            stated(&v(r#"{"context_window":{"context_window_size":400000}}"#)),
            Some(400_000)
        );
        assert_eq!(
            stated(&v(r#"{"model":"claude-opus-4-6[1m]"}"#)),
            Some(LARGE_WINDOW)
        );
        assert_eq!(
            stated(&v(r#"{"model":{"id":"claude-sonnet-4-5[1m]"}}"#)),
            Some(LARGE_WINDOW)
        );
        assert_eq!(stated(&v(r#"{"model":"claude-opus-4-6"}"#)), None);
        assert_eq!(stated(&v("{}")), None);
    }

    #[test]
    fn windows_are_kept_per_session_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        record(dir.path(), "a", 1_000_000).unwrap();
        record(dir.path(), "b", 400_000).unwrap();
        record(dir.path(), "a", 500_000).unwrap();
        record(dir.path(), "bad id!", 1).unwrap();
        assert_eq!(recorded(dir.path(), &["a"]), Some(500_000));
        assert_eq!(recorded(dir.path(), &["x", "b"]), Some(400_000));
        assert_eq!(recorded(dir.path(), &["x"]), None);
        for i in 0..20 {
            record(dir.path(), &format!("s{i}"), 1).unwrap();
        }
        let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        assert_eq!(text.lines().count(), KEEP);
    }
}
