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

/// `log KEY --json` (stdout and stderr) for each key.
fn logs(sb: &Sandbox, dir: &Path, keys: &[&str]) -> Vec<String> {
    keys.iter()
        .map(|k| {
            let out = sb.handoff(dir, &["log", k, "--json"]);
            format!("{}{}", stdout(&out), stderr(&out))
        })
        .collect()
}

fn index_files(repo: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(repo.join(".git/handoff-history-index"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| !p.to_string_lossy().ends_with(".lock"));
    files.sort();
    files
}

#[test]
fn log_through_the_index_equals_log_without_it_on_one_commit() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let keys = ["k0", "k1", "k2"];
    // Every version noted on the same commit, one growing note, the index
    // extended after each write; then a commit and more versions.
    let mut written: Vec<Vec<String>> = vec![Vec::new(); keys.len()];
    for i in 0..12 {
        let now = format!("2026-11-30T09:00:{:02}Z", i / 2);
        let id = write_at(&sb, &repo, keys[i % 3], &now, &format!("v{i}"));
        written[i % 3].push(id);
        logs(&sb, &repo, &keys[..1]);
    }
    sb.commit(&repo, "a.txt", "a\n", "a");
    for (i, key) in keys.iter().enumerate() {
        written[i].push(write_at(&sb, &repo, key, NOW, "after the commit"));
    }
    let notes = sb.git(&repo, &["notes", "--ref=handoffs", "show", "HEAD~1"]);
    assert_eq!(brief_lines(&notes).len(), 12, "{notes}");
    let warm = logs(&sb, &repo, &keys);
    std::fs::remove_dir_all(repo.join(".git/handoff-history-index")).unwrap();
    let cold = logs(&sb, &repo, &keys);
    assert_eq!(warm, cold);
    for (i, key) in keys.iter().enumerate() {
        let mut ids = sb.log_ids(&repo, key);
        ids.reverse();
        assert_eq!(ids, written[i], "{key}: write order, same-second ties too");
    }
}

#[test]
fn log_after_redact_history_lists_the_rewritten_versions_only() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let token = format!("ghp_{}", "Zq8xW2vN5m".repeat(4));
    let flags = ["cargo test", "r", "cargo test x"];
    let secret = [
        "--decision",
        &format!("use {token}"),
        "--no-redact",
        "--no-lint",
    ];
    sb.write_brief(&repo, Some("k"), flags, &secret).success();
    sb.write_brief(
        &repo,
        Some("k"),
        ["cargo test", "r2", "cargo test x"],
        &["--no-lint"],
    )
    .success();
    let before = sb.log_ids(&repo, "k");
    assert_eq!(before.len(), 2);
    assert!(!index_files(&repo).is_empty(), "log keeps an index");
    sb.handoff(&repo, &["redact", "--history"]).success();

    let warm = logs(&sb, &repo, &["k"]);
    assert!(!warm[0].contains(&token), "{}", warm[0]);
    let shown = stdout(&sb.handoff(&repo, &["show", "k@{1}"]).success());
    assert!(shown.contains("[REDACTED:github_token]"), "{shown}");
    let after = sb.log_ids(&repo, "k");
    assert_eq!(after.len(), 2, "{}", warm[0]);
    assert!(!after.contains(&before[1]), "the secret version is gone");
    for file in index_files(&repo) {
        let data = std::fs::read(&file).unwrap();
        assert!(
            !String::from_utf8_lossy(&data).contains(&token),
            "an index file kept the redacted secret: {}",
            file.display()
        );
    }
    std::fs::remove_dir_all(repo.join(".git/handoff-history-index")).unwrap();
    assert_eq!(warm, logs(&sb, &repo, &["k"]));
}

/// sha1 of `parts`, hex, as the index file's digests are computed.
fn sha1(parts: &[&[u8]]) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("sha1sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for part in parts {
        stdin.write_all(part).unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..40].to_string()
}

