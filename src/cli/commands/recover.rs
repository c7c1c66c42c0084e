//! `git handoff recover [KEY]`: rebuild a brief from the stored one plus
//! the current git state, without a narrative entry.

use anyhow::{Result, bail};
use serde_json::{Map, Value};

use crate::brief::{self, Issue};
use crate::cli::commands::checks::{CheckArgs, Checks};
use crate::cli::commands::fields::{FieldArgs, KeyArgs};
use crate::cli::commands::{choose_key, remember};
use crate::cli::{Format, Output, render, report};
use crate::git::compose::{self, GitFacts, Lists, Mode};
use crate::{git::repo, store};

/// Rebuild the brief for KEY from the stored one and the current git state
///
/// For a session whose context has degraded: starts from the stored brief
/// (if any), applies the -F input (its fields replace the stored ones) and
/// the field flags (scalars replace, lists append), records the git state
/// now (branch, worktree, head_sha, diff_summary), sets the timestamp to now
/// and the mode to RECOVER, validates, and stores it (compare-and-swap) with
/// its history note. The narrative log is not touched: recovery re-assembles,
/// it decides nothing new. Prints the resume prompt. The key is chosen as
/// for `write`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub target: KeyArgs,
    /// Corrections and additions: -F and the field flags.
    #[command(flatten)]
    pub fields: FieldArgs,
    #[command(flatten)]
    pub checks: CheckArgs,
    /// Also correct it from the session's transcript, as `draft` reads it: its tests replace the stored results of the same command; its commands, files, decisions, rejected paths and last error are added; its goal fills only what is missing (=TRANSCRIPT, default: the newest of this directory's sessions)
    #[arg(long, value_name = "TRANSCRIPT", num_args = 0..=1, require_equals = true)]
    pub from_transcript: Option<Option<std::path::PathBuf>>,
    /// Print the result as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// Rebuild, validate and store the brief; report it.
pub fn run(args: Args) -> Result<Output> {
    let format = args.format;
    Ok(recover(args)?.output(format))
}

/// [`run`] reported as text and as JSON (for the MCP server, which
/// answers with both).
pub fn both(args: Args) -> Result<(Output, Output)> {
    let recovered = recover(args)?;
    Ok((
        recovered.output(Format::Human),
        recovered.output(Format::Json),
    ))
}

/// A recovered brief, as `recover` reports it.
struct Recovered {
    key: String,
    id: gix::ObjectId,
    previous: Option<gix::ObjectId>,
    history: bool,
    mode: String,
    prompt: String,
}

impl Recovered {
    /// Where the brief went and what it started from, as text or JSON.
    fn output(&self, format: Format) -> Output {
        match format {
            Format::Json => report::pretty(&report::Recovered {
                version: report::Version::new(&self.key, self.id, self.previous, self.history),
                mode: &self.mode,
                prompt: &self.prompt,
            }),
            Format::Human => Output::human(recovered_text(
                &self.key,
                &self.id,
                self.previous.as_ref(),
                &self.prompt,
            )),
        }
    }
}

/// Rebuild, validate and store the brief.
fn recover(args: Args) -> Result<Recovered> {
    let input = args.fields.input()?;
    let repo = repo::open_cwd()?;
    let git = GitFacts::read(&repo)?;
    let choice = choose_key(
        &repo,
        &git.head,
        args.target.key.as_deref(),
        &input,
        args.target.key_from_branch,
        "recover",
    )?;
    let key = choice.key.clone();

    // The stored version is both the base and the compare-and-swap value.
    let stored = store::read(&repo, &key)?;
    let mut value = match &stored {
        Some(s) => match brief::parse_json(&s.data) {
            Ok(Value::Object(map)) => Value::Object(map),
            _ => bail!(
                "brief '{key}' ({}) is not a JSON object, so recover cannot start from it; give the whole brief with `git handoff recover {key} -F FILE`, or `git handoff drop {key}` first",
                store::short(&s.id)
            ),
        },
        None => Value::Object(Map::new()),
    };
    if let Some(transcript) = &args.from_transcript {
        crate::cli::commands::draft::ground(&repo, &mut value, transcript.as_deref())?;
    }
    compose::merge(&mut value, input, Lists::Replace);
    args.fields.apply(&mut value)?;
    let checks = Checks::new(&repo, &args.checks);
    checks.redact_value(&mut value);

    let brief = match compose::compose(value, &key, Mode::Recover, &git) {
        Ok(brief) => brief,
        Err(issues) => {
            eprint!("{}", render::invalid(&issues));
            let missing = missing_fields(&issues);
            match (&stored, missing.is_empty()) {
                (None, false) => crate::refuse!(
                    "no stored brief for '{key}', and the fields given leave {} missing; nothing was written (give them with -F or flags such as --done-when, --resume-by, --next-check)",
                    missing.join(", ")
                ),
                _ => crate::refuse!(
                    "the recovered brief '{key}' is invalid; nothing was written (correct the fields listed above with -F or flags)"
                ),
            }
        }
    };
    let brief = checks.redact_brief(brief);
    checks.lint(&repo, &brief)?;
    let expected = stored.as_ref().map(|s| s.id);
    let written = store::write(
        &repo,
        &[store::Update {
            expected,
            brief: brief.clone(),
        }],
        &format!("handoff: recover {key}"),
    )?;
    checks.report();
    if choice.remember {
        remember(&repo, &key, &git.head);
    }
    let id = written.ids[0].1;
    if !written.history {
        eprintln!(
            "note: no commit on '{}' yet; the brief is stored but its history note is skipped until the first commit",
            git.head.branch_label()
        );
    }
    Ok(Recovered {
        prompt: brief.resume_prompt(),
        mode: brief.mode,
        key,
        id,
        previous: expected,
        history: written.history,
    })
}

/// What `recover` prints for a stored brief: where it went and what it
/// started from, then the resume prompt.
fn recovered_text(
    key: &str,
    id: &gix::ObjectId,
    previous: Option<&gix::ObjectId>,
    prompt: &str,
) -> String {
    let from = match previous {
        Some(old) => format!("from version {} and", store::short(old)),
        None => "from".to_string(),
    };
    format!(
        "Recovered brief '{key}' ({}, version {}) {from} the current git state; the narrative is untouched.\n\n{prompt}\n",
        store::ref_name(key),
        store::short(id),
    )
}

/// The required fields the schema reports missing, as `resume.done_when`.
fn missing_fields(issues: &[Issue]) -> Vec<String> {
    issues
        .iter()
        .filter_map(|i| {
            let name = i.message.strip_suffix(" is a required property")?;
            let name = name.trim_matches('"');
            Some(if i.path == "(root)" {
                name.to_string()
            } else {
                format!("{}.{name}", i.path)
            })
        })
        .collect()
}
