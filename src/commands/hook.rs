//! `git handoff hook session-start|pre-compact`: agent-harness hooks. A hook
//! never blocks a session: every failure is silent, exit 0.

use std::io::Read;

use serde_json::{Value, json};

use crate::drift::{self, Depth};
use crate::{Output, clock, render, repo, store};

/// Answer an agent harness's session hooks (JSON on stdin and stdout)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Which hook
    #[command(subcommand)]
    pub event: Event,
}

/// The hook events.
#[derive(Debug, clap::Subcommand)]
pub enum Event {
    /// SessionStart: inject the brief after /clear or a compaction
    SessionStart,
    /// PreCompact: remind to write a handoff before compaction
    PreCompact,
}

/// The most a hook reads from stdin.
const MAX_HOOK_INPUT: u64 = 1024 * 1024;

/// Read the hook input and answer; never fails.
pub fn run(args: Args) -> anyhow::Result<Output> {
    let mut input = Vec::new();
    let _ = std::io::stdin()
        .lock()
        .take(MAX_HOOK_INPUT)
        .read_to_end(&mut input);
    let parsed: Option<Value> = serde_json::from_slice(&input).ok().filter(Value::is_object);
    let answer = match args.event {
        Event::SessionStart => parsed.as_ref().and_then(session_start),
        Event::PreCompact => Some(pre_compact(parsed.as_ref())),
    };
    Ok(Output::ok(
        answer.map(|v| format!("{v}\n")).unwrap_or_default(),
    ))
}

fn open(input: Option<&Value>) -> Option<gix::Repository> {
    let cwd = input
        .and_then(|v| v.get("cwd"))
        .and_then(Value::as_str)
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_dir());
    match cwd {
        Some(dir) => repo::open_at_for_reading(&dir).ok(),
        None => repo::open_cwd_for_reading().ok(),
    }
}

fn session_start(input: &Value) -> Option<Value> {
    let source = input
        .get("source")
        .and_then(Value::as_str)
        .unwrap_or("startup");
    let repo = open(Some(input))?;
    let head = repo::head_state(&repo).ok()?;
    let key = repo::default_key(&head).ok()?;
    let stored = match store::read(&repo, &key).ok()? {
        Some(s) => s,
        None => store::read(&repo, crate::keys::DETACHED_KEY).ok()??,
    };
    let brief = stored.brief().ok()?;
    let context = if matches!(source, "clear" | "compact") {
        let now = clock::now().ok()?;
        let report = drift::report(&repo, &brief, Some(stored.id), now, Depth::Quick).ok()?;
        if report.is_mismatch() {
            return None;
        }
        render::hook_context(&brief, source, &report)
    } else {
        format!(
            "A handoff brief exists for this branch ('{}'); run `git handoff resume {}` to load it.",
            brief.key, brief.key
        )
    };
    Some(json!({
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": context,
        }
    }))
}

fn pre_compact(input: Option<&Value>) -> Value {
    let key = open(input).and_then(|repo| {
        repo::head_state(&repo)
            .ok()
            .and_then(|h| repo::default_key(&h).ok())
    });
    let target = key.map(|k| format!(" (key '{k}')")).unwrap_or_default();
    json!({
        "systemMessage": format!(
            "Context is about to be compacted: run `git handoff write` now{target} with done_when, resume_by, next_acceptance_check, decisions and rejected paths, so the next session can resume."
        )
    })
}
