//! The version graph holds by construction (issue 55): a version's id
//! binds its content and its parents, so no line can re-parent a version,
//! an older content written again is a new version, and only checked
//! histories feed the graph. Each test is a case that replaced or lost a
//! teammate's brief, or died, before.

use std::path::Path;

use crate::support::*;

const T1: &str = "2026-11-30T09:00:00Z";

impl Team {
    /// A writes v1 and pushes, B fetches it; then A writes a2 and pushes,
    /// B writes b2 over v1 and fetches: diverged. The ids of a2 and b2.
    fn diverged(&self) -> (String, String) {
        self.write(&self.a, "k", T1, "v1");
        self.run(&self.a, &["push"]).success();
        self.run(&self.b, &["fetch"]).success();
        let a2 = self.write(&self.a, "k", T2, "a2");
        self.run(&self.a, &["push"]).success();
        let b2 = self.write(&self.b, "k", T3, "b2");
        let out = self.run(&self.b, &["fetch"]).code(1);
        assert_stdout_has(&out, "  diverged: k (local ");
        (a2, b2)
    }

    /// In `dir`, import blob `blob` as `key` with `import --force`, as
    /// `export` would have written it: an older content made current again.
    fn import_again(&self, dir: &Path, key: &str, blob: &str) {
        let folder = self.sb.path("theirs");
        std::fs::create_dir_all(&folder).unwrap();
        let content = self.sb.git(dir, &["cat-file", "-p", blob]);
        std::fs::write(folder.join(format!("{key}.json")), content).unwrap();
        self.run(dir, &["import", folder.to_str().unwrap(), "--force"])
            .success();
    }

    /// The version id the lineage line recording blob `blob` names, in
    /// `dir`'s history.
    fn version_of(&self, dir: &Path, blob: &str) -> String {
        let notes = self
            .sb
            .git(dir, &["log", "--notes=handoffs", "--format=%N"]);
        let line = lineage_lines(&notes)
            .into_iter()
            .find(|l| l.contains(&format!("\"brief\":\"{blob}\"")))
            .unwrap_or_else(|| panic!("no lineage line for {blob}: {notes}"))
            .to_string();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        v["lineage"].as_str().unwrap().to_string()
    }
}

/// Item 1: `import --force` of an older content X over Y is a new version
/// on top of Y, not X made Y's descendant and ancestor at once: a
/// teammate's Z, written on Y meanwhile, does not fast-forward it away.
#[test]
fn an_older_content_imported_again_is_a_new_version_not_a_cycle() {
    let t = team();
    let x = t.write(&t.a, "k", T1, "x");
    t.run(&t.a, &["push"]).success();
    let folder = t.sb.path("old");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("k.json"),
        t.sb.git(&t.a, &["cat-file", "-p", &x]),
    )
    .unwrap();
    let y = t.write(&t.a, "k", T2, "y");
    t.run(&t.a, &["push"]).success();
    t.run(&t.b, &["fetch"]).success();
    assert_eq!(t.brief_id(&t.b, "k"), Some(y.clone()));

    t.run(&t.a, &["import", folder.to_str().unwrap(), "--force"])
        .success();
    assert_eq!(t.brief_id(&t.a, "k"), Some(x.clone()));
    let z = t.write(&t.b, "k", T3, "z");
    t.run(&t.b, &["push"]).success();
    for _ in 0..2 {
        let out = t.run(&t.a, &["fetch"]).code(1);
        assert_stdout_has(&out, "  diverged: k (local ");
        assert_eq!(t.brief_id(&t.a, "k"), Some(x.clone()), "X was kept");
    }
    // The re-import is a version of its own, on top of Y's.
    let notes = t.sb.git(&t.a, &["log", "--notes=handoffs", "--format=%N"]);
    let x_lines: Vec<&str> = lineage_lines(&notes)
        .into_iter()
        .filter(|l| l.contains(&format!("\"brief\":\"{x}\"")))
        .collect();
    assert_eq!(x_lines.len(), 2, "{notes}");
    assert!(
        x_lines.iter().any(|l| l.contains(&t.version_of(&t.a, &y))),
        "{notes}"
    );
    assert_eq!(t.remote_id("k"), Some(z));
}

