//! `import` and `export`, end to end in real repositories.

use std::path::Path;

use crate::support::*;
use serde_json::json;

/// A brief as a file-based tool wrote it elsewhere: another machine's
/// worktree, a commit this repository does not have, 4-space indentation.
fn foreign(key: &str, timestamp: &str, resume_by: &str) -> String {
    let value = json!({
        "schema_version": "1",
        "key": key,
        "timestamp": timestamp,
        "mode": "WRITE",
        "resume": {"done_when": "cargo test passes", "resume_by": resume_by},
        "state": {
            "branch": "feat/a",
            "next_acceptance_check": "cargo test a",
            "worktree": {"root": "/home/other/proj", "is_linked": false, "git_common_dir": "/home/other/proj/.git"},
            "head_sha": "0123456789abcdef0123456789abcdef01234567",
            "decisions": ["über-simple ✓"]
        },
        "files_read_first": [{"path": "/nonexistent/secret", "why": "never read by import"}]
    });
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    serde::Serialize::serialize(&value, &mut ser).unwrap();
    String::from_utf8(out).unwrap()
}

fn stored(sb: &Sandbox, dir: &Path, key: &str) -> String {
    sb.git(dir, &["cat-file", "-p", &format!("refs/handoffs/{key}")])
}

#[test]
fn import_of_a_folder_with_a_valid_an_invalid_and_a_legacy_handoff_json() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let folder = repo.join(".claude/handoffs");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("feat-a.json"),
        foreign("feat-a", "2026-11-02T10:00:00Z", "finish a"),
    )
    .unwrap();
    let mut broken = json(&foreign("broken", "2026-11-02T10:00:00Z", "x"));
    broken["state"]["owner"] = json!("me");
    std::fs::write(folder.join("broken.json"), broken.to_string()).unwrap();
    std::fs::write(
        folder.join("HANDOFF.json"),
        foreign("legacy-slot", "2026-10-01T09:00:00Z", "the old single slot"),
    )
    .unwrap();
    std::fs::write(folder.join("README.md"), "not a brief, not a .json file\n").unwrap();

    // From a linked worktree, the default folder is the main worktree's.
    let wt = sb.worktree(&repo, "wt", "w");
    let out = sb.handoff(&wt, &["import"]).code(1);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    let folder_s = std::fs::canonicalize(&folder).unwrap();
    let at = |name: &str| folder_s.join(name).display().to_string();
    assert!(
        lines[0].starts_with(&format!("skipped-invalid    {}: brief does not match schema version 1 (1 error): state: Additional properties are not allowed ('owner' was unexpected)", at("broken.json"))),
        "{text}"
    );
    assert_eq!(
        lines[1],
        format!("imported           {} -> feat-a", at("feat-a.json"))
    );
    assert_eq!(
        lines[2],
        format!("imported           {} -> legacy-slot", at("HANDOFF.json"))
    );
    assert_eq!(
        lines.last().unwrap(),
        &"2 imported, 1 skipped-invalid, 0 already-identical, 0 kept-newer, 0 skipped-duplicate."
    );
    let err = stderr(&out);
    assert!(
        err.starts_with("error: 1 file was skipped as invalid"),
        "{err}"
    );

    assert_eq!(
        sb.git(
            &repo,
            &["for-each-ref", "--format=%(refname)", "refs/handoffs"]
        ),
        "refs/handoffs/feat-a\nrefs/handoffs/legacy-slot\n"
    );
    // Stored as recorded: same fields, other machine's state kept, not refreshed.
    let a = stored(&sb, &repo, "feat-a");
    assert_eq!(
        json(&a),
        json(&foreign("feat-a", "2026-11-02T10:00:00Z", "finish a"))
    );
    assert!(
        a.starts_with("{\n  \"schema_version\""),
        "stored in the canonical form: {a}"
    );
    let legacy = json(&stored(&sb, &repo, "legacy-slot"));
    assert_eq!(legacy["key"], "legacy-slot");
    assert_eq!(legacy["timestamp"], "2026-10-01T09:00:00Z");
    // import chooses no worktree key and writes no narrative.
    assert!(!repo.join(".git/handoff-key").exists());
    assert!(!repo.join(".claude/PROJECT_STATE.md").exists());
    assert!(!wt.join(".claude").exists());

    // Again: the two are identical now, the invalid one is still reported.
    let out = sb.handoff(&repo, &["import", "--json"]).code(1);
    let rows = json(&stdout(&out));
    let statuses: Vec<(&str, &str)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["file"].as_str().unwrap().rsplit('/').next().unwrap(),
                r["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("broken.json", "skipped-invalid"),
            ("feat-a.json", "already-identical"),
            ("HANDOFF.json", "already-identical"),
        ]
    );
}

