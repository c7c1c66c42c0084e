//! `resolve --merge`: a three-way merge of a diverged key against the
//! merge base in the version graph, field by field
//! ([`crate::brief::merge`]); the result is a merge version with both
//! sides as parents, so that the teammate's next fetch fast-forwards to it.

use anyhow::{Result, anyhow};
use gix::ObjectId;
use serde::Serialize;
use serde_json::{Value, json};

use super::VersionInfo;
use super::refs::{Sides, info, previous, set, transaction};
use crate::brief::merge::{self, Conflict, Merged};
use crate::git::compose::{self, GitFacts, Mode};
use crate::store::lineage::Graph;
use crate::store::remotes::{self, base_ref};
use crate::store::{self, history};

/// Where a merge's git state (branch, worktree, head, diff) comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StateFrom {
    /// The checkout, which is on the brief's branch.
    Checkout,
    /// The local version: its head descends from the remote's.
    Local,
    /// The remote's version: its head descends from the local one's.
    Remote,
    /// Chosen by hand: the heads are unrelated (a conflict on
    /// `state.head_sha`).
    Chosen,
}

/// A merge of a diverged key, computed; nothing written.
#[derive(Debug, Clone)]
pub struct MergeDraft {
    /// The key.
    pub key: String,
    /// The remote.
    pub remote: String,
    /// The local version.
    pub local: ObjectId,
    /// The remote's version.
    pub theirs: ObjectId,
    /// The merge base's blob, when the two share a version.
    pub base: Option<ObjectId>,
    /// The merged fields and the conflicts.
    pub merged: Merged,
    /// Where the git state comes from.
    pub state_from: StateFrom,
    /// The remote's brief, for its git state.
    theirs_value: Value,
}

/// The result of `resolve --merge`.
#[derive(Debug, Clone, Serialize)]
pub struct MergeResolved {
    /// The key.
    pub key: String,
    /// The remote.
    pub remote: String,
    /// The local version before.
    pub local: VersionInfo,
    /// The remote's version.
    pub theirs: VersionInfo,
    /// The merge base's version, when the two shared one.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::hex_opt"
    )]
    pub base: Option<ObjectId>,
    /// The merge version stored.
    pub merged: VersionInfo,
    /// Where the git state came from.
    pub state_from: StateFrom,
    /// The fields settled by hand (conflicts resolved in the editor).
    pub settled: Vec<String>,
}

/// The brief stored as `id` of `key`, as JSON.
fn value_of(repo: &gix::Repository, key: &str, id: ObjectId) -> Result<Value> {
    let text = history::stored_form(repo, key, id)?
        .ok_or_else(|| anyhow!("version {id} of '{key}' cannot be read here"))?;
    Ok(serde_json::from_str(&text)?)
}

/// Merge the diverged `key` with `remote` (as of the last fetch), three
/// ways against the merge base; nothing is written.
pub fn merge_draft(repo: &gix::Repository, remote: &str, key: &str) -> Result<MergeDraft> {
    remotes::migrate(repo)?;
    let sides = Sides::read(repo, remote)?;
    let mut graph = Graph::of_repo(repo, &[])?;
    let (l, r) = super::resolve::diverged_sides(&mut graph, &sides, remote, key)?;
    let base = graph.merge_base(key, l, r)?;
    let (ours, theirs) = (value_of(repo, key, l)?, value_of(repo, key, r)?);
    let base_value = match base {
        Some(b) => value_of(repo, key, b).unwrap_or_else(|_| json!({})),
        None => json!({}),
    };
    let mut merged = merge::three_way(&base_value, &ours, &theirs);
    let state_from = state_source(repo, &ours, &theirs);
    if state_from == StateFrom::Chosen {
        merged.conflicts.push(Conflict {
            path: "state.head_sha".into(),
            base: base_value["state"]["head_sha"].clone(),
            ours: ours["state"]["head_sha"].clone(),
            theirs: theirs["state"]["head_sha"].clone(),
        });
    }
    Ok(MergeDraft {
        key: key.to_string(),
        remote: remote.to_string(),
        local: l,
        theirs: r,
        base,
        merged,
        state_from,
        theirs_value: theirs,
    })
}

