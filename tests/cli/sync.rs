//! Sharing through an ordinary bare remote over file://, with two clones A
//! and B, all real git: push, fetch, three-way reconciliation, diverged
//! keys, leases, the notes merge, prune, init.

use std::path::{Path, PathBuf};

use crate::support::setups::*;
use crate::support::*;
use serde_json::Value;

fn short(id: &str) -> &str {
    &id[..7]
}

#[test]
fn a_pushes_and_b_fetches_the_brief_and_its_history() {
    let t = team();
    // A file to read first that exists in A's tree only (untracked).
    std::fs::write(t.a.join("notes-only-in-a.md"), "mine\n").unwrap();
    let mut cmd = t.sb.command("git", &t.a);
    cmd.env("GIT_HANDOFF_NOW", "2026-11-30T09:00:00Z")
        .arg("handoff")
        .args(write_args(
            Some("feat"),
            ["a wrote this", "carry on", "cargo test"],
            &[
                "--read",
                "notes-only-in-a.md=my notes",
                "--read",
                "README=the readme",
                "--json",
            ],
        ));
    let out = assert_cmd::Command::from_std(cmd).assert().success();
    let v1 = serde_json::from_str::<Value>(&stdout(&out)).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let out = t.run(&t.a, &["push"]).success();
    let text = stdout(&out);
    assert!(
        text.contains(&format!("create: feat ({})", short(&v1))),
        "{text}"
    );
    assert!(text.contains("history: push (fast-forward)"), "{text}");
    assert_eq!(t.remote_id("feat").as_deref(), Some(v1.as_str()));
    assert!(t.id(&t.bare, "refs/notes/handoffs").is_some());
    // A's base now records what both sides agree on.
    assert_eq!(t.base_id(&t.a, "feat").as_deref(), Some(v1.as_str()));

    let out = t.run(&t.b, &["fetch"]).success();
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "created: feat ({} 2026-11-30T09:00:00Z)",
            short(&v1)
        )),
        "{text}"
    );
    // The one brief it brought is the one to resume.
    assert!(
        text.ends_with("Resume with: git handoff resume feat\n"),
        "{text}"
    );
    assert_eq!(t.brief_id(&t.b, "feat").as_deref(), Some(v1.as_str()));
    assert_eq!(t.base_id(&t.b, "feat").as_deref(), Some(v1.as_str()));
    assert_eq!(
        t.id(&t.b, "refs/handoff-remotes/origin/notes"),
        t.id(&t.bare, "refs/notes/handoffs")
    );
    // B reads it as A stored it, and its history too.
    let stored = t.sb.git(&t.a, &["cat-file", "-p", "refs/handoffs/feat"]);
    t.run(&t.b, &["show", "feat"])
        .success()
        .stdout(stored.clone());
    t.run(&t.b, &["show", "feat@origin"])
        .success()
        .stdout(stored);
    assert_eq!(t.log_ids(&t.b, "feat"), [v1]);
    let notes =
        t.sb.git(&t.b, &["log", "--notes=handoffs", "-1", "--format=%N"]);
    assert!(notes.contains("\"done_when\":\"a wrote this\""), "{notes}");

    // B resumes it: a teammate's brief, not another project, with the
    // drift checks run against B's own tree.
    let out = t.run(&t.b, &["resume", "feat"]).success();
    let text = stdout(&out);
    assert!(!text.contains("REPO MISMATCH"), "{text}");
    assert!(text.contains("!! MISSING: notes-only-in-a.md"), "{text}");
    assert!(!text.contains("!! MISSING: README"), "{text}");

    // A second fetch has nothing to do.
    let out = t.run(&t.b, &["fetch", "origin"]).success();
    assert_eq!(
        stdout(&out),
        "From 'origin':\n  briefs: up to date\n  history: up to date\n"
    );
}

#[test]
fn b_writes_a_new_version_and_a_fast_forwards() {
    let t = team();
    let v1 = t.share("feat", "v1");
    let v2 = t.write(&t.b, "feat", "2026-11-30T10:00:00Z", "v2 from b");
    let out = t.run(&t.b, &["push"]).success();
    assert_stdout_has(
        &out,
        &format!("push: feat ({} -> {})", short(&v1), short(&v2)),
    );
    assert_eq!(t.remote_id("feat").as_deref(), Some(v2.as_str()));

    let out = t.run(&t.a, &["fetch"]).success();
    assert_stdout_has(
        &out,
        &format!("fast-forwarded: feat ({} -> {})", short(&v1), short(&v2)),
    );
    assert_eq!(t.brief_id(&t.a, "feat").as_deref(), Some(v2.as_str()));
    assert_eq!(t.log_ids(&t.a, "feat"), [v2, v1]);
}

#[test]
fn both_write_the_same_key_the_second_push_is_refused_and_nothing_is_lost() {
    let t = team();
    let base = t.share("feat", "shared");
    let va = t.write(&t.a, "feat", "2026-11-30T10:00:00Z", "a's version");
    let vb = t.write(&t.b, "feat", "2026-11-30T10:30:00Z", "b's version");
    t.run(&t.a, &["push"]).success();

    let out = t.run(&t.b, &["push"]).code(1);
    let text = stdout(&out);
    assert!(text.contains("diverged, not pushed: feat ("), "{text}");
    assert_eq!(
        stderr(&out),
        "error: not pushed to 'origin': feat; `git handoff fetch origin` shows where each stands, and `git handoff resolve feat --merge` (or `--keep-local|--take-remote`) ends a divergence\n"
    );
    assert_eq!(t.remote_id("feat").as_deref(), Some(va.as_str()));

    // In one stream (a terminal, `2>&1`) the error line closes the report
    // it sums up, for push and fetch alike.
    for command in ["push", "fetch"] {
        let merged =
            t.sb.command("bash", &t.b)
                .args(["-c", &format!("git handoff {command} 2>&1")])
                .output()
                .unwrap();
        let merged = String::from_utf8_lossy(&merged.stdout);
        let last = merged.lines().last().unwrap_or_default();
        assert!(last.starts_with("error: "), "{command}:\n{merged}");
        assert_eq!(merged.matches("error: ").count(), 1, "{merged}");
    }

    // Reported on every fetch until resolved; B keeps its own version.
    for _ in 0..2 {
        let out = t.run(&t.b, &["fetch"]).code(1);
        let line = format!(
            "  diverged: feat (local {} 2026-11-30T10:30:00Z, remote {} 2026-11-30T10:00:00Z)\n",
            short(&vb),
            short(&va)
        );
        assert_stdout_has(&out, &line);
        assert!(
            stderr(&out).starts_with("error: a brief diverged with 'origin': feat;"),
            "{}",
            stderr(&out)
        );
        assert_eq!(t.brief_id(&t.b, "feat").as_deref(), Some(vb.as_str()));
        // The base stays on the last version both agreed on.
        assert_eq!(t.base_id(&t.b, "feat").as_deref(), Some(base.as_str()));
    }
    // Both versions are readable.
    let mine = t.sb.git(&t.b, &["cat-file", "-p", &vb]);
    let theirs = t.sb.git(&t.a, &["cat-file", "-p", &va]);
    t.run(&t.b, &["show", "feat"]).success().stdout(mine);
    t.run(&t.b, &["show", "feat@origin"])
        .success()
        .stdout(theirs);
    let out = t
        .run(&t.b, &["diff", "feat", "@origin", "--summary"])
        .success();
    assert!(
        stdout(&out).starts_with("feat@origin..feat@{0}: "),
        "{}",
        stdout(&out)
    );
    // B's log holds all three versions, A's too once it fetches B's history.
    assert_eq!(
        t.log_ids(&t.b, "feat"),
        [vb.clone(), va.clone(), base.clone()]
    );

    // keep-local: the next push replaces A's version; it stays in history.
    let out = t.run(&t.b, &["resolve", "feat", "--keep-local"]).success();
    assert!(
        stdout(&out).starts_with("Resolved 'feat': kept local"),
        "{}",
        stdout(&out)
    );
    t.run(&t.b, &["push"]).success();
    assert_eq!(t.remote_id("feat").as_deref(), Some(vb.as_str()));
    t.run(&t.a, &["fetch"]).success();
    assert_eq!(t.brief_id(&t.a, "feat").as_deref(), Some(vb.as_str()));
    assert_eq!(t.log_ids(&t.a, "feat"), [vb, va, base]);
    // Nothing left to resolve.
    let out = t.run(&t.a, &["resolve", "feat", "--take-remote"]).code(1);
    assert_eq!(
        stderr(&out),
        "error: 'feat' has not diverged from 'origin'; nothing to resolve (`git handoff fetch origin` reports diverged keys)\n"
    );
}

#[test]
fn take_remote_replaces_the_local_version_and_keeps_it_in_history() {
    let t = team();
    t.share("feat", "shared");
    let va = t.write(&t.a, "feat", "2026-11-30T10:00:00Z", "a");
    let vb = t.write(&t.b, "feat", "2026-11-30T10:30:00Z", "b");
    t.run(&t.a, &["push"]).success();
    t.run(&t.b, &["fetch"]).code(1);

    let out = t
        .run(&t.b, &["resolve", "feat", "--take-remote", "--json"])
        .success();
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["resolution"], "take-remote");
    assert_eq!(t.brief_id(&t.b, "feat").as_deref(), Some(va.as_str()));
    assert!(t.log_ids(&t.b, "feat").contains(&vb));
    // Now in sync: fetch and push are quiet and succeed.
    t.run(&t.b, &["fetch"]).success();
    let out = t.run(&t.b, &["push"]).success();
    assert_stdout_has(&out, "To 'origin':\n  briefs: up to date\n");

    // resolve needs exactly one side.
    let out = t.run(&t.b, &["resolve", "feat"]).code(2);
    assert_stderr_has(&out, "--keep-local");
}

/// Set `key` on the bare remote to `file`'s bytes from A's pre-push hook:
/// someone else's update landing between A's fetch and A's push, after
/// git took A's lease (the remote's own update then fails). The id.
fn plant_during_push(t: &Team, key: &str, file: &Path) -> String {
    t.pre_push_hook_in_a(&format!(
        "id=$(git --git-dir='{bare}' hash-object -w '{file}')\ngit --git-dir='{bare}' update-ref refs/handoffs/{key} \"$id\"\nrm -- \"$0\"\n",
        bare = t.bare.display(),
        file = file.display()
    ));
    t.sb.git(&t.a, &["hash-object", file.to_str().unwrap()])
        .trim()
        .to_string()
}

/// A teammate's version of `key`, written in B (which fetched first) and
/// copied to a file, never pushed by B: what lands on the remote during
/// A's push.
fn teammates_version(t: &Team, key: &str, done: &str) -> PathBuf {
    t.run(&t.b, &["fetch"]);
    let id = t.write(&t.b, key, "2026-11-30T10:30:00Z", done);
    let path = t.sb.path(&format!("{key}-teammate.json"));
    std::fs::write(&path, t.sb.git(&t.b, &["cat-file", "blob", &id])).unwrap();
    path
}

/// B's version of `key` ([`teammates_version`]) lands on the remote
/// during A's next push ([`plant_during_push`]); its id.
fn teammate_lands_during_push(t: &Team, key: &str, done: &str) -> String {
    let theirs = teammates_version(t, key, done);
    plant_during_push(t, key, &theirs)
}

#[test]
fn a_key_the_remote_changed_after_the_fetch_is_a_lost_lease_and_the_others_go() {
    let t = team();
    t.write(&t.a, "one", "2026-11-30T09:00:00Z", "one v1");
    t.publish("two", "two v1");
    let one2 = t.write(&t.a, "one", "2026-11-30T10:00:00Z", "one v2");
    let two2 = t.write(&t.a, "two", "2026-11-30T10:00:00Z", "two v2");

    // A teammate's version of `one` lands on the remote between A's fetch
    // and A's push: the remote's own update fails after git accepted the
    // lease. That is a lost lease: fetched, reconciled (diverged: neither
    // version was written on top of the other) and held, never "push
    // again".
    let theirs_id = teammate_lands_during_push(&t, "one", "one by b");

    let out = t.run(&t.a, &["push"]).code(1);
    let text = stdout(&out);
    assert!(text.contains("diverged, not pushed: one ("), "{text}");
    assert!(!text.contains("push again"), "{text}");
    assert!(
        text.contains("push: two (") && text.contains(&format!("-> {})", short(&two2))),
        "{text}"
    );
    assert_eq!(t.remote_id("one").as_deref(), Some(theirs_id.as_str()));
    assert_eq!(t.remote_id("two").as_deref(), Some(two2.as_str()));
    assert_eq!(t.brief_id(&t.a, "one").as_deref(), Some(one2.as_str()));
    // Every later fetch names the divergence until it is resolved.
    let out = t.run(&t.a, &["fetch"]).code(1);
    assert_stdout_has(&out, &format!("  diverged: one (local {}", short(&one2)));
}

#[test]
fn garbage_the_remote_took_after_the_fetch_is_replaced_with_a_lease_on_it() {
    let t = team();
    t.publish("one", "one v1");
    let one2 = t.write(&t.a, "one", "2026-11-30T10:00:00Z", "one v2");
    let intruder = t.sb.path("intruder.json");
    std::fs::write(&intruder, "{\"pushed\": \"by someone else\"}\n").unwrap();
    let intruder_id = plant_during_push(&t, "one", &intruder);

    // Fetched again after the lost lease, what the remote holds is not a
    // brief: reported as ignored, never as a divergence that
    // `resolve --take-remote` could store, and replaced with a lease on
    // exactly that value.
    let out = t.run(&t.a, &["push"]).success();
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "ignored: one ('origin' holds {}, which is not a valid brief; nothing taken",
            short(&intruder_id)
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("push: one ({} -> ", short(&intruder_id))),
        "{text}"
    );
    assert_eq!(t.remote_id("one").as_deref(), Some(one2.as_str()));
}

