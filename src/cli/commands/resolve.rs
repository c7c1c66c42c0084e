//! `git handoff resolve KEY --merge|--keep-local|--take-remote`: end a
//! divergence.

use anyhow::Result;

use crate::cli::commands::checked_key;
use crate::cli::{Format, Output};
use crate::store::remotes;
use crate::support::escape::shell_quote;
use crate::sync::merge::{MergeDraft, MergeResolved, StateFrom};
use crate::sync::{self, Resolution};

/// End a divergence: merge both sides, or keep one of them
///
/// Works on the state of the last fetch. --merge merges the two versions
/// field by field against their merge base (lists item by item); a field
/// both sides changed differently is a conflict: listed (exit 1, nothing
/// changed), or settled in the editor with --edit. The merge is a new
/// version on top of both, which the next push sends. --keep-local moves
/// the base to the remote's version, so the next push replaces it there;
/// --take-remote makes the remote's version the local brief. The version
/// not kept stays in the history (`git handoff log KEY`).
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("side").required(true).args(["merge", "keep_local", "take_remote"])))]
// The key first, as every hint writes it (clap puts a required group first).
#[command(
    override_usage = "git handoff resolve <KEY> <--merge|--keep-local|--take-remote> [OPTIONS]"
)]
pub struct Args {
    /// The diverged brief's key
    pub key: String,
    /// Merge both versions field by field against their merge base
    #[arg(long)]
    pub merge: bool,
    /// With --merge: settle conflicts in the editor (git's conflict markers)
    #[arg(long, requires = "merge")]
    pub edit: bool,
    /// Keep the local version (the next push sends it)
    #[arg(long)]
    pub keep_local: bool,
    /// Take the remote's version
    #[arg(long)]
    pub take_remote: bool,
    /// The remote (default: handoff.remote, else the branch's upstream remote, else origin)
    #[arg(long, value_name = "NAME")]
    pub remote: Option<String>,
    /// Print the result as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// Resolve and render.
pub fn run(args: Args) -> Result<Output> {
    let key = checked_key(&args.key)?;
    let repo = crate::cli::staged::open()?;
    let remote = match &args.remote {
        Some(r) => remotes::checked_remote(&repo, r)?,
        None => remotes::default_remote(&repo)?,
    };
    if args.merge {
        return merge(&repo, &remote, &key, args.edit, args.format);
    }
    let resolution = if args.keep_local {
        Resolution::KeepLocal
    } else {
        Resolution::TakeRemote
    };
    let done = sync::resolve(&repo, &remote, &key, resolution)?;
    if args.format.is_json() {
        return Ok(Output::json(&done));
    }
    let (ours, theirs) = (
        done.local.id.to_hex_with_len(7),
        done.theirs.id.to_hex_with_len(7),
    );
    let (k, r) = (shell_quote(&key), shell_quote(&remote));
    Ok(Output::human(match resolution {
        Resolution::KeepLocal => format!(
            "Resolved '{key}': kept local {ours}; `git handoff push {r}` replaces {remote}'s {theirs} (it stays in `git handoff log {k}`).\n"
        ),
        Resolution::TakeRemote => format!(
            "Resolved '{key}': took {remote}'s {theirs}; your {ours} stays in `git handoff log {k}`.\n"
        ),
    }))
}

/// `--merge`: merge, settle the conflicts (listed, or in the editor), store.
fn merge(
    repo: &gix::Repository,
    remote: &str,
    key: &str,
    edit: bool,
    format: Format,
) -> Result<Output> {
    let draft = sync::merge::merge_draft(repo, remote, key)?;
    let (value, settled) = if draft.merged.conflicts.is_empty() {
        (draft.merged.value.clone(), Vec::new())
    } else if edit {
        settle_in_editor(repo, &draft)?
    } else {
        return Ok(conflicts(&draft, format).with_code(1));
    };
    let done = sync::merge::store_merge(repo, &draft, value, settled)?;
    if format.is_json() {
        return Ok(Output::json(&done));
    }
    Ok(Output::human(merged_text(&done)))
}

fn merged_text(done: &MergeResolved) -> String {
    let (key, remote) = (&done.key, &done.remote);
    let state = match done.state_from {
        StateFrom::Checkout => "the git state from this checkout".to_string(),
        StateFrom::Local => "the git state from the local version (its head is the newer)".into(),
        StateFrom::Remote => {
            format!("the git state from {remote}'s version (its head is the newer)")
        }
        StateFrom::Chosen => "the head chosen in the editor".into(),
    };
    let settled = if done.settled.is_empty() {
        String::new()
    } else {
        format!("; settled by hand: {}", done.settled.join(", "))
    };
    format!(
        "Merged '{key}': local {} and {remote}'s {} into {} ({state}{settled}); `git handoff push {}` sends it.\n",
        done.local.id.to_hex_with_len(7),
        done.theirs.id.to_hex_with_len(7),
        done.merged.id.to_hex_with_len(7),
        shell_quote(remote),
    )
}

/// The conflicts of a merge, changing nothing: each field with both values.
fn conflicts(draft: &MergeDraft, format: Format) -> Output {
    if format.is_json() {
        return Output::json(&serde_json::json!({
            "key": draft.key,
            "remote": draft.remote,
            "local": draft.local.to_string(),
            "theirs": draft.theirs.to_string(),
            "conflicts": draft.merged.conflicts,
        }));
    }
    let (ours, theirs) = (
        draft.local.to_hex_with_len(7).to_string(),
        draft.theirs.to_hex_with_len(7).to_string(),
    );
    let mut out = format!(
        "'{}' cannot be merged with '{}' without a choice: both changed {} field(s); nothing was changed.\n",
        draft.key,
        draft.remote,
        draft.merged.conflicts.len()
    );
    for c in &draft.merged.conflicts {
        let one_line = |v: &serde_json::Value| serde_json::to_string(v).unwrap_or_default();
        out.push_str(&format!("  {}\n", c.path));
        out.push_str(&format!("    local {ours}: {}\n", one_line(&c.ours)));
        out.push_str(&format!(
            "    {} {theirs}: {}\n",
            draft.remote,
            one_line(&c.theirs)
        ));
    }
    let k = shell_quote(&draft.key);
    out.push_str(&format!(
        "Settle them in the editor: `git handoff resolve {k} --merge --edit` (or keep one side: --keep-local, --take-remote).\n"
    ));
    Output::human(out)
}

/// Open the editor on the conflicts, with git's markers, until what is
/// saved settles every one (an empty file aborts: nothing changed).
fn settle_in_editor(
    repo: &gix::Repository,
    draft: &MergeDraft,
) -> Result<(serde_json::Value, Vec<String>)> {
    use crate::cli::editor;
    let labels = (
        format!("local ({})", draft.local.to_hex_with_len(7)),
        format!("{} ({})", draft.remote, draft.theirs.to_hex_with_len(7)),
    );
    let body = crate::brief::merge::conflict_text(&draft.merged, (&labels.0, &labels.1));
    let path = repo.git_dir().join("HANDOFF_MERGE_EDITMSG");
    let mut text = format!(
        "# Merging '{}' with '{}': settle each field below (keep one side, or write the value\n# as JSON), delete the markers, save. Lines starting with # are ignored;\n# an empty file aborts and changes nothing.\n{body}",
        draft.key, draft.remote
    );
    let command = editor::editor(repo);
    let mut before: Option<String> = None;
    loop {
        std::fs::write(&path, &text)?;
        editor::edit(&command, &path)?;
        let saved = std::fs::read_to_string(&path)?;
        let _ = std::fs::remove_file(&path);
        let Some(kept) = editor::strip_comments(&saved) else {
            crate::refuse!("the merge was aborted (an empty file); nothing was changed");
        };
        match crate::brief::merge::apply_resolved(&draft.merged, &kept) {
            Ok(value) => {
                let settled = draft.merged.conflicts.iter().map(|c| c.path.clone());
                return Ok((value, settled.collect()));
            }
            // Saved unchanged after an error: the editor will not settle it.
            Err(e) if before.as_deref() == Some(kept.as_str()) => {
                crate::refuse!("the merge is still not settled ({e}); nothing was changed")
            }
            Err(e) => text = format!("# error: {e}\n{kept}"),
        }
        before = Some(kept);
    }
}