#[test]
fn a_stored_brief_is_replaced_only_by_a_newer_file_unless_forced() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    // Stored at the test clock, 2026-11-30T12:00:00Z.
    sb.write_brief(&repo, Some("feat-a"), ["d", "local", "c"], &[])
        .success();
    let local = stored(&sb, &repo, "feat-a");
    let dir = sb.path("files");
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_str().unwrap();

    for older in ["2026-11-01T00:00:00Z", "2026-11-30T12:00:00Z"] {
        std::fs::write(dir.join("feat-a.json"), foreign("feat-a", older, "old")).unwrap();
        let out = sb.handoff(&repo, &["import", d]).success();
        assert!(stdout(&out).starts_with("kept-newer "), "{}", stdout(&out));
        assert!(stdout(&out).contains("--force replaces it"));
        assert_eq!(stored(&sb, &repo, "feat-a"), local);
    }
    let out = sb.handoff(&repo, &["import", d, "--force"]).success();
    assert_stdout_has(&out, "replaced with --force");
    assert_eq!(
        json(&stored(&sb, &repo, "feat-a"))["resume"]["resume_by"],
        "old"
    );

    std::fs::write(
        dir.join("feat-a.json"),
        foreign("feat-a", "2026-12-24T00:00:00Z", "newer"),
    )
    .unwrap();
    let out = sb.handoff(&repo, &["import", d]).success();
    assert_stdout_has(&out, "replaced an older version");
    assert_eq!(
        json(&stored(&sb, &repo, "feat-a"))["resume"]["resume_by"],
        "newer"
    );
}

#[test]
fn import_bad_paths() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.handoff(&repo, &["import"])
        .code(1)
        .stderr(predicates::str::contains(
            "no .claude/handoffs or .catalyst/handoffs folder at the main worktree",
        ));
    sb.handoff(&repo, &["import", "/nonexistent/dir"])
        .code(1)
        .stderr(predicates::str::contains("is not a directory"));

    let dir = repo.join(".catalyst/handoffs");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("named.json"),
        foreign("other-key", "2026-11-01T00:00:00Z", "x"),
    )
    .unwrap();
    std::fs::write(
        dir.join("bad..key.json"),
        foreign("bad..key", "2026-11-01T00:00:00Z", "x"),
    )
    .unwrap();
    std::fs::write(dir.join("big.json"), vec![b' '; 1024 * 1024 + 1]).unwrap();
    std::fs::write(dir.join("not-json.json"), "{oops").unwrap();
    #[cfg(unix)]
    {
        let target = sb.path("outside.json");
        std::fs::write(&target, foreign("linked", "2026-11-01T00:00:00Z", "x")).unwrap();
        std::os::unix::fs::symlink(&target, dir.join("linked.json")).unwrap();
    }
    let out = sb.handoff(&repo, &["import"]).code(1);
    let text = stdout(&out);
    for needle in [
        "bad..key.json: invalid key 'bad..key': a key cannot contain '..'",
        "big.json: input is 1048577 bytes; a brief may be at most 1 MiB",
        "named.json: the file name says 'named' but the brief's key is 'other-key'",
        "not-json.json: input is not valid JSON",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in {text}");
    }
    #[cfg(unix)]
    assert!(
        text.contains("linked.json: is a symlink; not followed"),
        "{text}"
    );
    assert!(text.contains("0 imported,"), "{text}");
    assert_eq!(handoff_refs(&sb, &repo), "");
}

