//! `git handoff resume [KEY]`: render a brief with drift warnings.

use anyhow::Result;

use crate::cli::commands::{Selection, adopt, refuse_ambiguous, select};
use crate::cli::{Format, Output, render, report};
use crate::drift::{self, Depth};
use crate::support::clock;

/// Show a brief with what has drifted since it was written
///
/// Warnings come first, each on a line starting `!! `: REPO MISMATCH (another
/// project: nothing else is printed, exit 1), BRANCH MISMATCH (naming the
/// worktree that has the brief's branch checked out), STALE (older
/// than GIT_HANDOFF_STALE_HOURS, else handoff.staleHours, else 24 hours),
/// MISSING (a file to read first is gone), CHANGED (commits since touched a
/// file to read first), DIRTY (uncommitted changes now, none then). Drift is
/// measured on the brief's own branch: HEAD when on it, else that branch's
/// tip, else its remote-tracking branch, else HEAD. Without
/// KEY: this session's key (the one a keyless write targets), else the
/// current branch's brief; if neither has one, the only brief; if several
/// exist, they are listed and nothing is guessed (exit 1). The resumed key
/// becomes this worktree's sticky key: a later keyless write continues it.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The brief's key (default: this session's key, else the current branch's); KEY@REMOTE for a remote's version, KEY@{N} for an earlier one
    pub key: Option<String>,
    /// Print one JSON object: the brief, structured warnings, commit drift
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// What resume computed for one brief: it, its drift and the other keys.
struct Resumed {
    id: gix::ObjectId,
    brief: crate::brief::Brief,
    report: drift::Report,
    others: Vec<String>,
}

/// Select and compute drift once; `Err` holds the listing of an ambiguous
/// keyless selection. A resumed key becomes the worktree's sticky key.
fn compute(args: &Args) -> Result<std::result::Result<Resumed, Vec<render::ListRow>>> {
    let repo = crate::cli::staged::open_for_reading()?;
    render::remember(&repo);
    let (stored, others) = match select(&repo, args.key.as_deref())? {
        Selection::Found { stored, others } => (stored, others),
        Selection::Ambiguous(rows) => return Ok(Err(rows)),
    };
    let brief = stored.brief()?;
    let now = clock::now().map_err(crate::refused)?;
    let report = drift::report(
        &repo,
        &brief,
        Some(stored.id),
        now,
        Depth::Full,
        crate::cli::commands::init::drift_narrative(&repo).as_ref(),
    )?;
    if !report.is_mismatch() {
        adopt(&repo, &brief.key, args.key.is_some(), &brief.state.branch);
    }
    // What is printed passes today's redaction rules once more, whoever
    // wrote it: a teammate's brief fetched as it was pushed (plain git
    // included) is read by people and by the agents that run this command.
    Ok(Ok(Resumed {
        id: stored.id,
        brief: crate::cli::commands::for_model(&repo, &brief),
        report,
        others,
    }))
}

impl Resumed {
    /// 1 for another project's brief, else 0.
    fn code(&self) -> u8 {
        u8::from(self.report.is_mismatch())
    }

    /// The `--json` report.
    fn report(&self) -> report::Resumed<'_> {
        let report = &self.report;
        let (commits_since, in_history) = match &report.commits {
            drift::Commits::Since { count, .. } => (Some(*count), Some(true)),
            drift::Commits::NotInHistory { .. } => (None, Some(false)),
            drift::Commits::Unknown => (None, None),
        };
        report::Resumed {
            key: &self.brief.key,
            id: self.id.to_string(),
            resumed: !report.is_mismatch(),
            origin: &report.origin,
            warnings: &report.warnings,
            commits_since,
            commits_only_narrative: matches!(
                report.commits,
                drift::Commits::Since {
                    only_narrative: true,
                    ..
                }
            ),
            commits_narrative: match report.commits {
                drift::Commits::Since { narrative, .. } => narrative,
                _ => 0,
            },
            recent_commits: match &report.commits {
                drift::Commits::Since { recent, .. } => recent,
                _ => &[],
            },
            in_history,
            changed_files: report
                .warnings
                .iter()
                .filter(|w| matches!(w, drift::Warning::Changed { .. }))
                .collect(),
            moved_ranges: &report.moved,
            recheck: render::recheck(&self.brief, report),
            unchecked_paths: &report.unchecked,
            measured_on: &report.measured_on,
            worktree: &report.worktree,
            other_keys: &self.others,
            prompt: self.brief.continue_prompt(),
            auto: (self.brief.mode == crate::agent::draft::MODE).then_some(render::AUTO_NOTE),
            auto_over: report.auto_over.as_ref().map(|(id, _)| id.clone()),
            brief: &self.brief,
        }
    }

    /// The answer in `format`.
    fn output(&self, format: Format) -> Output {
        match format {
            Format::Json => report::pretty(&self.report()),
            Format::Human => {
                Output::human(render::resume_text(&self.brief, &self.report, &self.others))
            }
        }
        .with_code(self.code())
    }
}

/// What a keyless `resume` prints, for the overview to show when a brief
/// waits for this branch (or this session): `None` when it is another
/// project's. As with `resume`, it becomes this worktree's sticky key.
pub fn keyless_text() -> Result<Option<crate::cli::Doc>> {
    let args = Args {
        key: None,
        format: Format::Human,
    };
    Ok(match compute(&args)? {
        Ok(resumed) if resumed.code() == 0 => Some(render::resume_text(
            &resumed.brief,
            &resumed.report,
            &resumed.others,
        )),
        _ => None,
    })
}

/// Select, compute drift, render.
pub fn run(args: Args) -> Result<Output> {
    Ok(match compute(&args)? {
        Err(rows) => refuse_ambiguous(&rows, "resume", args.format),
        Ok(resumed) => resumed.output(args.format),
    })
}

/// The MCP `resume` result, for a model: the text (the drift warnings
/// first, then the brief in the marked block that says where it came
/// from) and the structured value that carries that text once, with the
/// brief itself only when `include_brief` asks. The brief passes the
/// redaction rules of today once more before either is made.
pub fn for_model(args: Args, include_brief: bool) -> Result<(Output, serde_json::Value)> {
    let resumed = match compute(&args)? {
        Err(rows) => {
            let (text, json) = crate::cli::commands::ambiguous_both(&rows, "resume");
            let mut value: serde_json::Value = serde_json::from_str(&json.raw())?;
            value["text"] = text.plain().into();
            return Ok((text, value));
        }
        Ok(resumed) => resumed,
    };
    let repo = crate::git::repo::open_cwd_for_reading()?;
    let brief = resumed.brief.clone();
    let provenance = crate::cli::commands::Provenance::of(&repo, Some(resumed.id), &brief);
    let from = provenance.source(&brief);
    let text = render::resume_for_model(&brief, &resumed.report, &resumed.others, &from);
    let value = serde_json::to_value(report::ResumedForModel {
        key: &brief.key,
        id: resumed.id.to_string(),
        resumed: !resumed.report.is_mismatch(),
        text: text.clone(),
        brief: include_brief.then_some(&brief),
    })?;
    Ok((Output::human(text).with_code(resumed.code()), value))
}
