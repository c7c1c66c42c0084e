//! `git handoff draft [TRANSCRIPT]`: a brief drafted from the session's
//! transcript and the git state, printed; stored (mode `AUTO`) only with
//! `--write`, through `write`'s own path. Also the safety net the session
//! hooks run ([`safety_net`]) and the corrections `recover
//! --from-transcript` takes ([`ground`]).

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use serde_json::Value;

use crate::agent::draft::{self, Draft, Harness, session};
use crate::agent::usage::grouped;
use crate::brief::{Brief, redact};
use crate::cli::commands::write;
use crate::cli::output::Body;
use crate::cli::{Doc, Format, Output, render};
use crate::git::compose::{self, GitFacts, Mode};
use crate::git::{repo, sticky};
use crate::store;
use crate::support::clock;

/// Draft a brief from the session's transcript and the git state
///
/// Reads the session's transcript (Claude Code's JSON lines, or Codex CLI's
/// rollout file) from the end, at most its last 16 MiB, and composes a
/// partial brief without any model: the last request (done when), the
/// files read and edited (files to read first), the commands run with
/// their last exit status (test runs as tests, pass or fail), the last
/// error output (an open risk, verbatim), and decisions or rejected paths
/// only where the agent wrote them as `Decision: …` or `Rejected: …`. The
/// git state is filled in as `write` does. A file that is not such a
/// transcript is refused, never guessed at. Prints the draft, redacted;
/// stores nothing unless --write, which stores it as the brief, mode AUTO,
/// through the same path as `write` (redacted, no narrative entry, not
/// linted), and never replaces a brief written after the transcript's last
/// turn. `resume` marks an AUTO brief: verify before acting.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The transcript (.jsonl); default: the newest of this directory's
    /// sessions in ~/.claude/projects
    #[arg(value_name = "TRANSCRIPT")]
    pub transcript: Option<PathBuf>,
    /// Store the draft as the brief, mode AUTO
    #[arg(long)]
    pub write: bool,
    /// With --write, the key to store under (default: the key a keyless `write` targets)
    #[arg(long, value_name = "KEY", requires = "write")]
    pub key: Option<String>,
    /// Print the partial brief as JSON (with --write: what `write --json` prints)
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// Draft, then print or store.
pub fn run(args: Args) -> Result<Output> {
    let repo = repo::open_cwd()?;
    let transcript = transcript_path(&repo, args.transcript.as_deref())?;
    let draft = drafted(&repo, &transcript)?;
    if !args.write {
        return shown(&repo, &draft, args.format);
    }
    let key = target_key(&repo, args.key.as_deref())?;
    let stored = store::read(&repo, &key)?;
    if let Some(stored) = &stored {
        let brief = stored.brief()?;
        if written_after(&brief, draft.last_turn) {
            crate::refuse!(
                "brief '{key}' was written at {}, after the transcript's last turn ({}); the draft is older, so nothing was written (`git handoff resume {key}` shows the brief)",
                brief.timestamp,
                draft.last_turn.map_or("unknown".to_string(), clock::format)
            );
        }
    }
    let out = store_draft(
        &draft,
        args.key.as_deref(),
        stored.map(|s| s.id),
        args.format,
    )?;
    Ok(prefixed(
        out,
        &format!(
            "Stored the draft from {} as the brief (mode AUTO).\n",
            draft.transcript.display()
        ),
    ))
}

/// The transcript named, else the newest session's, found as `usage`
/// finds it.
fn transcript_path(repo: &gix::Repository, given: Option<&Path>) -> Result<PathBuf> {
    match given {
        Some(path) => Ok(path.to_path_buf()),
        None => {
            let cwd = std::env::current_dir()
                .map_err(|e| anyhow!("cannot read the current directory: {e}"))?;
            crate::cli::commands::usage::default_transcript(&cwd, Some(repo))
        }
    }
}

/// The draft of the transcript at `path` for this worktree.
fn drafted(repo: &gix::Repository, path: &Path) -> Result<Draft> {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let session = session::read(&path, draft::READ_LIMIT)?;
    let root = repo::worktree_info(repo)?.root;
    Ok(draft::compose(&session, &path, &root))
}

/// The key a draft is stored under: `explicit`, else the one a keyless
/// `write` targets (as `write` chooses it, without its warning: `write`
/// says it once when it stores).
fn target_key(repo: &gix::Repository, explicit: Option<&str>) -> Result<String> {
    let head = repo::head_state(repo)?;
    Ok(sticky::choose(repo, &head, explicit, false, "draft")?.key)
}

/// Whether `brief` was written after the transcript's last turn (or the
/// order cannot be told).
fn written_after(brief: &Brief, last_turn: Option<i64>) -> bool {
    match (clock::parse(&brief.timestamp), last_turn) {
        (Some(written), Some(last)) => written > last,
        _ => true,
    }
}

/// The draft as text or as the partial brief, redacted as a write would
/// redact it.
fn shown(repo: &gix::Repository, draft: &Draft, format: Format) -> Result<Output> {
    let options = redact::Options::from_repo(repo);
    let mut partial = draft.partial();
    let mut counts = redact::redact_json(&mut partial, options);
    let out = match format {
        Format::Json => Output::json(&partial),
        Format::Human => {
            let key = target_key(repo, None)?;
            let git = GitFacts::read(repo)?;
            let brief = compose::compose(partial, &key, Mode::Write, &git).map_err(|issues| {
                anyhow!(
                    "internal: the draft is no valid brief: {}",
                    render::invalid(&issues).replace('\n', " ")
                )
            })?;
            let task = draft.task.as_deref().map(|t| {
                let (text, found) = redact::redact(t, options);
                redact::merge(&mut counts, found);
                text
            });
            Output::human(draft_doc(draft, task.as_deref(), &brief))
        }
    };
    if let Some(summary) = redact::summary(&counts) {
        eprintln!("note: {summary} in the draft");
    }
    Ok(out)
}