/// Item 2: two clones resolve one divergence in opposite ways, through
/// two remotes; one more write on one side must not fast-forward the
/// other side's resolution away.
#[test]
fn rival_resolutions_stay_diverged_after_another_write() {
    let t = team();
    let (_, backup_url) = t.second_remote("backup");
    t.sb.git(&t.b, &["remote", "add", "backup", &backup_url]);
    t.write(&t.a, "k", T1, "v1");
    t.run(&t.a, &["push", "origin"]).success();
    t.run(&t.a, &["push", "backup"]).success();
    t.run(&t.b, &["fetch", "origin"]).success();
    t.run(&t.b, &["fetch", "backup"]).success();
    let a2 = t.write(&t.a, "k", T2, "a2");
    t.run(&t.a, &["push", "origin"]).success();
    let b2 = t.write(&t.b, "k", T3, "b2");
    t.run(&t.b, &["push", "backup"]).success();

    // A meets B's version through backup and keeps its own; B meets A's
    // through origin and keeps its own.
    t.run(&t.a, &["fetch", "backup"]).code(1);
    t.run(
        &t.a,
        &["resolve", "k", "--keep-local", "--remote", "backup"],
    )
    .success();
    t.run(&t.a, &["push", "backup"]).success();
    t.run(&t.b, &["fetch", "origin"]).code(1);
    t.run(
        &t.b,
        &["resolve", "k", "--keep-local", "--remote", "origin"],
    )
    .success();
    t.run(&t.b, &["push", "origin"]).success();
    assert_eq!(t.remote_id("k"), Some(b2.clone()));

    // Diverged at first, as the docs say ...
    t.run(&t.a, &["fetch", "origin"]).code(1);
    assert_eq!(t.brief_id(&t.a, "k"), Some(a2.clone()));
    // ... and after one more write on A's side too.
    let a3 = t.write(&t.a, "k", T4, "a3");
    t.run(&t.a, &["push", "backup"]).success();
    for _ in 0..2 {
        let out = t.run(&t.b, &["fetch", "backup"]).code(1);
        assert_stdout_has(&out, "  diverged: k (local ");
        assert_eq!(t.brief_id(&t.b, "k"), Some(b2.clone()));
    }
    let out = t.run(&t.a, &["fetch", "origin"]).code(1);
    assert_stdout_has(&out, "  diverged: k (local ");
    assert_eq!(t.brief_id(&t.a, "k"), Some(a3));
}

