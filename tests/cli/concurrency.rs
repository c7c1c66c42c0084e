//! Compare-and-swap and concurrent writers: nothing is lost, a lost race is
//! named, the history has one line per successful write.

use std::process::Stdio;

use crate::support::*;

#[test]
fn a_stale_compare_and_swap_is_a_conflict_and_writes_nothing() {
    let sb = Sandbox::new();
    let repo_dir = sb.repo("r");
    sb.write_brief(&repo_dir, Some("k"), ["v1", "r", "c"], &[])
        .success();
    let before = sb.git(&repo_dir, &["rev-parse", "refs/handoffs/k"]);
    let notes_before = sb.git(&repo_dir, &["rev-parse", "refs/notes/handoffs"]);

    let repo = gix::open(&repo_dir).unwrap();
    let stored = git_handoff::store::read(&repo, "k").unwrap().unwrap();
    let mut brief = stored.brief().unwrap();
    brief.resume.done_when = "v2".into();
    // Expect a version that is not the current one: another writer won.
    let stale = gix::ObjectId::empty_blob(gix::hash::Kind::Sha1);
    let err = git_handoff::store::write(
        &repo,
        &[git_handoff::store::Update {
            expected: Some(stale),
            brief: brief.clone(),
        }],
        "test",
    )
    .unwrap_err();
    assert!(
        matches!(err, git_handoff::store::StoreError::Conflict(ref keys) if keys == &["k".to_string()])
    );
    assert!(
        err.to_string()
            .contains("brief 'k' changed while writing; run again"),
        "{err}"
    );
    // "Must not exist" against an existing key is a conflict too.
    let err = git_handoff::store::write(
        &repo,
        &[git_handoff::store::Update {
            expected: None,
            brief: brief.clone(),
        }],
        "test",
    )
    .unwrap_err();
    assert!(matches!(err, git_handoff::store::StoreError::Conflict(_)));
    assert_eq!(sb.git(&repo_dir, &["rev-parse", "refs/handoffs/k"]), before);
    assert_eq!(
        sb.git(&repo_dir, &["rev-parse", "refs/notes/handoffs"]),
        notes_before,
        "no history for a lost race"
    );

    // With the right base it goes through, and the history grows by one.
    git_handoff::store::write(
        &repo,
        &[git_handoff::store::Update {
            expected: Some(stored.id),
            brief,
        }],
        "test",
    )
    .unwrap();
    let note = sb.git(&repo_dir, &["notes", "--ref=handoffs", "show", "HEAD"]);
    assert_eq!(brief_lines(&note).len(), 2);
    assert_eq!(lineage_lines(&note).len(), 2);
}

#[test]
fn a_stale_lock_is_reported_with_the_command_to_clear_it() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let lock = repo.join(".claude/PROJECT_STATE.md.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    std::fs::write(&lock, "").unwrap();
    // A short wait is enough to show the behaviour; the default is 10 s.
    let out = sb.write_brief(&repo, None, ["d", "r", "c"], &[]).code(128);
    let err = stderr(&out);
    assert!(
        err.contains("rm '") && err.contains("PROJECT_STATE.md.lock"),
        "{err}"
    );
    assert_eq!(
        handoff_refs(&sb, &repo),
        "",
        "nothing stored without the narrative"
    );
    std::fs::remove_file(&lock).unwrap();
    sb.write_brief(&repo, None, ["d", "r", "c"], &[]).success();
}