/// The draft for people: where it was read, the brief as `resume` shows
/// it, and how to store or correct it.
fn draft_doc(draft: &Draft, task: Option<&str>, brief: &Brief) -> Doc {
    let harness = match draft.harness {
        Harness::ClaudeCode => "Claude Code",
        Harness::Codex => "Codex CLI",
    };
    let extent = if draft.whole {
        format!("all {} bytes read", grouped(draft.bytes_read))
    } else {
        format!("its last {} bytes read", grouped(draft.bytes_read))
    };
    let mut source = format!(
        "From: {} ({harness} transcript, {extent})\n",
        draft.transcript.display()
    );
    if let Some(at) = draft.last_turn {
        source.push_str(&format!("Last turn: {}\n", clock::format(at)));
    }
    if let Some(task) = task {
        source.push_str(&format!("Last request: {task}\n"));
    }
    let mut doc = render::draft_text(brief, &source);
    doc.push_str(&format!(
        "\nNothing was stored: --write stores it as brief '{}' (mode AUTO). To correct it first: `git handoff draft --json > draft.json`, edit the file (drop its \"mode\" once checked), then `git handoff write -F draft.json`.\n",
        brief.key
    ));
    doc
}

/// Store a draft as the brief through `write`'s own path, so that it is
/// redacted, keyed and compare-and-swapped exactly as every write:
/// `expected` is the version the caller checked; no narrative entry (the
/// draft decides nothing), no lint (it is marked for verification
/// instead).
fn store_draft(
    draft: &Draft,
    key: Option<&str>,
    expected: Option<gix::ObjectId>,
    format: Format,
) -> Result<Output> {
    use clap::{Args as _, FromArgMatches};
    let mut argv: Vec<&str> = key.into_iter().collect();
    argv.extend(["--no-narrative", "--no-lint"]);
    if format.is_json() {
        argv.push("--json");
    }
    let command = write::Args::augment_args(clap::Command::new("write").no_binary_name(true));
    let mut args = write::Args::from_arg_matches(&command.try_get_matches_from(argv)?)?;
    args.input.fields.value = Some(draft.partial());
    args.expected = Some(expected);
    write::run(args)
}

/// `out` with `line` before its text (JSON is left as it is).
fn prefixed(out: Output, line: &str) -> Output {
    match out.body {
        Body::Human(doc) => {
            let mut text = Doc::from(line);
            text.append(doc);
            Output {
                body: Body::Human(text),
                code: out.code,
            }
        }
        _ => out,
    }
}

/// The safety net of the pre-compact and session-end hooks: store the
/// draft of the hook's `transcript_path` as the brief of the key a keyless
/// write targets in the hook's `cwd` — only when the session did something
/// (edited a file or ran a command that did more than look), no brief was
/// written for that key since the session started (an AUTO draft does not
/// count) and none after its last turn, so that a session that wrote its
/// brief is never overwritten, nor an older brief by a session that only
/// read and talked. `handoff.autoDraft false` turns it off. The key
/// stored, or `None`; never fails.
pub fn safety_net(input: Option<&Value>) -> Option<String> {
    net(input?).ok().flatten()
}

fn net(input: &Value) -> Result<Option<String>> {
    let Some(transcript) = input
        .get("transcript_path")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
    else {
        return Ok(None);
    };
    let dir = match input.get("cwd") {
        Some(cwd) => PathBuf::from(cwd.as_str().ok_or_else(|| anyhow!("cwd is no string"))?),
        None => std::env::current_dir()?,
    };
    if !dir.is_dir() {
        return Ok(None);
    }
    let repo = repo::open_at(&dir)?;
    if repo.config_snapshot().boolean("handoff.autoDraft") == Some(false) {
        return Ok(None);
    }
    let transcript = Path::new(transcript);
    let draft = drafted(&repo, transcript)?;
    if !draft.acted {
        return Ok(None);
    }
    let key = target_key(&repo, None)?;
    let stored = store::read(&repo, &key)?;
    if let Some(stored) = &stored {
        let brief = stored.brief()?;
        let since_start = match (clock::parse(&brief.timestamp), session::started(transcript)) {
            (Some(written), Some(started)) => written >= started,
            _ => true,
        };
        if (brief.mode != draft::MODE && since_start) || written_after(&brief, draft.last_turn) {
            return Ok(None);
        }
    }
    // `write` works in the current directory's repository.
    let root = repo::worktree_info(&repo)?.root;
    std::env::set_current_dir(&root)?;
    store_draft(&draft, None, stored.map(|s| s.id), Format::Json)?;
    Ok(Some(key))
}

/// `recover --from-transcript`: ground the stored brief (`value`) in what
/// the session did, per [`draft::ground`]. `transcript` as `draft`'s
/// argument.
pub fn ground(repo: &gix::Repository, value: &mut Value, transcript: Option<&Path>) -> Result<()> {
    let path = transcript_path(repo, transcript)?;
    let draft = drafted(repo, &path)?;
    draft::ground(value, &draft);
    Ok(())
}