#[test]
fn export_then_import_round_trips_byte_identically() {
    let sb = Sandbox::new();
    let a = sb.repo("a");
    sb.handoff_with(&a, &["write", "-F", "-"], Some(EXAMPLE))
        .success();
    sb.git(&a, &["switch", "-q", "-c", "feat/ü"]);
    std::fs::write(a.join("README"), "dirty\n").unwrap();
    sb.write_brief(
        &a,
        None,
        ["naïve ✓ \"quoted\"", "tab\there", "c"],
        &[
            "--key-from-branch",
            "--test",
            "cargo test=fail",
            "--skip",
            "target/=build output",
        ],
    )
    .success();
    sb.write_brief(&a, Some("HANDOFF"), ["d", "r", "c"], &[])
        .success();
    let out_dir = sb.path("exported");
    let out = sb
        .handoff(&a, &["export", "--all", out_dir.to_str().unwrap()])
        .success();
    assert_eq!(stdout(&out).lines().count(), 3, "{}", stdout(&out));
    let keys = ["HANDOFF", "feat-ü", "main"];
    for key in keys {
        let file = std::fs::read(out_dir.join(format!("{key}.json"))).unwrap();
        assert_eq!(
            file,
            stored(&sb, &a, key).into_bytes(),
            "{key}: the file is the stored bytes"
        );
    }
    // export KEY prints the same bytes; -o writes them.
    sb.handoff(&a, &["export", "main"])
        .success()
        .stdout(stored(&sb, &a, "main"));
    let single = sb.path("single.json");
    sb.handoff(&a, &["export", "main", "-o", single.to_str().unwrap()])
        .success();
    assert_eq!(
        std::fs::read_to_string(&single).unwrap(),
        stored(&sb, &a, "main")
    );

    // Import into another repository: the same blobs, byte for byte.
    let b = sb.repo("b");
    let out = sb
        .handoff(&b, &["import", out_dir.to_str().unwrap()])
        .success();
    assert_stdout_has(&out, "3 imported, 0 skipped-invalid");
    for key in keys {
        let r = format!("refs/handoffs/{key}");
        assert_eq!(
            sb.git(&a, &["rev-parse", &r]),
            sb.git(&b, &["rev-parse", &r]),
            "{key}"
        );
        assert_eq!(stored(&sb, &a, key), stored(&sb, &b, key));
    }
    // And back out again: identical files.
    let again = sb.path("again");
    sb.handoff(&b, &["export", "--all", again.to_str().unwrap()])
        .success();
    for key in keys {
        let name = format!("{key}.json");
        assert_eq!(
            std::fs::read(out_dir.join(&name)).unwrap(),
            std::fs::read(again.join(&name)).unwrap()
        );
    }
    // Exporting over identical files changes nothing.
    let out = sb
        .handoff(&a, &["export", "--all", out_dir.to_str().unwrap()])
        .success();
    assert!(
        stdout(&out).lines().all(|l| l.starts_with("unchanged ")),
        "{}",
        stdout(&out)
    );
}