/// Item 3: a lineage line appended with plain `git notes append`, naming
/// a teammate's version as the parent of theirs, cannot make a version
/// they never held fast-forward it — in the format of 0.3 or this one.
#[test]
fn a_forged_lineage_line_fast_forwards_nothing() {
    let t = team();
    let (a2, b2) = t.diverged();
    let a2_version = t.version_of(&t.a, &a2);
    t.run(&t.b, &["push"]).code(1);
    let b2_version = t.version_of(&t.b, &b2);
    t.sb.git(
        &t.a,
        &[
            "fetch",
            "-q",
            "origin",
            "refs/notes/handoffs:refs/notes/handoffs",
        ],
    );
    for forged in [
        format!(r#"{{"lineage":"{a2}","key":"k","parents":["{b2}"]}}"#),
        format!(
            r#"{{"lineage":"{a2_version}","key":"k","brief":"{a2}","parents":["{b2_version}"]}}"#
        ),
    ] {
        t.append_note(&t.a, &forged);
    }
    t.sb.git(
        &t.a,
        &["push", "-q", "--force", "origin", "refs/notes/handoffs"],
    );
    for _ in 0..2 {
        let out = t.run(&t.b, &["fetch"]).code(1);
        assert_stdout_has(&out, "  diverged: k (local ");
        assert_eq!(t.brief_id(&t.b, "k"), Some(b2.clone()));
    }
    let out = t.run(&t.b, &["push"]).code(1);
    assert_stdout_has(&out, "diverged, not pushed: k (");
    assert_eq!(t.remote_id("k"), Some(a2));
}

/// Items 4 and 5: a remote history that is no notes history (a blob, or a
/// commit whose tree holds a plain file) is never read: resolve and push
/// of a diverged key work, and push sends none of it back.
#[test]
fn an_unchecked_remote_history_feeds_nothing() {
    for junk in ["blob", "tree"] {
        let t = team();
        let (_, b2) = t.diverged();
        let blob = t.sb.git_stdin(
            &t.bare,
            &["hash-object", "-w", "--stdin"],
            "not a notes history\n",
        );
        let bad = if junk == "blob" {
            blob
        } else {
            let tree = t.sb.git_stdin(
                &t.bare,
                &["mktree"],
                format!("100644 blob {blob}\tREADME\n"),
            );
            t.sb.git(&t.bare, &["commit-tree", &tree, "-m", "not notes"])
                .trim()
                .to_string()
        };
        t.sb.git(&t.bare, &["update-ref", "refs/notes/handoffs", &bad]);
        let out = t.run(&t.b, &["fetch"]).code(1);
        assert_stdout_has(&out, "history: ignored");
        assert_stdout_has(&out, "  diverged: k (local ");
        t.run(&t.b, &["resolve", "k", "--keep-local"]).success();
        let out = t.run(&t.b, &["push"]);
        let code = out.get_output().status.code();
        assert_ne!(code, Some(128), "{junk}: {}", stderr(&out));
        assert_eq!(t.remote_id("k"), Some(b2.clone()), "{junk}");
        let merged = t.sb.git_out(
            &t.b,
            &["merge-base", "--is-ancestor", &bad, "refs/notes/handoffs"],
        );
        assert!(!merged.status.success(), "{junk}: the junk was merged in");
    }
}

/// Item 13: `redact` stores its sanitized brief as a new version on top
/// of the one it replaced, so a teammate fast-forwards to it.
#[test]
fn a_redacted_brief_is_a_version_in_the_graph() {
    let t = team();
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let leaked = t.write(&t.a, "k", T1, &format!("deploy with {token}"));
    t.run(&t.a, &["redact"]).success();
    let clean = t.brief_id(&t.a, "k").unwrap();
    assert_ne!(clean, leaked);
    let notes = t.sb.git(&t.a, &["log", "--notes=handoffs", "--format=%N"]);
    let line = lineage_lines(&notes)
        .into_iter()
        .find(|l| l.contains(&format!("\"brief\":\"{clean}\"")))
        .unwrap_or_else(|| panic!("redact recorded no version: {notes}"));
    assert!(line.contains(&t.version_of(&t.a, &leaked)), "{line}");
    t.run(&t.a, &["redact", "--history"]).success();
    t.run(&t.a, &["push"]).success();
    t.run(&t.b, &["fetch"]).success();
    assert_eq!(t.brief_id(&t.b, "k"), Some(clean));
}

impl Team {
    /// `git handoff write KEY --update ARGS…` in `dir` at the clock `now`.
    fn update(&self, dir: &Path, key: &str, now: &str, args: &[&str]) {
        let mut all = vec!["write", key, "--update", "--no-lint"];
        all.extend_from_slice(args);
        self.sb
            .handoff_env(dir, &[("GIT_HANDOFF_NOW", now)], &all, None)
            .success();
    }

    /// The brief `key` holds in `dir`, as JSON.
    fn brief_json(&self, dir: &Path, key: &str) -> serde_json::Value {
        json(
            &self
                .sb
                .git(dir, &["cat-file", "-p", &format!("refs/handoffs/{key}")]),
        )
    }

    /// Ann (A) and Ben (B) both update one brief: Ann changes the next step
    /// and adds a rejected path, Ben adds a decision and a risk and pushes
    /// first. Ann's fetch says diverged.
    fn two_updates(&self) {
        self.write(&self.a, "k", T1, "v1");
        self.run(&self.a, &["push"]).success();
        self.run(&self.b, &["fetch"]).success();
        self.update(
            &self.b,
            "k",
            T2,
            &[
                "--decision",
                "retry with backoff — the API rate-limits",
                "--risk",
                "the cache may be stale",
            ],
        );
        self.run(&self.b, &["push"]).success();
        self.update(
            &self.a,
            "k",
            T3,
            &[
                "--resume-by",
                "add jitter to the retry",
                "--rejected",
                "a fixed sleep (thundering herd)",
            ],
        );
        self.run(&self.a, &["push"]).code(1);
        let out = self.run(&self.a, &["fetch"]).code(1);
        assert_stdout_has(&out, "  diverged: k (local ");
    }
}

/// Item 8: two people who updated one brief settle it with fetch,
/// `resolve --merge`, push — nothing retyped — and the teammate's next
/// fetch fast-forwards to the merge.
#[test]
fn two_updates_to_one_brief_merge_field_by_field() {
    let t = team();
    t.two_updates();
    let out = t.run(&t.a, &["resolve", "k", "--merge"]).success();
    assert_stdout_has(&out, "Merged 'k': local ");
    let merged = t.brief_json(&t.a, "k");
    assert_eq!(merged["resume"]["resume_by"], "add jitter to the retry");
    assert_eq!(
        merged["state"]["decisions"],
        serde_json::json!(["retry with backoff — the API rate-limits"])
    );
    assert_eq!(
        merged["state"]["rejected_paths"],
        serde_json::json!(["a fixed sleep (thundering herd)"])
    );
    assert_eq!(
        merged["state"]["open_risks"],
        serde_json::json!(["the cache may be stale"])
    );
    t.run(&t.a, &["push"]).success();
    let merged_id = t.brief_id(&t.a, "k");
    assert_eq!(t.remote_id("k"), merged_id);
    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(&out, "k (");
    assert_eq!(t.brief_id(&t.b, "k"), merged_id);
}

/// A field both changed differently is a conflict: without `--edit`, exit 1
/// naming each field and both values, nothing changed; `--json` lists them;
/// with `--edit`, git's conflict markers round-trip through the editor.
#[test]
fn a_conflicting_field_is_listed_or_settled_in_the_editor() {
    let t = team();
    t.two_updates();
    // Ben's side changes the next step too (after Ann's fetch: fetch again).
    t.update(&t.b, "k", T4, &["--resume-by", "switch to the bulk API"]);
    t.run(&t.b, &["push"]).success();
    t.run(&t.a, &["fetch"]).code(1);
    let before = t.refs(&t.a);
    let out = t.run(&t.a, &["resolve", "k", "--merge"]).code(1);
    assert_stdout_has(&out, "  resume.resume_by\n");
    assert_stdout_has(&out, ": \"add jitter to the retry\"\n");
    assert_stdout_has(&out, ": \"switch to the bulk API\"\n");
    assert_eq!(t.refs(&t.a), before, "nothing changed");
    let out = t.run(&t.a, &["resolve", "k", "--merge", "--json"]).code(1);
    let v = json(&stdout(&out));
    assert_eq!(v["conflicts"][0]["path"], "resume.resume_by");
    assert_eq!(v["conflicts"][0]["theirs"], "switch to the bulk API");

    // The editor sees git's markers; it keeps both, in one sentence.
    let script = t.sb.path("settle.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\ngrep -q '^<<<<<<< local (' \"$1\" && grep -q '^>>>>>>> origin (' \"$1\" || exit 1\n\
         printf 'resume.resume_by:\\n\"switch to the bulk API, with jitter\"\\n' > \"$1\"\n",
    )
    .unwrap();
    let editor = format!("sh {}", script.display());
    t.sb.handoff_env(
        &t.a,
        &[("GIT_EDITOR", &editor)],
        &["resolve", "k", "--merge", "--edit"],
        None,
    )
    .success();
    let merged = t.brief_json(&t.a, "k");
    assert_eq!(
        merged["resume"]["resume_by"],
        "switch to the bulk API, with jitter"
    );
    assert_eq!(
        merged["state"]["rejected_paths"],
        serde_json::json!(["a fixed sleep (thundering herd)"])
    );
    t.run(&t.a, &["push"]).success();
    t.run(&t.b, &["fetch"]).success();
    assert_eq!(t.brief_id(&t.b, "k"), t.brief_id(&t.a, "k"));
}

/// `redact --history` keeps every version's place in the graph: a
/// teammate who fetches and pushes after the rewrite (their old lines
/// coming back through the union merge) sees no key diverge.
#[test]
fn redact_history_keeps_the_graph_for_teammates() {
    let t = team();
    t.write(&t.a, "k", T1, "v1");
    t.write(&t.a, "other", T1, "o1");
    t.run(&t.a, &["push"]).success();
    t.run(&t.b, &["fetch"]).success();
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    t.write(&t.a, "k", T2, &format!("deploy with {token}"));
    t.run(&t.a, &["redact", "--history"]).success();
    t.run(&t.a, &["push"]).success();
    for _ in 0..2 {
        let out = t.run(&t.b, &["fetch"]).success();
        assert!(!stdout(&out).contains("diverged"), "{}", stdout(&out));
        t.run(&t.b, &["push"]).success();
        let out = t.run(&t.a, &["fetch"]).success();
        assert!(!stdout(&out).contains("diverged"), "{}", stdout(&out));
    }
    assert_eq!(t.brief_id(&t.b, "k"), t.brief_id(&t.a, "k"));
    let notes = t.sb.git(&t.a, &["log", "--notes=handoffs", "--format=%N"]);
    assert!(!notes.contains(token), "the secret came back");
}

/// `log KEY --graph` draws the versions as `git log --graph` draws
/// commits: the merge with both lines under it, the remote's tip and the
/// local brief marked.
#[test]
fn log_graph_draws_the_divergence_and_the_merge() {
    let t = team();
    t.two_updates();
    let out = t.run(&t.a, &["log", "k", "--graph"]).success();
    let text = stdout(&out);
    assert!(text.contains("(origin)"), "{text}");
    assert!(text.contains("(current)"), "{text}");
    assert!(text.contains("|/"), "{text}");
    t.run(&t.a, &["resolve", "k", "--merge"]).success();
    let out = t.run(&t.a, &["log", "k", "--graph"]).success();
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("*  ") && lines[0].contains(" merge"),
        "{text}"
    );
    assert!(lines[0].ends_with("(current)"), "{text}");
    assert_eq!(lines[1], "|\\", "{text}");
    assert!(lines.iter().any(|l| l.starts_with("* |  ")), "{text}");
    assert!(lines.iter().any(|l| l.starts_with("| *  ")), "{text}");
    assert!(lines.contains(&"|/"), "{text}");
    assert_eq!(
        lines.iter().filter(|l| l.contains('*')).count(),
        4,
        "{text}"
    );
    // The first version, the only row with no parent, says so.
    assert!(lines[lines.len() - 1].contains(" root "), "{text}");
    assert_eq!(text.matches(" root ").count(), 1, "{text}");
}

