//! `git handoff usage [TRANSCRIPT]`: how full the session's context window is.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use serde_json::Value;

use crate::agent::usage::{self, Meter, WindowSource};
use crate::agent::window;
use crate::cli::{Format, Output, render};
use crate::git::repo;

/// Report how full the agent session's context window is
///
/// Reads the transcript (JSON lines: Claude Code's, or Codex CLI's session
/// file) and divides the input tokens of the most recent assistant message
/// (input + cache read + cache creation) by the context window: --window,
/// else git config handoff.contextWindow, else the harness's own figure
/// (its hook input, or what it stated earlier in the same session), else the
/// window the transcript records (Codex), else by model (1,000,000 for 1M-context variants, else
/// 200,000). Over handoff.threshold percent (default 40) it says it is time
/// to hand off. A transcript that records no token counts is an error.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The transcript; default: this directory's newest session, Claude
    /// Code's (~/.claude/projects) or Codex CLI's (~/.codex/sessions)
    #[arg(value_name = "TRANSCRIPT", conflicts_with = "hook")]
    pub transcript: Option<PathBuf>,
    /// The context window in tokens (200000, 200k, 1M)
    #[arg(long, value_name = "N", value_parser = parse_window)]
    pub window: Option<u64>,
    /// Print one JSON object
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
    /// Read the hook JSON on stdin and use its transcript_path; never fails
    #[arg(long)]
    pub hook: bool,
}

fn parse_window(s: &str) -> Result<u64, String> {
    usage::parse_tokens(s)
}

/// The most read from stdin in hook mode.
const MAX_HOOK_INPUT: u64 = 1024 * 1024;

/// The meter of a transcript (without `--hook`) as text and as JSON, from
/// one reading (for the MCP server, which answers with both).
pub fn both(args: Args) -> Result<(Output, Output)> {
    let meter = measure(&args, None)?;
    Ok((
        render_meter(&meter, Format::Human),
        render_meter(&meter, Format::Json),
    ))
}

/// Read the transcript and report.
pub fn run(args: Args) -> Result<Output> {
    if !args.hook {
        let meter = measure(&args, None)?;
        return Ok(render_meter(&meter, args.format));
    }
    // A hook never blocks the session: failures go to stderr, exit 0.
    let mut input = Vec::new();
    let _ = std::io::stdin()
        .lock()
        .take(MAX_HOOK_INPUT)
        .read_to_end(&mut input);
    let hook: Option<Value> = serde_json::from_slice(&input).ok().filter(Value::is_object);
    let result = match hook {
        Some(hook) => measure(&args, Some(&hook)),
        None => Err(anyhow!("the hook input on stdin is not a JSON object")),
    };
    match result {
        Ok(meter) => Ok(render_meter(&meter, args.format)),
        Err(e) => {
            eprintln!("git handoff usage: {e:#}");
            Ok(Output::empty())
        }
    }
}

/// The meter in `format`.
pub fn render_meter(meter: &Meter, format: Format) -> Output {
    Output::report(format, meter, |m| render::usage_text(m).into())
}