#[test]
fn export_never_escapes_its_folder_or_clobbers_a_newer_file() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.write_brief(&repo, None, ["d", "r", "c"], &[]).success();
    // A foreign ref whose key is no file name: refs/handoffs/nested/evil.
    let blob = sb.git(&repo, &["rev-parse", "refs/handoffs/main"]);
    sb.git(
        &repo,
        &["update-ref", "refs/handoffs/nested/evil", blob.trim()],
    );
    let dir = sb.path("out");
    let out = sb
        .handoff(&repo, &["export", "--all", dir.to_str().unwrap()])
        .code(1);
    let text = stdout(&out);
    assert!(text.contains("exported    main -> "), "{text}");
    assert!(
        text.contains("skipped     nested/evil: invalid key 'nested/evil'"),
        "{text}"
    );
    assert!(stderr(&out).starts_with("error: 1 brief could not be exported"));
    assert!(!dir.join("nested").exists());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);

    for key in ["../x", "a/b", "..", ".hidden"] {
        sb.handoff(&repo, &["export", "--", key])
            .code(1)
            .stderr(predicates::str::contains("invalid key"));
    }
    sb.handoff(&repo, &["export", "nope"])
        .code(1)
        .stderr(predicates::str::contains("no brief for key 'nope'"));
    sb.handoff(&repo, &["export", "main", "-o", dir.to_str().unwrap()])
        .code(1)
        .stderr(predicates::str::contains("is a directory"));
    sb.handoff(&repo, &["export"]).code(2);

    // A file holding a newer brief, or no brief, is kept without --force.
    let file = dir.join("main.json");
    let newer = foreign("main", "2027-01-01T00:00:00Z", "newer");
    std::fs::write(&file, &newer).unwrap();
    let out = sb
        .handoff(&repo, &["export", "main", "-o", file.to_str().unwrap()])
        .code(1);
    assert!(stderr(&out).contains("holds a brief as new or newer (2027-01-01T00:00:00Z)"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), newer);
    let out = sb
        .handoff(&repo, &["export", "--all", dir.to_str().unwrap()])
        .code(1);
    assert_stdout_has(&out, "kept-newer  main");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), newer);
    std::fs::write(&file, "my notes\n").unwrap();
    sb.handoff(&repo, &["export", "main", "-o", file.to_str().unwrap()])
        .code(1)
        .stderr(predicates::str::contains("not a brief"));
    sb.handoff(
        &repo,
        &["export", "main", "-o", file.to_str().unwrap(), "--force"],
    )
    .success();
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        stored(&sb, &repo, "main")
    );
    // An older brief in the file is simply replaced.
    std::fs::write(&file, foreign("main", "2020-01-01T00:00:00Z", "old")).unwrap();
    sb.handoff(&repo, &["export", "main", "-o", file.to_str().unwrap()])
        .success();
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        stored(&sb, &repo, "main")
    );

    // A symlink in the target folder is never written through.
    #[cfg(unix)]
    {
        let linked = sb.path("linked");
        std::fs::create_dir_all(&linked).unwrap();
        let outside = sb.path("outside.json");
        std::fs::write(&outside, "keep me\n").unwrap();
        std::os::unix::fs::symlink(&outside, linked.join("main.json")).unwrap();
        let l = linked.to_str().unwrap();
        // (exit 1: the foreign nested/evil ref is still skipped)
        let out = sb.handoff(&repo, &["export", "--all", l]).code(1);
        assert_stdout_has(&out, "is a symlink");
        sb.handoff(&repo, &["export", "--all", l, "--force"])
            .code(1);
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep me\n");
        assert!(!linked.join("main.json").is_symlink());
        assert_eq!(
            std::fs::read_to_string(linked.join("main.json")).unwrap(),
            stored(&sb, &repo, "main")
        );
    }
}

#[test]
fn an_import_without_commit_ids_says_so_not_that_there_is_no_commit() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let dir = sb.path("in");
    std::fs::create_dir_all(&dir).unwrap();
    let brief = foreign("headless", "2026-11-29T10:00:00Z", "go").replace(
        r#""head_sha": "0123456789abcdef0123456789abcdef01234567","#,
        "",
    );
    assert!(!brief.contains("head_sha"));
    std::fs::write(dir.join("headless.json"), brief).unwrap();
    let out = sb
        .handoff(&repo, &["import", dir.to_str().unwrap()])
        .success();
    let err = stderr(&out);
    assert!(!err.contains("no commit here yet"), "{err}");
    assert!(
        err.contains("the imported brief records no full commit id (state.head_sha)"),
        "{err}"
    );
}
