//! The gate for a plain `git push`: git's pre-push hook hands over the
//! ref updates a push would make, and the ones that touch git-handoff's
//! refs are checked by the same gate as `git handoff push` (the briefs'
//! bytes and keys, each new line and commit message of a notes history).
//! Which updates those are is decided from the names alone, so that a push
//! of code opens nothing.

use anyhow::{Context, Result};
use gix::ObjectId;

use super::{Finding, outgoing_history, redacted_key};
use crate::brief::redact::{self, Options};
use crate::store;
use crate::sync::gate_cache::GateCache;

/// One ref update of a push, as git's pre-push hook reads it on stdin:
/// `<local ref> <local id> <remote ref> <remote id>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefUpdate {
    /// The local ref (or the expression given on the command line).
    pub local_ref: String,
    /// What would be sent.
    pub local: String,
    /// The ref it updates on the remote.
    pub remote_ref: String,
    /// What the remote holds there (all zeros when it holds nothing).
    pub remote: String,
}

/// Whether `name` is one of git-handoff's refs: the briefs, the archive,
/// the bookkeeping under `refs/handoff-*`, and the notes histories (the
/// local one and the remotes' under the older layout).
pub fn is_handoff_ref(name: &str) -> bool {
    name.starts_with("refs/handoff")
        || name == store::NOTES_REF
        || (name.starts_with("refs/notes/") && name.ends_with("/handoffs"))
}

/// The updates of git's pre-push input that would send something (not a
/// deletion) to or from a handoff ref; from the text alone.
pub fn handoff_updates(input: &str) -> Vec<RefUpdate> {
    input
        .lines()
        .filter_map(|line| {
            let mut fields = line.split(' ');
            let update = RefUpdate {
                local_ref: fields.next()?.to_string(),
                local: fields.next()?.to_string(),
                remote_ref: fields.next()?.to_string(),
                remote: fields.next()?.to_string(),
            };
            let sends = update.local.bytes().any(|b| b != b'0');
            let ours = is_handoff_ref(&update.local_ref) || is_handoff_ref(&update.remote_ref);
            (sends && ours).then_some(update)
        })
        .collect()
}

/// Every secret the updates would send: a brief (a blob) with a secret in
/// its bytes or its key, a notes history (a commit) with one in a line or
/// a commit message that the remote's value there lacks.
pub fn outgoing_refs(repo: &gix::Repository, updates: &[RefUpdate]) -> Result<Vec<Finding>> {
    let options = Options::from_repo(repo);
    let mut cache = GateCache::load(repo, options);
    let mut out = Vec::new();
    for update in updates {
        let id = ObjectId::from_hex(update.local.as_bytes())
            .with_context(|| format!("the pre-push input names '{}'", update.local))?;
        let object = repo
            .find_object(id)
            .with_context(|| format!("cannot read {id}, which the push would send"))?;
        match object.kind {
            gix::object::Kind::Blob => {
                let data = object.detach().data;
                out.extend(brief_finding(update, id, &data, options, &mut cache));
            }
            gix::object::Kind::Commit => {
                let theirs = ObjectId::from_hex(update.remote.as_bytes())
                    .ok()
                    .filter(|t| !t.is_null() && repo.has_object(t));
                out.extend(outgoing_history(repo, id, theirs)?);
            }
            // A tree or a tag under a handoff ref is nothing git-handoff
            // writes or reads.
            _ => {}
        }
    }
    cache.save();
    Ok(out)
}

/// The secret in a brief the push would send, if any: in its bytes or in
/// the key its ref names.
fn brief_finding(
    update: &RefUpdate,
    id: ObjectId,
    data: &[u8],
    options: Options,
    cache: &mut GateCache,
) -> Option<Finding> {
    let name = if is_handoff_ref(&update.local_ref) {
        &update.local_ref
    } else {
        &update.remote_ref
    };
    let key = name.rsplit('/').next().unwrap_or(name);
    let mut rules: Vec<&'static str> = redact::key_rule(key, options).into_iter().collect();
    if !cache.is_clean(&id, data) {
        let found = redact::find_in_line(data, options);
        if found.is_empty() {
            cache.record_clean(data);
        }
        for kind in found.into_keys() {
            if !rules.contains(&kind) {
                rules.push(kind);
            }
        }
    }
    (!rules.is_empty()).then(|| Finding {
        what: crate::support::escape::clean(&redacted_key(name, options)).into_owned(),
        version: store::short(&id),
        rules,
        key: Some(key.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_updates_that_send_to_or_from_a_handoff_ref_are_kept() {
        let id = "a".repeat(40);
        let zero = "0".repeat(40);
        let input = format!(
            "refs/heads/main {id} refs/heads/main {zero}\n\
             refs/handoffs/k {id} refs/handoffs/k {zero}\n\
             refs/handoff-archive/k {id} refs/handoff-archive/k {id}\n\
             {id} {id} refs/notes/handoffs {zero}\n\
             refs/notes/commits {id} refs/notes/commits {zero}\n\
             (delete) {zero} refs/handoffs/gone {id}\n\
             refs/heads/x {id} refs/handoffs/x {zero}\n"
        );
        let kept: Vec<String> = handoff_updates(&input)
            .into_iter()
            .map(|u| u.remote_ref)
            .collect();
        assert_eq!(
            kept,
            [
                "refs/handoffs/k",
                "refs/handoff-archive/k",
                "refs/notes/handoffs",
                "refs/handoffs/x"
            ]
        );
        assert!(handoff_updates("refs/heads/main\n\n").is_empty());
    }
}
