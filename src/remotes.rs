//! Remotes and the refs that remember what each remote holds.
//!
//! | ref | what it holds |
//! |---|---|
//! | `refs/remotes/<remote>/handoffs/<key>` | the **base**: the last version both sides agreed on |
//! | `refs/handoff-fetch/<remote>/briefs/<key>` | the remote's value as of the last fetch (the staging namespace `git fetch` writes into) |
//! | `refs/handoff-fetch/<remote>/notes/handoffs` | the remote's notes history as of the last fetch, as fetched |
//! | `refs/notes/remotes/<remote>/handoffs` | the same notes history, the ref other tools read |

use std::collections::BTreeMap;

use anyhow::{Context, Result, anyhow, bail};
use gix::ObjectId;
use gix::bstr::ByteSlice;

use crate::store::Stored;

/// The staging namespace fetches write into.
pub const STAGING_PREFIX: &str = "refs/handoff-fetch/";

/// The base of `key` with `remote`: the last version both sides agreed on.
pub fn base_ref(remote: &str, key: &str) -> String {
    format!("{}{key}", base_prefix(remote))
}

/// The namespace of the bases of `remote`.
pub fn base_prefix(remote: &str) -> String {
    format!("refs/remotes/{remote}/handoffs/")
}

/// `remote`'s value of `key` as of the last fetch.
pub fn tip_ref(remote: &str, key: &str) -> String {
    format!("{}{key}", tip_prefix(remote))
}

/// The namespace of `remote`'s fetched briefs.
pub fn tip_prefix(remote: &str) -> String {
    format!("{STAGING_PREFIX}{remote}/briefs/")
}

/// Where `git fetch` puts `remote`'s notes history.
pub fn staged_notes_ref(remote: &str) -> String {
    format!("{STAGING_PREFIX}{remote}/notes/handoffs")
}

/// `remote`'s notes history as of the last fetch.
pub fn notes_ref(remote: &str) -> String {
    format!("refs/notes/remotes/{remote}/handoffs")
}

/// Whether `name` is a configured remote.
pub fn is_remote(repo: &gix::Repository, name: &str) -> bool {
    !name.is_empty()
        && repo
            .remote_names()
            .iter()
            .any(|n| n.as_bstr() == name.as_bytes())
}

/// `name` if it is a configured remote whose name fits in a ref name.
pub fn checked_remote(repo: &gix::Repository, name: &str) -> Result<String> {
    if !is_remote(repo, name) {
        bail!(
            "'{name}' is not a remote of this repository; `git remote -v` lists them, `git remote add {name} URL` adds one"
        );
    }
    gix::refs::FullName::try_from(base_ref(name, "x")).map_err(|_| {
        anyhow!(
            "remote name '{name}' cannot be part of a ref name; rename it with `git remote rename`"
        )
    })?;
    Ok(name.to_string())
}

/// The remote to use when none is named: `handoff.remote`, else the
/// current branch's upstream remote, else `origin`. It must exist.
pub fn default_remote(repo: &gix::Repository) -> Result<String> {
    let config = repo.config_snapshot();
    if let Some(name) = config.string("handoff.remote") {
        let name = name.to_str_lossy().into_owned();
        if !is_remote(repo, &name) {
            bail!(
                "handoff.remote is '{name}', which is not a remote; fix it with `git config handoff.remote NAME`"
            );
        }
        return checked_remote(repo, &name);
    }
    if let Ok(Some(head)) = repo.head_name()
        && let Some(remote) = repo.branch_remote_name(head.shorten(), gix::remote::Direction::Fetch)
        && let Some(name) = remote.as_symbol()
        && is_remote(repo, name)
    {
        return checked_remote(repo, name);
    }
    if is_remote(repo, "origin") {
        return checked_remote(repo, "origin");
    }
    bail!(
        "no remote to share with: there is no 'origin'; name one (`git handoff push NAME`), set `git config handoff.remote NAME`, or add one with `git remote add origin URL`"
    )
}

/// Every ref below `prefix` that points at an object, by the rest of its
/// name.
pub fn ids_under(repo: &gix::Repository, prefix: &str) -> Result<BTreeMap<String, ObjectId>> {
    let platform = repo.references().context("cannot read references")?;
    let mut out = BTreeMap::new();
    for reference in platform
        .prefixed(prefix)
        .with_context(|| format!("cannot read {prefix}"))?
    {
        let reference = reference.map_err(|e| anyhow!("cannot read a ref under {prefix}: {e}"))?;
        let name = reference.name().as_bstr().to_str_lossy().into_owned();
        if let (Some(rest), Some(id)) = (name.strip_prefix(prefix), reference.target().try_id()) {
            out.insert(rest.to_string(), id.to_owned());
        }
    }
    Ok(out)
}

fn per_remote(
    repo: &gix::Repository,
    name: impl Fn(&str) -> String,
) -> Result<BTreeMap<String, ObjectId>> {
    let mut out = BTreeMap::new();
    for remote in repo.remote_names() {
        let remote = remote.to_str_lossy().into_owned();
        let full = name(&remote);
        if gix::refs::FullName::try_from(full.as_str()).is_err() {
            continue;
        }
        if let Some(id) = repo
            .try_find_reference(full.as_str())
            .with_context(|| format!("cannot read {full}"))?
            .and_then(|r| r.target().try_id().map(ToOwned::to_owned))
        {
            out.insert(remote, id);
        }
    }
    Ok(out)
}

/// Remote name → that remote's value of `key` as of its last fetch.
pub fn remote_values(repo: &gix::Repository, key: &str) -> Result<BTreeMap<String, ObjectId>> {
    per_remote(repo, |r| tip_ref(r, key))
}

/// Remote name → the base of `key` with that remote.
pub fn base_values(repo: &gix::Repository, key: &str) -> Result<BTreeMap<String, ObjectId>> {
    per_remote(repo, |r| base_ref(r, key))
}

/// `remote`'s version of `key` as of the last fetch (or, when the fetched
/// value is gone, the last version agreed with it): what `show KEY@REMOTE`
/// and `resume KEY@REMOTE` read.
pub fn remote_brief(repo: &gix::Repository, remote: &str, key: &str) -> Result<Option<Stored>> {
    for name in [tip_ref(remote, key), base_ref(remote, key)] {
        let Some(id) = repo
            .try_find_reference(name.as_str())
            .with_context(|| format!("cannot read {name}"))?
            .and_then(|r| r.target().try_id().map(ToOwned::to_owned))
        else {
            continue;
        };
        let object = repo
            .find_object(id)
            .with_context(|| format!("{name} points at {id}, which is missing"))?;
        if object.kind != gix::object::Kind::Blob {
            bail!("{name} points at a {}, not a blob", object.kind);
        }
        return Ok(Some(Stored {
            key: key.to_string(),
            id,
            data: object.detach().data,
        }));
    }
    Ok(None)
}
