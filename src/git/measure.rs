//! Which line of work drift is measured on: the brief's own branch, wherever
//! it is (checked out here, in another worktree, only as a local branch or
//! only as a remote-tracking branch), and HEAD only when that branch exists
//! nowhere. The rule itself ([`rule`]) is a pure function over the facts
//! ([`Facts`]); [`facts`] gathers them from the repository.

use std::path::PathBuf;

use gix::ObjectId;
use gix::bstr::ByteSlice;
use serde::Serialize;

use crate::git::repo;

/// What the rule needs to know about the brief's branch here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// The current branch is the brief's branch (or both are detached).
    pub on_brief_branch: bool,
    /// The tip of the local branch `refs/heads/<branch>`, when it exists.
    pub local: Option<ObjectId>,
    /// The remote-tracking branch (`origin/<branch>`) and its tip, when one
    /// exists.
    pub remote: Option<(String, ObjectId)>,
    /// Another worktree of this repository that has the branch checked out.
    pub elsewhere: Option<PathBuf>,
}

/// Where drift is measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Target {
    /// HEAD of this worktree: the brief's branch is checked out here.
    Here,
    /// The tip of the local branch, checked out in `worktree` when that is
    /// set, else in no worktree.
    Local {
        /// The branch's tip.
        #[serde(serialize_with = "hex")]
        tip: ObjectId,
        /// The worktree that has it checked out, if any.
        worktree: Option<PathBuf>,
    },
    /// The tip of the remote-tracking branch `name` (no local branch).
    Remote {
        /// Like `origin/feat/x`.
        name: String,
        /// Its tip.
        #[serde(serialize_with = "hex")]
        tip: ObjectId,
    },
    /// HEAD of this worktree, because the brief's branch exists nowhere
    /// here (deleted, or never fetched).
    Nowhere,
}

impl Target {
    /// The tip of the branch measured on, when it is not HEAD.
    pub fn tip(&self) -> Option<ObjectId> {
        match self {
            Target::Local { tip, .. } | Target::Remote { tip, .. } => Some(*tip),
            Target::Here | Target::Nowhere => None,
        }
    }

    /// Another worktree that has the brief's branch checked out.
    pub fn elsewhere(&self) -> Option<&std::path::Path> {
        match self {
            Target::Local {
                worktree: Some(path),
                ..
            } => Some(path),
            _ => None,
        }
    }
}

fn hex<S: serde::Serializer>(id: &ObjectId, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&id.to_string())
}

/// The measurement rule: the brief's branch here → HEAD; else its local
/// branch (noting the worktree that has it checked out); else its
/// remote-tracking branch; else HEAD, saying the branch exists nowhere.
pub fn rule(facts: &Facts) -> Target {
    if facts.on_brief_branch {
        return Target::Here;
    }
    if let Some(tip) = facts.local {
        return Target::Local {
            tip,
            worktree: facts.elsewhere.clone(),
        };
    }
    if let Some((name, tip)) = &facts.remote {
        return Target::Remote {
            name: name.clone(),
            tip: *tip,
        };
    }
    Target::Nowhere
}

/// Gather the facts about `brief_branch` (as `state.branch` records it)
/// while HEAD is on `current` (a branch name, or `HEAD` when detached).
/// A brief written on a detached HEAD (`HEAD`) has no branch to follow: it
/// is measured here.
pub fn facts(repo: &gix::Repository, brief_branch: &str, current: &str) -> Facts {
    let mut facts = Facts {
        on_brief_branch: brief_branch == current,
        local: None,
        remote: None,
        elsewhere: None,
    };
    if facts.on_brief_branch || brief_branch == "HEAD" {
        facts.on_brief_branch = true;
        return facts;
    }
    facts.local = tip(repo, &format!("refs/heads/{brief_branch}"));
    if facts.local.is_some() {
        facts.elsewhere = repo::checkouts(repo)
            .into_iter()
            .find(|c| c.branch == brief_branch)
            .map(|c| c.root);
    } else {
        facts.remote = remote_tip(repo, brief_branch);
    }
    facts
}

/// The commit a reference points at (peeled), when it exists.
fn tip(repo: &gix::Repository, name: &str) -> Option<ObjectId> {
    super::refdb::peeled(repo, name).ok()?
}

/// The branch's remote-tracking branch: the one its `branch.<b>.remote`
/// names, else `origin`'s, else the first remote (by name) that has it.
fn remote_tip(repo: &gix::Repository, branch: &str) -> Option<(String, ObjectId)> {
    let config = repo.config_snapshot();
    let configured = config
        .string(format!("branch.{branch}.remote").as_str())
        .map(|r| r.to_str_lossy().into_owned());
    let mut names: Vec<String> = repo
        .remote_names()
        .into_iter()
        .map(|n| n.to_str_lossy().into_owned())
        .collect();
    names.sort();
    let preferred = configured.into_iter().chain(Some("origin".to_string()));
    for remote in preferred.chain(names) {
        if let Some(id) = tip(repo, &format!("refs/remotes/{remote}/{branch}")) {
            return Some((format!("{remote}/{branch}"), id));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[n; 20])
    }

    /// Every combination of (on the brief's branch; the branch local /
    /// remote-only / nowhere; checked out elsewhere / nowhere).
    #[test]
    fn the_rule_over_every_combination() {
        let wt = || Some(PathBuf::from("/w/other"));
        let remote = || Some(("origin/feat/x".to_string(), id(2)));
        let facts = |on, local: Option<ObjectId>, remote, elsewhere| Facts {
            on_brief_branch: on,
            local,
            remote,
            elsewhere,
        };
        let table = [
            // on the brief's branch: always here, whatever else exists
            (facts(true, Some(id(1)), remote(), None), Target::Here),
            (facts(true, None, None, None), Target::Here),
            // local branch, checked out in another worktree
            (
                facts(false, Some(id(1)), remote(), wt()),
                Target::Local {
                    tip: id(1),
                    worktree: wt(),
                },
            ),
            // local branch, checked out nowhere: local wins over remote
            (
                facts(false, Some(id(1)), remote(), None),
                Target::Local {
                    tip: id(1),
                    worktree: None,
                },
            ),
            (
                facts(false, Some(id(1)), None, None),
                Target::Local {
                    tip: id(1),
                    worktree: None,
                },
            ),
            // only a remote-tracking branch
            (
                facts(false, None, remote(), None),
                Target::Remote {
                    name: "origin/feat/x".into(),
                    tip: id(2),
                },
            ),
            // nowhere
            (facts(false, None, None, None), Target::Nowhere),
        ];
        for (facts, want) in table {
            assert_eq!(rule(&facts), want, "{facts:?}");
        }
    }
}
