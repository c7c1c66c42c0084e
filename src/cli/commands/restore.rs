//! `git handoff restore KEY`: bring an archived brief back.

use anyhow::Result;

use crate::brief::redact::{self, Counts, Options};
use crate::cli::commands::NamedKey;
use crate::cli::{Output, report};
use crate::store::{self, Move, StoreError};

/// Bring an archived brief back to refs/handoffs/<KEY>
///
/// Moves refs/handoff-archive/<KEY> back in one ref transaction; refused
/// when a live brief exists for KEY. An archived brief in which the
/// current redaction rules find a secret is redacted first. `git handoff
/// list --archived` shows the archived briefs.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The archived brief, and whether to answer in JSON.
    #[command(flatten)]
    pub target: NamedKey,
}

/// The archived brief `id` of `key` passed through the current rules: the
/// same id when it holds no secret; else the archive ref moved
/// (compare-and-swap) to the brief redacted, its new id, and what was
/// redacted. An archived brief may predate a rule, or have been written
/// with `--no-redact`: it comes back filtered, as every brief is read back.
fn redacted(
    repo: &gix::Repository,
    key: &str,
    id: gix::ObjectId,
) -> Result<(gix::ObjectId, Counts)> {
    let name = store::archive_ref_name(key);
    let stored = store::load(repo, &name, key, id)?;
    let options = Options::from_repo(repo);
    let Some((brief, found)) = super::redact::redacted_brief(key, &stored.data, options)? else {
        return Ok((id, Counts::new()));
    };
    let new = store::replace_archived(repo, &brief, id, "handoff: restore (redact)").map_err(
        |e| match e {
            StoreError::Conflict(_) => crate::refusal!(
                "brief '{key}' changed while restoring; nothing was restored, run again"
            ),
            other => other.into(),
        },
    )?;
    Ok((new, found))
}

/// Restore the brief.
pub fn run(args: Args) -> Result<Output> {
    let (key, repo) = args.target.open()?;
    let id = store::archived_id(&repo, &key)?.ok_or_else(|| {
        crate::refusal!("no archived brief '{key}'; `git handoff list --archived` shows them")
    })?;
    if store::current_id(&repo, &key)?.is_some() {
        let qk = crate::support::escape::shell_quote(&key);
        crate::refuse!(
            "a live brief '{key}' exists; drop it first (`git handoff drop {qk}`) or keep it — the archived one stays in {}",
            store::archive_ref_name(&key)
        );
    }
    let (id, found) = redacted(&repo, &key, id)?;
    store::apply_moves(
        &repo,
        &[Move::Restore {
            key: key.clone(),
            id,
        }],
        "handoff: restore",
    )
    .map_err(|e| match e {
        StoreError::Conflict(_) => {
            crate::refusal!(
                "brief '{key}' changed while restoring; nothing was restored, run again"
            )
        }
        other => other.into(),
    })?;
    if args.target.format.is_json() {
        return Ok(report::line(&report::Restored {
            key: &key,
            restored: id.to_string(),
            redacted: found,
        }));
    }
    let redacted = redact::summary(&found)
        .map(|s| format!(" The current rules found secrets in it: {s} before it was restored."))
        .unwrap_or_default();
    Ok(Output::human(format!(
        "Restored brief '{key}' (version {}) from {}.{redacted}\n",
        store::short(&id),
        store::archive_ref_name(&key)
    )))
}