#[test]
fn an_atomic_push_is_all_or_nothing() {
    let t = team();
    t.write(&t.a, "one", "2026-11-30T09:00:00Z", "one v1");
    t.publish("two", "two v1");
    let two1 = t.remote_id("two").unwrap();
    t.write(&t.a, "one", "2026-11-30T10:00:00Z", "one v2");
    t.write(&t.a, "two", "2026-11-30T10:00:00Z", "two v2");
    t.pre_push_hook_in_a(&format!(
        "id=$(echo '{{}}' | git --git-dir='{bare}' hash-object -w --stdin)\ngit --git-dir='{bare}' update-ref refs/handoffs/one \"$id\"\nrm -- \"$0\"\n",
        bare = t.bare.display()
    ));
    let notes_before = t.id(&t.bare, "refs/notes/handoffs");

    let out = t.run(&t.a, &["push", "--atomic"]).code(1);
    let text = stdout(&out);
    assert!(text.contains("rejected: one ("), "{text}");
    assert!(
        text.contains("rejected: two (not pushed: another ref of this atomic push was refused)"),
        "{text}"
    );
    assert_eq!(t.remote_id("two").as_deref(), Some(two1.as_str()));
    assert_eq!(t.id(&t.bare, "refs/notes/handoffs"), notes_before);
}

#[test]
fn notes_histories_from_both_clones_merge() {
    let t = team();
    let a1 = t.publish("alpha", "from a");
    // B writes without having fetched: the histories fork.
    let b1 = t.write(&t.b, "beta", "2026-11-30T09:30:00Z", "from b");
    let out = t.run(&t.b, &["push"]).success();
    assert_stdout_has(&out, "history: merged with 'origin' (");
    // It does not read as a brief merged.
    assert_stdout_has(
        &out,
        ": every version either side recorded; no brief is merged by this)",
    );
    // The merge commit has both histories as parents.
    let parents = t.sb.git(
        &t.b,
        &["rev-list", "--parents", "-1", "refs/notes/handoffs"],
    );
    assert_eq!(parents.split_whitespace().count(), 3, "{parents}");
    assert_eq!(
        t.id(&t.bare, "refs/notes/handoffs"),
        t.id(&t.b, "refs/notes/handoffs")
    );

    t.run(&t.a, &["fetch"]).success();
    assert_eq!(t.log_ids(&t.a, "alpha"), [a1]);
    assert_eq!(t.log_ids(&t.a, "beta"), [b1]);
    // Both annotate the same commit: the note holds both lines, for git too.
    let note = t.sb.git(&t.a, &["notes", "--ref=handoffs", "show", "HEAD"]);
    assert!(note.contains("\"done_when\":\"from a\""), "{note}");
    assert!(note.contains("\"done_when\":\"from b\""), "{note}");
    let log = t.sb.git(&t.a, &["log", "--notes=handoffs", "-1"]);
    assert!(log.contains("Notes (handoffs):"), "{log}");

    // Same key written on both sides at different commits: after the
    // merge, log shows the versions from both clones.
    t.sb.commit(&t.a, "a.txt", "a\n", "a's commit");
    let a2 = t.write(&t.a, "beta", "2026-11-30T11:00:00Z", "a again");
    t.sb.commit(&t.b, "b.txt", "b\n", "b's commit");
    let b2 = t.write(&t.b, "beta", "2026-11-30T10:00:00Z", "b again");
    t.run(&t.a, &["push"]).success();
    t.run(&t.b, &["fetch"]).code(1);
    let ids = t.log_ids(&t.b, "beta");
    assert!(ids.contains(&a2) && ids.contains(&b2), "{ids:?}");
}

#[test]
fn a_history_push_that_lost_a_race_is_merged_and_retried() {
    let t = team();
    t.publish("k", "v1");
    let v2 = t.write(&t.a, "k", "2026-11-30T10:00:00Z", "v2");
    // Someone adds to the remote's history between A's fetch and A's push.
    let line = r#"{"schema_version":"1","key":"other","timestamp":"2026-11-30T09:30:00Z","mode":"WRITE","resume":{"done_when":"d","resume_by":"r"},"state":{"branch":"main","next_acceptance_check":"c","worktree":{"root":"/elsewhere","is_linked":false,"git_common_dir":"/elsewhere/.git"}}}"#;
    t.pre_push_hook_in_a(&format!(
        "git --git-dir='{bare}' notes --ref=handoffs append -m '{line}' main\nrm -- \"$0\"\n",
        bare = t.bare.display()
    ));
    let out = t.run(&t.a, &["push"]).success();
    assert_stdout_has(&out, "history: push (fast-forward)");
    assert_eq!(t.remote_id("k").as_deref(), Some(v2.as_str()));
    assert_eq!(
        t.id(&t.bare, "refs/notes/handoffs"),
        t.id(&t.a, "refs/notes/handoffs")
    );
    // Nothing lost on either side: both lines are in the shared history.
    assert_eq!(t.log_ids(&t.a, "other").len(), 1);
    assert_eq!(t.log_ids(&t.a, "k").len(), 2);
}

#[test]
fn a_brief_or_history_holding_a_secret_is_not_pushed() {
    let t = team();
    let token = "ghp_Zq8xW2vN5mZq8xW2vN5mZq8xW2vN5mZq8xW2vN5m";
    t.write(
        &t.a,
        "leaky",
        "2026-11-30T09:00:00Z",
        &format!("token {token} works"),
    );
    let clean = t.write(&t.a, "clean", "2026-11-30T09:00:00Z", "nothing secret");
    let out = t.run(&t.a, &["push"]).code(1);
    let text = stdout(&out);
    assert!(
        text.contains(
            "refused: leaky (holds 1 secret (1 github_token); `git handoff redact` removes it)"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "history: refused, not pushed (1 history line holds secrets: key 'leaky' version "
        ) && text.contains(" (github_token); `git handoff redact --history` removes them)"),
        "{text}"
    );
    assert!(!text.contains(token), "the secret is never echoed: {text}");
    assert_eq!(
        stderr(&out),
        "error: not pushed to 'origin': leaky, the history; they hold secrets: `git handoff redact --history` removes them\n"
    );
    // The clean key went; nothing of the secret did.
    assert_eq!(t.remote_id("clean").as_deref(), Some(clean.as_str()));
    assert_eq!(t.remote_id("leaky"), None);
    assert_eq!(t.id(&t.bare, "refs/notes/handoffs"), None);
    let everything = t.remote_objects();
    assert!(!everything.contains(token));

    // Redacting the briefs and the history lets it go.
    t.run(&t.a, &["redact", "--history"]).success();
    t.run(&t.a, &["push"]).success();
    assert!(t.remote_id("leaky").is_some());
    assert!(t.id(&t.bare, "refs/notes/handoffs").is_some());
    let everything = t.remote_objects();
    assert!(!everything.contains(token));
    assert!(everything.contains("[REDACTED:github_token]"));
}

#[test]
fn drop_then_push_prune_deletes_remotely_and_only_with_a_lease() {
    let t = team();
    let v1 = t.write(&t.a, "gone", "2026-11-30T09:00:00Z", "to be dropped");
    t.share("kept", "stays");
    t.run(&t.a, &["drop", "gone"]).success();

    // Without --prune the remote keeps it, and fetch does not bring it back.
    let out = t.run(&t.a, &["push"]).success();
    assert_stdout_has(
        &out,
        "skipped: gone (dropped here; `git handoff push --prune` deletes it on 'origin')",
    );
    assert_eq!(t.remote_id("gone").as_deref(), Some(v1.as_str()));
    assert_eq!(t.brief_id(&t.a, "gone"), None);

    let out = t.run(&t.a, &["push", "--prune"]).success();
    assert_stdout_has(&out, &format!("delete: gone (was {})", short(&v1)));
    assert_eq!(t.remote_id("gone"), None);
    assert!(t.remote_id("kept").is_some());
    assert_eq!(t.base_id(&t.a, "gone"), None);

    // B learns of it on fetch, but keeps its copy (never deleted by fetch).
    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(&out, "deleted on 'origin': gone (kept here;");
    assert_eq!(t.brief_id(&t.b, "gone").as_deref(), Some(v1.as_str()));
    // ... and does not push it back unless asked by name.
    let out = t.run(&t.b, &["push"]).success();
    assert_stdout_has(&out, "skipped: gone (deleted on 'origin';");
    assert_eq!(t.remote_id("gone"), None);
    t.run(&t.b, &["push", "origin", "gone"]).success();
    assert_eq!(t.remote_id("gone").as_deref(), Some(v1.as_str()));
}

#[test]
fn a_prune_never_deletes_a_version_it_has_not_seen() {
    let t = team();
    t.share("k", "v1");
    t.run(&t.a, &["drop", "k"]).success();
    let v2 = t.write(&t.b, "k", "2026-11-30T10:00:00Z", "v2");
    t.run(&t.b, &["push"]).success();
    // A dropped v1, but the remote now holds v2: it is restored, not deleted.
    let out = t.run(&t.a, &["push", "--prune"]).success();
    assert_stdout_has(&out, "restored: k (");
    assert_eq!(t.remote_id("k").as_deref(), Some(v2.as_str()));
    assert_eq!(t.brief_id(&t.a, "k").as_deref(), Some(v2.as_str()));
}

#[test]
fn a_local_only_key_survives_fetch() {
    let t = team();
    t.publish("shared", "shared");
    let mine = t.write(&t.b, "mine", "2026-11-30T09:00:00Z", "b only");
    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(
        &out,
        "local only: mine (`git handoff push origin` sends it)",
    );
    assert_eq!(t.brief_id(&t.b, "mine").as_deref(), Some(mine.as_str()));
    assert!(t.brief_id(&t.b, "shared").is_some());
    // Even a plain `git fetch --prune` of the branches leaves the briefs.
    t.sb.git(&t.b, &["fetch", "-q", "--prune"]);
    assert_eq!(t.brief_id(&t.b, "mine").as_deref(), Some(mine.as_str()));
}

#[test]
fn refs_on_the_remote_that_are_not_briefs_are_not_taken() {
    let t = team();
    let junk = t.sb.git_stdin(
        &t.bare,
        &["hash-object", "-w", "--stdin"],
        "not json at all\n",
    );
    t.sb.git(&t.bare, &["update-ref", "refs/handoffs/junk", &junk]);
    t.sb.git(
        &t.bare,
        &["update-ref", "refs/handoffs/nested/deeper", &junk],
    );
    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(
        &out,
        &format!(
            "ignored: junk ('origin' holds {}, which is not a valid brief; nothing taken;",
            short(&junk)
        ),
    );
    assert_eq!(t.sb.git(&t.b, &["for-each-ref", "refs/handoffs"]), "");
}

#[test]
fn lost_bases_are_recovered_from_the_histories() {
    // A base that is lost (deleted by hand; `git fetch --prune` no longer
    // reaches them, they are outside refs/remotes/): the next handoff
    // fetch decides from the notes histories instead.
    let t = team();
    let v1 = t.share("k", "v1");
    t.sb.git(&t.a, &["fetch", "-q", "--prune"]);
    t.sb.git(&t.b, &["fetch", "-q", "--prune"]);
    assert_eq!(t.base_id(&t.a, "k").as_deref(), Some(v1.as_str()));
    for dir in [&t.a, &t.b] {
        t.sb.git(
            dir,
            &["update-ref", "-d", "refs/handoff-remotes/origin/briefs/k"],
        );
    }

    // A is ahead: the remote's version is in A's history.
    let v2 = t.write(&t.a, "k", "2026-11-30T10:00:00Z", "v2");
    let out = t.run(&t.a, &["push"]).success();
    assert_stdout_has(&out, &format!("push: k ({} -> {})", short(&v1), short(&v2)));
    // B's version is in the remote's history: B fast-forwards.
    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(&out, "fast-forwarded: k");
    assert_eq!(t.brief_id(&t.b, "k").as_deref(), Some(v2.as_str()));
}

#[test]
fn a_first_fetch_with_unrelated_versions_is_diverged() {
    let t = team();
    let va = t.publish("k", "a");
    let vb = t.write(&t.b, "k", "2026-11-30T09:30:00Z", "b");
    let out = t.run(&t.b, &["fetch"]).code(1);
    assert_stdout_has(
        &out,
        &format!(
            "diverged: k (local {} 2026-11-30T09:30:00Z, remote {} 2026-11-30T09:00:00Z)",
            short(&vb),
            short(&va)
        ),
    );
    assert_eq!(t.brief_id(&t.b, "k").as_deref(), Some(vb.as_str()));
}

#[test]
fn dry_run_changes_nothing_here_or_there() {
    let t = team();
    let v1 = t.write(&t.a, "k", "2026-11-30T09:00:00Z", "v1");
    let before = t.refs(&t.a);
    let out = t.run(&t.a, &["push", "--dry-run"]).success();
    let text = stdout(&out);
    assert!(
        text.contains(&format!("would create: k ({})", short(&v1))),
        "{text}"
    );
    assert!(
        text.contains("history: would push (fast-forward)"),
        "{text}"
    );
    assert_eq!(t.refs(&t.a), before);
    assert_eq!(t.remote_id("k"), None);
    assert_eq!(t.id(&t.bare, "refs/notes/handoffs"), None);
}

#[test]
fn dry_run_checks_each_lease_against_the_remote() {
    let t = team();
    t.share("k", "v1");
    let v2 = t.write(&t.a, "k", "2026-11-30T10:00:00Z", "v2");
    t.run(&t.a, &["push"]).success();
    t.write(&t.b, "k", "2026-11-30T10:30:00Z", "v3");
    let before = t.refs(&t.b);
    // B has not fetched since: its plan says "ahead", the remote says no.
    let out = t.run(&t.b, &["push", "--dry-run"]).code(1);
    assert_stdout_has(
        &out,
        "rejected: k ('origin' changed it since the last fetch; `git handoff fetch origin` shows the new version, then push again)",
    );
    assert_eq!(
        stderr(&out),
        "error: not pushed to 'origin': k; `git handoff fetch origin` shows where each stands, and `git handoff resolve k --merge` (or `--keep-local|--take-remote`) ends a divergence\n"
    );
    assert_stdout_has(
        &out,
        "history: would merge 'origin''s newer history first, then push",
    );
    assert_eq!(t.refs(&t.b), before);
    assert_eq!(t.remote_id("k").as_deref(), Some(v2.as_str()));
}

#[test]
fn push_named_keys_only() {
    let t = team();
    t.write(&t.a, "one", "2026-11-30T09:00:00Z", "one");
    let two = t.write(&t.a, "two", "2026-11-30T09:00:00Z", "two");
    t.run(&t.a, &["push", "origin", "two"]).success();
    assert_eq!(t.remote_id("one"), None);
    assert_eq!(t.remote_id("two").as_deref(), Some(two.as_str()));

    // The remote comes first; a key there is a clear error.
    let out = t.run(&t.a, &["push", "one"]).code(1);
    assert_eq!(
        stderr(&out),
        "error: 'one' is not a remote of this repository; name the remote first (`git handoff push origin one`); `git remote -v` lists the remotes\n"
    );
    let out = t.run(&t.a, &["push", "origin", "nope"]).code(1);
    assert_eq!(
        stderr(&out),
        "error: no brief 'nope' here or on 'origin'; `git handoff list` shows the keys; nothing was pushed\n"
    );
    assert_eq!(t.remote_id("one"), None);
}

