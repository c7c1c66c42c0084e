//! `git handoff write [KEY]`: store a brief with the git state filled in,
//! record its history and prepend its narrative entry.

use std::io::IsTerminal;

use anyhow::{Context, Result};
use serde_json::Value;

use crate::cli::commands::checks::{CheckArgs, Checks};
use crate::cli::commands::fields::{FieldArgs, KeyArgs};
use crate::cli::commands::{choose_key, remember};
use crate::cli::{Format, Output, editor, render, report};
use crate::git::compose::{self, GitFacts, Mode};
use crate::{git::repo, narrative, store};

/// Write a brief for KEY from JSON and flags, with the git state filled in
///
/// Takes a partial brief from -F FILE or -F - (stdin) and/or the field
/// flags, fills schema_version, key, timestamp, mode and the git state
/// (branch, worktree, head_sha, diff_summary), validates it, stores it under
/// refs/handoffs/<KEY> (compare-and-swap), adds the version to the history in
/// refs/notes/handoffs and prepends an entry to the narrative log. Prints the
/// resume prompt. An invalid brief writes nothing. Without KEY, a worktree
/// keeps writing under the key it last wrote (its sticky key) and warns when
/// the branch has switched since.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub target: KeyArgs,
    /// The partial brief: -F and the field flags.
    #[command(flatten)]
    pub fields: FieldArgs,
    #[command(flatten)]
    pub checks: CheckArgs,
    /// Take the narrative entry's sections from a markdown FILE (### sections)
    #[arg(long, value_name = "FILE", conflicts_with = "no_narrative")]
    pub narrative: Option<String>,
    /// Add no narrative entry (no file or directory is created); `git config handoff.narrative false` makes it the default
    #[arg(long)]
    pub no_narrative: bool,
    /// Edit the brief in your editor (the default with no input on a terminal)
    #[arg(short = 'e', long)]
    pub edit: bool,
    /// Print the result as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
    /// The narrative markdown given as text in place of --narrative FILE
    /// (the MCP server's `narrative` argument).
    #[arg(skip)]
    pub narrative_text: Option<String>,
    /// The version the caller checked before asking for this write (`draft
    /// --write` and the hooks: `None` inside for no brief); the write
    /// replaces exactly that one or fails with a conflict.
    #[arg(skip)]
    pub expected: Option<Option<gix::ObjectId>>,
}

/// Build, validate, store and narrate the brief; report it.
pub fn run(args: Args) -> Result<Output> {
    let format = args.format;
    Ok(write(args)?.output(format))
}

/// [`run`] reported as text and as JSON (for the MCP server, which
/// answers with both).
pub fn both(args: Args) -> Result<(Output, Output)> {
    let stored = write(args)?;
    Ok((stored.output(Format::Human), stored.output(Format::Json)))
}

/// Build, validate, store and narrate the brief.
fn write(args: Args) -> Result<Stored> {
    let (mut value, narrative_md, interactive) = input(&args)?;
    let repo = repo::open_cwd()?;
    let checks = Checks::new(&repo, &args.checks);
    checks.redact_value(&mut value);
    let narrative_md = narrative_md.map(|md| checks.redact_text(&md));
    let git = GitFacts::read(&repo)?;
    let choice = choose_key(
        &repo,
        &git.head,
        args.target.key.as_deref(),
        &value,
        args.target.key_from_branch,
        "write",
    )?;
    let key = choice.key.clone();
    if args.edit || interactive {
        let given = if args.fields.is_empty() {
            editor::empty()
        } else {
            value
        };
        value = edit_brief(&repo, &key, given, &git)?;
    }
    // Compare-and-swap base: the version that exists as the write begins,
    // or the one the caller checked.
    let expected = match args.expected {
        Some(checked) => checked,
        None => store::current_id(&repo, &key)?,
    };
    let brief = composed(&key, expected.is_some(), value, &git)?;
    // What git recorded (the branch name, the diff summary) goes through
    // the same filter as what was given, before the brief and its
    // narrative entry are written.
    let brief = checks.redact_brief(brief);
    checks.lint(&repo, &brief)?;
    let pending = if args.no_narrative || narrative::disabled(&repo) {
        None
    } else {
        let entry = NarrativeEntry {
            key: &key,
            brief: &brief,
            expected,
            markdown: narrative_md.as_deref(),
        };
        Some(entry.prepare(&repo, &git.worktree.root, &checks)?)
    };
    let written = store::write(
        &repo,
        &[store::Update {
            expected,
            brief: brief.clone(),
        }],
        &format!("handoff: write {key}"),
    )?;
    let narrative_file = pending.map(narrative::Pending::commit).transpose()?;
    checks.report();
    if choice.remember {
        remember(&repo, &key, &git.head);
    }
    if !written.history {
        eprintln!(
            "note: no commit on '{}' yet; the brief is stored but its history note is skipped until the first commit",
            git.head.branch_label()
        );
    }
    let narrative = narrative_file.map(|file| {
        file.strip_prefix(&git.worktree.root)
            .unwrap_or(&file)
            .to_string_lossy()
            .replace(std::path::MAIN_SEPARATOR, "/")
    });
    Ok(Stored {
        tracked: narrative
            .as_deref()
            .is_none_or(|rel| narrative::tracked(&repo, rel)),
        narrative,
        key,
        id: written.ids[0].1,
        previous: expected,
        history: written.history,
        prompt: brief.resume_prompt(),
    })
}