/// The index file with `from` replaced by `to` (same length) in one
/// version line, every digest recomputed: a forgery only git can expose.
fn forge(data: &[u8], from: &str, to: &str) -> Vec<u8> {
    let text = String::from_utf8(data.to_vec()).unwrap();
    let mut lines: Vec<&str> = text.splitn(4, '\n').collect();
    let (header, tips, meta, body) = (lines[0], lines[1], lines[2], lines.remove(3));
    let stamp = format!("{header}\n{tips}\n");
    let m: Vec<&str> = meta.split(' ').collect();
    let (dir_len, commits_len): (usize, usize) = (m[0].parse().unwrap(), m[2].parse().unwrap());
    let (directory, rest) = body.split_at(dir_len);
    let (commits, sections) = rest.split_at(commits_len);
    let at = sections.find(from).expect("the text to forge");
    let sections = sections.replacen(from, to, 1);
    let mut new_dir = String::new();
    for line in directory.lines() {
        let d: Vec<&str> = line.splitn(4, ' ').collect();
        let (off, len): (usize, usize) = (d[0].parse().unwrap(), d[1].parse().unwrap());
        let sum = if (off..off + len).contains(&at) {
            sha1(&[stamp.as_bytes(), &sections.as_bytes()[off..off + len]])
        } else {
            d[2].to_string()
        };
        new_dir.push_str(&format!("{} {} {sum} {}\n", d[0], d[1], d[3]));
    }
    let meta = format!(
        "{} {} {} {} {}",
        m[0],
        sha1(&[stamp.as_bytes(), new_dir.as_bytes()]),
        m[2],
        m[3],
        m[4]
    );
    format!("{stamp}{meta}\n{new_dir}{commits}{sections}").into_bytes()
}

#[test]
fn a_tampered_or_truncated_index_is_detected_and_rebuilt() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    write_at(&sb, &repo, "k", "2026-11-30T09:00:00Z", "first");
    write_at(&sb, &repo, "other", "2026-11-30T09:30:00Z", "elsewhere");
    sb.commit(&repo, "a.txt", "a\n", "a");
    write_at(&sb, &repo, "k", "2026-11-30T10:00:00Z", "second");
    // A write reads its key's lineage through the index too: start from
    // none, so that the one file below is the one `log` builds.
    let _ = std::fs::remove_dir_all(repo.join(".git/handoff-history-index"));
    let good = logs(&sb, &repo, &["k", "other"]);
    let files = index_files(&repo);
    assert_eq!(files.len(), 1, "{files:?}");
    let file = &files[0];
    let original = std::fs::read(file).unwrap();
    let text = String::from_utf8_lossy(&original).into_owned();
    assert!(text.starts_with("git-handoff history index 4\n"), "{text}");

    let edited = text.replacen("\"done_when\":\"first\"", "\"done_when\":\"FORGE\"", 1);
    let tampered: Vec<(&str, Vec<u8>)> = vec![
        ("truncated", original[..original.len() - 10].to_vec()),
        ("cut to its head", original[..original.len() / 3].to_vec()),
        ("a line edited", edited.into_bytes()),
        ("longer", [&original[..], b"extra\n"].concat()),
        ("garbage", b"not an index\n".to_vec()),
        ("empty", Vec::new()),
        (
            "a line edited, every digest recomputed",
            forge(
                &original,
                "\"done_when\":\"first\"",
                "\"done_when\":\"FORGE\"",
            ),
        ),
    ];
    for (what, bytes) in tampered {
        std::fs::write(file, &bytes).unwrap();
        let now = logs(&sb, &repo, &["k", "other"]);
        assert_eq!(now, good, "{what}: the index was trusted");
        assert!(!now[0].contains("FORGE"), "{what}");
        let rebuilt = std::fs::read(file).unwrap();
        assert_ne!(rebuilt, bytes, "{what}: the damaged file was kept");
        assert_eq!(logs(&sb, &repo, &["k", "other"]), good, "{what}");
    }
    // `show KEY@{N}` and `diff` read through the same index.
    std::fs::write(
        file,
        forge(
            &original,
            "\"done_when\":\"first\"",
            "\"done_when\":\"FORGE\"",
        ),
    )
    .unwrap();
    let shown = stdout(&sb.handoff(&repo, &["show", "k@{1}"]).success());
    assert!(shown.contains("\"done_when\": \"first\""), "{shown}");
    let diff = stdout(&sb.handoff(&repo, &["diff", "k"]).success());
    assert!(diff.contains("-    \"done_when\": \"first\""), "{diff}");
    assert!(!diff.contains("FORGE"), "{diff}");
}

/// `log --json` of `keys`, from no index file (built from the objects as
/// they are stored now).
fn cold_logs(sb: &Sandbox, dir: &Path, keys: &[&str]) -> Vec<String> {
    let _ = std::fs::remove_dir_all(dir.join(".git/handoff-history-index"));
    logs(sb, dir, keys)
}