/// Writing exactly the stored content again makes no version: no history
/// line, no lineage line.
#[test]
fn writing_the_stored_content_again_makes_no_version() {
    let t = team();
    let first = t.write(&t.a, "k", T1, "v1");
    let before = t.sb.git(&t.a, &["log", "--notes=handoffs", "--format=%N"]);
    let again = t.write(&t.a, "k", T1, "v1");
    assert_eq!(first, again);
    let after = t.sb.git(&t.a, &["log", "--notes=handoffs", "--format=%N"]);
    assert_eq!(lineage_lines(&before), lineage_lines(&after));
    assert_eq!(lineage_lines(&after).len(), 1, "{after}");
}

/// `log --graph` says who wrote each version (git's `user.name`, recorded
/// in the lineage line), and the words of a lineage line that anyone can
/// write (a teammate's forged but sound line) stay on their own row,
/// redacted: they cannot pass for one of the tool's lines.
#[test]
fn log_graph_names_who_wrote_each_version_and_keeps_a_lines_words_on_its_row() {
    let t = team();
    let b1 = t.write(&t.a, "k", T1, "v1");
    let v1 = t.version_of(&t.a, &b1);
    let version = |hex: &str| gix::ObjectId::from_hex(hex.as_bytes()).unwrap();
    let forged = git_handoff::store::lineage::version_id(
        gix::hash::Kind::Sha1,
        "k",
        version(&b1),
        &[version(&v1)],
    );
    let token = format!("ghp_{}", "x7Kq2".repeat(8));
    // A lineage line's fields in the order the tool writes them (it is
    // recognised by its first field).
    let words = |v: &str| serde_json::to_string(v).unwrap();
    t.append_note(
        &t.a,
        &format!(
            r#"{{"lineage":"{forged}","key":"k","brief":"{b1}","parents":["{v1}"],"session":{},"by":{}}}"#,
            words("s1\n!! DIVERGED: k (forged)"),
            words(&format!("Mallory\n# Resume — k {token}")),
        ),
    );
    let text = stdout(&t.run(&t.a, &["log", "k", "--graph"]).success());
    assert!(text.contains(" by Ada Author"), "{text}");
    assert!(text.contains(" by Mallory # Resume"), "{text}");
    assert!(!text.contains(&token), "{text}");
    for line in text.lines() {
        assert!(
            line.starts_with('*') || line.starts_with('|'),
            "a line of its own: {line:?}\n{text}"
        );
    }
}

