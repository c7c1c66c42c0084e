//! Reliability: many concurrent writers, crashes at every stage, a hostile
//! input corpus and awkward repository states. Nothing may be lost, half
//! written or panicked over.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::setups::*;
use crate::support::*;

const FLAGS: [&str; 6] = [
    "--done-when",
    "cargo test ok passes",
    "--resume-by",
    "r",
    "--next-check",
    "c",
];

/// 4 linked worktrees × 25 writes, in parallel: half to one shared key,
/// half to each worktree's own key.
#[test]
fn four_worktrees_times_25_writes() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let mut worktrees = Vec::new();
    for w in 0..4 {
        let wt = sb.path(&format!("wt{w}"));
        sb.git(
            &repo,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                &format!("feat/w{w}"),
                wt.to_str().unwrap(),
            ],
        );
        worktrees.push(wt);
    }
    let home = sb.home();
    let handles: Vec<_> = worktrees
        .iter()
        .enumerate()
        .map(|(w, wt)| {
            let wt = wt.clone();
            let home = home.clone();
            std::thread::spawn(move || {
                let mut results = Vec::new();
                for i in 0..25 {
                    let key = if i % 2 == 0 {
                        "shared".to_string()
                    } else {
                        format!("own-{w}")
                    };
                    let title = format!("w{w} write {i}");
                    let mut cmd = Command::new("git");
                    cmd.current_dir(&wt);
                    hermetic(&mut cmd, &home);
                    let out = cmd
                        .arg("handoff")
                        .args(write_args(
                            Some(&key),
                            ["cargo test ok passes", &title, "cargo test next"],
                            &[],
                        ))
                        .output()
                        .unwrap();
                    results.push((key, title, out));
                }
                results
            })
        })
        .collect();
    let mut ok = 0;
    let mut conflicts = 0;
    for (w, handle) in handles.into_iter().enumerate() {
        let results = handle.join().unwrap();
        let narrative =
            std::fs::read_to_string(worktrees[w].join(".claude/PROJECT_STATE.md")).unwrap();
        for (key, title, out) in results {
            let err = String::from_utf8_lossy(&out.stderr);
            let heading = format!("[{key}] {title}\n");
            match out.status.code() {
                Some(0) => {
                    ok += 1;
                    assert_eq!(narrative.matches(&heading).count(), 1, "{heading}");
                }
                Some(1) => {
                    conflicts += 1;
                    assert!(
                        err.contains(&format!("brief '{key}' changed while writing")),
                        "{err}"
                    );
                    assert!(key == "shared", "own keys never conflict: {err}");
                    assert_eq!(
                        narrative.matches(&heading).count(),
                        0,
                        "a refused write leaves no entry"
                    );
                }
                other => panic!("exit {other:?}: {err}"),
            }
        }
    }
    assert_eq!(ok + conflicts, 100);
    // One history line per successful write, all on the one commit.
    let note = sb.git(&repo, &["notes", "--ref=handoffs", "show", "HEAD"]);
    assert_eq!(
        brief_lines(&note).len(),
        ok,
        "history versions = successful writes ({conflicts} conflicts)"
    );
    let fsck = sb.git_out(&repo, &["fsck", "--strict"]);
    assert_ok(&fsck);
    for dir in std::iter::once(repo.join(".git")).chain(worktrees.iter().map(|w| w.join(".claude")))
    {
        assert_eq!(lock_files(&dir), Vec::<PathBuf>::new());
    }
    eprintln!("concurrency: 100 writes, {ok} stored, {conflicts} compare-and-swap conflicts");
}

/// Start `git handoff write` stopped at `point`, then SIGKILL it there.
fn kill_write_at(sb: &Sandbox, dir: &Path, point: &str, title: &str) {
    let flags = ["cargo test ok passes", title, "cargo test next"];
    kill_at(sb, dir, &write_args(None, flags, &[]), point);
}