#[test]
fn many_keys_are_pushed_in_chunks() {
    let t = team();
    let v = t.write(&t.a, "k0", "2026-11-30T09:00:00Z", "many");
    let mut stdin = String::new();
    for i in 1..250 {
        stdin.push_str(&format!("create refs/handoffs/k{i} {v}\n"));
    }
    t.sb.git_stdin(&t.a, &["update-ref", "--stdin"], stdin);
    t.run(&t.a, &["push"]).success();
    let remote = t.sb.git(&t.bare, &["for-each-ref", "refs/handoffs"]);
    assert_eq!(remote.lines().count(), 250);
    // All agreed: a second push sends nothing.
    let out = t.run(&t.a, &["push"]).success();
    assert_stdout_has(&out, "To 'origin':\n  briefs: up to date\n");
}

#[test]
fn many_creates_go_through_the_outgoing_namespace_and_leave_nothing() {
    let t = team();
    let v = t.write(&t.a, "k0", "2026-11-30T09:00:00Z", "many");
    let secret = t.write(&t.a, "leaky", "2026-11-30T09:00:00Z", TOKEN);
    let mut stdin = String::new();
    for i in 1..600 {
        stdin.push_str(&format!("create refs/handoffs/k{i} {v}\n"));
    }
    // What a killed push left behind: its process is gone.
    stdin.push_str(&format!("create refs/handoff-push/999999999/k1 {v}\n"));
    t.sb.git_stdin(&t.a, &["update-ref", "--stdin"], stdin);
    // A teammate creates k7 between A's fetch and A's push.
    let intruder = t.sb.path("intruder.json");
    std::fs::write(&intruder, "{\"pushed\": \"by someone else\"}\n").unwrap();
    t.pre_push_hook_in_a(&format!(
        "git for-each-ref --format='%(refname)' refs/handoff-push >'{seen}'\nid=$(git --git-dir='{bare}' hash-object -w '{file}')\ngit --git-dir='{bare}' update-ref refs/handoffs/k7 \"$id\"\nrm -- \"$0\"\n",
        seen = t.sb.path("seen").display(),
        bare = t.bare.display(),
        file = intruder.display()
    ));
    let intruder_id = t.sb.git(&t.a, &["hash-object", intruder.to_str().unwrap()]);

    let out = t.run(&t.a, &["push"]).code(1);
    let text = stdout(&out);
    // The secret brief and the created-meanwhile key are held by name.
    assert!(text.contains("refused: leaky ("), "{text}");
    assert_eq!(t.remote_id("leaky"), None);
    assert_eq!(t.brief_id(&t.a, "leaky"), Some(secret));
    assert!(text.contains("rejected: k7 ("), "{text}");
    assert!(!t.remote_bytes().contains(TOKEN));
    assert_eq!(t.remote_id("k7").as_deref(), Some(intruder_id.trim()));
    // Every other key went, through one pinned namespace of this process.
    let remote = t.sb.git(&t.bare, &["for-each-ref", "refs/handoffs"]);
    assert_eq!(remote.lines().count(), 600, "k0..k599, k7 the intruder's");
    assert_eq!(t.remote_id("k599").as_deref(), Some(v.as_str()));
    let seen = std::fs::read_to_string(t.sb.path("seen")).unwrap();
    assert_eq!(seen.lines().count(), 600, "{seen}");
    assert!(!seen.contains("999999999"), "the stale pin was swept first");
    assert!(seen.lines().all(|l| l.starts_with("refs/handoff-push/")));
    assert_eq!(t.sb.git(&t.a, &["for-each-ref", "refs/handoff-push"]), "");
    assert!(!t.refs(&t.bare).contains("handoff-push"));
    // The bases of the new keys went into packed-refs in one rewrite, as
    // git reads them.
    assert!(
        !t.a.join(".git/refs/handoff-remotes/origin/briefs/k599")
            .exists()
    );
    let base = t.sb.git(
        &t.a,
        &["rev-parse", "refs/handoff-remotes/origin/briefs/k599"],
    );
    assert_eq!(base.trim(), v);
    t.sb.git(&t.a, &["fsck", "--no-progress"]);
    // The pushed keys now have bases: a second push sends only k7, over
    // what is not a brief, with a lease on it.
    let out = t.run(&t.a, &["push"]).code(1);
    let text = stdout(&out);
    assert_eq!(text.matches("push: k").count(), 1, "{text}");
    assert!(text.contains("push: k7 ("), "{text}");
    assert_eq!(t.remote_id("k7").as_deref(), Some(v.as_str()));
    assert_eq!(t.sb.git(&t.a, &["for-each-ref", "refs/handoff-push"]), "");
}

impl Team {
    /// Keys `k1`..`k{n-1}` in `dir`, created as refs: the brief `v` (of
    /// `k0`) under each key's name. Their ids, in key order.
    fn copies_of(&self, dir: &Path, v: &str, n: usize) -> Vec<String> {
        let body = self.sb.git(dir, &["cat-file", "blob", v]);
        assert!(body.contains("\"key\": \"k0\""), "{body}");
        let files: Vec<String> = (1..n)
            .map(|i| {
                let file = self.sb.path(&format!("k{i}.json"));
                std::fs::write(
                    &file,
                    body.replace("\"key\": \"k0\"", &format!("\"key\": \"k{i}\"")),
                )
                .unwrap();
                file.display().to_string()
            })
            .collect();
        let mut args = vec!["hash-object", "-w"];
        args.extend(files.iter().map(String::as_str));
        let ids: Vec<String> = self.sb.git(dir, &args).lines().map(String::from).collect();
        let mut stdin = String::new();
        for (i, id) in (1..n).zip(&ids) {
            stdin.push_str(&format!("create refs/handoffs/k{i} {id}\n"));
        }
        self.sb.git_stdin(dir, &["update-ref", "--stdin"], stdin);
        ids
    }
}

/// A fetch that creates many keys (a fresh clone's first) writes their
/// briefs and bases in one rewrite of `packed-refs`, as git reads them,
/// and a key diverged here among them stays as it was.
#[test]
fn a_fetch_of_many_new_keys_writes_them_in_one_rewrite() {
    let t = team();
    let v = t.write(&t.a, "k0", "2026-11-30T09:00:00Z", "many");
    let ids = t.copies_of(&t.a, &v, 200);
    t.run(&t.a, &["push"]).success();
    let mine = t.write(&t.b, "k3", "2026-11-30T10:00:00Z", "mine");

    let out = t.run(&t.b, &["fetch"]).code(1);
    let text = stdout(&out);
    assert!(
        text.contains("created: 199 briefs (k0, k1, k10, … and 196 more;"),
        "{text}"
    );
    assert!(text.contains("diverged: k3"), "{text}");
    assert_eq!(t.brief_id(&t.b, "k3"), Some(mine));
    for name in [
        "refs/handoffs/k199",
        "refs/handoff-remotes/origin/briefs/k199",
    ] {
        assert!(!t.b.join(".git").join(name).exists(), "{name} is packed");
        assert_eq!(
            t.id(&t.b, name).as_deref(),
            Some(ids[198].as_str()),
            "{name}"
        );
    }
    let listed = t.sb.git(&t.b, &["for-each-ref", "refs/handoffs"]);
    assert_eq!(listed.lines().count(), 200);
    t.sb.git(&t.b, &["fsck", "--no-progress"]);
    // Nothing is left to reconcile.
    let again = stdout(&t.run(&t.b, &["fetch"]).code(1));
    assert!(!again.contains("created:"), "{again}");
}

/// The staging namespace after a fetch holds what `git fetch --prune`
/// with the refspecs would leave (every value the remote lists, nothing
/// it no longer has), and a first fetch of many keys stages them without
/// a ref file per key: one rewrite of `packed-refs`, which every later
/// push and fetch reads at once.
#[test]
fn a_fetch_stages_many_keys_packed_and_prunes_as_git_fetch_would() {
    let t = team();
    let v = t.write(&t.a, "k0", "2026-11-30T09:00:00Z", "many");
    let ids = t.copies_of(&t.a, &v, 150);
    t.run(&t.a, &["push"]).success();

    t.run(&t.b, &["fetch"]).success();
    let staged = |name: &str| format!("refs/handoff-fetch/origin/{name}");
    let loose = files_under(&t.b.join(".git/refs/handoff-fetch"));
    assert!(
        loose.is_empty(),
        "{} staged as loose ref files, first {:?}",
        loose.len(),
        loose.first()
    );
    assert_eq!(
        t.id(&t.b, &staged("briefs/k149")).as_deref(),
        Some(ids[148].as_str())
    );
    let same = |dir: &Path, pattern: &str| {
        t.sb.git(dir, &["for-each-ref", "--format=%(objectname)", pattern])
    };
    assert_eq!(
        same(&t.b, "refs/handoff-fetch/origin/briefs"),
        same(&t.bare, "refs/handoffs"),
        "every brief the remote holds is staged"
    );
    assert_eq!(
        t.id(&t.b, &staged("notes/handoffs")),
        t.id(&t.bare, "refs/notes/handoffs")
    );

    // The remote moves one key on and loses another: staged and pruned.
    let newer = t.write(&t.a, "k0", "2026-11-30T11:00:00Z", "newer");
    t.run(&t.a, &["push"]).success();
    t.sb.git(&t.bare, &["update-ref", "-d", "refs/handoffs/k7"]);
    t.run(&t.b, &["fetch"]).success();
    assert_eq!(t.id(&t.b, &staged("briefs/k0")), Some(newer.clone()));
    assert_eq!(t.brief_id(&t.b, "k0"), Some(newer));
    assert_eq!(t.id(&t.b, &staged("briefs/k7")), None, "pruned");
    assert_eq!(
        same(&t.b, "refs/handoff-fetch/origin/briefs"),
        same(&t.bare, "refs/handoffs")
    );
    assert_eq!(
        t.id(&t.b, &staged("notes/handoffs")),
        t.id(&t.bare, "refs/notes/handoffs")
    );
    t.sb.git(&t.b, &["fsck", "--no-progress"]);
}

#[test]
fn the_default_remote_is_handoff_remote_then_upstream_then_origin() {
    let t = team();
    let root = t.sb.dir.path().to_path_buf();
    let team_bare = t.sb.path("team.git");
    t.sb.git(
        &root,
        &["init", "-q", "--bare", team_bare.to_str().unwrap()],
    );
    t.sb.git(
        &t.a,
        &[
            "remote",
            "add",
            "team",
            &format!("file://{}", team_bare.display()),
        ],
    );
    let v = t.write(&t.a, "k", "2026-11-30T09:00:00Z", "v");

    t.sb.git(&t.a, &["config", "handoff.remote", "team"]);
    t.run(&t.a, &["push"]).success();
    assert_eq!(
        t.id(&team_bare, "refs/handoffs/k").as_deref(),
        Some(v.as_str())
    );
    assert_eq!(t.remote_id("k"), None);

    t.sb.git(&t.a, &["config", "handoff.remote", "nowhere"]);
    let out = t.run(&t.a, &["push"]).code(1);
    assert_eq!(
        stderr(&out),
        "error: handoff.remote is 'nowhere', which is not a remote; fix it with `git config handoff.remote NAME`\n"
    );
    t.sb.git(&t.a, &["config", "--unset", "handoff.remote"]);
    // The branch's upstream remote comes next.
    t.sb.git(&t.a, &["config", "branch.main.remote", "team"]);
    t.sb.git(&t.a, &["remote", "rename", "origin", "upstream"]);
    t.sb.git(&t.a, &["config", "branch.main.remote", "upstream"]);
    t.run(&t.a, &["push"]).success();
    assert_eq!(t.remote_id("k").as_deref(), Some(v.as_str()));
}

