//! Version history end to end: log, show KEY@{N} / --version, diff, and a
//! history that survives `drop` and `git gc --prune=now`.

use std::path::Path;

use crate::support::*;
use serde_json::Value;

/// `git handoff write KEY` at the given clock; returns the version id.
fn write_at(sb: &Sandbox, dir: &Path, key: &str, now: &str, done: &str) -> String {
    let flags = [done, "do the next thing", "cargo test"];
    let out = sb
        .write_brief_at(dir, now, Some(key), flags, &["--json"])
        .success();
    json(&stdout(&out))["id"].as_str().unwrap().to_string()
}

fn log_json(sb: &Sandbox, dir: &Path, key: &str) -> Vec<Value> {
    let out = sb.handoff(dir, &["log", key, "--json"]).success();
    serde_json::from_str::<Value>(&stdout(&out))
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn log_lists_every_version_newest_first_with_its_blob_id() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let v1 = write_at(&sb, &repo, "k", "2026-11-30T09:00:00Z", "first");
    sb.commit(&repo, "a.txt", "a\n", "a");
    let v2 = write_at(&sb, &repo, "k", "2026-11-30T10:00:00Z", "second");
    let v3 = write_at(&sb, &repo, "k", "2026-11-30T11:00:00Z", "third");
    // Another key's versions are not listed.
    write_at(&sb, &repo, "other", "2026-11-30T12:00:00Z", "elsewhere");

    let rows = log_json(&sb, &repo, "k");
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [v3.as_str(), v2.as_str(), v1.as_str()]);
    assert_eq!(rows[0]["current"], true);
    assert_eq!(rows[1]["current"], false);
    assert_eq!(rows[2]["done_when"], "first");
    assert_eq!(rows[2]["timestamp"], "2026-11-30T09:00:00Z");
    assert_eq!(rows[0]["mode"], "WRITE");
    assert_eq!(rows[0]["branch"], "main");
    let head = sb.git(&repo, &["rev-parse", "HEAD"]);
    assert_eq!(rows[0]["head_sha"], head.trim());

    let text = stdout(&sb.handoff(&repo, &["log", "k"]).success());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].starts_with(&format!(
            "@{{0}}  {}  2026-11-30T11:00:00Z  WRITE",
            &v3[..7]
        )),
        "{text}"
    );
    assert!(lines[0].contains(&head[..7]), "{text}");
    assert!(lines[0].ends_with("third  (current)"), "{text}");
    assert!(
        lines[2].starts_with(&format!("@{{2}}  {}", &v1[..7])),
        "{text}"
    );

    // Each version sits on the commit it was written at, for plain git.
    let notes = sb.git(&repo, &["log", "--notes=handoffs", "--format=%h%n%N"]);
    assert!(notes.contains("\"done_when\":\"first\""), "{notes}");
    assert!(notes.contains("\"done_when\":\"third\""), "{notes}");
}

#[test]
fn show_prints_an_earlier_version_by_index_or_id() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let v1 = write_at(&sb, &repo, "k", "2026-11-30T09:00:00Z", "first");
    let first = sb.git(&repo, &["cat-file", "-p", &v1]);
    let v2 = write_at(&sb, &repo, "k", "2026-11-30T10:00:00Z", "second");
    let second = sb.git(&repo, &["cat-file", "-p", &v2]);

    sb.handoff(&repo, &["show", "k@{1}"])
        .success()
        .stdout(first.clone());
    sb.handoff(&repo, &["show", "k@{0}"])
        .success()
        .stdout(second.clone());
    sb.handoff(&repo, &["show", "k", "--version", &v1[..8]])
        .success()
        .stdout(first.clone());
    sb.handoff(&repo, &["show", "k", "--version", &v1])
        .success()
        .stdout(first);

    let out = sb.handoff(&repo, &["show", "k@{5}"]).code(1);
    assert_eq!(
        stderr(&out),
        "error: 'k' has 2 versions (@{0} to @{1}); `git handoff log k` lists them\n"
    );
    let out = sb
        .handoff(&repo, &["show", "k", "--version", "0000000"])
        .code(1);
    assert!(
        stderr(&out).starts_with("error: no version 0000000 of 'k'"),
        "{}",
        stderr(&out)
    );
    let out = sb.handoff(&repo, &["show", "k@{x}"]).code(1);
    assert_stderr_has(&out, "N is a number");
    let out = sb
        .handoff(&repo, &["show", "k@{1}", "--version", &v2])
        .code(1);
    assert_eq!(
        stderr(&out),
        "error: give either KEY@… or --version, not both\n"
    );
}

