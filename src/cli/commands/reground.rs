//! `git handoff reground [KEY]`: compact re-injection of the goal.

use anyhow::Result;

use crate::brief::Brief;
use crate::cli::commands::{
    BriefSource, Selection, ambiguous_both, read_input, refuse_ambiguous, select,
};
use crate::cli::render::ListRow;
use crate::cli::{Format, Output, render, report};
use crate::git::repo;

/// Print the goal, the first five decisions, the files to keep in view
///
/// Compact and read-only, with no warnings: for re-grounding a long
/// session in what it is for. The user's preferences and feedback
/// (state.preferences) follow the decisions when the brief has any. With -F, from a brief file (a file-based
/// handoff's JSON) instead of a stored brief.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The stored brief (KEY) or a brief file (-F).
    #[command(flatten)]
    pub source: BriefSource,
    /// Print the brief's goal fields as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// Select and render.
pub fn run(args: Args) -> Result<Output> {
    Ok(match compute(&args)? {
        Ok((brief, _)) => reground_output(&brief, args.format),
        Err(rows) => refuse_ambiguous(&rows, "reground", args.format),
    })
}

/// A brief to reground and its version id (none for a file).
type Found = (Brief, Option<gix::ObjectId>);

/// The brief to reground; `Err` holds the listing of an ambiguous keyless
/// selection.
fn compute(args: &Args) -> Result<std::result::Result<Found, Vec<ListRow>>> {
    Ok(Ok(match &args.source.file {
        Some(source) => (Brief::from_slice(&read_input(source)?).map_err(|e| {
            crate::refusal!(
                "'{source}' is not a valid brief: {e}; `git handoff validate {}` lists every problem",
                crate::support::escape::shell_quote(source)
            )
        })?, None),
        None => {
            let repo = repo::open_cwd_for_reading()?;
            render::remember(&repo);
            match select(&repo, args.source.key.as_deref())? {
                // A stored brief (a teammate's too) passes today's rules
                // once more before it is printed, as resume's does.
                Selection::Found { stored, .. } => (
                    crate::cli::commands::for_model(&repo, &stored.brief()?),
                    Some(stored.id),
                ),
                Selection::Ambiguous(rows) => return Ok(Err(rows)),
            }
        }
    }))
}

/// The reground for a model (the MCP `reground` result): the text in the
/// marked block that says where the brief came from, after the brief
/// passed the redaction rules once more; the JSON as `--json` prints it.
pub fn for_model(args: Args) -> Result<(Output, Output)> {
    let (brief, id) = match compute(&args)? {
        Ok(found) => found,
        Err(rows) => return Ok(ambiguous_both(&rows, "reground")),
    };
    let repo = repo::open_cwd_for_reading()?;
    let brief = crate::cli::commands::for_model(&repo, &brief);
    let provenance = crate::cli::commands::Provenance::of(&repo, id, &brief);
    let from = provenance.source(&brief);
    let text = render::fenced(&from, render::reground_text(&brief).as_str());
    Ok((Output::human(text), reground_output(&brief, Format::Json)))
}

/// The reground of `brief` in `format`.
pub fn reground_output(brief: &Brief, format: Format) -> Output {
    match format {
        Format::Json => report::pretty(&report::Reground::of(brief)),
        Format::Human => Output::human(render::reground_text(brief)),
    }
}
