//! `git handoff prune`: archive briefs not written for a while, delete old
//! archived ones — in one ref transaction; the history notes stay.

use anyhow::Result;

use crate::cli::{Format, Output, report};
use crate::store::retention::{self, Action, Row};
use crate::store::{self, StoreError};
use crate::{git::repo, support::clock};

/// Archive briefs not written for a while; delete old archived ones
///
/// Briefs written longer ago than --archive-after move to
/// refs/handoff-archive/<key> (`list --archived` shows them, `restore KEY`
/// brings one back); archived briefs written longer ago than
/// --delete-after are deleted. All in one ref transaction with
/// compare-and-swap; refs/notes/handoffs keeps every version.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Archive briefs written longer ago than this (days: 30d, 4w, 30)
    #[arg(long, value_name = "AGE", default_value = "30d", value_parser = crate::support::clock::parse_days)]
    pub archive_after: i64,
    /// Delete archived briefs written longer ago than this
    #[arg(long, value_name = "AGE", default_value = "90d", value_parser = crate::support::clock::parse_days)]
    pub delete_after: i64,
    /// Say what would be done; change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Print the result as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// Plan, apply, report.
pub fn run(args: Args) -> Result<Output> {
    if args.delete_after < args.archive_after {
        crate::refuse!(
            "--delete-after ({}d) is shorter than --archive-after ({}d); archived briefs would never be kept",
            args.delete_after,
            args.archive_after
        );
    }
    let repo = repo::open_cwd()?;
    let now = clock::now().map_err(crate::refused)?;
    let live = store::list(&repo)?;
    let archived = store::list_archived(&repo)?;
    let plan = retention::plan(&live, &archived, now, args.archive_after, args.delete_after);
    if !args.dry_run {
        store::apply_moves(&repo, &plan.moves, "handoff: prune").map_err(|e| match e {
            StoreError::Conflict(_) => {
                anyhow::anyhow!("briefs changed while pruning; nothing was pruned, run again")
            }
            other => other.into(),
        })?;
    }
    if args.format.is_json() {
        return Ok(report::pretty(&report::Pruned {
            dry_run: args.dry_run,
            archive_after_days: args.archive_after,
            delete_after_days: args.delete_after,
            actions: &plan.rows,
        }));
    }
    Ok(Output::human(text(&plan.rows, &args)))
}

fn text(rows: &[Row], args: &Args) -> String {
    let mut out = String::new();
    let would = args.dry_run;
    for r in rows {
        let when = match (&r.timestamp, r.age_days) {
            (Some(t), Some(d)) => format!(" (written {t}, {d}d ago)"),
            _ => String::new(),
        };
        let note = r
            .reason
            .as_deref()
            .map(|n| format!("; {n}"))
            .unwrap_or_default();
        let line = match r.action {
            Action::Archive => format!(
                "{} '{}'{when} to {}{note}",
                if would { "would archive" } else { "archived" },
                r.key,
                store::archive_ref_name(&r.key)
            ),
            Action::Delete => format!(
                "{} archived '{}'{when}",
                if would { "would delete" } else { "deleted" },
                r.key
            ),
            Action::Skip => format!("skipped '{}'{note}", r.key),
        };
        out.push_str(&line);
        out.push('\n');
    }
    if rows.iter().all(|r| r.action == Action::Skip) {
        out.push_str(&format!(
            "Nothing to prune (archive after {}d, delete archived after {}d).\n",
            args.archive_after, args.delete_after
        ));
    } else {
        out.push_str(&format!(
            "The history in {} keeps every version.\n",
            store::NOTES_REF
        ));
    }
    out
}