#[test]
fn a_write_killed_at_any_stage_leaves_old_or_new_never_half() {
    for (point, ref_moved) in TRANSACTION_STAGES {
        let sb = Sandbox::new();
        let repo = sb.repo_with_short_lock_waits("r");
        sb.write_brief(
            &repo,
            None,
            ["cargo test ok passes", "first", "cargo test next"],
            &[],
        )
        .success();
        let narrative = repo.join(".claude/PROJECT_STATE.md");
        let old_text = std::fs::read_to_string(&narrative).unwrap();
        let old_ref = sb.git(&repo, &["rev-parse", "refs/handoffs/main"]);
        let old_notes = sb.git(&repo, &["rev-parse", "refs/notes/handoffs"]);

        kill_write_at(&sb, &repo, point, &format!("killed-at-{point}"));

        assert_eq!(
            std::fs::read_to_string(&narrative).unwrap(),
            old_text,
            "{point}: narrative is the old file"
        );
        let new_ref = sb.git(&repo, &["rev-parse", "refs/handoffs/main"]);
        let new_notes = sb.git(&repo, &["rev-parse", "refs/notes/handoffs"]);
        assert_eq!(new_ref != old_ref, ref_moved, "{point}: ref old or new");
        assert_eq!(
            new_notes != old_notes,
            ref_moved,
            "{point}: brief and history move together"
        );
        assert!(sb.git_out(&repo, &["fsck", "--strict"]).status.success());

        // The killed write's lock records its owner and the version it
        // stores: the next write takes it over at once, finishing the
        // killed write's narrative update when its brief was stored and
        // dropping it when not.
        let lock = repo.join(".claude/PROJECT_STATE.md.lock");
        let record = std::fs::read_to_string(&lock).unwrap();
        assert!(
            record.starts_with("pid ") && record.contains("\nversion "),
            "{record}"
        );
        sb.write_brief(
            &repo,
            None,
            ["cargo test ok passes", "after", "cargo test next"],
            &[],
        )
        .success();
        let text = std::fs::read_to_string(&narrative).unwrap();
        assert!(
            text.contains("[main] after") && text.contains("[main] first"),
            "{point}: {text}"
        );
        assert_eq!(
            text.matches(&format!("[main] killed-at-{point}")).count(),
            usize::from(ref_moved),
            "{point}: the killed write's entry iff its brief was stored: {text}"
        );
        assert!(!lock.exists() && !repo.join(".claude/PROJECT_STATE.md.staged").exists());
    }
}

#[test]
fn kills_at_random_moments_never_truncate_or_interleave() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.git(&repo, &["config", "handoff.lockTimeout", "100"]);
    sb.git(&repo, &["config", "core.filesRefLockTimeout", "100"]);
    sb.write_brief(
        &repo,
        None,
        ["cargo test ok passes", "seed", "cargo test next"],
        &[],
    )
    .success();
    let narrative = repo.join(".claude/PROJECT_STATE.md");
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut killed = 0;
    for run in 0..50 {
        let before = std::fs::read_to_string(&narrative).unwrap();
        let mut cmd = sb.command(env!("CARGO_BIN_EXE_git-handoff"), &repo);
        cmd.args([
            "write",
            "--done-when",
            "cargo test ok passes",
            "--resume-by",
            &format!("run {run}"),
            "--next-check",
            "cargo test next",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(std::time::Duration::from_micros(seed % 120_000));
        if child.try_wait().unwrap().is_none() {
            killed += 1;
        }
        child.kill().ok();
        child.wait().unwrap();
        let after = std::fs::read_to_string(&narrative).unwrap();
        let entry = format!("[main] run {run}\n");
        // Either the old file, or the old file with exactly one new entry.
        if after != before {
            assert_eq!(after.matches(&entry).count(), 1, "run {run}");
            assert!(
                after.ends_with(&before[before.find("\n## ").unwrap() + 1..]),
                "run {run}: old entries intact"
            );
        }
        assert!(after.starts_with("# Project state"));
        // What a user does after a crash: clear locks left behind.
        for lock in lock_files(&repo) {
            std::fs::remove_file(lock).unwrap();
        }
    }
    assert!(sb.git_out(&repo, &["fsck", "--strict"]).status.success());
    sb.write_brief(
        &repo,
        None,
        ["cargo test ok passes", "final", "cargo test next"],
        &[],
    )
    .success();
    eprintln!("crash injection: 50 runs, {killed} killed mid-write");
}

#[test]
fn the_hostile_corpus_is_refused_cleanly() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let mut files = corpus_files();
    // generated: 100,000 levels of nesting, and 50 MB
    let deep = sb.path("deep.json");
    std::fs::write(&deep, "[".repeat(100_000) + &"]".repeat(100_000)).unwrap();
    let huge = sb.path("huge.json");
    std::fs::write(
        &huge,
        format!(
            "{{\"resume\":{{\"done_when\":\"{}\"}}}}",
            "x".repeat(50 * 1024 * 1024)
        ),
    )
    .unwrap();
    files.push(deep);
    files.push(huge);
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let f = file.to_str().unwrap();
        if name == "bad-head-sha-ignored.json" {
            sb.handoff(&repo, &["write", "pinned", "-F", f]).success();
            sb.handoff(&repo, &["drop", "pinned"]).success();
            continue;
        }
        for args in [vec!["write", "-F", f], vec!["validate", f]] {
            let out = sb.handoff(&repo, &args).code(1);
            let err = stderr(&out);
            assert!(!err.contains("panicked"), "{name}: {err}");
            let last = err.lines().last().unwrap_or("");
            assert!(
                last.starts_with("error: ") || last.starts_with("  - "),
                "{name} {args:?}: {err}"
            );
            if args[0] == "write" {
                assert!(last.starts_with("error: "), "{name}: {err}");
            }
        }
    }
    assert_eq!(
        handoff_refs(&sb, &repo)
            .lines()
            .filter(|l| l.contains("refs/handoffs/"))
            .count(),
        0
    );
    assert!(
        !repo.join(".claude").exists()
            || std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md"))
                .unwrap()
                .contains("[pinned]")
    );
    eprintln!("corpus: {} inputs", files.len());
}

