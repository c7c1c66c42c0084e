//! `git handoff list`: the inventory of stored briefs.

use anyhow::Result;

use crate::render::{self, ListRow};
use crate::{Output, clock, repo, store};

/// List the stored briefs: key, age, branch, head, done-when
///
/// `*` marks the current branch's key.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print a JSON array instead of text
    #[arg(long)]
    pub json: bool,
}

/// Compute the rows and render them.
pub fn run(args: Args) -> Result<Output> {
    let repo = repo::open_cwd()?;
    let rows = rows(&repo, clock::now().map_err(anyhow::Error::msg)?)?;
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
    let mut rows = Vec::new();
    for (key, entry) in store::list(repo)? {
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
    Ok(rows)
}
