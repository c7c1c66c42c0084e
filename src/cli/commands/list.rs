//! `git handoff list`: the inventory of stored briefs.

use anyhow::Result;

use crate::cli::inventory::{rows, rows_of};
use crate::cli::render::{self, ListRow};
use crate::cli::{Format, Output};
use crate::{store, support::clock};

/// List the stored briefs: key, age, branch, head, done-when
///
/// `*` marks the brief a keyless `resume` reads (this session's key, else
/// the current branch's). --archived lists the briefs `prune`
/// moved to refs/handoff-archive/ instead (`restore KEY` brings one back).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// List the archived briefs instead
    #[arg(long)]
    pub archived: bool,
    /// Print a JSON array instead of text
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// Compute the rows and render them.
pub fn run(args: Args) -> Result<Output> {
    let rows = compute(&args)?;
    Ok(output(&rows, &args, args.format))
}

/// The rows as text and as JSON from one reading (for the MCP server).
pub fn both(args: Args) -> Result<(Output, Output)> {
    let listed = compute(&args)?;
    Ok((
        output(&listed, &args, Format::Human),
        output(&listed, &args, Format::Json),
    ))
}

/// The rows `args` asks for (the stored briefs, or the archived ones) and,
/// when there are none, a remote whose briefs were never fetched.
struct Listed {
    rows: Vec<ListRow>,
    unfetched: Option<String>,
}

/// The rows `args` asks for: the stored briefs, or the archived ones.
fn compute(args: &Args) -> Result<Listed> {
    let repo = crate::cli::staged::open_for_reading()?;
    render::remember(&repo);
    let now = clock::now().map_err(crate::refused)?;
    if args.archived {
        return Ok(Listed {
            rows: rows_of(
                store::list_archived(&repo)?,
                None,
                now,
                crate::brief::redact::Options::from_repo(&repo),
            ),
            unfetched: None,
        });
    }
    let rows = rows(&repo, now)?;
    let unfetched = if rows.is_empty() {
        store::remotes::never_fetched(&repo)?.into_iter().next()
    } else {
        None
    };
    Ok(Listed { rows, unfetched })
}

/// The rows in `format`.
fn output(listed: &Listed, args: &Args, format: Format) -> Output {
    Output::report(format, &listed.rows, |rows| {
        if args.archived && rows.is_empty() {
            "No archived briefs; `git handoff prune` archives briefs not written for 30 days.\n"
                .into()
        } else if let (true, Some(remote)) = (rows.is_empty(), &listed.unfetched) {
            format!(
                "No briefs here yet; the team's briefs on '{remote}' were never fetched: `git handoff fetch` brings them (`git handoff write` creates one).\n"
            )
            .into()
        } else {
            render::list_text(rows, render::line_width())
        }
    })
}
