//! `git handoff hook session-start|pre-compact|session-end|user-prompt-submit`:
//! agent-harness hooks (the last one in [`super::health`]). A hook never blocks a session: every failure is silent, exit 0.
//! And the hidden `hook pre-push`, git's pre-push hook ([`pre_push`]),
//! which refuses a push that would send a secret.

use std::io::Read;

pub mod pre_push;

use serde_json::Value;

use crate::cli::commands::keyless_key_here;
use crate::cli::{Output, render, report};
use crate::drift::{self, Depth};
use crate::git::sticky;
use crate::support::escape::shell_quote;
use crate::{git::repo, store, support::clock};

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
    /// PreCompact: remind to write a handoff before compaction; store a draft from the transcript (mode AUTO) when no brief was written in this session
    PreCompact,
    /// SessionEnd: store a draft from the transcript (mode AUTO) when no brief was written in this session
    SessionEnd,
    /// UserPromptSubmit: one line suggesting reground (recover when the context is nearly full) when the transcript shows recall degrading; each alert once per session
    UserPromptSubmit,
    /// git's pre-push hook (`init --pre-push` installs it): the secret gate on the handoff refs a push would send, then the hook it chains
    #[command(hide = true)]
    PrePush(pre_push::Args),
}

/// The most a hook reads from stdin.
const MAX_HOOK_INPUT: u64 = 1024 * 1024;

/// Read the hook input and answer; never fails (but git's pre-push hook,
/// which refuses).
pub fn run(args: Args) -> anyhow::Result<Output> {
    let answer = match args.event {
        // Each with its own reader of its input.
        Event::UserPromptSubmit => return super::health::run(),
        Event::PrePush(args) => return pre_push::run(args),
        Event::SessionStart => input()
            .as_ref()
            .and_then(session_start)
            .map(|a| report::line(&a)),
        Event::PreCompact => Some(report::line(&pre_compact(input().as_ref()))),
        Event::SessionEnd => {
            crate::cli::commands::draft::safety_net(input().as_ref());
            None
        }
    };
    Ok(answer.unwrap_or_else(Output::empty))
}

/// The hook's JSON object on stdin (at most [`MAX_HOOK_INPUT`] bytes), if
/// it is one.
fn input() -> Option<Value> {
    let mut input = Vec::new();
    let _ = std::io::stdin()
        .lock()
        .take(MAX_HOOK_INPUT)
        .read_to_end(&mut input);
    serde_json::from_slice(&input).ok().filter(Value::is_object)
}

/// The repository the hook is about: the input's `cwd` when it names one
/// (a `cwd` that is not a directory gets no answer: never the hook
/// process's own directory instead), else the process's directory.
fn open(input: Option<&Value>) -> Option<gix::Repository> {
    match input.and_then(|v| v.get("cwd")) {
        Some(cwd) => {
            let dir = std::path::PathBuf::from(cwd.as_str()?);
            if !dir.is_dir() {
                return None;
            }
            repo::open_at_for_reading(&dir).ok()
        }
        None => repo::open_cwd_for_reading().ok(),
    }
}

/// How many waiting briefs the startup answer names.
const NAMED: usize = 3;

/// The most lines the startup context holds, whatever waits: the budget of
/// the resume render (lint's length rule).
const MAX_LINES: usize = 40;

/// The lines the startup context keeps for its last note (a blank line
/// and the thread the last session worked on).
const NOTE_LINES: usize = 2;

fn session_start(input: &Value) -> Option<report::HookContext> {
    let source = input
        .get("source")
        .and_then(Value::as_str)
        .unwrap_or("startup");
    let mut repo = open(Some(input))?;
    // What a `git pull` brought is waiting to be named below.
    crate::cli::staged::take(&mut repo);
    let head = repo::head_state(&repo).ok()?;
    // A new session re-checks the sticky key: the method's selected key
    // holds for the session that chose it only.
    let session = input.get("session_id").and_then(Value::as_str);
    let left = sticky::session_started(&repo, session, matches!(source, "startup" | "clear"))
        .ok()
        .flatten();
    export_session(session);
    // The window the harness states (a 1M model), for the same session's
    // later `usage` without hook input (the MCP tool).
    if let (Some(window), Some(session)) = (crate::agent::window::stated(input), session) {
        let _ = crate::agent::window::record(repo.git_dir(), session, window);
    }
    let key = keyless_key_here(&repo).ok()?;
    let own = match store::read(&repo, &key).ok()? {
        Some(s) => Some(s),
        None => store::read(&repo, crate::brief::keys::DETACHED_KEY).ok()?,
    };
    let after_reset = matches!(source, "clear" | "compact");
    let mut context = match own {
        Some(stored) if after_reset => inject(&repo, &stored, source, Depth::Quick)?,
        Some(stored) if stored.key != repo::branch_key(&head) => format!(
            "This session's handoff brief is '{}'; run `git handoff resume {}` to load it.{}",
            stored.key,
            shell_quote(&stored.key),
            auto_note(&stored)
        ),
        Some(stored) => format!(
            "A handoff brief exists for this branch ('{}'); run `git handoff resume {}` to load it.{}",
            stored.key,
            shell_quote(&stored.key),
            auto_note(&stored)
        ),
        None => {
            // One read of the inventory serves both answers.
            let briefs = crate::cli::inventory::waiting(&repo, clock::now().ok()?).ok()?;
            match briefs.as_slice() {
                [] => unfetched_advice(&repo)?,
                [only] if after_reset => {
                    let stored = store::read(&repo, &only.key).ok()??;
                    inject(&repo, &stored, source, Depth::Full)?
                }
                _ => waiting(&briefs, head.branch_label(), &key),
            }
        }
    };
    if let Some(left) = left.filter(|l| l.key != key) {
        context.push_str(&format!(
            "\nThe last session here worked on '{0}'; in this session a keyless `git handoff write` targets '{1}' — `git handoff resume {2}` continues that thread instead.\n",
            left.key,
            sticky::keyless_key(&repo, &head).unwrap_or(key),
            shell_quote(&left.key),
        ));
    }
    // What reaches the model passes the redaction rules of today once
    // more: a brief fetched before a rule existed may hold what it finds.
    let options = crate::brief::redact::Options::from_repo(&repo);
    let context = crate::brief::redact::redact(&context, options).0;
    let context = render::fence::cut_lines(&context, MAX_LINES, "`git handoff list`");
    Some(report::HookContext {
        hook_specific_output: report::HookSpecific {
            hook_event_name: "SessionStart",
            additional_context: context,
        },
    })
}

