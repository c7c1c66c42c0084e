//! `git handoff write [KEY]`: store a brief with the git state filled in,
//! record its history and prepend its narrative entry.

use std::io::IsTerminal;

use anyhow::{Context, Result};
use serde_json::Value;

use crate::cli::commands::checks;
use crate::cli::commands::fields::Composing;
use crate::cli::{Format, Output, editor, report};
use crate::git::compose::{self, GitFacts, Mode};
use crate::write::{self, Failed, Narrated, Outcome, Source};
use crate::{git::repo, store};

/// Write a brief for KEY from flags or JSON, with the git state added
///
/// Takes a partial brief from -F FILE or -F - (stdin) and/or the field
/// flags, fills schema_version, key, timestamp, mode and the git state
/// (branch, worktree, head_sha, diff_summary), validates it, stores it under
/// refs/handoffs/<KEY> (compare-and-swap), adds the version to the history in
/// refs/notes/handoffs and prepends an entry to the narrative log. Prints the
/// resume prompt. An invalid brief writes nothing. The new brief replaces
/// the stored one whole (every earlier version stays in the history): give
/// every field you want kept, or use --update to change only the fields
/// given (a JSON merge patch over the stored brief). Without KEY, a worktree
/// keeps writing under the key it last wrote (its sticky key) and warns when
/// the branch has switched since.
#[derive(Debug, clap::Args)]
#[command(
    mut_arg("done_when", |a| required_first(a, "the check that says it is done")),
    mut_arg("resume_by", |a| required_first(a, "the next step, one sentence")),
    mut_arg("next_check", |a| required_first(a, "the next check to run")),
)]
pub struct Args {
    /// The key, the partial brief (-F and the field flags), the checks.
    #[command(flatten)]
    pub input: Composing,
    /// Take the narrative entry's sections from a markdown FILE (### sections)
    #[arg(long, value_name = "FILE", conflicts_with = "no_narrative")]
    pub narrative: Option<String>,
    /// Add no narrative entry (no file or directory is created); `git config handoff.narrative false` makes it the default
    #[arg(long)]
    pub no_narrative: bool,
    /// Start from the stored brief and apply the input to it as a JSON Merge Patch (RFC 7386: objects merge, a given list replaces, null removes a field); the field flags then apply as usual
    #[arg(long)]
    pub update: bool,
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

/// A flag a new brief needs (unless -F gives its field; `--update` takes
/// it from the stored brief), as `-h` shows it: first, in one clause.
fn required_first(arg: clap::Arg, clause: &str) -> clap::Arg {
    arg.display_order(0).help(format!("Required: {clause}"))
}

/// Build, validate, store and narrate the brief; report it.
pub fn run(args: Args) -> Result<Output> {
    checks::run(args.format, compute(args), output)
}

/// The write, through the write path: its outcome, nothing printed (the
/// MCP server reports it its own way).
pub fn compute(args: Args) -> Result<Outcome, Failed> {
    let interactive = interactive(&args)?;
    let mut single = args.input.single()?;
    single.narrative = narrative(&args)?;
    let repo = repo::open_cwd()?;
    let given = !args.input.fields.is_empty();
    if args.edit || interactive {
        single.edit = Some(Box::new(move |repo, key, value, git| {
            edit_brief(repo, key, if given { value } else { editor::empty() }, git)
        }));
    }
    single.expected = args.expected;
    single.update = args.update;
    let options = args.input.checks.options(!args.no_narrative);
    write::write(&repo, Source::Brief(single), &options)
}

/// Whether to open the editor because nothing was given on a terminal;
/// refused when nothing was given elsewhere.
fn interactive(args: &Args) -> Result<bool> {
    let fields = &args.input.fields;
    let interactive =
        fields.is_empty() && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if fields.is_empty() && !args.edit && !interactive {
        crate::refuse!(
            "nothing to write: give a brief with -F FILE (or -F - for stdin), field flags such as --done-when, --resume-by, --next-check, or --edit"
        );
    }
    Ok(interactive)
}

/// The narrative markdown: from `--narrative FILE`, or given as text.
fn narrative(args: &Args) -> Result<Option<String>> {
    Ok(match &args.narrative {
        None => args.narrative_text.clone(),
        Some(path) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("cannot read narrative file '{path}'"))?,
        ),
    })
}

