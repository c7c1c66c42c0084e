//! Two moves of the model checker (issue 55): `redact --history` with
//! teammates, and a clone that acts as 0.3 for a step.
//!
//! **Redact.** A secret written here (`--no-redact`) reaches origin with
//! plain git, past push's gate, and a teammate fetches it. This clone runs
//! `redact --history` and then does what the commands print: `push` names
//! the forced push that replaces origin's history (which holds what the
//! rewrite left out), `push origin KEY` replaces the leaked brief. The
//! teammate fetches (its old lines come back through the union merge),
//! writes and pushes; its push refuses the history that still holds the
//! secret, and it runs `redact --history` and pushes again, as the refusal
//! says. Checked: a rewrite keeps every version (ids unchanged) and leaves
//! no secret in the history; a redacted brief is a version on top of the
//! leaked one; no fetch of either reports a key diverged that the
//! histories of every place together do not make diverged; from then on
//! no remote holds the secret in anything its refs reach (push's gate:
//! "secrets never leave", docs/sharing.md).
//! `GIT_HANDOFF_MODEL_REDACT_LATE=1` has this clone fetch between the
//! teammate's refused push and its `redact --history`.
//!
//! **0.3.** The clone fetches, then writes as 0.3 did (the brief's blob,
//! its ref, the brief line and a lineage line of 0.3's shape over the
//! current blob, no version id): a new content (believed: 0.3's version on
//! top of the current one) or an older content of the key put back, as
//! 0.3's `import --force` did (a blob this version recorded: the line is
//! not believed, no version is made). It pushes as 0.3 did, with plain
//! git: the history, and the brief, leased, when origin's is the one it
//! wrote over or older. The next clone's fetch then does what the graph
//! says: a fast-forward where its brief is an ancestor of origin's, a
//! divergence reported where neither is, never a move to a non-descendant.

use std::collections::HashSet;

use super::graph::{Graph, Rel, unrecorded};
use super::{KEYS, Run, Step};

/// A secret as the secrets tests write one.
pub const TOKEN: &str = "ghp_Zq8xW2vN5mZq8xW2vN5mZq8xW2vN5mZq8xW2vN5m";