/// The partial brief (JSON and field flags), the narrative markdown, and
/// whether to open the editor because nothing was given on a terminal.
fn input(args: &Args) -> Result<(Value, Option<String>, bool)> {
    let interactive =
        args.fields.is_empty() && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if args.fields.is_empty() && !args.edit && !interactive {
        crate::refuse!(
            "nothing to write: give a brief with -F FILE (or -F - for stdin), field flags such as --done-when, --resume-by, --next-check, or --edit"
        );
    }
    let mut value = args.fields.input()?;
    let narrative_md = match &args.narrative {
        None if args.narrative_text.is_some() => args.narrative_text.clone(),
        Some(path) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("cannot read narrative file '{path}'"))?,
        ),
        None => None,
    };
    args.fields.apply(&mut value)?;
    Ok((value, narrative_md, interactive))
}

/// The brief composed from `value` and the git facts, or the reasons it is
/// invalid on stderr and an error saying how to go on.
fn composed(key: &str, stored: bool, value: Value, git: &GitFacts) -> Result<crate::brief::Brief> {
    compose::compose(value, key, Mode::Write, git).map_err(|issues| {
        eprint!("{}", render::invalid(&issues));
        anyhow::Error::new(Invalid {
            key: key.to_string(),
            stored,
            issues,
        })
    })
}

/// The composed brief is invalid: nothing was written. A refusal (exit 1);
/// the MCP server answers with its issues.
#[derive(Debug, thiserror::Error)]
#[error("{}", invalid_message(.key, *.stored))]
pub struct Invalid {
    /// The key written.
    pub key: String,
    /// Whether a brief is stored under it (then `recover` is the way to
    /// change some fields).
    pub stored: bool,
    /// Every schema error.
    pub issues: Vec<crate::brief::Issue>,
}

fn invalid_message(key: &str, stored: bool) -> String {
    if stored {
        format!(
            "brief '{key}' is invalid; nothing was written. `write` replaces the whole brief: to change some fields of the stored one, use `git handoff recover {key}` with the same flags (it starts from the stored brief) or `git handoff write --edit`"
        )
    } else {
        format!(
            "brief '{key}' is invalid; nothing was written (`git handoff schema` prints the schema)"
        )
    }
}

/// The narrative entry of a write, before it is locked into place.
struct NarrativeEntry<'a> {
    key: &'a str,
    brief: &'a crate::brief::Brief,
    expected: Option<gix::ObjectId>,
    markdown: Option<&'a str>,
}

impl NarrativeEntry<'_> {
    /// Lock the narrative first so that a stored brief always gets its
    /// entry: the entry, with the commits since this key's previous entry
    /// ("what was done"), staged under the narrative's lock file.
    fn prepare(
        &self,
        repo: &gix::Repository,
        root: &std::path::Path,
        checks: &Checks,
    ) -> Result<narrative::Pending> {
        let narrative_path = narrative::path(repo, root)?;
        // The version this write replaces, as read when it began.
        let previous_head = match self.expected {
            Some(id) => store::load(repo, &store::ref_name(self.key), self.key, id)
                .ok()
                .and_then(|stored| stored.brief().ok())
                .and_then(|b| b.state.head_sha),
            None => None,
        };
        let commits = narrative::Commits::since(repo, previous_head.as_deref());
        let mut entry = narrative::entry_from_brief(self.brief, None, &commits);
        if let Some(md) = self.markdown {
            narrative::apply_markdown(&mut entry, md)?;
        }
        // The entry holds commit subjects too: it passes the filter as a whole.
        narrative::Pending::prepare(
            &narrative_path,
            &checks.redact_text(&entry.render()),
            narrative::lock_wait(repo),
        )
    }
}

