//! `git handoff recover [KEY]`: rebuild a brief from the stored one plus
//! the current git state, without a narrative entry.

use anyhow::Result;

use crate::cli::commands::checks;
use crate::cli::commands::fields::Composing;
use crate::cli::{Format, Output, report};
use crate::write::{self, Failed, Outcome, Source};
use crate::{git::repo, store};

/// Rebuild KEY's brief from the stored one and the current git state
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
    /// The key, the corrections and additions (-F and the field flags),
    /// the checks.
    #[command(flatten)]
    pub input: Composing,
    /// Also correct it from the session's transcript, as `draft` reads it: its tests replace the stored results of the same command; its commands, files, decisions, rejected paths and last error are added; its goal fills only what is missing (=TRANSCRIPT, default: the newest of this directory's sessions)
    #[arg(long, value_name = "TRANSCRIPT", num_args = 0..=1, require_equals = true)]
    pub from_transcript: Option<Option<std::path::PathBuf>>,
    /// Write nothing: print what to re-read before rebuilding — the latest 3 narrative entries, `git log --oneline -20` and `git diff HEAD` (200 lines at most), redacted
    #[arg(long, conflicts_with = "from_transcript")]
    pub show: bool,
    /// Print the result as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// Rebuild, validate and store the brief; report it. With `--show`, only
/// what to re-read first.
pub fn run(args: Args) -> Result<Output> {
    if args.show {
        return show(&args);
    }
    checks::run(args.format, compute(args), output)
}

/// `recover --show`: the narrative's latest entries, the recent commits
/// and the diff, for the key `recover` would rebuild; nothing is written.
fn show(args: &Args) -> Result<Output> {
    let repo = repo::open_cwd_for_reading()?;
    let head = repo::head_state(&repo)?;
    let target = &args.input.target;
    let key = crate::git::sticky::choose(
        &repo,
        &head,
        target.key.as_deref(),
        target.key_from_branch,
        "recover",
    )?
    .key;
    let found = crate::write::reread::reread(&repo)?;
    Ok(match args.format {
        Format::Json => report::pretty(&report::Reread::new(&key, &found)),
        Format::Human => Output::human(crate::cli::render::reread_text(&key, &found)),
    })
}

/// The recovery, through the write path: its outcome, nothing printed (the
/// MCP server reports it its own way).
pub fn compute(args: Args) -> Result<Outcome, Failed> {
    let mut single = args.input.single()?;
    if let Some(transcript) = args.from_transcript {
        single.ground = Some(Box::new(move |repo, value| {
            crate::cli::commands::draft::ground(repo, value, transcript.as_deref())
        }));
    }
    let repo = repo::open_cwd()?;
    let options = args.input.checks.options(false);
    write::write(&repo, Source::Corrections(single), &options)
}

/// Where the brief went and what it started from, as text or JSON (with
/// what the checks found).
pub fn output(outcome: &Outcome, format: Format) -> Output {
    let composed = &outcome.briefs[0];
    let stored = outcome
        .stored
        .as_ref()
        .expect("a recovery stores its brief");
    let brief = &composed.brief;
    let id = stored.ids[0];
    let prompt = brief.resume_prompt();
    match format {
        Format::Json => report::pretty(&report::Recovered {
            version: report::Version::new(&brief.key, id, composed.previous, stored.history),
            checked: report::Checked::of(&outcome.notes),
            mode: &brief.mode,
            prompt: &prompt,
        }),
        Format::Human => Output::human(recovered_text(
            &brief.key,
            &id,
            composed.previous.as_ref(),
            &prompt,
        )),
    }
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
        "Recovered brief '{key}' ({}, version {}) {from} the current git state; the narrative is untouched.\n\n{prompt}\n\nNext: start clean — `/clear` (or a new session), then `git handoff resume {}` — rather than going on in this context.\n",
        store::ref_name(key),
        store::short(id),
        crate::support::escape::shell_quote(key),
    )
}