/// The git state's source: the checkout when it is on the brief's branch,
/// else the side whose head descends from the other's, else a choice.
fn state_source(repo: &gix::Repository, ours: &Value, theirs: &Value) -> StateFrom {
    let branch = |v: &Value| v["state"]["branch"].as_str().map(str::to_string);
    let on_branch = crate::git::repo::head_state(repo)
        .ok()
        .and_then(|h| h.branch().map(str::to_string));
    if on_branch.is_some() && on_branch == branch(ours) && branch(ours) == branch(theirs) {
        return StateFrom::Checkout;
    }
    let head = |v: &Value| {
        v["state"]["head_sha"]
            .as_str()
            .and_then(|h| repo.rev_parse_single(h).ok())
            .map(|id| id.detach())
    };
    match (head(ours), head(theirs)) {
        (Some(o), Some(t)) if o == t => StateFrom::Local,
        (Some(o), Some(t)) => match repo.merge_base(o, t).ok().flatten().map(|b| b.detach()) {
            Some(b) if b == t => StateFrom::Local,
            Some(b) if b == o => StateFrom::Remote,
            _ => StateFrom::Chosen,
        },
        _ => StateFrom::Chosen,
    }
}

/// Store `value` (the draft's merged fields, its conflicts settled) as the
/// merge version of the draft's key: on top of both sides, the local brief
/// and the base moved in compare-and-swap; refused when either side moved
/// since the draft was made.
pub fn store_merge(
    repo: &gix::Repository,
    draft: &MergeDraft,
    mut value: Value,
    settled: Vec<String>,
) -> Result<MergeResolved> {
    let (key, remote) = (draft.key.as_str(), draft.remote.as_str());
    let _lock = super::lock::hold(repo, remote)?;
    let sides = Sides::read(repo, remote)?;
    let (l, b, r) = sides.get(key);
    if l != Some(draft.local) || r != Some(draft.theirs) {
        crate::refuse!("brief '{key}' changed while resolving; nothing was changed, run again");
    }
    envelope(repo, draft, &mut value)?;
    crate::brief::redact::redact_json(&mut value, crate::brief::redact::Options::from_repo(repo));
    let brief = compose::finalize(value).map_err(|issues| {
        let first = issues
            .first()
            .map(|i| format!("{}: {}", i.path, i.message))
            .unwrap_or_default();
        crate::refusal!("the merged brief of '{key}' is not valid ({first}); nothing was changed")
    })?;
    let message = format!("handoff: merge {key} with {remote}");
    let update = store::Update {
        expected: Some(draft.local),
        brief,
    };
    let written = store::write_merge(repo, &update, draft.theirs, &message)?;
    let merged = written.ids[0].1;
    transaction(
        repo,
        vec![set(
            &base_ref(remote, key),
            previous(b),
            draft.theirs,
            &message,
        )?],
    )?;
    remotes::forget_divergence(repo, remote, key)?;
    Ok(MergeResolved {
        key: key.to_string(),
        remote: remote.to_string(),
        local: info(repo, Some(draft.local)).expect("id given"),
        theirs: info(repo, Some(draft.theirs)).expect("id given"),
        base: draft.base,
        merged: info(repo, Some(merged)).expect("id given"),
        state_from: draft.state_from,
        settled,
    })
}

/// The envelope and the git state of the merge: a new version written now
/// (mode WRITE), its git state from [`StateFrom`].
fn envelope(repo: &gix::Repository, draft: &MergeDraft, value: &mut Value) -> Result<()> {
    let Some(map) = value.as_object_mut() else {
        crate::refuse!("the merged brief must be a JSON object; nothing was changed");
    };
    map.remove("timestamp");
    map.insert("mode".into(), json!("WRITE"));
    match draft.state_from {
        StateFrom::Checkout => {
            let facts = GitFacts::read(repo)?;
            compose::fill(value, &draft.key, Mode::Write, &facts);
        }
        StateFrom::Remote => {
            for field in ["branch", "worktree", "head_sha", "diff_summary"] {
                match draft.theirs_value["state"].get(field) {
                    Some(v) => value["state"][field] = v.clone(),
                    None => {
                        if let Some(state) = value["state"].as_object_mut() {
                            state.remove(field);
                        }
                    }
                }
            }
        }
        StateFrom::Local | StateFrom::Chosen => {}
    }
    if value.get("timestamp").is_none() {
        let now = crate::support::clock::now().map_err(crate::refused)?;
        value["timestamp"] = json!(crate::support::clock::format(now));
    }
    Ok(())
}
