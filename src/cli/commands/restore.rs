//! `git handoff restore KEY`: bring an archived brief back.

use anyhow::Result;

use crate::cli::commands::NamedKey;
use crate::cli::{Output, report};
use crate::store::{self, Move, StoreError};

/// Bring an archived brief back to refs/handoffs/<KEY>
///
/// Moves refs/handoff-archive/<KEY> back in one ref transaction; refused
/// when a live brief exists for KEY. `git handoff list --archived` shows
/// the archived briefs.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The archived brief, and whether to answer in JSON.
    #[command(flatten)]
    pub target: NamedKey,
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
        }));
    }
    Ok(Output::human(format!(
        "Restored brief '{key}' (version {}) from {}.\n",
        store::short(&id),
        store::archive_ref_name(&key)
    )))
}