fn measure(args: &Args, hook: Option<&Value>) -> Result<Meter> {
    let field = |name: &str| {
        hook.and_then(|h| h.get(name))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let cwd = match field("cwd").map(PathBuf::from).filter(|p| p.is_dir()) {
        Some(dir) => dir,
        None => std::env::current_dir()
            .map_err(|e| anyhow!("cannot read the current directory: {e}"))?,
    };
    let repo = repo::open_at(&cwd).ok();
    let transcript = match (hook, &args.transcript) {
        (Some(_), _) => field("transcript_path")
            .map(PathBuf::from)
            .ok_or_else(|| anyhow!("the hook input has no transcript_path"))?,
        (None, Some(path)) => path.clone(),
        (None, None) => default_transcript(&cwd, repo.as_ref())?,
    };
    let config = |key: &str| {
        repo.as_ref().and_then(|r| {
            r.config_snapshot()
                .string(key)
                .map(|v| v.to_string())
                .filter(|v| !v.trim().is_empty())
        })
    };
    let threshold = match config("handoff.threshold") {
        Some(v) => match v.trim().trim_end_matches('%').parse::<u64>() {
            Ok(n) if (1..=100).contains(&n) => n,
            _ => {
                return Err(crate::refusal!(
                    "handoff.threshold = '{v}' is not a percentage from 1 to 100; fix it with `git config handoff.threshold 40`"
                ));
            }
        },
        None => usage::DEFAULT_THRESHOLD,
    };
    let window = match (args.window, config("handoff.contextWindow")) {
        (Some(n), _) => Some((n, WindowSource::Flag)),
        (None, Some(v)) => Some((
            usage::parse_tokens(&v).map_err(|e| {
                anyhow!("handoff.contextWindow: {e}; fix it with `git config handoff.contextWindow 200000`")
            })?,
            WindowSource::Config,
        )),
        (None, None) => harness_window(repo.as_ref(), hook, &transcript),
    };
    let sample = usage::last_sample(&transcript)?;
    if sample.is_none() && !usage::is_claude_transcript(&transcript) {
        return Err(crate::refusal!(
            "no usage recorded in this transcript ('{}'): `git handoff usage` reads the token counts of Claude Code transcripts and Codex CLI session files (~/.codex/sessions/…/rollout-*.jsonl)",
            transcript.display()
        ));
    }
    Ok(usage::meter(sample, window, threshold, &transcript))
}

/// What the harness says of its own window, which beats any guess from the
/// model's id: its hook input's (Claude Code's status line gives the size,
/// its session start the model), recorded for the session it names; without
/// hook input, what was recorded for the same session (the transcript's
/// file stem: Claude Code names a transcript by its session's id).
fn harness_window(
    repo: Option<&gix::Repository>,
    hook: Option<&Value>,
    transcript: &Path,
) -> Option<(u64, WindowSource)> {
    let git_dir = repo.map(|r| r.git_dir());
    let window = match hook {
        Some(hook) => {
            let stated = window::stated(hook)?;
            if let (Some(dir), Some(session)) =
                (git_dir, hook.get("session_id").and_then(Value::as_str))
            {
                // A record that cannot be kept costs only the next guess.
                let _ = window::record(dir, session, stated);
            }
            stated
        }
        // A Claude Code transcript is named by its session's id.
        None => {
            let session = transcript.file_stem().and_then(|s| s.to_str())?;
            window::recorded(git_dir?, &[session])?
        }
    };
    Some((window, WindowSource::Harness))
}

/// The newest transcript of a session started in this worktree's root or
/// in the current directory, Claude Code's or Codex CLI's, whichever was
/// written last (also `draft`'s default).
pub fn default_transcript(cwd: &Path, repo: Option<&gix::Repository>) -> Result<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(root) = repo
        .and_then(|r| repo::worktree_info(r).ok())
        .map(|i| i.root)
    {
        dirs.push(root);
    }
    dirs.push(cwd.to_path_buf());
    dirs.push(repo::canonical(cwd));
    let projects = usage::projects_dir();
    let sessions = usage::codex_sessions_dir();
    let (Some(projects), Some(sessions)) = (projects, sessions) else {
        return Err(anyhow!(
            "no TRANSCRIPT given and HOME is not set; pass the transcript path"
        ));
    };
    let modified = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let found = [
        usage::find_transcript(&projects, &dirs),
        usage::find_codex_rollout(&sessions, &dirs),
    ];
    found
        .into_iter()
        .flatten()
        .max_by_key(modified)
        .ok_or_else(|| {
            crate::refusal!(
                "no TRANSCRIPT given and no session transcript found for this directory in {} (Claude Code) or {} (Codex CLI); pass the transcript path (a .jsonl file)",
                projects.join(usage::project_folder(&dirs[0])).display(),
                sessions.display()
            )
        })
}