/// A stored brief, as `write` reports it.
struct Stored {
    key: String,
    id: gix::ObjectId,
    previous: Option<gix::ObjectId>,
    history: bool,
    /// The narrative file, relative to the worktree root; `None` without
    /// an entry.
    narrative: Option<String>,
    /// Whether git tracks the narrative file (true without one).
    tracked: bool,
    prompt: String,
}

impl Stored {
    /// Where the brief and its narrative entry went, and the resume prompt,
    /// as text or JSON.
    fn output(&self, format: Format) -> Output {
        match format {
            Format::Json => report::pretty(&report::Written {
                version: report::Version::new(&self.key, self.id, self.previous, self.history),
                narrative: self.narrative.clone(),
                narrative_tracked: self.narrative.as_ref().map(|_| self.tracked),
                prompt: self.prompt.clone(),
            }),
            Format::Human => Output::human(written_text(
                &self.key,
                &self.id,
                self.narrative.as_deref(),
                self.tracked,
                &self.prompt,
            )),
        }
    }
}

/// What `write` prints for a stored brief: where it went, the narrative
/// entry (and, while git does not track the narrative file, to commit it),
/// then the resume prompt.
fn written_text(
    key: &str,
    id: &gix::ObjectId,
    narrative: Option<&str>,
    tracked: bool,
    prompt: &str,
) -> String {
    let narrated = match (narrative, tracked) {
        (None, _) => "; no narrative entry".to_string(),
        (Some(rel), true) => format!("; narrative entry added to {rel}"),
        (Some(rel), false) => format!(
            "; narrative entry added to {rel}.\n{rel} is not tracked yet: commit it with your work (`git add {rel}`)"
        ),
    };
    format!(
        "Wrote brief '{key}' ({}, version {}){narrated}.\n\n{prompt}\n",
        store::ref_name(key),
        store::short(id),
    )
}

/// The editor flow: a template prefilled with the stored brief for `key`
/// (and any input given), edited until it composes into a valid brief. An
/// empty file aborts. The file lives in the worktree's git dir.
fn edit_brief(repo: &gix::Repository, key: &str, input: Value, git: &GitFacts) -> Result<Value> {
    let mut start = match store::read(repo, key)? {
        Some(stored) => serde_json::from_slice(&stored.data).unwrap_or_else(|_| editor::empty()),
        None => editor::empty(),
    };
    compose::merge(&mut start, input, compose::Lists::Replace);
    let has_content = start.as_object().is_some_and(|m| !m.is_empty());
    let path = repo.git_dir().join("HANDOFF_EDITBRIEF.json");
    let command = editor::editor(repo);
    let mut text = editor::template(key, has_content.then_some(&start), &[]);
    loop {
        crate::support::atomic::write(&path, text.as_bytes())?;
        let edited = editor::edit(&command, &path).and_then(|()| {
            std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))
        });
        let saved = match edited {
            Ok(saved) => saved,
            Err(e) => {
                let _ = std::fs::remove_file(&path);
                return Err(e);
            }
        };
        if saved == text && has_content && text == editor::template(key, Some(&start), &[]) {
            let _ = std::fs::remove_file(&path);
            crate::refuse!("the brief was not changed; nothing was written");
        }
        let Some(body) = editor::strip_comments(&saved) else {
            let _ = std::fs::remove_file(&path);
            crate::refuse!("the brief is empty; aborted, nothing was written");
        };
        let errors = match editor::parse(&body) {
            Err(e) => vec![e],
            Ok(value) => match compose::compose(value.clone(), key, Mode::Write, git) {
                Ok(_) => {
                    let _ = std::fs::remove_file(&path);
                    return Ok(value);
                }
                Err(issues) => issues
                    .iter()
                    .map(|i| format!("{}: {}", i.path, i.message.replace('\n', " ")))
                    .collect(),
            },
        };
        text = editor::with_errors(&errors, &body);
    }
}