/// Wrong types in every field, and an unknown field at every level: each is
/// named by its path.
#[test]
fn wrong_types_and_unknown_fields_are_named_by_path() {
    let sb = Sandbox::new();
    let dir = sb.dir.path();
    let valid: serde_json::Value = serde_json::json!({
        "schema_version": "1", "key": "k", "timestamp": "2026-01-01T00:00:00Z", "mode": "WRITE",
        "resume": {"done_when": "d", "resume_by": "r", "prompt": "p", "history_pointer": "h"},
        "state": {"branch": "b", "next_acceptance_check": "c",
                  "worktree": {"root": "/r", "is_linked": false, "git_common_dir": "/r/.git"},
                  "head_sha": "abcdef1", "diff_summary": "x", "tests": [{"cmd": "t", "result": "pass"}],
                  "commands": ["c"], "decisions": ["d"], "rejected_paths": ["r"], "open_risks": ["o"]},
        "files_read_first": [{"path": "p", "why": "w"}], "files_skip": [{"path": "p", "why": "w"}]
    });
    let mut paths = Vec::new();
    fn collect(
        v: &serde_json::Value,
        prefix: &str,
        out: &mut Vec<(String, Vec<String>)>,
        ptr: Vec<String>,
    ) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, child) in m {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    let mut ptr = ptr.clone();
                    ptr.push(k.clone());
                    out.push((p.clone(), ptr.clone()));
                    collect(child, &p, out, ptr);
                }
            }
            serde_json::Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    let p = format!("{prefix}[{i}]");
                    let mut ptr = ptr.clone();
                    ptr.push(i.to_string());
                    out.push((p.clone(), ptr.clone()));
                    collect(child, &p, out, ptr);
                }
            }
            _ => {}
        }
    }
    collect(&valid, "", &mut paths, vec![]);
    let mut checked = 0;
    for (path, ptr) in &paths {
        let mut broken = valid.clone();
        let slot = broken.pointer_mut(&format!("/{}", ptr.join("/"))).unwrap();
        *slot = match slot {
            serde_json::Value::Bool(_) => serde_json::json!("yes"),
            serde_json::Value::String(_) => serde_json::json!(7),
            _ => serde_json::json!(true),
        };
        let out = sb
            .handoff_with(dir, &["validate", "-"], Some(&broken.to_string()))
            .code(1);
        assert!(
            stderr(&out).contains(&format!("  - {path}: ")),
            "{path}: {}",
            stderr(&out)
        );
        checked += 1;
    }
    for (path, ptr) in paths
        .iter()
        .chain([(String::from("(root)"), vec![])].iter())
    {
        let mut broken = valid.clone();
        let target = if ptr.is_empty() {
            &mut broken
        } else {
            broken.pointer_mut(&format!("/{}", ptr.join("/"))).unwrap()
        };
        let Some(obj) = target.as_object_mut() else {
            continue;
        };
        obj.insert("unexpected".into(), serde_json::json!(1));
        let out = sb
            .handoff_with(dir, &["validate", "-"], Some(&broken.to_string()))
            .code(1);
        assert!(
            stderr(&out).contains(&format!("  - {path}: ")) && stderr(&out).contains("unexpected"),
            "{path}: {}",
            stderr(&out)
        );
        checked += 1;
    }
    assert!(checked > 40, "{checked}");
}