/// Found by the model checker (a rollback move, seed 131): B imports A's
/// content over its own diverged version (a version of its own holding
/// A's blob) and pushes only that history; A, who last saw the remote at
/// that blob, writes and pushes. The remote's blob now stands for two
/// unrelated versions, so A's push must not land on it: its keys go with
/// the history's lease, all or none, and the retry on the merged graph
/// says diverged.
#[test]
fn a_push_never_lands_over_a_blob_whose_history_changed_meanwhile() {
    let t = team();
    t.write(&t.b, "k", T1, "b's");
    let a1 = t.write(&t.a, "k", T2, "a's");
    t.run(&t.a, &["push"]).success();
    t.run(&t.b, &["fetch"]).code(1);
    t.import_again(&t.b, "k", &a1);
    t.run(&t.b, &["push"]).success();
    let a2 = t.write(&t.a, "k", T3, "a's next");
    let out = t.run(&t.a, &["push"]).code(1);
    assert_stdout_has(&out, "diverged, not pushed: k (");
    assert_eq!(t.remote_id("k"), Some(a1));
    assert_eq!(t.brief_id(&t.a, "k"), Some(a2));
}

/// The same race through a push that fetches first: B's history (the
/// import) lands after A's push fetched and before it sends. A's keys go
/// with the fetched history's lease, all or none; the next round plans on
/// the merged graph and says diverged.
#[test]
fn a_push_that_fetched_first_never_lands_over_a_history_changed_since() {
    let t = team();
    t.write(&t.b, "k", T1, "b's");
    let a1 = t.write(&t.a, "k", T2, "a's");
    t.run(&t.a, &["push"]).success();
    t.run(&t.b, &["fetch"]).code(1);
    t.write(&t.b, "j", T2, "b's other");
    t.run(&t.b, &["push", "origin", "j"]).success();
    t.import_again(&t.b, "k", &a1);
    // A plain `git fetch` staged a history A never checked: A's push
    // fetches first.
    t.sb.git(
        &t.a,
        &[
            "fetch",
            "-q",
            "origin",
            "+refs/handoffs/*:refs/handoff-fetch/origin/briefs/*",
            "+refs/notes/handoffs:refs/handoff-fetch/origin/notes/handoffs",
        ],
    );
    let a2 = t.write(&t.a, "k", T3, "a's next");
    let out = pause_at(&t.sb, &t.a, &["push"], "before-git-push", || {
        let pushed = t.run(&t.b, &["push", "origin", "j"]).success();
        assert_stdout_has(&pushed, "history: push (fast-forward)");
    });
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("diverged, not pushed: k ("), "{stdout}");
    // The first round's fetch took j: the report still says so.
    assert!(stdout.contains("  created: j ("), "{stdout}");
    assert_eq!(t.remote_id("k"), Some(a1));
    assert_eq!(t.brief_id(&t.a, "k"), Some(a2));
}