impl Run<'_> {
    pub(super) fn redact(&mut self, c: usize, k: usize) {
        let e = (c + 2) % self.clones.len();
        drop(self.fetch(c, 0));
        self.write(c, k, Step::Redact(c, k), None);
        self.leak(c, KEYS[k]);
        drop(self.fetch(e, 0));
        self.rewrite(c);
        self.publish(c, KEYS[k]);
        self.secret = true;
        self.no_secret_on_remotes();
        self.teammate(e, c, k);
    }

    /// The secret goes to origin with plain git: the history (a
    /// fast-forward: the clone just fetched) and the brief where that
    /// replaces origin's by a descendant.
    fn leak(&mut self, c: usize, key: &str) {
        let rp = self.remote_place(0);
        let Some(mine) = self.places[c].refs.get(key).cloned() else {
            return;
        };
        let forward = self.places[rp]
            .refs
            .get(key)
            .is_none_or(|t| self.graph(key, &[c, rp]).relation(t, &mine) == Rel::Behind);
        let brief = format!("+refs/handoffs/{key}");
        let mut args = vec!["push", "-q", "origin", "refs/notes/handoffs"];
        if forward {
            args.push(&brief);
        }
        drop(self.t.sb.git_out(&self.clones[c], &args));
        let before = self.read(rp);
        self.only_forward("a plain push of a secret", rp, &[c, rp], &before);
    }

    /// `redact --history` in clone `c`: the rewritten history keeps every
    /// version and holds no secret; a brief that held one is now a version
    /// on top of it.
    fn rewrite(&mut self, c: usize) {
        let out = self.handoff(c, &["redact", "--history"]);
        if !out.status.success() {
            self.fail(&format!(
                "redact --history failed in clone {c}: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let before = self.read(c);
        let held: HashSet<&String> = self.places[c].lines.iter().map(|l| &l.vid).collect();
        if let Some(l) = before.lines.iter().find(|l| !held.contains(&l.vid)) {
            self.fail(&format!(
                "clone {c}: redact --history lost version {} of '{}'",
                l.vid, l.key
            ));
        }
        for key in KEYS {
            if let (Some(b0), Some(b1)) =
                (before.refs.get(key), self.places[c].refs.get(key).cloned())
                && *b0 != b1
            {
                self.made(c, key, &before, &[b0], &b1);
            }
        }
        self.learn(c);
        let dir = &self.clones[c];
        let log = (self.t.sb).git_out(dir, &["log", "-p", "refs/notes/handoffs"]);
        let mut text = String::from_utf8_lossy(&log.stdout).into_owned();
        for blob in self.places[c].refs.values() {
            text.push_str(&self.t.sb.git(dir, &["cat-file", "-p", blob]));
        }
        if text.contains(TOKEN) {
            self.fail(&format!(
                "clone {c}: the secret is still here after redact --history"
            ));
        }
    }

    /// The rewrite leaves as the commands say: `push` names the forced push
    /// that replaces origin's history, then `push origin KEY` replaces the
    /// leaked brief.
    fn publish(&mut self, c: usize, key: &str) {
        let out = self.sync(c, 0, &["push", "origin"], None);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let forced = text
            .split('`')
            .find(|s| s.starts_with("git push --force-with-lease="));
        if let Some(cmd) = forced {
            let args: Vec<&str> = cmd.split_whitespace().skip(1).collect();
            let out = self.t.sb.git_out(&self.clones[c], &args);
            if !out.status.success() {
                self.fail(&format!(
                    "`{cmd}` as push printed it failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            self.read(self.remote_place(0));
        }
        drop(self.sync(c, 0, &["push", "origin", key], None));
    }

    /// Teammate `e`, who fetched the old history, works on after the
    /// rewrite: fetches, writes, pushes, and follows a refusal of its
    /// history as it says; then clone `c` fetches.
    fn teammate(&mut self, e: usize, c: usize, k: usize) {
        self.fetch_truly(e);
        self.write(e, k, Step::Decide(e, k), None);
        let out = self.sync(e, 0, &["push", "origin"], None);
        if std::env::var_os("GIT_HANDOFF_MODEL_REDACT_LATE").is_some() {
            self.fetch_truly(c);
        }
        let text = String::from_utf8_lossy(&out.stdout);
        if text.contains("`git handoff redact --history` removes them") {
            self.rewrite(e);
            drop(self.sync(e, 0, &["push", "origin"], None));
        }
        self.fetch_truly(c);
    }

    /// A fetch from origin that reports no key diverged unless the
    /// histories of every place together make it diverged.
    fn fetch_truly(&mut self, c: usize) {
        let text = self.fetch(c, 0);
        let rp = self.remote_place(0);
        let all: Vec<usize> = (0..self.places.len()).collect();
        for key in KEYS {
            let (Some(l), Some(r)) = (self.places[c].refs.get(key), self.places[rp].refs.get(key))
            else {
                continue;
            };
            let rel = self.graph(key, &all).relation(l, r);
            if text.contains(&format!("diverged: {key} (")) && rel != Rel::Diverged {
                self.fail(&format!(
                    "clone {c}: fetch says '{key}' is diverged ({l} vs origin's {r}); every history together says {rel:?}:\n{text}"
                ));
            }
        }
    }

    /// After a redaction: nothing a remote's refs reach holds the secret.
    pub(super) fn no_secret_on_remotes(&self) {
        if !self.secret {
            return;
        }
        for (r, bare) in self.remotes.iter().enumerate() {
            let ids = self.t.sb.git(bare, &["rev-list", "--objects", "--all"]);
            let ids: String = ids
                .lines()
                .filter_map(|l| l.split(' ').next())
                .map(|id| format!("{id}\n"))
                .collect();
            let out = (self.t.sb).git_stdin_raw(bare, &["cat-file", "--batch"], ids);
            if out.windows(TOKEN.len()).any(|w| w == TOKEN.as_bytes()) {
                self.fail(&format!("the remote {r} holds the secret again"));
            }
        }
    }

    /// An older content of `key` than `current` that clone `c` holds, and
    /// that holds no secret.
    pub(super) fn older(&self, c: usize, key: &str, current: &str) -> Option<String> {
        self.model.blobs(key).into_iter().find(|b| {
            let out = (self.t.sb).git_out(&self.clones[c], &["cat-file", "-p", b]);
            b != current
                && out.status.success()
                && !String::from_utf8_lossy(&out.stdout).contains(TOKEN)
        })
    }

    pub(super) fn as_v03(&mut self, c: usize, k: usize, how: u8) {
        // The clone and key drawn, else the next ones that hold a brief.
        let n = self.clones.len();
        let Some((c, key)) = (0..n * KEYS.len())
            .map(|i| ((c + i / KEYS.len()) % n, KEYS[(k + i) % KEYS.len()]))
            .find(|(c, key)| self.places[*c].refs.contains_key(*key))
        else {
            return;
        };
        drop(self.fetch(c, 0));
        let Some(p) = self.places[c].refs.get(key).cloned() else {
            return;
        };
        let dir = self.clones[c].clone();
        let at = self.now();
        let pretty = match how {
            0 => {
                let text = self.t.sb.git(&dir, &["cat-file", "-p", &p]);
                let brief: serde_json::Value = serde_json::from_str(&text).unwrap();
                let old = serde_json::to_string(&brief["resume"]["done_when"]).unwrap();
                let new = serde_json::to_string(&format!("{key} {at} by {c} on 0.3")).unwrap();
                text.replace(
                    &format!("\"done_when\": {old}"),
                    &format!("\"done_when\": {new}"),
                )
            }
            // (Not a content holding the secret: plain git has no gate.)
            _ => match self.older(c, key, &p) {
                Some(older) => self.t.sb.git(&dir, &["cat-file", "-p", &older]),
                None => return,
            },
        };
        let graph = Graph::of(key, &self.places[c].lines);
        let blob = self.t.write_as_v03(&dir, key, &pretty, &[&p], &at);
        self.read(c);
        // A content no line recorded is 0.3's version on top of the one
        // the current blob stands for (its line's id is the blob).
        if !graph.records(&blob) {
            let parents = graph.versions_of(&p);
            let person = self.person(c, &blob, &parents);
            self.model.add(&blob, key, &blob, person.clone());
            self.model.person.insert(unrecorded(key, &blob), person);
        }
        self.push_as_v03(c, key, &p);
        self.fetch_follows((c + 1) % self.clones.len(), key);
    }

    /// 0.3's push, with plain git: the history (a fast-forward: the clone
    /// just fetched) and the brief, leased on origin's, when origin's is
    /// the one the write was over or an older one (0.3 pushed no diverged
    /// key).
    fn push_as_v03(&mut self, c: usize, key: &str, over: &str) {
        let rp = self.remote_place(0);
        let theirs = self.places[rp].refs.get(key).cloned();
        let forward = theirs.as_ref().is_none_or(|t| {
            t == over || self.graph(key, &[c, rp]).relation(t, over) == Rel::Behind
        });
        let lease = format!(
            "--force-with-lease=refs/handoffs/{key}:{}",
            theirs.unwrap_or_default()
        );
        let brief = format!("refs/handoffs/{key}");
        let mut args = vec!["push", "-q", "origin", "refs/notes/handoffs"];
        if forward {
            args.extend([lease.as_str(), brief.as_str()]);
        }
        drop(self.t.sb.git_out(&self.clones[c], &args));
        self.read(rp);
    }

    /// Clone `d`'s fetch does what the graph says of `key`: a fast-forward
    /// where its brief is an ancestor of origin's (a divergence is checked
    /// by `fetch`, a move to a non-descendant by `sync`).
    fn fetch_follows(&mut self, d: usize, key: &str) {
        let rp = self.remote_place(0);
        let was = self.places[d].refs.get(key).cloned();
        let text = self.fetch(d, 0);
        let (Some(was), Some(theirs)) = (was, self.places[rp].refs.get(key).cloned()) else {
            return;
        };
        let rel = self.graph(key, &[d, rp]).relation(&was, &theirs);
        if rel == Rel::Behind && self.places[d].refs.get(key) != Some(&theirs) {
            self.fail(&format!(
                "clone {d}: '{key}' {was} is an ancestor of origin's {theirs}, yet fetch did not fast-forward it:\n{text}"
            ));
        }
    }
}