#[test]
fn awkward_repository_states() {
    let sb = Sandbox::new();
    // a path with spaces and non-ASCII characters
    let repo = sb.repo("répo with space");
    sb.handoff(
        &repo,
        &["write"]
            .iter()
            .chain(FLAGS.iter())
            .copied()
            .collect::<Vec<_>>(),
    )
    .success();
    let brief: serde_json::Value =
        serde_json::from_str(&sb.git(&repo, &["cat-file", "-p", "refs/handoffs/main"])).unwrap();
    assert!(
        brief["state"]["worktree"]["root"]
            .as_str()
            .unwrap()
            .ends_with("répo with space")
    );
    sb.handoff(&repo, &["resume"]).success();

    // GIT_DIR / GIT_WORK_TREE from elsewhere
    let elsewhere = sb.path("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let mut cmd = assert_cmd::Command::from_std(sb.command("git", &elsewhere));
    cmd.args(["handoff", "write", "via-env"])
        .args(FLAGS)
        .env("GIT_DIR", repo.join(".git"))
        .env("GIT_WORK_TREE", &repo);
    cmd.assert().success();
    assert!(
        sb.git(&repo, &["for-each-ref", "refs/handoffs/via-env"])
            .contains("blob")
    );
    assert!(
        std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md"))
            .unwrap()
            .contains("[via-env]")
    );

    // a linked worktree whose directory was deleted (not yet pruned)
    let wt = sb.worktree(&repo, "gone-wt", "feat/gone");
    sb.commit(&wt, "only-here.txt", "x\n", "x");
    sb.handoff(
        &wt,
        &["write", "--read", "only-here.txt=x"]
            .iter()
            .chain(FLAGS.iter())
            .copied()
            .collect::<Vec<_>>(),
    )
    .success();
    std::fs::remove_dir_all(&wt).unwrap();
    let out = stdout(&sb.handoff(&repo, &["resume", "feat-gone"]).success());
    // the branch survives its worktree: measured on its tip, which has the
    // file; no `cd` into a directory that is gone
    assert!(
        out.starts_with("!! BRANCH MISMATCH: brief is for 'feat/gone', you're on 'main' — drift below is measured on 'feat/gone'\n"),
        "{out}"
    );
    assert!(!out.contains("!! MISSING"), "{out}");
    // with the branch deleted too, against the current worktree
    sb.git(&repo, &["worktree", "prune"]);
    sb.git(&repo, &["branch", "-q", "-D", "feat/gone"]);
    let out = stdout(&sb.handoff(&repo, &["resume", "feat-gone"]).success());
    assert!(
        out.contains("!! MISSING: only-here.txt"),
        "resolved against the current worktree: {out}"
    );
    sb.handoff(&repo, &["list"]).success();

    // a path outside the worktree is reported, never touched
    let input = r#"{"resume":{"done_when":"d","resume_by":"r"},"state":{"next_acceptance_check":"c"},
                   "files_read_first":[{"path":"../../../../etc/passwd","why":"no"},{"path":"/etc/hostname","why":"no"}]}"#;
    sb.handoff_with(&repo, &["write", "outside", "-F", "-"], Some(input))
        .success();
    let out = stdout(&sb.handoff(&repo, &["resume", "outside"]).success());
    assert!(
        out.contains("- Not checked (outside the worktree): ../../../../etc/passwd"),
        "{out}"
    );
    assert!(!out.contains("MISSING"), "{out}");
}

#[test]
fn ten_thousand_briefs_list_and_resume() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.handoff(
        &repo,
        &["write", "k00000"]
            .iter()
            .chain(FLAGS.iter())
            .copied()
            .collect::<Vec<_>>(),
    )
    .success();
    let blob = sb.git(&repo, &["rev-parse", "refs/handoffs/k00000"]);
    let mut stdin = String::new();
    for i in 1..10_000 {
        stdin.push_str(&format!("create refs/handoffs/k{i:05} {}\n", blob.trim()));
    }
    let mut cmd = sb.command("git", &repo);
    cmd.args(["update-ref", "--stdin"]).stdin(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), stdin.as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());
    let out = stdout(&sb.handoff(&repo, &["list", "--json"]).success());
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(rows.len(), 10_000);
    assert_eq!(rows[9_999]["key"], "k09999");
    sb.handoff(&repo, &["resume", "k00000"]).success();
    // A new session has no key of its own: a keyless resume must choose.
    sb.handoff_with(
        &repo,
        &["hook", "session-start"],
        Some(r#"{"source":"startup"}"#),
    )
    .success();
    let out = sb.handoff(&repo, &["resume"]).code(1);
    assert_eq!(
        stdout(&out).lines().count(),
        10_000,
        "lists them all, guesses none"
    );
}