#[test]
fn network_and_remote_errors_are_one_clear_line_and_write_nothing() {
    let t = team();
    t.write(&t.a, "k", "2026-11-30T09:00:00Z", "v");
    let before = t.refs(&t.a);
    let out = t.run(&t.a, &["fetch", "nosuch"]).code(1);
    assert_eq!(
        stderr(&out),
        "error: 'nosuch' is not a remote of this repository; `git remote -v` lists them, `git remote add nosuch URL` adds one\n"
    );
    t.sb.git(
        &t.a,
        &["remote", "set-url", "origin", &format!("{}-missing", t.url)],
    );
    for args in [&["fetch"][..], &["push"][..]] {
        let out = t.run(&t.a, args).code(128);
        let err = stderr(&out);
        assert!(
            err.starts_with("fatal: git fetch from 'origin' failed: fatal: ")
                && err.lines().count() == 1,
            "{err}"
        );
        // git's specific reason, not its generic last line.
        assert!(
            err.contains("does not appear to be a git repository; check"),
            "{err}"
        );
        assert!(
            err.trim_end()
                .ends_with("check the remote with `git remote -v` and `git fetch origin`"),
            "{err}"
        );
    }
    assert_eq!(t.refs(&t.a), before);

    // A clone with no remote at all.
    let lone = t.sb.repo("lone");
    // no remote at all is fatal, as git's "No configured push destination"
    let out = t.run(&lone, &["push"]).code(128);
    assert!(
        stderr(&out).starts_with("fatal: no remote to share with: there is no 'origin';"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn init_writes_only_safe_config_and_git_push_still_works() {
    let t = team();
    let config = |dir: &Path| t.sb.git(dir, &["config", "--local", "--list"]);
    let before = config(&t.a);
    let out = t.run(&t.a, &["init", "origin"]).success();
    let text = stdout(&out);
    for line in [
        "set      notes.rewriteRef                refs/notes/handoffs\n",
        "set      notes.handoffs.mergeStrategy    cat_sort_uniq\n",
        "set      handoff.remote                  origin\n",
    ] {
        assert!(text.contains(line), "{text}");
    }
    let after = config(&t.a);
    let mut added: Vec<&str> = after.lines().filter(|l| !before.contains(l)).collect();
    added.sort_unstable();
    assert_eq!(
        added,
        [
            "handoff.remote=origin",
            "merge.handoff-narrative.driver=git handoff merge-narrative %O %A %B %P",
            "merge.handoff-narrative.name=git-handoff narrative (merged as a log, newest entry first)",
            "notes.handoffs.mergestrategy=cat_sort_uniq",
            "notes.rewriteref=refs/notes/handoffs",
            "remote.origin.fetch=+refs/handoffs/*:refs/handoff-fetch/origin/briefs/*",
            "remote.origin.fetch=+refs/notes/handoffs*:refs/handoff-fetch/origin/notes/handoffs*",
        ],
        "{after}"
    );
    assert!(!after.contains("remote.origin.push"), "{after}");
    // The branch refspec stays first and as it was; the added ones stage
    // the briefs outside refs/remotes/.
    let fetch_specs =
        t.sb.git(&t.a, &["config", "--get-all", "remote.origin.fetch"]);
    assert!(
        fetch_specs.starts_with("+refs/heads/*:refs/remotes/origin/*\n"),
        "{fetch_specs}"
    );
    assert_eq!(fetch_specs.lines().count(), 3, "{fetch_specs}");

    // Idempotent; --check agrees.
    let out = t.run(&t.a, &["init", "origin"]).success();
    assert_stdout_has(&out, "Everything is set up; nothing to change.");
    assert_eq!(config(&t.a), after);
    t.run(&t.a, &["init", "--check", "origin"]).success();
    // An existing rewriteRef list is extended, not replaced.
    t.sb.git(&t.b, &["config", "notes.rewriteRef", "refs/notes/commits"]);
    t.run(&t.b, &["init"]).success();
    assert_eq!(
        t.sb.git(&t.b, &["config", "--get-all", "notes.rewriteRef"]),
        "refs/notes/commits\nrefs/notes/handoffs\n"
    );

    // A plain `git push` of a branch works as before, and pushes no brief.
    t.write(&t.a, "k", "2026-11-30T09:00:00Z", "v");
    t.sb.commit(&t.a, "new.txt", "x\n", "new work");
    t.sb.git(&t.a, &["push", "-q"]);
    assert_eq!(t.id(&t.a, "main"), t.id(&t.bare, "refs/heads/main"));
    assert_eq!(t.remote_id("k"), None);
    t.sb.git(&t.a, &["push", "-q", "origin", "HEAD:refs/heads/topic"]);
    assert_eq!(t.id(&t.a, "HEAD"), t.id(&t.bare, "refs/heads/topic"));

    // notes.rewriteRef: the history note follows an amend.
    t.write(&t.a, "k", "2026-11-30T10:00:00Z", "on the amended commit");
    t.sb.git(
        &t.a,
        &["commit", "-q", "--amend", "-m", "new work, amended"],
    );
    let note = t.sb.git(&t.a, &["notes", "--ref=handoffs", "show", "HEAD"]);
    assert!(note.contains("on the amended commit"), "{note}");

    // A remote that does not exist is refused and nothing is written.
    let lone = t.sb.repo("lone");
    let out = t.run(&lone, &["init", "nowhere"]).code(1);
    assert!(
        stderr(&out).starts_with("error: 'nowhere' is not a remote"),
        "{}",
        stderr(&out)
    );
    assert!(!config(&lone).contains("notes."));
    assert!(!lone.join(".gitattributes").exists());
}

#[cfg(unix)]
impl Team {
    /// A's pre-push hook: the shell `script` (git runs it during A's next
    /// pushes, while the remote waits for what A sends).
    fn pre_push_hook_in_a(&self, script: &str) {
        use std::os::unix::fs::PermissionsExt;
        let hook = self.a.join(".git/hooks/pre-push");
        std::fs::write(&hook, format!("#!/bin/sh\n{script}")).unwrap();
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

// ---------------------------------------------------------------------------
// Hostile conditions (issue 15): plain git mixed with `git handoff`.

impl Team {
    /// Every byte the bare remote holds: every object and every ref name.
    /// The base `dir` keeps of `key` for origin: the version both sides
    /// last agreed on.
    fn base_id(&self, dir: &Path, key: &str) -> Option<String> {
        self.id(dir, &format!("refs/handoff-remotes/origin/briefs/{key}"))
    }

    fn remote_bytes(&self) -> String {
        format!(
            "{}\n{}",
            self.remote_objects(),
            self.sb.git(&self.bare, &["for-each-ref"])
        )
    }

    /// Every object the remote holds, as `cat-file --batch` prints them.
    fn remote_objects(&self) -> String {
        let objects = self
            .sb
            .git_out(&self.bare, &["cat-file", "--batch-all-objects", "--batch"])
            .stdout;
        String::from_utf8_lossy(&objects).into_owned()
    }

    /// A commit on a new branch `name` in `dir`; its id.
    fn branch_commit(&self, dir: &Path, name: &str) -> String {
        self.sb.git(dir, &["checkout", "-q", "-b", name]);
        self.sb
            .commit(dir, "branch.txt", name, &format!("on {name}"));
        let id = self.sb.git(dir, &["rev-parse", "HEAD"]).trim().to_string();
        self.sb.git(dir, &["checkout", "-q", "main"]);
        id
    }
}

const TOKEN: &str = "ghp_Zq8xW2vN5mZq8xW2vN5mZq8xW2vN5mZq8xW2vN5m";

#[test]
fn a_teammates_branch_named_handoffs_never_touches_the_bases() {
    // Item 1: bases lived under refs/remotes/<remote>/handoffs/<key>, where
    // git puts a teammate's branch `handoffs/<key>`.
    let t = team();
    let v1 = t.share("k1", "v1");
    assert_eq!(t.base_id(&t.b, "k1").as_deref(), Some(v1.as_str()));
    assert!(t.id(&t.b, "refs/handoff-remotes/origin/notes").is_some());
    assert!(!t.refs(&t.b).contains("refs/remotes/origin/handoffs"));
    assert!(!t.refs(&t.b).contains("refs/notes/remotes/"));
    // B drops k1; A pushes a branch named handoffs/k1 with plain git.
    t.run(&t.b, &["drop", "k1"]).success();
    let branch = t.branch_commit(&t.a, "handoffs/k1");
    // (By its full name: in a clone that holds the brief k1, the short name
    // `handoffs/k1` also matches refs/handoffs/k1, git's `refs/<name>` rule.)
    t.sb.git(&t.a, &["push", "-q", "origin", "refs/heads/handoffs/k1"]);
    // A plain fetch in B works and puts the branch where git puts it.
    t.sb.git(&t.b, &["fetch", "-q", "--prune"]);
    assert_eq!(
        t.id(&t.b, "refs/remotes/origin/handoffs/k1").as_deref(),
        Some(branch.as_str())
    );
    assert_eq!(
        t.base_id(&t.b, "k1").as_deref(),
        Some(v1.as_str()),
        "the base survives a plain `git fetch --prune`"
    );
    // `git branch -r` lists branches only.
    let branches = t.sb.git(&t.b, &["branch", "-r"]);
    assert_eq!(
        branches.split_whitespace().collect::<Vec<_>>(),
        [
            "origin/HEAD",
            "->",
            "origin/main",
            "origin/handoffs/k1",
            "origin/main"
        ]
    );
    // Nothing changed on the remote: the dropped brief stays dropped.
    let out = t.run(&t.b, &["fetch"]).success();
    let text = stdout(&out);
    assert!(text.contains("dropped here: k1"), "{text}");
    assert!(!text.contains("restored"), "{text}");
    assert_eq!(t.brief_id(&t.b, "k1"), None);
    // B, which dropped the brief, names the branch by its short name.
    t.sb.git(&t.b, &["checkout", "-q", "handoffs/k1"]);
    t.sb.git(&t.b, &["push", "-q", "origin", "handoffs/k1"]);
}

#[test]
fn bases_of_an_earlier_version_are_moved_once_and_safely() {
    let t = team();
    let v1 = t.write(&t.a, "k1", "2026-11-30T09:00:00Z", "v1");
    let v2 = t.share("k2", "v2");
    let notes = t.id(&t.b, "refs/handoff-remotes/origin/notes").unwrap();
    // Rebuild the old layout in B: k1's base only under its old name, k2's
    // under both (a migration killed between its two steps), plus a real
    // branch `handoffs/feature` that must stay git's.
    let old = |k: &str| format!("refs/remotes/origin/handoffs/{k}");
    let new = |k: &str| format!("refs/handoff-remotes/origin/briefs/{k}");
    t.base_in_the_old_place(&t.b, "k1", &v1);
    t.sb.git(&t.b, &["update-ref", &old("k2"), &v2]);
    let head = t.sb.git(&t.b, &["rev-parse", "HEAD"]).trim().to_string();
    t.sb.git(&t.b, &["update-ref", &old("feature"), &head]);
    t.sb.git(
        &t.b,
        &["update-ref", "refs/notes/remotes/origin/handoffs", &notes],
    );
    t.sb.git(
        &t.b,
        &["update-ref", "-d", "refs/handoff-remotes/origin/notes"],
    );

    // The next command that reads them moves them.
    t.run(&t.b, &["log", "k1"]).success();
    assert_eq!(t.id(&t.b, &new("k1")).as_deref(), Some(v1.as_str()));
    assert_eq!(t.id(&t.b, &new("k2")).as_deref(), Some(v2.as_str()));
    assert_eq!(t.id(&t.b, &old("k1")), None);
    assert_eq!(t.id(&t.b, &old("k2")), None);
    assert_eq!(
        t.id(&t.b, "refs/handoff-remotes/origin/notes").as_deref(),
        Some(notes.as_str())
    );
    assert_eq!(t.id(&t.b, "refs/notes/remotes/origin/handoffs"), None);
    assert_eq!(
        t.id(&t.b, &old("feature")).as_deref(),
        Some(head.as_str()),
        "a branch is git's, never moved"
    );
    // Reconciliation reads the moved bases: nothing changed anywhere.
    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(&out, "briefs: up to date");
    t.sb.git(&t.b, &["fsck", "--strict", "--no-progress"]);
}

#[test]
fn a_stale_clones_mirror_push_is_a_rollback_not_a_fast_forward() {
    // Item 2.
    let t = team();
    let old = t.share("k1", "old");
    let new = t.write(&t.a, "k1", "2026-11-30T10:00:00Z", "new");
    t.run(&t.a, &["push"]).success();
    // B is stale and pushes everything it has with plain git.
    t.sb.git(&t.b, &["push", "-q", "--mirror", "origin"]);
    assert_eq!(t.remote_id("k1").as_deref(), Some(old.as_str()));

    let out = t.run(&t.a, &["fetch"]).success();
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "rolled back on 'origin': k1: the remote holds an older version ({} 2026-11-30T09:00:00Z); kept {} 2026-11-30T10:00:00Z; `git handoff push origin` repairs it",
            short(&old),
            short(&new)
        )),
        "{text}"
    );
    assert!(!text.contains("fast-forwarded"), "{text}");
    assert_eq!(t.brief_id(&t.a, "k1").as_deref(), Some(new.as_str()));
    // The next push repairs the remote, with a lease on the old value.
    let out = t.run(&t.a, &["push"]).success();
    assert_stdout_has(
        &out,
        &format!("push: k1 ({} -> {})", short(&old), short(&new)),
    );
    assert_eq!(t.remote_id("k1").as_deref(), Some(new.as_str()));
    // And the stale clone catches up instead of spreading the rollback.
    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(&out, "fast-forwarded: k1");
    assert_eq!(t.brief_id(&t.b, "k1").as_deref(), Some(new.as_str()));
}

#[test]
fn a_secret_never_leaves_by_any_way() {
    // Item 3 (a), (b): a history line that is no brief, a key, a ref name.
    let t = team();
    t.write(&t.a, "clean", "2026-11-30T09:00:00Z", "nothing secret");
    // (a) a line added with plain git notes travels unparsed.
    append_note_line(&t, &format!("deploy with {TOKEN}"));
    let out = t.run(&t.a, &["push"]).code(1);
    let text = stdout(&out);
    assert!(
        text.contains("history: refused, not pushed (1 history line holds secrets: a history line that is not a brief version "),
        "{text}"
    );
    assert!(text.contains("(github_token)"), "{text}");
    assert!(!text.contains(TOKEN), "{text}");
    assert_eq!(t.id(&t.bare, "refs/notes/handoffs"), None);

    // (b) a key holding a secret is refused on write, naming the rule.
    let mut cmd = t.sb.command("git", &t.a);
    cmd.arg("handoff")
        .args(write_args(Some(TOKEN), ["d", "r", "c"], &[]));
    let out = assert_cmd::Command::from_std(cmd).assert().failure();
    let err = stderr(&out);
    assert!(
        err.contains("the key holds a secret (github_token)"),
        "{err}"
    );
    assert!(!err.contains(TOKEN), "{err}");
    assert!(!t.refs(&t.a).contains(TOKEN));
    // One planted with plain git is never pushed as a ref name.
    let blob = t.sb.git(&t.a, &["rev-parse", "refs/handoffs/clean"]);
    t.sb.git(
        &t.a,
        &["update-ref", &format!("refs/handoffs/{TOKEN}"), blob.trim()],
    );
    let out = t.run(&t.a, &["push", "--json"]).code(1);
    assert!(!stdout(&out).contains(TOKEN), "{}", stdout(&out));
    assert_stdout_has(&out, "the key holds a secret (github_token)");
    assert!(!t.remote_bytes().contains(TOKEN));
    assert!(t.remote_id("clean").is_some(), "the clean key still went");

    // A key the remote holds with a secret is never taken.
    t.sb.git(
        &t.bare,
        &["update-ref", &format!("refs/handoffs/{TOKEN}"), blob.trim()],
    );
    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(
        &out,
        "ignored: '[REDACTED:github_token]' (the key holds a secret",
    );
    assert!(!stdout(&out).contains(TOKEN));
    assert!(!t.refs(&t.b).contains(&format!("refs/handoffs/{TOKEN}")));
}

#[test]
fn a_branch_name_with_a_secret_never_reaches_the_narrative() {
    // Item 3 (d).
    let t = team();
    t.sb.git(&t.a, &["checkout", "-q", "-b", &format!("fix-{TOKEN}")]);
    // Its key would carry the token: refused.
    let mut cmd = t.sb.command("git", &t.a);
    cmd.arg("handoff")
        .args(write_args(None, ["d", "r", "c"], &[]));
    let out = assert_cmd::Command::from_std(cmd).assert().failure();
    assert_stderr_has(&out, "the key holds a secret (github_token)");
    // Under a clean key, the branch is redacted in the brief and the entry.
    let mut cmd = t.sb.command("git", &t.a);
    cmd.arg("handoff")
        .args(write_args(Some("fix"), ["d", "r", "c"], &[]));
    assert_cmd::Command::from_std(cmd).assert().success();
    let narrative = std::fs::read_to_string(t.a.join(".claude/PROJECT_STATE.md")).unwrap();
    // (the entry's format names no branch today; whatever it names is
    // filtered as a whole)
    assert!(!narrative.contains(TOKEN), "{narrative}");
    let brief = t.sb.git(&t.a, &["cat-file", "-p", "refs/handoffs/fix"]);
    assert!(!brief.contains(TOKEN), "{brief}");
    assert!(brief.contains("[REDACTED:github_token]"), "{brief}");
    t.run(&t.a, &["push"]).success();
    assert!(!t.remote_bytes().contains(TOKEN));
}

#[test]
fn after_redact_history_a_fetch_never_merges_the_secret_back() {
    // Item 3 (c): the secret reached the remote with plain git.
    let t = team();
    t.write(&t.a, "k1", "2026-11-30T09:00:00Z", &format!("uses {TOKEN}"));
    t.push_with_plain_git(&t.a, &["refs/notes/handoffs", "refs/handoffs/k1"]);
    t.run(&t.b, &["fetch"]).success();
    t.run(&t.b, &["redact", "--history"]).success();
    let clean_notes = t.id(&t.b, "refs/notes/handoffs").unwrap();
    let log = stdout(&t.run(&t.b, &["log", "k1", "--json"]).success());
    assert!(!log.contains(TOKEN), "{log}");

    // The key is held alone (issue 30 item 6), the secret named by its
    // rule, never shown.
    let out = t.run(&t.b, &["fetch"]).success();
    let text = stdout(&out);
    assert!(
        text.contains("held: k1 ('origin' holds ")
            && text.contains("which holds a secret (github_token); after `git handoff redact --history` here none is taken back")
            && text.contains("without 1 line that hold secrets (key 'k1' version "),
        "{text}"
    );
    assert!(!text.contains(TOKEN), "{text}");
    assert!(!stderr(&out).contains(TOKEN));
    assert_eq!(
        t.id(&t.b, "refs/notes/handoffs").as_deref(),
        Some(clean_notes.as_str())
    );
    assert_eq!(t.id(&t.b, "refs/handoff-remotes/origin/notes"), None);
    let log = stdout(&t.run(&t.b, &["log", "k1", "--json"]).success());
    assert!(!log.contains(TOKEN), "{log}");
    // Knowingly: the override merges the history. The brief redacted here
    // is a version on top of the remote's (issue 55: redact records its
    // version), so it is ahead and the next push replaces the leaked one.
    let out = t.run(&t.b, &["fetch", "--allow-secrets"]).success();
    assert_stdout_has(&out, "history: merged with 'origin'");
    assert_stdout_has(&out, "ahead: k1 (local ");
    // The history holds the leaked version again (read with plain git:
    // `log` prints each done-when through the redaction rules).
    let notes = t.sb.git(&t.b, &["log", "--notes=handoffs", "--format=%N"]);
    assert!(notes.contains(TOKEN), "{notes}");
}

#[test]
fn a_remote_whose_notes_ref_is_a_blob_damages_nothing() {
    // Item 4.
    let t = team();
    t.write(&t.a, "k1", "2026-11-30T09:00:00Z", "v1");
    t.write(&t.a, "k1", "2026-11-30T10:00:00Z", "v2");
    t.run(&t.a, &["push"]).success();
    t.run(&t.b, &["fetch"]).success();
    let good = t.id(&t.b, "refs/handoff-remotes/origin/notes").unwrap();
    let blob = t.sb.git_stdin(
        &t.bare,
        &["hash-object", "-w", "--stdin"],
        "not a notes history\n",
    );
    t.sb.git(&t.bare, &["update-ref", "refs/notes/handoffs", &blob]);

    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(
        &out,
        &format!(
            "history: ignored ('origin' holds {} at refs/notes/handoffs, which is not a notes history; nothing taken)",
            short(&blob)
        ),
    );
    assert_eq!(
        t.id(&t.b, "refs/handoff-remotes/origin/notes").as_deref(),
        Some(good.as_str()),
        "nothing unvalidated is published"
    );
    t.run(&t.b, &["log", "k1"]).success();
    t.run(&t.b, &["diff", "k1"]).success();

    // A tree holding more than notes is no notes history either.
    let tree = t.sb.git_stdin(
        &t.bare,
        &["mktree"],
        format!("100644 blob {blob}\tREADME\n"),
    );
    let commit =
        t.sb.git(&t.bare, &["commit-tree", &tree, "-m", "not notes"])
            .trim()
            .to_string();
    t.sb.git(&t.bare, &["update-ref", "refs/notes/handoffs", &commit]);
    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(&out, "history: ignored");
    assert_eq!(
        t.id(&t.b, "refs/handoff-remotes/origin/notes").as_deref(),
        Some(good.as_str())
    );

    // The damage an earlier version left (the blob copied to the old
    // remote-notes ref) is repaired on the next read.
    t.sb.git(
        &t.b,
        &["update-ref", "refs/notes/remotes/origin/handoffs", &blob],
    );
    t.run(&t.b, &["log", "k1"]).success();
    t.run(&t.b, &["diff", "k1"]).success();
    assert_eq!(t.id(&t.b, "refs/notes/remotes/origin/handoffs"), None);
}

#[test]
fn history_push_contention_says_to_push_again_not_to_resolve() {
    // Item 6, second half: others keep moving the remote's history.
    let t = team();
    t.write(&t.a, "k1", "2026-11-30T09:00:00Z", "v1");
    t.pre_push_hook_in_a(&format!(
        "git --git-dir='{bare}' notes --ref=handoffs append -m \"line $(date +%s%N)\" main\n",
        bare = t.bare.display()
    ));
    let out = t.run(&t.a, &["push"]).code(1);
    let err = stderr(&out);
    assert!(
        err.contains("the history on 'origin' kept moving while others pushed; nothing is lost: run `git handoff push origin` again"),
        "{err}"
    );
    assert!(!err.contains("resolve"), "{err}");
    assert_stdout_has(&out, "history: rejected (");
}

#[test]
fn init_check_names_bases_of_an_earlier_version_and_init_moves_them() {
    let t = team();
    let v1 = t.publish("k1", "v1");
    t.base_in_the_old_place(&t.a, "k1", &v1);
    let out = t.run(&t.a, &["init", "--check"]).code(1);
    assert!(
        stdout(&out).lines().any(|l| l.starts_with("missing  refs/handoff-remotes/ ")
            && l.ends_with(" 1 ref of an earlier version under refs/remotes/*/handoffs/ or refs/notes/remotes/, where git's own branches land")),
        "{}",
        stdout(&out)
    );
    // --check only reports.
    assert!(t.id(&t.a, "refs/remotes/origin/handoffs/k1").is_some());
    t.run(&t.a, &["init"]).success();
    assert_eq!(t.id(&t.a, "refs/remotes/origin/handoffs/k1"), None);
    assert_eq!(t.base_id(&t.a, "k1").as_deref(), Some(v1.as_str()));
}

// ---------------------------------------------------------------------------
// Issue 20: the incremental gate and the history index.

impl Team {
    fn gate_cache(&self, dir: &Path) -> PathBuf {
        dir.join(".git/handoff-gate.cache")
    }
}

#[test]
fn the_incremental_gate_refuses_a_secret_in_any_new_line() {
    let t = team();
    t.publish("clean", "nothing secret");
    assert!(
        t.gate_cache(&t.a).is_file(),
        "the clean verdicts are cached"
    );
    // Every later write lands on the same HEAD: the one note grows, and
    // the remote holds all of it but the new lines.
    t.write(&t.a, "clean", "2026-11-30T09:10:00Z", "still nothing");
    t.run(&t.a, &["push"]).success();
    // (1) A new line that is not a brief.
    t.append_note(&t.a, &format!("deploy with {TOKEN}"));
    t.write(&t.a, "clean", "2026-11-30T09:20:00Z", "a third");
    for _ in 0..2 {
        // Refused, and refused again: a refusal caches nothing.
        let out = t.run(&t.a, &["push"]).code(1);
        let text = stdout(&out);
        assert!(
            text.contains("1 history line holds secrets: a history line that is not a brief"),
            "{text}"
        );
        assert!(!text.contains(TOKEN), "{text}");
        assert!(!t.remote_bytes().contains(TOKEN));
    }

    // (2) A new line that is a brief (on a fresh clone, same shape).
    let t = team();
    t.publish("k", "clean");
    t.write(&t.a, "k", "2026-11-30T09:10:00Z", &format!("use {TOKEN}"));
    let out = t.run(&t.a, &["push"]).code(1);
    let text = stdout(&out);
    assert!(
        text.contains("1 history line holds secrets: key 'k' version"),
        "{text}"
    );
    assert!(!t.remote_bytes().contains(TOKEN));

    // (3) A ref name, even when its blob was cached clean by the pushes
    // above.
    let t = team();
    t.publish("clean", "nothing secret");
    let blob = t.brief_id(&t.a, "clean").unwrap();
    t.sb.git(
        &t.a,
        &["update-ref", &format!("refs/handoffs/{TOKEN}"), &blob],
    );
    let out = t.run(&t.a, &["push"]).code(1);
    assert!(
        stdout(&out).contains("the key holds a secret (github_token)"),
        "{}",
        stdout(&out)
    );
    assert!(!t.remote_bytes().contains(TOKEN));
}

#[test]
fn a_tampered_gate_cache_never_whitelists_bytes_it_did_not_see() {
    let t = team();
    t.publish("clean", "nothing secret");
    let cache = std::fs::read_to_string(t.gate_cache(&t.a)).unwrap();
    let (header, entries) = cache.split_once('\n').unwrap();
    let clean_digest = entries.lines().next().unwrap().split_once(' ').unwrap().1;

    // A brief and a history line holding a secret.
    t.write(
        &t.a,
        "leaky",
        "2026-11-30T09:10:00Z",
        &format!("use {TOKEN}"),
    );
    t.append_note(&t.a, &format!("deploy with {TOKEN}"));
    let brief = t.brief_id(&t.a, "leaky").unwrap();
    let note = t.sb.git(&t.a, &["notes", "--ref=handoffs", "list", "HEAD"]);
    let forged = |digest: &str| {
        format!(
            "{header}\n{brief} {digest}\n{} {digest}\n{entries}",
            note.trim()
        )
    };
    for tampered in [
        // A clean verdict copied onto the secret blobs' ids.
        forged(clean_digest),
        // A digest of nothing in particular.
        forged(&"0".repeat(40)),
        // Garbage.
        "not a cache\n".to_string(),
    ] {
        std::fs::write(t.gate_cache(&t.a), &tampered).unwrap();
        let out = t.run(&t.a, &["push"]).code(1);
        let text = stdout(&out);
        assert!(text.contains("refused: leaky (holds 1 secret"), "{text}");
        assert!(text.contains("history: refused, not pushed"), "{text}");
        assert!(!t.remote_bytes().contains(TOKEN));
    }
    // Deleting the cache is safe: the same answer.
    std::fs::remove_file(t.gate_cache(&t.a)).unwrap();
    t.run(&t.a, &["push"]).code(1);
    assert!(!t.remote_bytes().contains(TOKEN));
}

#[test]
fn log_through_the_index_equals_log_without_it_across_merges_from_two_remotes() {
    let t = team();
    // A second remote, with its own clone C.
    let (_, other_url) = t.second_remote("other");
    let root = t.sb.dir.path().to_path_buf();
    t.sb.git(&root, &["clone", "-q", &other_url, "C"]);
    let c = t.sb.path("C");

    let logs = |dir: &Path| logs_of_k1_to_k3(&t, dir);
    let index = t.a.join(".git/handoff-history-index");
    // Same-second versions on several sides, notes on the same and on
    // different commits, fetched and merged step by step (each `log`
    // extends the index from the previous one).
    for round in 0..3 {
        let now = format!("2026-11-30T1{round}:00:00Z");
        t.write(&t.a, "k1", &now, &format!("a {round}"));
        t.write(&t.b, "k1", &now, &format!("b {round}"));
        t.write(&t.b, "k2", &now, &format!("b {round}"));
        t.write(&c, "k2", &now, &format!("c {round}"));
        t.write(&c, "k3", &now, &format!("c {round}"));
        logs(&t.a);
        t.run(&t.b, &["push"]).success();
        t.run(&c, &["push"]).success();
        let _ = t.run(&t.a, &["fetch", "origin"]);
        logs(&t.a);
        let _ = t.run(&t.a, &["fetch", "other"]);
        logs(&t.a);
        t.sb.commit(&t.b, &format!("b{round}.txt"), "b\n", "b's commit");
        t.sb.commit(&c, &format!("c{round}.txt"), "c\n", "c's commit");
        let _ = t.run(&t.b, &["fetch", "origin"]);
        let _ = t.run(&c, &["fetch", "origin"]);
        assert!(index.is_dir(), "log keeps an index");
    }
    let merges = t.sb.git(
        &t.a,
        &["rev-list", "--merges", "--count", "refs/notes/handoffs"],
    );
    assert!(merges.trim().parse::<u32>().unwrap() >= 2, "{merges}");
    let warm = logs(&t.a);
    std::fs::remove_dir_all(&index).unwrap();
    let cold = logs(&t.a);
    assert_eq!(warm, cold);
    for text in &cold {
        assert!(text.starts_with("[\n"), "every key has versions: {text}");
    }
    let k1_versions = serde_json::from_str::<Value>(&cold[0]).unwrap();
    assert!(k1_versions.as_array().unwrap().len() >= 6, "{k1_versions}");
}

/// The history index files of `dir`, each with the tips its head names
/// (sorted), and its bytes.
/// What `log KEY --json` prints (stdout and stderr) in `dir` for each of
/// k1, k2 and k3.
fn logs_of_k1_to_k3(t: &Team, dir: &Path) -> Vec<String> {
    ["k1", "k2", "k3"]
        .iter()
        .map(|k| {
            let out = t.run(dir, &["log", k, "--json"]);
            format!("{}{}", stdout(&out), stderr(&out))
        })
        .collect()
}

/// B's logs of k1..k3 read the index the fetch left (`files`) as is, and
/// answer as an index built from nothing does; those logs.
fn logs_use_the_fetched_index(t: &Team, files: &[(Vec<String>, Vec<u8>)]) -> Vec<String> {
    let warm = logs_of_k1_to_k3(t, &t.b);
    assert_eq!(
        history_index_files(&t.b),
        files,
        "log used the fetch's index"
    );
    std::fs::remove_dir_all(t.b.join(".git/handoff-history-index")).unwrap();
    assert_eq!(logs_of_k1_to_k3(t, &t.b), warm);
    warm
}

fn history_index_files(dir: &Path) -> Vec<(Vec<String>, Vec<u8>)> {
    let mut files: Vec<(Vec<String>, Vec<u8>)> =
        std::fs::read_dir(dir.join(".git/handoff-history-index"))
            .map(|d| d.flatten().map(|e| e.path()).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .filter(|p| !p.file_name().unwrap().to_string_lossy().contains('.'))
            .map(|p| {
                let bytes = std::fs::read(&p).unwrap();
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let mut tips: Vec<String> = text
                    .lines()
                    .nth(1)
                    .unwrap_or_default()
                    .split(' ')
                    .map(str::to_string)
                    .collect();
                tips.sort();
                (tips, bytes)
            })
            .collect();
    files.sort();
    files
}

#[test]
fn a_fetch_leaves_the_index_of_the_history_it_brought_and_log_reads_it_as_is() {
    let t = team();
    let logs = |dir: &Path| logs_of_k1_to_k3(&t, dir);
    // Versions on one commit (a note that grew) and on the next.
    for i in 0..4 {
        let key = ["k1", "k2"][i % 2];
        t.write(
            &t.a,
            key,
            &format!("2026-11-30T09:00:0{i}Z"),
            &format!("v{i}"),
        );
    }
    t.sb.commit(&t.a, "a.txt", "a\n", "a's commit");
    t.write(&t.a, "k1", "2026-11-30T10:00:00Z", "after the commit");
    t.run(&t.a, &["push"]).success();

    // A fresh clone: no history, no index; the fetch brings both and
    // leaves the index of exactly the tips `log` reads.
    assert!(history_index_files(&t.b).is_empty());
    t.run(&t.b, &["fetch", "origin"]).success();
    let tip = t.id(&t.b, "refs/notes/handoffs").unwrap();
    assert_eq!(
        t.id(&t.b, "refs/handoff-remotes/origin/notes"),
        Some(tip.clone())
    );
    let files = history_index_files(&t.b);
    assert_eq!(files.len(), 1, "the fetch built the index");
    assert_eq!(files[0].0, [tip]);
    // `log` reads it as is (nothing rebuilt or rewritten), and answers as
    // an index built from nothing does.
    let warm = logs_use_the_fetched_index(&t, &files);
    assert_eq!(
        serde_json::from_str::<Value>(&warm[0])
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        3
    );

    // A fetch with nothing new leaves the files alone; one that merges
    // (B wrote too) leaves the index of the merged tips, extended.
    let before = history_index_files(&t.b);
    t.run(&t.b, &["fetch", "origin"]).success();
    assert_eq!(history_index_files(&t.b), before);
    t.write(&t.a, "k2", "2026-11-30T11:00:00Z", "a again");
    t.run(&t.a, &["push"]).success();
    t.write(&t.b, "k3", "2026-11-30T11:30:00Z", "b's own");
    logs(&t.b);
    t.run(&t.b, &["fetch", "origin"]).success();
    let merged = t.id(&t.b, "refs/notes/handoffs").unwrap();
    let theirs = t.id(&t.b, "refs/handoff-remotes/origin/notes").unwrap();
    assert_ne!(merged, theirs, "the histories were merged");
    let mut want = vec![merged, theirs];
    want.sort();
    let files = history_index_files(&t.b);
    assert!(
        files.iter().any(|(tips, _)| *tips == want),
        "{:?}",
        files.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    let warm = logs_use_the_fetched_index(&t, &files);
    for text in &warm {
        assert!(text.starts_with("[\n"), "every key has versions: {text}");
    }
}

#[test]
fn a_fetch_whose_index_cannot_be_written_still_fetches_and_log_still_answers() {
    let t = team();
    t.write(&t.a, "k1", "2026-11-30T09:00:00Z", "one");
    t.write(&t.a, "k1", "2026-11-30T09:00:01Z", "two");
    t.run(&t.a, &["push"]).success();
    // Where the index would go, a file: nothing can be saved there.
    std::fs::write(t.b.join(".git/handoff-history-index"), "not a directory\n").unwrap();
    t.run(&t.b, &["fetch", "origin"]).success();
    assert!(t.brief_id(&t.b, "k1").is_some());
    assert_eq!(t.log_ids(&t.b, "k1"), t.log_ids(&t.a, "k1"));
    assert_eq!(
        std::fs::read(t.b.join(".git/handoff-history-index")).unwrap(),
        b"not a directory\n"
    );
}

// ---------------------------------------------------------------------------
// Push and fetch at team scale (issue 20): a fetch with nothing new is a ref
// listing, the gate and the validation read only what the known histories
// lack. None of it may hide a change or let an unseen byte out.

#[test]
fn a_push_sees_every_remote_change_since_the_last_fetch() {
    let t = team();
    let k1 = t.write(&t.a, "k1", "2026-11-30T09:00:00Z", "k1 v1");
    t.write(&t.a, "k2", "2026-11-30T09:00:00Z", "k2 v1");
    t.share("k3", "k3 v1");
    // B moves k1 and deletes k3 on the remote; A changes only k2.
    let k1b = t.write(&t.b, "k1", "2026-11-30T10:00:00Z", "k1 v2 from b");
    t.run(&t.b, &["drop", "k3"]).success();
    t.run(&t.b, &["push", "--prune"]).success();
    let k2a = t.write(&t.a, "k2", "2026-11-30T10:00:00Z", "k2 v2 from a");

    let out = t.run(&t.a, &["push"]).success();
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "fast-forwarded: k1 ({} -> {})",
            short(&k1),
            short(&k1b)
        )),
        "{text}"
    );
    assert!(text.contains("deleted on 'origin': k3"), "{text}");
    assert!(text.contains("skipped: k3 (deleted on 'origin'"), "{text}");
    assert_eq!(t.remote_id("k2").as_deref(), Some(k2a.as_str()));
    assert_eq!(t.remote_id("k3"), None);
    assert_eq!(t.brief_id(&t.a, "k1").as_deref(), Some(k1b.as_str()));
    // The history B pushed was merged, and A's went on top of it.
    t.run(&t.b, &["fetch"]).success();
    assert_eq!(t.log_ids(&t.b, "k2")[0], k2a);
}

#[test]
fn a_key_moved_on_the_remote_since_the_base_is_never_overwritten_by_push() {
    let t = team();
    let v1 = t.share("k", "v1");
    let theirs = t.write(&t.b, "k", "2026-11-30T10:00:00Z", "b's");
    t.run(&t.b, &["push"]).success();
    // A's base is still v1; its push must see the remote moved.
    let ours = t.write(&t.a, "k", "2026-11-30T11:00:00Z", "a's");
    let out = t.run(&t.a, &["push"]).code(1);
    let text = stdout(&out);
    assert!(text.contains("diverged: k (local"), "{text}");
    assert!(
        text.contains("diverged, not pushed: k (both sides changed;"),
        "{text}"
    );
    assert_eq!(t.remote_id("k").as_deref(), Some(theirs.as_str()));
    assert_eq!(t.brief_id(&t.a, "k").as_deref(), Some(ours.as_str()));
    assert_eq!(t.base_id(&t.a, "k").as_deref(), Some(v1.as_str()));
    // A stale clone's plain push rolls the remote back behind A's last
    // fetch: the next push sees it, keeps A's version and repairs the
    // remote with a lease on the rolled-back value.
    let t = team();
    let old = t.share("k", "old");
    let new = t.write(&t.a, "k", "2026-11-30T10:00:00Z", "new");
    t.run(&t.a, &["push"]).success();
    t.sb.git(&t.b, &["push", "-q", "--mirror", "origin"]);
    assert_eq!(t.remote_id("k").as_deref(), Some(old.as_str()));
    let out = t.run(&t.a, &["push"]).success();
    let text = stdout(&out);
    assert!(text.contains("rolled back on 'origin': k"), "{text}");
    assert!(
        text.contains(&format!("push: k ({} -> {})", short(&old), short(&new))),
        "{text}"
    );
    assert_eq!(t.remote_id("k").as_deref(), Some(new.as_str()));
}

#[test]
fn the_gate_reads_every_commit_of_a_merged_history_the_remote_lacks() {
    let t = team();
    t.share("k", "clean");
    // A's history gains a secret line; meanwhile B's history moves on the
    // remote, so A's push merges both histories before it sends them.
    t.append_note(&t.a, &format!("deploy with {TOKEN}"));
    t.write(&t.b, "other", "2026-11-30T10:00:00Z", "b's");
    t.run(&t.b, &["push"]).success();
    let remote_notes = t.id(&t.bare, "refs/notes/handoffs");
    t.write(&t.a, "k", "2026-11-30T11:00:00Z", "still clean");
    let out = t.run(&t.a, &["push"]).code(1);
    let text = stdout(&out);
    assert!(text.contains("history: merged with 'origin'"), "{text}");
    assert!(
        text.contains("1 history line holds secrets: a history line that is not a brief"),
        "{text}"
    );
    assert_eq!(t.id(&t.bare, "refs/notes/handoffs"), remote_notes);
    assert!(!t.remote_bytes().contains(TOKEN));
}

impl Team {
    /// Point the remote's notes ref at a commit on top of `parent` whose
    /// tree holds more than notes (a README); its id.
    fn not_notes_on_top(&self, parent: &str) -> String {
        let blob = self.sb.git_stdin(
            &self.bare,
            &["hash-object", "-w", "--stdin"],
            "not a note\n",
        );
        let tree = self.sb.git_stdin(
            &self.bare,
            &["mktree"],
            format!("100644 blob {blob}\tREADME\n"),
        );
        let commit = self
            .sb
            .git(
                &self.bare,
                &["commit-tree", &tree, "-p", parent, "-m", "not notes"],
            )
            .trim()
            .to_string();
        self.sb
            .git(&self.bare, &["update-ref", "refs/notes/handoffs", &commit]);
        commit
    }
}

#[test]
fn a_bad_commit_on_top_of_a_validated_history_is_still_refused() {
    let t = team();
    t.share("k1", "v1");
    let good = t.id(&t.b, "refs/handoff-remotes/origin/notes").unwrap();
    // A commit whose parent is the history B validated, whose tree holds
    // more than notes.
    t.not_notes_on_top(&good);
    for args in [&["fetch"][..], &["push"][..]] {
        let out = t.run(&t.b, args).success();
        assert_stdout_has(&out, "history: ignored");
        assert_eq!(
            t.id(&t.b, "refs/handoff-remotes/origin/notes").as_deref(),
            Some(good.as_str()),
            "{args:?}: nothing unvalidated is published"
        );
    }
}

#[test]
fn a_history_push_over_a_remote_ref_that_is_no_notes_history_names_the_repair() {
    let t = team();
    t.share("k1", "v1");
    let good = t.id(&t.b, "refs/handoff-remotes/origin/notes").unwrap();
    let bad = t.not_notes_on_top(&good);
    // B has a version of its own to send: its history cannot go on top
    // of what the remote holds, however often it is pushed again.
    t.write(&t.b, "k1", "2026-11-30T10:00:00Z", "v2");
    let repair =
        format!("git push --force-with-lease=refs/notes/handoffs:{bad} origin refs/notes/handoffs");
    for _ in 0..2 {
        let out = t.run(&t.b, &["push"]).code(1);
        assert_stdout_has(
            &out,
            &format!(
                "history: not pushed: 'origin' holds {} at refs/notes/handoffs, which is not a notes history (fetch took nothing from it); replace it with this one: `{repair}`",
                short(&bad)
            ),
        );
        let err = stderr(&out);
        assert!(!err.contains("kept moving"), "{err}");
        assert!(err.contains("holds no notes history"), "{err}");
        assert_eq!(
            t.id(&t.bare, "refs/notes/handoffs").as_deref(),
            Some(bad.as_str())
        );
    }
    // The repair as printed, then a push that has nothing left to say.
    let args: Vec<&str> = repair.split(' ').skip(1).collect();
    t.sb.git(&t.b, &args);
    t.run(&t.b, &["push"]).success();
    let local = t.id(&t.b, "refs/notes/handoffs");
    assert_eq!(t.id(&t.bare, "refs/notes/handoffs"), local);
}

#[test]
fn a_fetch_report_reads_the_same_with_and_without_the_list_cache() {
    let t = team();
    t.write(&t.a, "k1", "2026-11-30T09:00:00Z", "k1 v1");
    t.write(&t.a, "k2", "2026-11-30T09:30:00Z", "k2 v1");
    t.run(&t.a, &["push"]).success();
    t.run(&t.b, &["fetch"]).success();
    t.write(&t.b, "k3", "2026-11-30T10:00:00Z", "k3 only here");
    let cache = t.b.join(".git/handoff-list.cache");
    // The first fetch read the briefs and kept their summaries.
    assert!(cache.exists(), "fetch fills the list cache");
    let warm = stdout(&t.run(&t.b, &["fetch", "--json"]).success());
    std::fs::remove_file(&cache).unwrap();
    let cold = stdout(&t.run(&t.b, &["fetch", "--json"]).success());
    assert_eq!(warm, cold);
    let report = json(&cold);
    let stamps: Vec<&str> = report["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["local"]["timestamp"].as_str().unwrap())
        .collect();
    assert_eq!(stamps.len(), 3, "{report}");
    assert!(stamps.contains(&"2026-11-30T09:30:00Z"), "{report}");
    assert!(stamps.contains(&"2026-11-30T10:00:00Z"), "{report}");
}

#[test]
fn a_new_key_created_on_the_remote_meanwhile_is_never_overwritten() {
    let t = team();
    t.publish("one", "one v1");
    // A new key is pushed without a lease (git matches every lease against
    // every ref, quadratic for a first push of many keys): the remote's
    // update still expects it absent.
    let fresh = t.write(&t.a, "fresh", "2026-11-30T10:00:00Z", "fresh v1");
    let one2 = t.write(&t.a, "one", "2026-11-30T10:00:00Z", "one v2");
    let theirs_id = teammate_lands_during_push(&t, "fresh", "fresh by b");

    // The create lost: fetched, the teammate's `fresh` is another line
    // (a first fetch of a key both hold), held as diverged.
    let out = t.run(&t.a, &["push"]).code(1);
    let text = stdout(&out);
    assert!(text.contains("diverged, not pushed: fresh ("), "{text}");
    assert_eq!(t.remote_id("fresh").as_deref(), Some(theirs_id.as_str()));
    assert_eq!(t.remote_id("one").as_deref(), Some(one2.as_str()));
    assert_eq!(t.brief_id(&t.a, "fresh").as_deref(), Some(fresh.as_str()));
}

/// The gate skips what the remote holds of a note that grew by reading
/// the pack's deltas: packed as deltas of each other, the known note and
/// the one that appended a secret to it, the new line is still read and
/// refused, whether or not it is a brief.
#[test]
fn a_secret_appended_to_a_note_is_refused_when_the_notes_are_packed_as_deltas() {
    let t = team();
    for i in 0..6 {
        t.write(&t.a, "k", "2026-11-30T09:00:00Z", &format!("version {i}"));
    }
    t.run(&t.a, &["push"]).success();
    let pushed = t.id(&t.bare, "refs/notes/handoffs");
    append_note_line(&t, &format!("token {TOKEN}"));
    t.sb.git(&t.a, &["repack", "-a", "-d", "-f", "-q", "--depth=50"]);
    let deltas = t.sb.git(
        &t.a,
        &[
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(objecttype) %(deltabase)",
        ],
    );
    assert!(
        deltas
            .lines()
            .any(|l| l.starts_with("blob ") && !l.ends_with(&"0".repeat(40))),
        "{deltas}"
    );
    let out = t.run(&t.a, &["push"]).code(1);
    let text = stdout(&out);
    assert!(
        text.contains("history: refused, not pushed (1 history line holds secrets: a history line that is not a brief"),
        "{text}"
    );
    assert!(!text.contains(TOKEN), "{text}");
    assert_eq!(t.id(&t.bare, "refs/notes/handoffs"), pushed);
}

/// Append `line` to the note of A's HEAD with plain git (no brief, no gate).
fn append_note_line(t: &Team, line: &str) {
    t.sb.git(
        &t.a,
        &["notes", "--ref=handoffs", "append", "-m", line, "HEAD"],
    );
}

/// The notes of `dir`'s history re-laid with one level of fanout (`ab/`,
/// then the rest of the annotated id), plus `extra` (path, blob) entries
/// at the root; the new tree's id.
fn fanned_notes_tree(t: &Team, dir: &Path, extra: &[(String, String)]) -> String {
    let mut by_dir: std::collections::BTreeMap<String, String> = Default::default();
    for line in t.sb.git(dir, &["notes", "--ref=handoffs", "list"]).lines() {
        let (blob, object) = line.split_once(' ').unwrap();
        let entry = format!("100644 blob {blob}\t{}\n", &object[2..]);
        by_dir
            .entry(object[..2].to_string())
            .or_default()
            .push_str(&entry);
    }
    let mut root = String::new();
    for (fan, entries) in by_dir {
        let sub = t.sb.git_stdin(dir, &["mktree"], entries);
        root.push_str(&format!("040000 tree {}\t{fan}\n", sub.trim()));
    }
    for (path, blob) in extra {
        root.push_str(&format!("100644 blob {blob}\t{path}\n"));
    }
    t.sb.git_stdin(dir, &["mktree"], root).trim().to_string()
}

#[test]
fn the_gate_knows_what_the_remote_holds_whatever_the_notes_fanout() {
    let t = team();
    t.publish("k", "clean");
    // A teammate's plain git put a secret line in the remote's (flat)
    // history: the remote holds it already.
    append_note_line(&t, &format!("deploy with {TOKEN}"));
    t.sb.git(&t.a, &["push", "-q", "origin", "refs/notes/handoffs"]);
    // A's next history commit lays the same notes out with fanout and
    // adds one clean note: only that note is new to the remote.
    // (Annotating HEAD's tree, an object without a note.)
    let first = t.sb.git(&t.a, &["rev-parse", "HEAD^{tree}"]);
    let clean =
        t.sb.git_stdin(&t.a, &["hash-object", "-w", "--stdin"], "a clean note\n");
    let tree = fanned_notes_tree(
        &t,
        &t.a,
        &[(first.trim().to_string(), clean.trim().to_string())],
    );
    let parent = t.id(&t.a, "refs/notes/handoffs").unwrap();
    let commit =
        t.sb.git(&t.a, &["commit-tree", &tree, "-p", &parent, "-m", "fanned"]);
    t.sb.git(&t.a, &["update-ref", "refs/notes/handoffs", commit.trim()]);
    let out = t.run(&t.a, &["push"]).success();
    assert_stdout_has(&out, "history: push (fast-forward)");
    assert_eq!(
        t.id(&t.bare, "refs/notes/handoffs").as_deref(),
        Some(commit.trim())
    );
    // The other way round (the remote fanned, a new flat tree): the note
    // of the first commit replaced by a secret is refused, the secret the
    // remote holds (HEAD's note) is still known: one finding, not two.
    let leak = t.sb.git_stdin(
        &t.a,
        &["hash-object", "-w", "--stdin"],
        format!("leak: {TOKEN}\n"),
    );
    let mut flat = String::new();
    for line in t.sb.git(&t.a, &["notes", "--ref=handoffs", "list"]).lines() {
        let (blob, object) = line.split_once(' ').unwrap();
        let blob = if object == first.trim() {
            leak.trim()
        } else {
            blob
        };
        flat.push_str(&format!("100644 blob {blob}\t{object}\n"));
    }
    let tree = t.sb.git_stdin(&t.a, &["mktree"], flat);
    let commit2 = t.sb.git(
        &t.a,
        &[
            "commit-tree",
            tree.trim(),
            "-p",
            commit.trim(),
            "-m",
            "flat",
        ],
    );
    t.sb.git(&t.a, &["update-ref", "refs/notes/handoffs", commit2.trim()]);
    let out = t.run(&t.a, &["push"]).code(1);
    let text = stdout(&out);
    assert!(text.contains("1 history line holds secrets"), "{text}");
    assert_eq!(
        t.id(&t.bare, "refs/notes/handoffs").as_deref(),
        Some(commit.trim())
    );
}

#[test]
fn a_lock_left_on_the_remote_is_named_with_its_fix_not_as_a_divergence() {
    let t = team();
    t.publish("k", "v1");
    let v2 = t.write(&t.a, "k", "2026-11-30T10:00:00Z", "v2");
    let lock = t.bare.join("refs/handoffs/k.lock");
    std::fs::write(&lock, "").unwrap();
    let out = t.run(&t.a, &["push"]).code(1);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("could not lock a ref: '"), "{err}");
    assert!(err.contains("k.lock"), "{err}");
    assert!(!err.contains("ends a divergence"), "{err}");
    assert_ne!(t.remote_id("k").as_deref(), Some(v2.as_str()));
    // Once the lock is gone, the same push goes.
    std::fs::remove_file(&lock).unwrap();
    t.run(&t.a, &["push"]).success();
    assert_eq!(t.remote_id("k").as_deref(), Some(v2.as_str()));
}

#[test]
fn a_push_that_names_a_key_it_cannot_send_says_no() {
    let t = team();
    t.publish("k", "v1");
    // Not a brief, put on the remote by plain git; nothing of it here.
    let junk =
        t.sb.git_stdin(&t.bare, &["hash-object", "-w", "--stdin"], "not a brief\n");
    t.sb.git(&t.bare, &["update-ref", "refs/handoffs/junk", junk.trim()]);
    let out = t.run(&t.a, &["push", "origin", "junk"]).code(1);
    assert_stdout_has(&out, "skipped: junk (");
    assert_eq!(
        stderr(&out),
        "error: not pushed to 'origin': junk; the report above says why\n"
    );
    assert_eq!(t.remote_id("junk").as_deref(), Some(junk.trim()));
    // Unnamed, a skipped key is only reported.
    t.run(&t.a, &["push"]).success();
}

#[test]
fn after_redact_history_a_secret_brief_on_the_remote_is_named_with_the_way_out() {
    // A secret reached the remote with plain git; B took it, then redacted
    // it away and replaced the remote's history as told. The remote's
    // brief still holds it.
    let t = team();
    t.write(&t.a, "k1", "2026-11-30T09:00:00Z", &format!("uses {TOKEN}"));
    t.push_with_plain_git(&t.a, &["refs/notes/handoffs", "refs/handoffs/k1"]);
    t.run(&t.b, &["fetch"]).success();
    t.run(&t.b, &["redact", "--history"]).success();
    let notes = ["push", "-q", "--force", "origin", "refs/notes/handoffs"];
    t.sb.git(&t.b, &notes);
    // Held alone (issue 30 item 6), with the way out.
    let out = t.run(&t.b, &["fetch"]).success();
    let text = stdout(&out);
    assert!(
        text.contains("held: k1 ('origin' holds ")
            && text.contains("`git handoff push origin k1` replaces it with yours"),
        "{text}"
    );
    assert!(!text.contains(TOKEN), "{text}");
    assert!(!stderr(&out).contains(TOKEN));
    // The way out it names works: B's brief replaces it, and sync goes on.
    t.run(&t.b, &["push", "origin", "k1"]).success();
    t.run(&t.b, &["fetch"]).success();
    t.run(&t.b, &["push"]).success();
    assert_eq!(t.remote_id("k1"), t.brief_id(&t.b, "k1"));
}

#[test]
fn a_remote_history_rolled_back_is_named_and_push_repairs_it() {
    // Issue 30 item 9: not "history: up to date".
    let t = team();
    t.publish("k", "v1");
    let first = t.id(&t.bare, "refs/notes/handoffs").unwrap();
    t.write(&t.a, "k", "2026-11-30T10:00:00Z", "v2");
    // Written here, not pushed yet: the remote is behind.
    let out = t.run(&t.a, &["fetch"]).success();
    assert_stdout_has(
        &out,
        &format!(
            "history: 'origin' is behind ({} lacks versions this history holds; `git handoff push origin` sends them)",
            short(&first)
        ),
    );
    t.run(&t.a, &["push"]).success();
    let second = t.id(&t.bare, "refs/notes/handoffs").unwrap();
    t.run(&t.b, &["fetch"]).success();
    // A stale clone's plain push rolls the remote's history back.
    t.sb.git(&t.bare, &["update-ref", "refs/notes/handoffs", &first]);
    let out = t.run(&t.b, &["fetch"]).success();
    let text = stdout(&out);
    assert!(!text.contains("history: up to date"), "{text}");
    assert!(
        text.contains(&format!(
            "history: rolled back on 'origin' (it holds {}, older than the {} it held before; nothing is lost here; `git handoff push origin` repairs it)",
            short(&first),
            short(&second)
        )),
        "{text}"
    );
    // Said once; from then on it is behind, until a push repairs it.
    let out = t.run(&t.b, &["fetch", "--json"]).success();
    let v = json(&stdout(&out));
    assert_eq!(v["history"]["result"], "behind", "{v}");
    assert_eq!(v["history"]["commit"], first.as_str());
    assert_eq!(
        t.id(&t.b, "refs/notes/handoffs").as_deref(),
        Some(second.as_str())
    );
    let out = t.run(&t.b, &["push"]).success();
    assert_stdout_has(&out, "history: push (fast-forward)");
    assert_eq!(
        t.id(&t.bare, "refs/notes/handoffs").as_deref(),
        Some(second.as_str())
    );
    t.run(&t.b, &["fetch"])
        .success()
        .stdout("From 'origin':\n  briefs: up to date\n  history: up to date\n");
}

#[test]
fn push_prune_key_deletes_a_remote_value_that_is_not_a_brief() {
    // Issue 30 item 7: the junk fetch ignores can be removed with
    // git-handoff, with a lease on exactly what was seen.
    let t = team();
    t.publish("good", "v1");
    let junk = t.sb.git_stdin(
        &t.bare,
        &["hash-object", "-w", "--stdin"],
        "not json at all\n",
    );
    let junk = junk.trim();
    t.sb.git(&t.bare, &["update-ref", "refs/handoffs/junk", junk]);
    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(
        &out,
        &format!(
            "ignored: junk ('origin' holds {}, which is not a valid brief; nothing taken; `git handoff push --prune origin junk` deletes it there)",
            short(junk)
        ),
    );
    // A plain push leaves it, and says how to delete it.
    let out = t.run(&t.b, &["push"]).success();
    assert_stdout_has(
        &out,
        &format!(
            "skipped: junk (not here, and 'origin' holds {}, which is not a valid brief; `git handoff push --prune origin junk` deletes it there)",
            short(junk)
        ),
    );
    assert!(!stdout(&out).contains("brings it"), "{}", stdout(&out));
    // A dry run deletes nothing.
    let out = t.run(&t.b, &["push", "--prune", "--dry-run", "origin", "junk"]);
    assert_stdout_has(
        &out.success(),
        &format!("would delete: junk (was {})", short(junk)),
    );
    assert_eq!(t.remote_id("junk").as_deref(), Some(junk));
    let out = t
        .run(&t.b, &["push", "--prune", "origin", "junk", "--json"])
        .success();
    let v = json(&stdout(&out));
    let row = &v["keys"][0];
    assert_eq!(row["key"], "junk", "{v}");
    assert_eq!(row["outcome"], "deleted", "{v}");
    assert_eq!(row["lease"], junk, "{v}");
    assert_eq!(t.remote_id("junk"), None);
    assert!(t.remote_id("good").is_some(), "only the junk went");
    assert_eq!(t.base_id(&t.b, "junk"), None);
    t.run(&t.b, &["fetch"])
        .success()
        .stdout("From 'origin':\n  briefs: up to date\n  history: up to date\n");
}

/// The command a bookkeeping warning names (between the last backticks).
fn removal_command(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| l.contains("bookkeeping"))
        .unwrap_or_else(|| panic!("no bookkeeping warning: {text}"));
    let end = line.rfind('`').unwrap();
    let start = line[..end].rfind('`').unwrap();
    line[start + 1..end].to_string()
}

