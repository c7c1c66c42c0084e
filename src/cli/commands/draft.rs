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
    let mut partial = draft.partial();
    if let Some(stored) = &stored {
        let brief = stored.brief()?;
        let written = written_at(&repo, stored.id, &brief)?;
        if after(written, draft.last_turn) {
            let qk = crate::support::escape::shell_quote(&key);
            crate::refuse!(
                "brief '{key}' was written at {}, after the transcript's last turn ({}); the draft is older, so nothing was written (`git handoff resume {qk}` shows the brief)",
                written.map_or(brief.timestamp.clone(), clock::format),
                draft.last_turn.map_or("unknown".to_string(), clock::format)
            );
        }
        if brief.mode != draft::MODE {
            partial = serde_json::from_slice::<Value>(&stored.data)?;
            draft::over(
                &mut partial,
                &draft,
                &stored.id.to_hex_with_len(7).to_string(),
            );
        }
    }
    let out = store_partial(
        partial,
        args.key.as_deref(),
        stored.map(|s| s.id),
        args.format,
    )?;
    Ok(prefixed(
        out,
        &format!(
            "Stored the draft from {} as the brief (mode AUTO).\n",
            shown_path(&draft.transcript)
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

/// `path` without `.` and with each `..` taking the folder before it
/// (`/a/repo/../home/t.jsonl` → `/a/home/t.jsonl`), read lexically, as
/// the harness named it.
fn normal(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A path as printed: through the secret gate, as every name is (a
/// folder may be named after a token).
fn shown_path(path: &Path) -> String {
    redact::redact(&path.display().to_string(), redact::Options::default()).0
}

/// The draft of the transcript at `path` for this worktree. The path is
/// made absolute and normal (no `..`), as it is recorded in the brief.
fn drafted(repo: &gix::Repository, path: &Path) -> Result<Draft> {
    let path = normal(&std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()));
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

/// When the stored version `id` of `brief` was written: by the history
/// (its first lineage line's time), not by the brief's own `timestamp`,
/// which a brief copied and written again keeps; only a version written
/// before lineage was recorded falls back to it.
fn written_at(repo: &gix::Repository, id: gix::ObjectId, brief: &Brief) -> Result<Option<i64>> {
    let records = store::lineage::records(repo, &brief.key, id)?;
    Ok(records
        .iter()
        .find_map(|r| r.at.as_deref().and_then(clock::parse))
        .or_else(|| clock::parse(&brief.timestamp)))
}

/// Whether a version written at `written` came after the transcript's
/// last turn (or the order cannot be told).
fn after(written: Option<i64>, last_turn: Option<i64>) -> bool {
    match (written, last_turn) {
        (Some(written), Some(last)) => written > last,
        _ => true,
    }
}

/// The draft as text or as the partial brief, redacted as a write would
/// redact it.
fn shown(repo: &gix::Repository, draft: &Draft, format: Format) -> Result<Output> {
    let options = redact::Options::from_repo(repo);
    let mut partial = draft.partial();
    // The draft redacted its texts whole before cutting them: those
    // markers count as well.
    let mut counts = redact::marker_counts(&partial.to_string());
    redact::merge(&mut counts, redact::redact_json(&mut partial, options));
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
        shown_path(&draft.transcript)
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

/// Store a partial brief (a draft, or a draft grounded in the stored
/// brief) through `write`'s own path: redacted, keyed and
/// compare-and-swapped exactly as every write: `expected` is the version
/// the caller checked; no narrative entry (the draft decides nothing), no
/// lint (it is marked for verification instead).
fn store_partial(
    partial: Value,
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
    args.input.fields.value = Some(partial);
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
                trailer: out.trailer,
            }
        }
        _ => out,
    }
}

/// The safety net of the pre-compact and session-end hooks: store the
/// draft of the hook's `transcript_path` as the brief of the key a keyless
/// write targets in the hook's `cwd` — only when the session did work
/// (edited a file or ran a command that did more than look; reading a
/// brief is not work), the brief is not one this session wrote (by the
/// history's record of the session), no brief was written for that key
/// since the session started (an AUTO draft does not count), none
/// after its last turn, and the session was not trivial ([`trivial`]: a
/// clean worktree at its end, no failing last test, no decision or
/// rejected approach in its transcript) when a brief is stored. Over a brief someone wrote, the draft is built on
/// top of it ([`draft::over`]), never in its place. `handoff.autoDraft
/// false` turns it off. The key stored, or `None`; never fails.
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
    if stored.is_some() && trivial(&repo, &draft)? {
        return Ok(None);
    }
    let session_id = input.get("session_id").and_then(Value::as_str);
    let mut over = None;
    if let Some(stored) = &stored {
        // A brief this version cannot read (a newer git-handoff's) is
        // never replaced: `brief()` fails and so does the net.
        let brief = stored.brief()?;
        let when = (session_id, session::started(transcript), draft.last_turn);
        if !may_replace(&repo, stored.id, &brief, when)? {
            return Ok(None);
        }
        over = if brief.mode != draft::MODE {
            Some((stored.id, serde_json::from_slice::<Value>(&stored.data)?))
        } else {
            // An earlier draft (PreCompact's, say): this one goes over the
            // person's version that one went over, not from scratch; with
            // nothing else to go on, over that draft, which carries the
            // person's fields.
            match person_under(&repo, &key, stored.id)? {
                Some(person) => Some(person),
                None => Some((stored.id, serde_json::from_slice::<Value>(&stored.data)?)),
            }
        };
    }
    // `write` works in the current directory's repository.
    let root = repo::worktree_info(&repo)?.root;
    std::env::set_current_dir(&root)?;
    let partial = match over {
        Some((id, mut base)) => {
            draft::over(&mut base, &draft, &id.to_hex_with_len(7).to_string());
            base
        }
        None => draft.partial(),
    };
    store_partial(partial, None, stored.map(|s| s.id), Format::Json)?;
    Ok(Some(key))
}

/// Whether the session was trivial: nothing left open in its transcript
/// ([`draft::Draft::left_nothing_open`]) and a clean worktree at its end
/// (the narrative, git-handoff's own log, aside). The safety net stores
/// no draft of it over a brief: that brief is still the state of the work.
fn trivial(repo: &gix::Repository, draft: &draft::Draft) -> Result<bool> {
    if !draft.left_nothing_open() {
        return Ok(false);
    }
    let narrative = crate::narrative::tree_path(repo);
    Ok(repo::changed_files(repo)?
        .iter()
        .all(|path| Some(path) == narrative.as_ref()))
}

/// How far back through drafts over drafts the person's version is looked
/// for: any chain a history can hold (the walk reads one key's lineage
/// once, whatever its length).
const DRAFTS_DEEP: usize = 100_000;

/// The newest version under the AUTO draft `id` of `key` (following the
/// version graph) that is not itself a draft: what a person wrote.
fn person_under(
    repo: &gix::Repository,
    key: &str,
    id: gix::ObjectId,
) -> Result<Option<(gix::ObjectId, Value)>> {
    for parent in store::lineage::ancestors(repo, key, id, DRAFTS_DEEP)? {
        // Read from the history when the blob never reached this clone (a
        // teammate's version, fetched as their history line).
        let Some(stored) = store::history::stored_form(repo, key, parent)? else {
            return Ok(None);
        };
        let value: Value = serde_json::from_str(&stored)?;
        if value.get("mode").and_then(Value::as_str) != Some(draft::MODE) {
            return Ok(Some((parent, value)));
        }
    }
    Ok(None)
}

/// Whether the safety net may store a draft over `brief` (stored as `id`):
/// never over a brief the hook's session wrote (its own earlier drafts
/// aside), nor over one written after the session began or after its
/// last turn. When a version was written is read from the history (its
/// lineage line), not from the brief's own `timestamp`, which a brief
/// copied and written again keeps; only a version written before lineage
/// was recorded falls back to it.
fn may_replace(
    repo: &gix::Repository,
    id: gix::ObjectId,
    brief: &Brief,
    (session, started, last_turn): (Option<&str>, Option<i64>, Option<i64>),
) -> Result<bool> {
    let records = store::lineage::records(repo, &brief.key, id)?;
    let by_person = brief.mode != draft::MODE;
    if by_person && session.is_some() && records.iter().any(|r| r.session.as_deref() == session) {
        return Ok(false);
    }
    let written = written_at(repo, id, brief)?;
    let since_start = match (written, started) {
        (Some(w), Some(s)) => w >= s,
        _ => true,
    };
    Ok(!((by_person && since_start) || after(written, last_turn)))
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
