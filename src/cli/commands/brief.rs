//! `git handoff brief [KEY]`: an in-memory subagent brief, never stored.

use anyhow::Result;
use serde_json::Value;

use crate::brief::redact;
use crate::cli::commands::fields::FieldArgs;
use crate::cli::commands::{Selection, redacted, refuse_ambiguous, select};
use crate::cli::{Format, Output, render};
use crate::git::compose::{self, Lists};
use crate::{git::repo, store};

/// The default cap on a subagent brief's lines.
pub const DEFAULT_MAX_LINES: usize = 30;

/// Print a subagent brief (## Task …) of at most 30 lines, never stored
///
/// Task (from --task, else the brief's next step), scope, locked decisions,
/// the user's preferences, what not to retry, open risks, files to read
/// first and what to return. It is drawn from the stored brief (the current
/// one without KEY) and the field flags, which add to it (--decision,
/// --rejected, --read, -F a partial brief …); in a repository with no brief
/// yet, from --task, --scope and the flags alone. It fits the cap
/// (30, the method's ceiling; handoff.briefMaxLines may lower it, never
/// raise it) by construction: the lists keep the
/// items most relevant to the task and scope, and one line `(+N more …)`
/// stands for the rest. Only a task and scope too long for the cap on their
/// own make it fail (exit 1): the subtask is too broad and should be
/// re-decomposed.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The brief's key (default: the one a keyless `resume` reads)
    pub key: Option<String>,
    /// The subagent's task (default: the brief's resume_by)
    #[arg(long, value_name = "TEXT")]
    pub task: Option<String>,
    /// What the subagent may touch (repeatable)
    #[arg(long, value_name = "TEXT")]
    pub scope: Vec<String>,
    /// Point the subagent to the key's newest narrative entry by reference
    /// (`Background: see .claude/PROJECT_STATE.md ## <date> — [<key>] <title>`),
    /// never pasting it
    #[arg(long)]
    pub see_narrative: bool,
    /// What the subagent brief adds to the stored brief, or is made of
    /// when none is stored: -F and the field flags.
    #[command(flatten)]
    pub fields: FieldArgs,
}

/// Select, merge the flags, render, enforce the cap.
pub fn run(args: Args) -> Result<Output> {
    let repo = repo::open_cwd_for_reading()?;
    render::remember(&repo);
    let (mut value, key) = match base(&repo, &args)? {
        Ok(base) => base,
        Err(rows) => return Ok(refuse_ambiguous(&rows, "brief", Format::Human)),
    };
    let mut partial = serde_json::Value::Object(args.fields.input()?);
    crate::write::patch::apply(&mut partial, &args.fields.patch()?)?;
    // Every field is optional here: the stored brief, or the task, gives
    // what is missing; only types and unknown fields are checked.
    let issues = crate::brief::validate_partial(&partial);
    if let Some(first) = issues
        .iter()
        .find(|i| !i.message.ends_with("is a required property"))
    {
        crate::refuse!(
            "the partial brief is invalid: {}: {} (`git handoff schema` prints the schema)",
            first.path,
            first.message
        );
    }
    compose::merge(&mut value, partial, Lists::Append);
    let options = redact::Options::from_repo(&repo);
    let counts = redact::redact_json(&mut value, options);
    if let Some(summary) = redact::summary(&counts) {
        eprintln!("note: {summary} in the subagent brief");
    }
    let source = render::SubagentSource::of(&value, key);
    let Some(task) = args.task.clone().or_else(|| source.resume_by.clone()) else {
        crate::refuse!(
            "no brief in this repository yet and no task: give the subagent's task with --task (and --scope, --decision, --rejected, --read or -F FILE)"
        );
    };
    let mut task = task;
    if args.see_narrative {
        task.push_str(&narrative_reference(&repo, source.key.as_deref())?);
    }
    // Redacted whole, the narrative's heading (a file anyone may edit) too.
    let task = redacted(&task, "the task", options);
    let scope: Vec<String> = args
        .scope
        .iter()
        .map(|s| redacted(s, "the scope", options))
        .collect();
    let cap = line_cap(&repo);
    match render::subagent_text(&source, &task, &scope, cap) {
        Ok(text) => Ok(Output::human(text)),
        Err(lines) => crate::refuse!(
            "the task, scope and return contract alone are {lines} lines, over the cap of {cap}: the subtask is too broad; re-decompose it into narrower subtasks (a shorter --task and fewer --scope lines each)"
        ),
    }
}

/// The line cap: the method's ceiling of [`DEFAULT_MAX_LINES`], which
/// `handoff.briefMaxLines` may lower and never lift (a value above it is
/// named on stderr and ignored).
fn line_cap(repo: &gix::Repository) -> usize {
    let Some(set) = repo
        .config_snapshot()
        .integer("handoff.briefMaxLines")
        .filter(|n| *n > 0)
    else {
        return DEFAULT_MAX_LINES;
    };
    if set as u64 > DEFAULT_MAX_LINES as u64 {
        eprintln!(
            "note: handoff.briefMaxLines={set} is above the method's ceiling of {DEFAULT_MAX_LINES} lines, which holds (the setting may only lower it)"
        );
        return DEFAULT_MAX_LINES;
    }
    set as usize
}

/// `--see-narrative`: the line naming the key's newest narrative entry,
/// read only when a decision's why is needed.
fn narrative_reference(repo: &gix::Repository, key: Option<&str>) -> Result<String> {
    let Some(key) = key else {
        crate::refuse!(
            "--see-narrative needs a stored brief: the narrative entry it names is the brief's key's"
        );
    };
    let root = repo::worktree_info(repo)?.root;
    match crate::narrative::newest_heading(repo, &root, key)? {
        Some((path, heading)) => Ok(format!(
            "\nBackground, only if a decision's why is needed: see {path} {heading}"
        )),
        None => crate::refuse!(
            "--see-narrative: the narrative has no entry for '{key}' (`git handoff write` adds one; `--no-narrative` skipped it)"
        ),
    }
}

/// The stored brief to start from, as JSON, and its key; an empty partial
/// brief when no KEY is given and the repository has no brief at all (the
/// method's BRIEF needs no store); `Err` holds the listing of an ambiguous
/// keyless selection.
#[allow(clippy::type_complexity)]
fn base(
    repo: &gix::Repository,
    args: &Args,
) -> Result<std::result::Result<(Value, Option<String>), Vec<render::ListRow>>> {
    if args.key.is_none() && store::keys(repo)?.is_empty() {
        return Ok(Ok((Value::Object(Default::default()), None)));
    }
    Ok(match select(repo, args.key.as_deref())? {
        Selection::Found { stored, .. } => {
            let value = serde_json::to_value(stored.brief()?)?;
            Ok((value, Some(stored.key)))
        }
        Selection::Ambiguous(rows) => Err(rows),
    })
}