#[test]
fn bookkeeping_refs_mirrored_to_the_remote_are_named_with_their_removal() {
    // Issue 30 item 10: a teammate's plain `git push --mirror`.
    let t = team();
    t.publish("k", "v1");
    t.run(&t.a, &["fetch"]).success();
    t.sb.git(&t.a, &["push", "-q", "--mirror", "origin"]);
    let mirrored = t.sb.git(
        &t.bare,
        &[
            "for-each-ref",
            "--format=%(refname)",
            "refs/handoff-fetch",
            "refs/handoff-remotes",
        ],
    );
    assert!(!mirrored.is_empty(), "the mirror copied them");

    let out = t.run(&t.b, &["fetch"]).success();
    let text = stdout(&out);
    assert!(
        text.contains("warning: 'origin' holds ")
            && text.contains(
                "of git-handoff's own bookkeeping (refs/handoff-fetch/*, refs/handoff-remotes/*)"
            )
            && text.contains("Remove them: `git push origin --delete refs/handoff-"),
        "{text}"
    );
    let out = t.run(&t.b, &["fetch", "--json"]).success();
    let v = json(&stdout(&out));
    let listed: Vec<&str> = v["bookkeeping"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(listed, mirrored.lines().collect::<Vec<_>>());
    let out = t.run(&t.b, &["push"]).success();
    assert_stdout_has(&out, "of git-handoff's own bookkeeping");
    let out = t.run(&t.b, &["init", "--check", "origin"]).code(1);
    let text = stdout(&out);
    assert!(
        text.contains("blocked  refs/handoff-* on 'origin'")
            && text.contains("git push origin --delete"),
        "{text}"
    );
    // Nothing was written by any of them, here or there.
    assert_eq!(
        t.sb.git(
            &t.bare,
            &[
                "for-each-ref",
                "--format=%(refname)",
                "refs/handoff-fetch",
                "refs/handoff-remotes"
            ],
        ),
        mirrored
    );

    // The command it names removes them.
    let command = removal_command(&stdout(&t.run(&t.b, &["fetch"]).success()));
    let mut sh = t.sb.command("sh", &t.b);
    sh.args(["-c", &command]);
    assert_ok(&sh.output().unwrap());
    assert_eq!(
        t.sb.git(
            &t.bare,
            &["for-each-ref", "refs/handoff-fetch", "refs/handoff-remotes"]
        ),
        ""
    );
    let out = t.run(&t.b, &["fetch"]).success();
    assert!(!stdout(&out).contains("bookkeeping"), "{}", stdout(&out));
    let out = t.run(&t.b, &["init", "--check", "--json", "origin"]);
    let v = json(&stdout(&out));
    let row = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "refs/handoff-* on 'origin'")
        .cloned()
        .unwrap();
    assert_eq!(row["status"], "ok", "{row}");

    // Many of them: a pipeline that lists them, quoted for the shell.
    let head = t.sb.git(&t.a, &["rev-parse", "HEAD"]);
    let pins: String = (0..12)
        .map(|n| {
            format!(
                "create refs/handoff-push/9{n}/refs/handoffs/k {}\n",
                head.trim()
            )
        })
        .collect();
    t.sb.git_stdin(&t.bare, &["update-ref", "--stdin"], pins);
    let command = removal_command(&stdout(&t.run(&t.b, &["fetch"]).success()));
    assert_eq!(
        command,
        "git ls-remote origin 'refs/handoff-push/*' | cut -f2 | xargs git push origin --delete"
    );
    let mut sh = t.sb.command("sh", &t.b);
    sh.args(["-c", &command]);
    assert_ok(&sh.output().unwrap());
    assert_eq!(
        t.sb.git(&t.bare, &["for-each-ref", "refs/handoff-push"]),
        ""
    );
}