/// What the startup answer adds of a brief of mode AUTO: it is a draft of
/// the last session's transcript, to verify, not a brief someone wrote.
fn auto_note(stored: &store::Stored) -> String {
    match stored.brief() {
        Ok(brief) if brief.mode == crate::agent::draft::MODE => format!(
            " It is an AUTO draft ({}); `git handoff diff {}` shows what it changed.",
            render::AUTO_NOTE,
            shell_quote(&brief.key)
        ),
        _ => String::new(),
    }
}

/// Tell the harness's later shell commands which session they run in:
/// Claude Code gives its SessionStart hooks a file of shell exports
/// (`CLAUDE_ENV_FILE`) sourced before each command, so `GIT_HANDOFF_SESSION`
/// names the session even when several run in one worktree. Never fails.
fn export_session(session: Option<&str>) {
    use std::io::Write;
    let Some(id) = session.and_then(sticky::valid_session) else {
        return;
    };
    let Some(file) = std::env::var_os("CLAUDE_ENV_FILE").filter(|f| !f.is_empty()) else {
        return;
    };
    let line = format!("export {}={id}", sticky::SESSION_ENV);
    let existing = std::fs::read_to_string(&file).unwrap_or_default();
    if existing.lines().last() == Some(line.as_str()) {
        return;
    }
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .and_then(|mut f| {
            let sep = if existing.is_empty() || existing.ends_with('\n') {
                ""
            } else {
                "\n"
            };
            f.write_all(format!("{sep}{line}\n").as_bytes())
        });
}

/// The five load-bearing fields of a brief and its drift warnings; `None`
/// for another project's brief.
fn inject(
    repo: &gix::Repository,
    stored: &store::Stored,
    source: &str,
    depth: Depth,
) -> Option<String> {
    let brief = crate::cli::commands::for_model(repo, &stored.brief().ok()?);
    let now = clock::now().ok()?;
    let report = drift::report(
        repo,
        &brief,
        Some(stored.id),
        now,
        depth,
        crate::cli::commands::init::drift_narrative(repo).as_ref(),
    )
    .ok()?;
    if report.is_mismatch() {
        return None;
    }
    let provenance = crate::cli::commands::Provenance::of(repo, Some(stored.id), &brief);
    let from = provenance.source(&brief);
    Some(render::hook_context(
        &brief,
        source,
        &report,
        &from,
        MAX_LINES - NOTE_LINES,
    ))
}

/// With no brief here: how to get the team's from a remote whose briefs
/// were never fetched (a teammate's fresh clone), else nothing to say.
fn unfetched_advice(repo: &gix::Repository) -> Option<String> {
    let remotes = store::remotes::never_fetched(repo).ok()?;
    let remote = remotes.first()?;
    Some(format!(
        "No handoff brief here yet, and the team's briefs on '{remote}' were never fetched: run `git handoff fetch`, then `git handoff` lists what is waiting.\n"
    ))
}

/// The briefs waiting under other keys, newest first: at most [`NAMED`],
/// each with its branch, where that is checked out and the command to
/// resume it. Briefs written on this very branch (a teammate's, under
/// their own key) are counted as such: "none for this branch" would
/// contradict the list.
fn waiting(briefs: &[crate::cli::inventory::Waiting], current: &str, key: &str) -> String {
    let count = if briefs.len() == 1 {
        "one is".to_string()
    } else {
        format!("{} are", briefs.len())
    };
    let on_branch = briefs.iter().filter(|w| w.here).count();
    let head = match on_branch {
        0 => format!("No handoff brief for this branch ('{current}'); {count} waiting"),
        n if n == briefs.len() => format!(
            "No handoff brief under this branch's key ('{key}'); {count} waiting under another key, written on this branch ('{current}')"
        ),
        n => format!(
            "No handoff brief under this branch's key ('{key}'); {count} waiting, {n} of them written on this branch ('{current}')"
        ),
    };
    format!("{head}:\n{}", render::waiting_text(briefs, NAMED))
}

fn pre_compact(input: Option<&Value>) -> report::HookMessage {
    let drafted = crate::cli::commands::draft::safety_net(input);
    // The key a keyless `write` targets: the same rule as `write`'s.
    let key = open(input).and_then(|repo| {
        repo::head_state(&repo)
            .ok()
            .and_then(|h| sticky::keyless_key(&repo, &h).ok())
    });
    let target = key.map(|k| format!(" (key '{k}')")).unwrap_or_default();
    let draft = drafted
        .map(|k| format!(" No brief was written in this session, so a draft of it from the transcript is stored as brief '{k}' (mode AUTO) until you write one."))
        .unwrap_or_default();
    report::HookMessage {
        system_message: format!(
            "Context is about to be compacted: run `git handoff write` now{target} with done_when, resume_by, next_acceptance_check, decisions and rejected paths, so the next session can resume.{draft}"
        ),
    }
}
