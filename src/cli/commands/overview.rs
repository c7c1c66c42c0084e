//! `git handoff` with no subcommand: what a session that knows nothing
//! needs first — the brief waiting for this branch (or the only one),
//! shown as `resume` shows it; else the briefs waiting here and the
//! command that resumes them.

use anyhow::Result;

use crate::cli::inventory::{self, Waiting};
use crate::{cli::Output, cli::render, support::clock};

/// How many briefs the overview names.
const NAMED: usize = 5;

/// The overview: the brief waiting for this branch (or the only one) as
/// `resume` shows it; else the briefs (newest first) and the next command.
pub fn run() -> Result<Output> {
    let head = "git handoff: save and restore the working state of a coding session (`git handoff help` lists every command)\n";
    let repo = crate::cli::staged::open_for_reading()?;
    let now = clock::now().map_err(crate::refused)?;
    let briefs = inventory::waiting(&repo, now)?;
    let never_fetched = crate::store::remotes::never_fetched(&repo).unwrap_or_default();
    let set_up = repo
        .config_snapshot()
        .string(format!("merge.{}.driver", crate::cli::commands::init::DRIVER_ID).as_str())
        .is_some();
    let unfetching = if set_up {
        remotes_without_refspecs(&repo)
    } else {
        Vec::new()
    };
    let fresh = briefs.is_empty() && !never_fetched.is_empty();
    let init = if !set_up && fresh {
        // A fresh clone: fetch and resume first; init is for later.
        "\nAfter that, `git handoff init` once sets this clone up: the narrative then merges as a log, and a plain `git fetch` brings the briefs.\n".to_string()
    } else if !set_up {
        "\nOptional, once per clone (resuming works without it): `git handoff init` makes the narrative merge as a log and a plain `git fetch` bring the briefs.\n".to_string()
    } else if unfetching.is_empty() {
        String::new()
    } else {
        format!(
            "\nA plain `git fetch` does not bring the briefs of {} (added after `git handoff init`): run `git handoff init` again.\n",
            crate::support::text::quoted_list(&unfetching)
        )
    };
    // A brief waits for this branch (or this session), or only one waits
    // and no other worktree has its branch (there, the list says where to
    // `cd`): shown as a keyless `resume` shows it (its warnings, a branch
    // mismatch among them, first), so that the command alone is enough.
    let only_one = matches!(briefs.as_slice(), [one] if one.worktree.is_none() || one.here);
    if (only_one || briefs.iter().any(|w| w.current))
        && let Some(resumed) = crate::cli::commands::resume::keyless_text()?
    {
        let mut doc = crate::cli::Doc::from(format!(
            "{head}\nThe brief waiting here, as `git handoff resume` prints it:\n\n"
        ));
        doc.append(resumed);
        doc.push_str(&init);
        return Ok(Output::human(doc));
    }
    Ok(Output::human(format!(
        "{head}\n{}{init}",
        text(&briefs, never_fetched.first().map(String::as_str))
    )))
}

/// The remotes (not a partial clone's) whose fetch refspecs lack what
/// `git handoff init` adds for them.
fn remotes_without_refspecs(repo: &gix::Repository) -> Vec<String> {
    let config = repo.config_snapshot();
    repo.remote_names()
        .into_iter()
        .map(|name| name.to_string())
        .filter(|name| {
            let partial = ["promisor", "partialclonefilter"].iter().any(|k| {
                config
                    .string(format!("remote.{name}.{k}").as_str())
                    .is_some()
            });
            let have: Vec<String> = config
                .strings(format!("remote.{name}.fetch").as_str())
                .unwrap_or_default()
                .iter()
                .map(|v| v.to_string())
                .collect();
            !partial
                && !crate::sync::staged::refspecs(name)
                    .iter()
                    .all(|spec| have.contains(spec))
        })
        .collect()
}

/// The briefs and the command to run next; with none, how to get the
/// team's from `unfetched` (a remote whose briefs were never fetched).
fn text(briefs: &[Waiting], unfetched: Option<&str>) -> String {
    if briefs.is_empty() {
        if let Some(remote) = unfetched {
            return format!(
                "No briefs here yet, and the team's briefs on '{remote}' were never fetched: get them with: git handoff fetch\nThen resume one with: git handoff resume KEY (fetch names the KEY)\nOr hand off with: git handoff write --done-when CHECK --resume-by NEXT-STEP --next-check COMMAND\n"
            );
        }
        return "No briefs here yet. Hand off with: git handoff write --done-when CHECK --resume-by NEXT-STEP --next-check COMMAND\n".to_string();
    }
    // The current branch's briefs first: the one a keyless `resume`
    // takes is never among the `+N more`.
    let (current, others): (Vec<&Waiting>, Vec<&Waiting>) = briefs.iter().partition(|w| w.current);
    let order = if current.is_empty() {
        "newest first"
    } else {
        "this branch's first, then newest first"
    };
    let next = match current.as_slice() {
        [one] if briefs.len() > 1 => format!(
            "Resume with: git handoff resume {}",
            crate::support::escape::shell_quote(&one.key)
        ),
        [] if briefs.len() > 1 => "Resume one with: git handoff resume KEY".to_string(),
        _ => "Resume with: git handoff resume".to_string(),
    };
    let listed: Vec<Waiting> = current.into_iter().chain(others).cloned().collect();
    format!(
        "Briefs here, {order}:\n{}\n{next}\n",
        render::waiting_text(&listed, NAMED)
    )
}