/// Where the brief and its narrative entry went, and the resume prompt,
/// as text or JSON (with what the checks found).
pub fn output(outcome: &Outcome, format: Format) -> Output {
    let composed = &outcome.briefs[0];
    let stored = outcome.stored.as_ref().expect("a write stores its brief");
    let key = &composed.brief.key;
    let id = stored.ids[0];
    let narrative = stored.narrative.as_ref();
    let prompt = composed.brief.resume_prompt();
    match format {
        Format::Json => report::pretty(&report::Written {
            version: report::Version::new(key, id, composed.previous, stored.history),
            checked: report::Checked::of(&outcome.notes),
            narrative: narrative.map(|n| n.path.clone()),
            narrative_tracked: narrative.map(|n| n.tracked),
            narrative_lines: narrative.map(|n| n.lines),
            tier: key_tier(&composed.brief).0,
            stored: tier(stored.history, narrative.is_some()),
            prompt,
        }),
        Format::Human => Output::human(written_text(
            &composed.brief,
            &id,
            stored.history,
            narrative,
            &prompt,
        )),
    }
}

/// The method's key tier: 1 a key named (on the command line, or chosen
/// so earlier and remembered), 2 the branch's key, 3 `HANDOFF` on a
/// detached HEAD; and its word.
pub fn key_tier(brief: &crate::brief::Brief) -> (u8, &'static str) {
    let branch = &brief.state.branch;
    if branch == "HEAD" && brief.key == crate::brief::keys::DETACHED_KEY {
        (3, "detached")
    } else if crate::brief::keys::from_branch(branch).as_deref() == Some(brief.key.as_str()) {
        (2, "branch")
    } else {
        (1, "named")
    }
}

/// What a write stored, as the confirmation names it: `full`
/// (the brief, its history note and its narrative entry), `brief+history`
/// (no narrative entry), `brief` (no commit yet: the history note waits).
pub fn tier(history: bool, narrative: bool) -> &'static str {
    match (history, narrative) {
        (true, true) => "full",
        (true, false) => "brief+history",
        (false, true) => "brief+narrative",
        (false, false) => "brief",
    }
}

/// Which key a write chose and why, in plain words: the key named, the
/// branch's, or `HANDOFF` on a detached HEAD.
pub fn key_reason(brief: &crate::brief::Brief) -> String {
    match key_tier(brief).0 {
        3 => "key for a detached HEAD".to_string(),
        2 => format!("key of branch '{}'", brief.state.branch),
        _ => "the key you named".to_string(),
    }
}

/// What `write` prints for a stored brief: where it went, which key was
/// chosen and why (and, before a first commit, that its history waits),
/// the narrative entry and how many lines it prepended (and, while git
/// neither tracks nor ignores the narrative file, to commit it), then the
/// resume prompt.
fn written_text(
    brief: &crate::brief::Brief,
    id: &gix::ObjectId,
    history: bool,
    narrative: Option<&Narrated>,
    prompt: &str,
) -> String {
    let narrated = match narrative {
        None => "; no narrative entry".to_string(),
        Some(n) if n.amended => format!(
            "; this session's narrative entry in {}, not committed yet, amended",
            n.path
        ),
        Some(n) if n.tracked || n.ignored => format!(
            "; narrative entry added to {} ({} lines prepended)",
            n.path, n.lines
        ),
        Some(Narrated {
            path: rel, lines, ..
        }) => format!(
            "; narrative entry added to {rel} ({lines} lines prepended).\n{rel} is not tracked yet: commit it with your work (`git add {rel}`)"
        ),
    };
    let key = &brief.key;
    let waits = if history {
        ""
    } else {
        "; no history note: the branch has no commit yet"
    };
    format!(
        "Wrote brief '{key}' ({}, version {}, {}{waits}){narrated}.\n\n{prompt}\n",
        store::ref_name(key),
        store::short(id),
        key_reason(brief),
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
