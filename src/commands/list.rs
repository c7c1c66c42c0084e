//! `git handoff list`: the inventory of stored briefs.

use anyhow::Result;

use crate::render::{self, ListRow};
use crate::{Output, clock, repo, store};

/// List the stored briefs: key, age, branch, head, done-when
///
/// `*` marks the current branch's key. --archived lists the briefs `prune`
/// moved to refs/handoff-archive/ instead (`restore KEY` brings one back).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// List the archived briefs instead
    #[arg(long)]
    pub archived: bool,
    /// Print a JSON array instead of text
    #[arg(long)]
    pub json: bool,
}

/// Compute the rows and render them.
pub fn run(args: Args) -> Result<Output> {
    let repo = repo::open_cwd_for_reading()?;
    let now = clock::now().map_err(anyhow::Error::msg)?;
    if args.archived {
        let rows = rows_of(store::list_archived(&repo)?, None, now);
        return Ok(if args.json {
            Output::ok(render::json(&rows))
        } else if rows.is_empty() {
            Output::text(
                "No archived briefs; `git handoff prune` archives briefs not written for 30 days.\n",
            )
        } else {
            Output::text(render::list_text(&rows))
        });
    }
    let rows = rows(&repo, now)?;
    Ok(if args.json {
        Output::ok(render::json(&rows))
    } else {
        Output::text(render::list_text(&rows))
    })
}

/// One row per stored brief, sorted by key, ages relative to `now`.
pub fn rows(repo: &gix::Repository, now: i64) -> Result<Vec<ListRow>> {
    let current = repo::head_state(repo)
        .ok()
        .and_then(|h| repo::default_key(&h).ok());
    Ok(rows_of(store::list(repo)?, current, now))
}

/// One row per listed brief; `current` is the key to mark.
pub fn rows_of(listed: Vec<store::Listed>, current: Option<String>, now: i64) -> Vec<ListRow> {
    let mut rows = Vec::new();
    for (key, entry) in listed {
        let mut row = ListRow {
            current: current.as_deref() == Some(key.as_str()),
            key,
            id: String::new(),
            branch: None,
            head_sha: None,
            timestamp: None,
            age_seconds: None,
            done_when: None,
            error: None,
        };
        match entry.and_then(|stored| {
            row.id = stored.id.to_string();
            stored.brief()
        }) {
            Ok(brief) => {
                row.age_seconds = clock::parse(&brief.timestamp).map(|t| now - t);
                row.branch = Some(brief.state.branch);
                row.head_sha = brief.state.head_sha;
                row.timestamp = Some(brief.timestamp);
                row.done_when = Some(brief.resume.done_when);
            }
            Err(e) => row.error = Some(format!("{e:#}")),
        }
        rows.push(row);
    }
    rows
}