#[test]
fn history_survives_drop_and_gc() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let v1 = write_at(&sb, &repo, "k", "2026-11-30T09:00:00Z", "first");
    let first = sb.git(&repo, &["cat-file", "-p", &v1]);
    let v2 = write_at(&sb, &repo, "k", "2026-11-30T10:00:00Z", "second");
    let v3 = write_at(&sb, &repo, "k", "2026-11-30T11:00:00Z", "third");
    let third = sb.git(&repo, &["cat-file", "-p", &v3]);

    sb.handoff(&repo, &["drop", "k"]).success();
    sb.git(&repo, &["reflog", "expire", "--expire=now", "--all"]);
    sb.git(&repo, &["gc", "-q", "--prune=now"]);
    for id in [&v1, &v2, &v3] {
        let gone = sb.git_out(&repo, &["cat-file", "-e", id]);
        assert!(!gone.status.success(), "gc should have removed blob {id}");
    }

    let rows = log_json(&sb, &repo, "k");
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [v3.as_str(), v2.as_str(), v1.as_str()]);
    assert!(rows.iter().all(|r| r["current"] == false));
    // The versions are rebuilt byte for byte.
    sb.handoff(&repo, &["show", "k@{2}"])
        .success()
        .stdout(first);
    sb.handoff(&repo, &["show", "k@{0}"])
        .success()
        .stdout(third);
    sb.handoff(&repo, &["show", "k@{1}"]).success();
    // The ref itself is gone.
    sb.handoff(&repo, &["show", "k"]).code(1);
}

#[test]
fn diff_compares_the_previous_version_with_the_current_one() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let v1 = write_at(&sb, &repo, "k", "2026-11-30T09:00:00Z", "first");
    let v2 = write_at(&sb, &repo, "k", "2026-11-30T10:00:00Z", "second");

    let out = sb.handoff(&repo, &["diff", "k"]).success();
    let text = stdout(&out);
    assert!(
        text.starts_with(&format!(
            "--- k@{{1}} {} 2026-11-30T09:00:00Z\n+++ k@{{0}} {} 2026-11-30T10:00:00Z\n@@ ",
            &v1[..7],
            &v2[..7]
        )),
        "{text}"
    );
    assert!(
        text.contains("\n-    \"done_when\": \"first\",\n+    \"done_when\": \"second\",\n"),
        "{text}"
    );
    assert!(
        text.contains("\n-  \"timestamp\": \"2026-11-30T09:00:00Z\",\n"),
        "{text}"
    );

    sb.handoff(&repo, &["diff", "k", "--summary"]).success().stdout(
        "k@{1}..k@{0}: 2 fields changed (timestamp, resume.done_when), 2 insertions(+), 2 deletions(-)\n",
    );
    // Explicit versions, in either order; ids work too.
    sb.handoff(&repo, &["diff", "k", "@{0}", &v1[..7], "--summary"])
        .success()
        .stdout("k@{0}..k@{1}: 2 fields changed (timestamp, resume.done_when), 2 insertions(+), 2 deletions(-)\n");
    sb.handoff(&repo, &["diff", "k", "@{0}", "current", "--summary"])
        .success()
        .stdout("k@{0}..k@{0}: no fields changed\n");
    sb.handoff(&repo, &["diff", "k", "@{0}", "current"])
        .success()
        .stdout("");
    let v: Value = serde_json::from_str(&stdout(
        &sb.handoff(&repo, &["diff", "k", "--json"]).success(),
    ))
    .unwrap();
    assert_eq!(v["old"]["id"], v1.as_str());
    assert_eq!(v["new"]["id"], v2.as_str());
    assert_eq!(
        v["fields"],
        serde_json::json!(["timestamp", "resume.done_when"])
    );

    let out = sb.handoff(&repo, &["diff", "k", "bogus"]).code(1);
    assert!(
        stderr(&out).starts_with("error: 'bogus' names no version"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn diff_of_a_single_version_and_log_of_an_unknown_key_fail_clearly() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    write_at(&sb, &repo, "k", "2026-11-30T09:00:00Z", "only");
    let out = sb.handoff(&repo, &["diff", "k"]).code(1);
    assert_eq!(
        stderr(&out),
        "error: 'k' has no version before k@{0}; `git handoff log k` lists the versions\n"
    );
    let out = sb.handoff(&repo, &["log", "nope"]).code(1);
    assert_eq!(
        stderr(&out),
        "error: no version of 'nope' in the history (refs/notes/handoffs); `git handoff list` shows the keys\n"
    );
    let out = sb.handoff(&repo, &["log", "bad..key"]).code(1);
    assert!(
        stderr(&out).starts_with("error: invalid key"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn versions_written_in_the_same_second_keep_their_write_order() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let v1 = write_at(&sb, &repo, "k", NOW, "one");
    let v2 = write_at(&sb, &repo, "k", NOW, "two");
    let v3 = write_at(&sb, &repo, "k", NOW, "three");
    let rows = log_json(&sb, &repo, "k");
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [v3.as_str(), v2.as_str(), v1.as_str()]);
}