impl Team {
    /// Whether any object reachable from a ref of `dir` holds `needle`.
    fn reachable_holds(&self, dir: &Path, needle: &str) -> bool {
        let objects = self.sb.git(dir, &["rev-list", "--all", "--objects"]);
        let ids: String = objects
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .map(|id| format!("{id}\n"))
            .collect();
        let mut cmd = self.sb.command("git", dir);
        cmd.args(["cat-file", "--batch"]);
        let out = spawn_fed(cmd, ids.as_bytes()).wait_with_output().unwrap();
        String::from_utf8_lossy(&out.stdout).contains(needle)
    }
}

#[test]
fn after_redact_history_one_key_with_a_secret_is_held_alone() {
    // Issue 30 item 6: one bad key no longer holds the whole team back.
    let t = team();
    t.write(&t.a, "k1", "2026-11-30T09:00:00Z", &format!("uses {TOKEN}"));
    t.write(&t.a, "k2", "2026-11-30T09:10:00Z", "clean v1");
    let plain_push = |keys: &[&str]| {
        let mut args = vec!["push", "-q", "origin", "refs/notes/handoffs"];
        let refs: Vec<String> = keys.iter().map(|k| format!("+refs/handoffs/{k}")).collect();
        args.extend(refs.iter().map(String::as_str));
        t.sb.git(&t.a, &args);
    };
    plain_push(&["k1", "k2"]);
    t.run(&t.b, &["fetch"]).success();
    t.run(&t.b, &["redact", "--history"]).success();
    // The team goes on: a new version of k2, pushed as before.
    let k2v2 = t.write(&t.a, "k2", "2026-11-30T10:00:00Z", "clean v2");
    plain_push(&["k1", "k2"]);

    let out = t.run(&t.b, &["fetch"]).success();
    let text = stdout(&out);
    assert!(text.contains("held: k1 ('origin' holds "), "{text}");
    assert!(
        text.contains("(github_token); after `git handoff redact --history` here none is taken back; the other keys went on; `git handoff push origin k1` replaces it with yours)"),
        "{text}"
    );
    assert!(text.contains("fast-forwarded: k2"), "{text}");
    assert!(
        text.contains(
            "history: merged from 'origin' without 1 line that hold secrets (key 'k1' version "
        ) && text.contains("`git push --force-with-lease=refs/notes/handoffs:"),
        "{text}"
    );
    assert!(!text.contains(TOKEN), "{text}");
    assert_eq!(t.brief_id(&t.b, "k2").as_deref(), Some(k2v2.as_str()));
    assert_eq!(t.log_ids(&t.b, "k2").first(), Some(&k2v2));
    assert!(!t.reachable_holds(&t.b, TOKEN), "no secret is kept here");
    let log = stdout(&t.run(&t.b, &["log", "k1", "--json"]).success());
    assert!(!log.contains(TOKEN), "{log}");
    let theirs = t.run(&t.b, &["show", "k1@origin"]);
    assert!(!stdout(&theirs).contains(TOKEN));
    t.run(&t.b, &["show", "k2@origin"])
        .success()
        .stdout(t.sb.git(&t.b, &["cat-file", "-p", &k2v2]));
    let v = json(&stdout(&t.run(&t.b, &["fetch", "--json"]).success()));
    let k1 = v["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["key"] == "k1")
        .cloned()
        .unwrap();
    assert_eq!(k1["status"], "held-secret", "{v}");
    assert_eq!(k1["secret"]["rules"], serde_json::json!(["github_token"]));
    assert_eq!(v["history"]["result"], "held", "{v}");
    assert!(!t.reachable_holds(&t.b, TOKEN));

    // Push works for the other keys; the held key and the history wait.
    t.write(&t.b, "k3", "2026-11-30T11:00:00Z", "new here");
    let out = t.run(&t.b, &["push"]).success();
    let text = stdout(&out);
    assert!(text.contains("create: k3"), "{text}");
    assert!(
        text.contains("skipped: k1 ('origin''s version holds a secret (github_token), never taken back here after `git handoff redact --history`; `git handoff push origin k1` replaces it with yours)"),
        "{text}"
    );
    assert!(
        text.contains("history: not pushed: 'origin''s history holds secrets"),
        "{text}"
    );
    assert!(t.remote_id("k3").is_some());
    assert!(!t.reachable_holds(&t.b, TOKEN));

    // Named, the key replaces the remote's version (with a lease on it).
    let theirs = t.remote_id("k1").unwrap();
    let mine = t.brief_id(&t.b, "k1").unwrap();
    let out = t.run(&t.b, &["push", "origin", "k1"]).success();
    assert_stdout_has(
        &out,
        &format!("push: k1 ({} -> {})", short(&theirs), short(&mine)),
    );
    assert_eq!(t.remote_id("k1").as_deref(), Some(mine.as_str()));
    // The command the history line names replaces the remote's history.
    let text = stdout(&t.run(&t.b, &["fetch"]).success());
    let line = text.lines().find(|l| l.contains("history:")).unwrap();
    let end = line.rfind('`').unwrap();
    let command = &line[line[..end].rfind('`').unwrap() + 1..end];
    let words: Vec<&str> = command.split(' ').collect();
    assert_eq!(words[..2], ["git", "push"], "{command}");
    t.sb.git(&t.b, &words[1..]);
    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(&out, "history: up to date");
    assert!(!stdout(&out).contains("held"), "{}", stdout(&out));
    assert!(!t.reachable_holds(&t.bare, TOKEN), "the remote is repaired");

    // A held key with no brief here: named with --prune, it is deleted
    // there (with a lease); a plain push says so.
    t.write(&t.a, "k9", "2026-11-30T12:00:00Z", &format!("also {TOKEN}"));
    t.sb.git(&t.a, &["push", "-q", "origin", "+refs/handoffs/k9"]);
    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(
        &out,
        "`git handoff push --prune origin k9` deletes it there)",
    );
    let out = t.run(&t.b, &["push"]).success();
    assert_stdout_has(
        &out,
        "never taken back here after `git handoff redact --history`; `git handoff push --prune origin k9` deletes it there)",
    );
    assert!(t.remote_id("k9").is_some());
    let out = t.run(&t.b, &["push", "--prune", "origin", "k9"]).success();
    assert_stdout_has(&out, "delete: k9 (was ");
    assert_eq!(t.remote_id("k9"), None);
    assert_eq!(t.brief_id(&t.b, "k9"), None);
    assert!(!t.reachable_holds(&t.b, TOKEN));
}

/// Refs move with the reflogs git would keep: the notes history's (logged
/// by default) names the committer; the bookkeeping refs have none, until
/// `core.logAllRefUpdates=always` asks for every ref's, or one exists.
#[test]
fn push_and_fetch_keep_the_reflogs_git_would_keep() {
    let t = team();
    // Each entry's identity (git's `reflog show` prints no entry of a ref
    // to a blob), or None without a reflog.
    let reflog = |dir: &Path, name: &str| {
        let text = std::fs::read_to_string(dir.join(".git/logs").join(name)).ok()?;
        let who = text.lines().map(|line| {
            let who = line.splitn(3, ' ').nth(2).unwrap_or_default();
            format!("{}>\n", who.split('>').next().unwrap_or_default())
        });
        Some(who.collect::<String>())
    };
    let base = "refs/handoff-remotes/origin/briefs/feat";
    let staged = "refs/handoff-fetch/origin/briefs/feat";
    t.publish("feat", "one");
    assert!(
        reflog(&t.a, "refs/notes/handoffs")
            .is_some_and(|log| log.starts_with("Ada Author <ada@example.invalid>\n")),
        "{:?}",
        reflog(&t.a, "refs/notes/handoffs")
    );
    assert!(!t.a.join(".git/logs").join(base).exists());
    assert!(!t.a.join(".git/logs").join(staged).exists());

    // Every ref logged: the bookkeeping refs' reflogs name the committer.
    t.sb.git(&t.a, &["config", "core.logAllRefUpdates", "always"]);
    t.write(&t.a, "feat", "2026-11-30T10:00:00Z", "two");
    t.run(&t.a, &["push"]).success();
    for name in [base, staged] {
        let log = reflog(&t.a, name).unwrap_or_default();
        assert_eq!(log, "Ada Author <ada@example.invalid>\n", "{name}");
    }

    // A reflog that exists is appended to, logged by default or not.
    t.run(&t.b, &["fetch"]).success();
    let log_file = t.b.join(".git/logs").join(staged);
    assert!(!log_file.exists());
    std::fs::create_dir_all(log_file.parent().unwrap()).unwrap();
    std::fs::write(&log_file, "").unwrap();
    t.write(&t.a, "feat", "2026-11-30T11:00:00Z", "three");
    t.run(&t.a, &["push"]).success();
    t.run(&t.b, &["fetch"]).success();
    assert_eq!(t.id(&t.b, staged), t.remote_id("feat"));
    assert_eq!(
        reflog(&t.b, staged).as_deref(),
        Some("Ada Author <ada@example.invalid>\n")
    );
    // In the words of every other handoff reflog entry.
    let text = std::fs::read_to_string(&log_file).unwrap();
    assert!(text.ends_with("\thandoff: fetch origin\n"), "{text:?}");
}

/// Briefs travel without the code: a push of a brief written at a commit
/// its branch on the remote does not hold says so and names the `git
/// push` that sends it (a fresh-clone trial wondered); once the branch is
/// pushed, nothing is said.
#[test]
fn a_push_says_when_the_briefs_commit_is_not_on_the_remote() {
    let t = team();
    code_note(&t, &t.a, "x");
    // The same in a reftable clone, whose refs gix alone does not read.
    let root = t.sb.dir.path().to_path_buf();
    t.sb.git(
        &root,
        &["clone", "-q", "--ref-format=reftable", &t.url, "R"],
    );
    code_note(&t, &t.sb.path("R"), "y");
}

fn code_note(t: &Team, dir: &Path, name: &str) {
    let (branch, key) = (format!("feat/{name}"), format!("feat-{name}"));
    t.sb.git(dir, &["switch", "-q", "-c", &branch]);
    t.sb.commit(dir, "x.rs", "x\n", "x");
    let head = t.sb.git(dir, &["rev-parse", "--short=7", "HEAD"]);
    t.write(dir, &key, "2026-11-30T10:00:00Z", "x done");
    let out = t.run(dir, &["push"]).success();
    assert_stdout_has(
        &out,
        &format!(
            "note: the commit '{key}' was written at ({}) is not on 'origin/{branch}': briefs travel without the code; `git push origin {branch}` sends it\n",
            head.trim()
        ),
    );
    t.sb.git(dir, &["push", "-q", "origin", &branch]);
    t.write(dir, &key, "2026-11-30T11:00:00Z", "x done again");
    let out = t.run(dir, &["push"]).success();
    assert!(
        !stdout(&out).contains("note: the commit"),
        "{}",
        stdout(&out)
    );
}