/// The index is built from proofs read off the pack's deltas where it can
/// (a note that grew is read once, from its newest blob), by reading
/// every note elsewhere: either way `log` gives the same answer, for a
/// note that grew one version at a time, one rewritten by plain git, and
/// one whose blob ended inside a line that a later blob completed.
#[test]
fn log_is_the_same_whether_notes_are_loose_packed_as_deltas_or_whole() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let keys = ["k0", "k1", "k2"];
    // All in the same second: the order is the history's.
    for i in 0..40 {
        write_at(&sb, &repo, keys[i % 3], NOW, &format!("v{i}"));
    }
    // Plain git rewrites the note: its first line goes. Then a version
    // that only the next blob holds ends that blob, without a newline; the
    // blob after completes the line into one that is no brief.
    let note = sb.git(&repo, &["notes", "--ref=handoffs", "show", "HEAD"]);
    let rest: String = note.lines().skip(1).map(|l| format!("{l}\n")).collect();
    let only_here = brief_lines(&note)
        .last()
        .unwrap()
        .replace("\"v39\"", "\"partial\"");
    let partial = format!("{rest}{only_here}");
    for text in [
        rest.clone(),
        partial.clone(),
        format!("{partial} and more\n"),
    ] {
        let blob = sb.git_stdin(&repo, &["hash-object", "-w", "--stdin"], text);
        sb.git(
            &repo,
            &[
                "notes",
                "--ref=handoffs",
                "add",
                "-f",
                "-C",
                blob.trim(),
                "HEAD",
            ],
        );
    }
    for i in 40..60 {
        write_at(&sb, &repo, keys[i % 3], NOW, &format!("v{i}"));
    }
    sb.commit(&repo, "a.txt", "a\n", "a");
    write_at(&sb, &repo, "k0", NOW, "after the commit");
    let loose = cold_logs(&sb, &repo, &keys);
    assert!(
        loose[0].contains("v0\""),
        "the rewritten-away version stays in the log"
    );
    assert!(loose[0].contains("\"partial\""), "{}", loose[0]);
    // Every object packed, notes as deltas of one another, then whole.
    sb.git(&repo, &["repack", "-a", "-d", "-f", "-q", "--depth=50"]);
    let deltas = sb.git(
        &repo,
        &[
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(deltabase)",
        ],
    );
    assert!(
        deltas.lines().filter(|l| !l.starts_with("0000")).count() > 40,
        "{deltas}"
    );
    assert_eq!(cold_logs(&sb, &repo, &keys), loose);
    sb.git(&repo, &["repack", "-a", "-d", "-f", "-q", "--window=0"]);
    assert_eq!(cold_logs(&sb, &repo, &keys), loose);
}

#[test]
fn a_clock_that_went_backwards_does_not_reorder_the_versions() {
    // Issue 30 item 8: versions are ordered by the history itself; the
    // timestamps are shown, never trusted for order.
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let v1 = write_at(&sb, &repo, "k", "2026-11-30T10:00:00Z", "first");
    let v2 = write_at(&sb, &repo, "k", "2026-11-30T11:00:00Z", "second");
    // This machine's clock is behind: the newest version says 09:00.
    let v3 = write_at(&sb, &repo, "k", "2026-11-30T09:00:00Z", "third");
    let rows = log_json(&sb, &repo, "k");
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [v3.as_str(), v2.as_str(), v1.as_str()]);
    assert_eq!(rows[0]["current"], true);
    assert_eq!(rows[0]["timestamp"], "2026-11-30T09:00:00Z");
    let text = stdout(&sb.handoff(&repo, &["log", "k"]).success());
    let first = text.lines().find(|l| l.contains("@{0}")).unwrap_or("");
    assert!(first.contains("(current)"), "{text}");

    let current = stdout(&sb.handoff(&repo, &["show", "k"]).success());
    let newest = stdout(&sb.handoff(&repo, &["show", "k@{0}"]).success());
    assert_eq!(current, newest);
    let out = sb.handoff(&repo, &["diff", "k", "--json"]).success();
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["old"]["id"], v2.as_str());
    assert_eq!(v["new"]["id"], v3.as_str());
    // The same through a rebuilt index.
    std::fs::remove_dir_all(repo.join(".git/handoff-history-index")).ok();
    let again = log_json(&sb, &repo, "k");
    let ids: Vec<&str> = again.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [v3.as_str(), v2.as_str(), v1.as_str()]);
}