/// Several processes in two worktrees at once, on distinct and shared keys.
#[test]
fn concurrent_writers_lose_nothing() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let wt = sb.worktree(&repo, "wt", "feat/x");
    let mut children = Vec::new();
    for i in 0..12 {
        let dir = if i % 2 == 0 { &repo } else { &wt };
        // a third share one key, the rest have their own
        let key = if i % 3 == 0 {
            "shared".to_string()
        } else {
            format!("k{i}")
        };
        let mut cmd = sb.command("git", dir);
        cmd.args([
            "handoff",
            "write",
            &key,
            "--done-when",
            &format!("writer {i} done"),
            "--resume-by",
            &format!("step {i}"),
        ])
        .args(["--next-check", "c"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
        children.push((i, key, dir.clone(), cmd.spawn().unwrap()));
    }
    let mut ok = Vec::new();
    for (i, key, dir, child) in children {
        let out = child.wait_with_output().unwrap();
        match out.status.code() {
            Some(0) => ok.push((i, key, dir)),
            Some(1) => {
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(
                    err.contains(&format!("brief '{key}' changed while writing")),
                    "writer {i}: {err}"
                );
            }
            other => panic!(
                "writer {i} exited {other:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    }
    // Distinct keys never conflict.
    for i in (0..12).filter(|i| i % 3 != 0) {
        assert!(
            ok.iter().any(|(j, _, _)| *j == i),
            "writer {i} on its own key must succeed"
        );
    }
    // One history line per successful write.
    let note = sb.git(&repo, &["notes", "--ref=handoffs", "show", "HEAD"]);
    assert_eq!(brief_lines(&note).len(), ok.len(), "{note}");
    assert_eq!(lineage_lines(&note).len(), ok.len(), "{note}");
    // Each successful write's narrative entry is present exactly once, in its worktree.
    for (i, key, dir) in &ok {
        let text = std::fs::read_to_string(dir.join(".claude/PROJECT_STATE.md")).unwrap();
        let heading = format!("## 2026-11-30 — [{key}] step {i}\n");
        assert_eq!(text.matches(&heading).count(), 1, "writer {i}: {text}");
    }
    let fsck = sb.git_out(&repo, &["fsck", "--strict"]);
    assert_ok(&fsck);
    let locks = sb.git(&repo, &["ls-files", "--others", "--", "*.lock"]);
    assert_eq!(locks, "");
    for dir in [repo.join(".git"), repo.join(".claude"), wt.join(".claude")] {
        for entry in walk(&dir, &[]) {
            let entry = entry.display().to_string();
            assert!(!entry.ends_with(".lock"), "stray lock {entry}");
        }
    }
}

#[test]
fn writes_racing_drops_of_the_same_key_fail_only_with_the_documented_message() {
    // Issue 15, item 6: a write racing a drop of the same key surfaced the
    // library's "Could not prepare reference edit" instead of the
    // documented message.
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let write = |i: usize| -> Vec<String> {
        [
            "handoff",
            "write",
            "k1",
            "--done-when",
            &format!("writer {i} done"),
            "--resume-by",
            "r",
            "--next-check",
            "c",
            "--no-lint",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    sb.handoff(
        &repo,
        &write(0)
            .iter()
            .skip(1)
            .map(String::as_str)
            .collect::<Vec<_>>(),
    )
    .success();
    let documented = [
        "error: brief 'k1' changed while writing; run again",
        "error: no brief for key 'k1'",
    ];
    for round in 0..6 {
        let mut children = Vec::new();
        for i in 0..6 {
            let args: Vec<String> = match i % 3 {
                0 => vec!["handoff".into(), "drop".into(), "k1".into()],
                1 => vec!["handoff".into(), "recover".into(), "k1".into()],
                _ => write(round * 6 + i),
            };
            let mut cmd = sb.command("git", &repo);
            cmd.args(&args).stdout(Stdio::null()).stderr(Stdio::piped());
            children.push((args.join(" "), cmd.spawn().unwrap()));
        }
        for (what, child) in children {
            let out = child.wait_with_output().unwrap();
            if out.status.success() {
                continue;
            }
            let err = String::from_utf8_lossy(&out.stderr);
            let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
            assert_eq!(errors.len(), 1, "{what}: {err}");
            assert!(
                documented.iter().any(|d| errors[0].starts_with(d))
                    || errors[0].starts_with("error: no stored brief for 'k1'"),
                "{what}: {err}"
            );
            assert!(!err.contains("Could not prepare"), "{what}: {err}");
        }
    }
    let fsck = sb.git_out(&repo, &["fsck", "--strict"]);
    assert!(fsck.status.success());
}

#[test]
fn concurrent_first_pushes_of_many_keys_lose_no_bookkeeping_ref() {
    // Three first pushes at once, each recording 600 bases and staged
    // values (and pinning 600 creates) as rewrites of one packed-refs.
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.write_brief(&repo, Some("k0"), ["done", "resume", "check"], &[])
        .success();
    let v = sb.git(&repo, &["rev-parse", "refs/handoffs/k0"]);
    let v = v.trim();
    let creates: String = (1..600)
        .map(|i| format!("create refs/handoffs/k{i} {v}\n"))
        .collect();
    sb.git_stdin(&repo, &["update-ref", "--stdin"], creates);
    let remotes = ["r1", "r2", "r3"];
    for r in remotes {
        let bare = sb.path(&format!("{r}.git"));
        sb.git(&repo, &["init", "-q", "--bare", bare.to_str().unwrap()]);
        let url = format!("file://{}", bare.display());
        sb.git(&repo, &["remote", "add", r, &url]);
    }
    let children: Vec<_> = remotes
        .iter()
        .map(|r| {
            let mut cmd = sb.command("git", &repo);
            cmd.args(["handoff", "push", r])
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            cmd.spawn().unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for r in remotes {
        for ns in ["handoff-remotes", "handoff-fetch"] {
            let listed = sb.git(
                &repo,
                &[
                    "for-each-ref",
                    "--format=%(objectname)",
                    &format!("refs/{ns}/{r}/briefs"),
                ],
            );
            assert_eq!(listed.lines().count(), 600, "{ns} of {r}");
            assert!(listed.lines().all(|id| id == v), "{ns} of {r}");
        }
        let bare = sb.path(&format!("{r}.git"));
        let sent = sb.git(&bare, &["for-each-ref", "refs/handoffs"]);
        assert_eq!(sent.lines().count(), 600, "{r}");
    }
    assert_eq!(sb.git(&repo, &["for-each-ref", "refs/handoff-push"]), "");
    assert!(lock_files(&repo.join(".git")).is_empty());
    assert_ok(&sb.git_out(&repo, &["fsck", "--strict"]));
    // Agreed everywhere: a second push to each sends nothing.
    for r in remotes {
        let out = sb.handoff(&repo, &["push", r]).success();
        assert!(
            stdout(&out).contains("briefs: up to date"),
            "{}",
            stdout(&out)
        );
    }
}
