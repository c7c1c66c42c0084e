//! Fork mode: fork files in TMPDIR (never in the repository), listing by
//! repository, consume (print + delete), hand-back, and bad paths.

use std::path::{Path, PathBuf};

use crate::support::briefs::one_repo;
use crate::support::{EXAMPLE, Sandbox, assert_stderr_has, files_under, stderr, stdout};

/// A sandbox with a private TMPDIR.
struct Fx {
    sb: Sandbox,
    tmp: PathBuf,
}

impl Fx {
    fn new() -> Fx {
        let sb = Sandbox::new();
        let tmp = sb.path("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let tmp = std::fs::canonicalize(tmp).unwrap();
        Fx { sb, tmp }
    }

    fn run(&self, dir: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
        self.sb
            .handoff_env(dir, &[("TMPDIR", self.tmp.to_str().unwrap())], args, None)
    }

    fn tmp_names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.tmp)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

fn one_error_line(err: &str) {
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: "), "{err}");
}

#[test]
fn fork_without_purpose_is_refused() {
    let fx = Fx::new();
    let repo = fx.sb.repo("r");
    let out = fx.run(&repo, &["fork"]).code(2);
    assert_stderr_has(&out, "--purpose");
    let out = fx.run(&repo, &["fork", "--purpose", "   "]).code(1);
    one_error_line(&stderr(&out));
    assert_stderr_has(&out, "needs a purpose");
    let out = fx.run(&repo, &["fork", "--purpose", "../ /"]).code(1);
    one_error_line(&stderr(&out));
    assert!(fx.tmp_names().is_empty(), "{:?}", fx.tmp_names());
    assert_eq!(
        fx.sb.git(&repo, &["status", "--porcelain", "--ignored"]),
        ""
    );
}

#[test]
fn fork_file_lands_in_tmpdir_and_nowhere_in_the_repo() {
    let fx = Fx::new();
    let repo = fx.sb.repo("r");
    fx.sb
        .handoff_with(&repo, &["write", "-F", "-"], Some(EXAMPLE))
        .success();
    let status_before = fx.sb.git(&repo, &["status", "--porcelain", "--ignored"]);
    let files_before = files_under(&repo);
    let out = fx
        .run(
            &repo,
            &[
                "fork",
                "--purpose",
                "Fix the flaky ../../etc test",
                "--pointer",
                "src/db.rs:10-40",
                "--skill",
                "rust-testing",
                "--pointer",
                "tests/db.rs",
                "--why",
                "the flaky test",
                "--context",
                "the pool size stays 4",
                "--hand-back",
            ],
        )
        .success();
    let path = PathBuf::from(stdout(&out).trim());
    assert_eq!(
        path,
        fx.tmp.join("handoff-fix-the-flaky-etc-test-2026-11-30.md")
    );
    assert_eq!(fx.tmp_names().len(), 1);
    // Nowhere in the repository: no new file (git dir included), nothing
    // new in git's view.
    assert_eq!(files_under(&repo), files_before);
    assert_eq!(
        fx.sb.git(&repo, &["status", "--porcelain", "--ignored"]),
        status_before
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "private to its owner: {mode:o}");
    }

    let text = std::fs::read_to_string(&path).unwrap();
    let common = std::fs::canonicalize(repo.join(".git")).unwrap();
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains(&format!("\"repo\":\"{}\"", common.display())),
        "{text}"
    );
    let headings: Vec<&str> = text.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        headings,
        [
            "## Date",
            "## Purpose",
            "## Scope",
            "## Pointers",
            "## Suggested Skills",
            "## Key Context to Start",
            "## Decisions Made",
            "## Artifacts",
            "## Current State",
            "## Hand-Back Expected"
        ],
        "{text}"
    );
    for expected in [
        "## Date\n2026-11-30\n",
        "## Purpose\nFix the flaky ../../etc test\n",
        "Just this slice: Fix the flaky ../../etc test.",
        "the parent session keeps its own task (cargo test auth passes)",
        "- src/db.rs:10-40\n- tests/db.rs — the flaky test\n",
        "- Brief `main`: `git handoff resume main`",
        "- Narrative: .claude/PROJECT_STATE.md, the entries marked [main]",
        "## Suggested Skills\n- rust-testing\n",
        "- the pool size stays 4\n",
        &format!("git handoff handback --to {}", path.display()),
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
    // The method's sections beyond the task summary, from the brief and git
    // (issue 16 supersedes "pointers only": the decisions are copied; issue
    // 34: only the slice relevant to the purpose — the parent's decision
    // about the expiry check and its narrative file are not about a flaky
    // db test, so they are counted, not copied).
    for expected in [
        "## Decisions Made\n- (+1 more, not about this purpose: `git handoff resume main`)\n",
        "## Artifacts\n- (+1 more uncommitted, not about this purpose: `git status`)\n- Brief `refs/handoffs/main`\n",
        "## Current State\n- Branch main at ",
        "- Next step: ",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }

    // Same purpose again: a second file; the first is untouched.
    let out = fx
        .run(&repo, &["fork", "--purpose", "fix the flaky etc test"])
        .success();
    assert_eq!(
        PathBuf::from(stdout(&out).trim()),
        fx.tmp
            .join("handoff-fix-the-flaky-etc-test-2026-11-30-2.md")
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    let second = std::fs::read_to_string(stdout(&out).trim()).unwrap();
    assert!(!second.contains("Hand-Back Expected"), "{second}");
}

#[test]
fn a_tmpdir_inside_the_repository_is_refused() {
    let (sb, repo) = one_repo();
    let inside = repo.join("tmp");
    std::fs::create_dir_all(&inside).unwrap();
    let out = sb
        .handoff_env(
            &repo,
            &[("TMPDIR", inside.to_str().unwrap())],
            &["fork", "--purpose", "side task"],
            None,
        )
        .code(1);
    one_error_line(&stderr(&out));
    assert_stderr_has(&out, "inside this repository");
    assert_eq!(std::fs::read_dir(&inside).unwrap().count(), 0);
}

#[test]
fn fork_list_shows_only_this_repository() {
    let fx = Fx::new();
    let a = fx.sb.repo("a");
    let b = fx.sb.repo("b");
    fx.sb
        .git(&a, &["worktree", "add", "-q", "../a-wt", "-b", "side"]);
    let wt = fx.sb.path("a-wt");
    let fa = stdout(&fx.run(&a, &["fork", "--purpose", "task in a"]).success());
    let fb = stdout(&fx.run(&b, &["fork", "--purpose", "task in b"]).success());
    // A file with a fork-like name that is not ours is never listed.
    std::fs::write(fx.tmp.join("handoff-stranger-2026-11-30.md"), "# hi\n").unwrap();

    let list_a = stdout(&fx.run(&a, &["fork", "list"]).success());
    assert!(
        list_a.contains(fa.trim()) && list_a.contains("task in a"),
        "{list_a}"
    );
    assert!(
        !list_a.contains(fb.trim()) && !list_a.contains("stranger"),
        "{list_a}"
    );
    // A linked worktree is the same repository.
    let list_wt = stdout(&fx.run(&wt, &["fork", "list"]).success());
    assert_eq!(list_wt, list_a);
    let list_b = stdout(&fx.run(&b, &["fork", "list", "--json"]).success());
    let v: serde_json::Value = serde_json::from_str(&list_b).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1, "{list_b}");
    assert_eq!(v[0]["path"], fb.trim());
    assert_eq!(v[0]["kind"], "fork");

    let c = fx.sb.repo("c");
    let empty = stdout(&fx.run(&c, &["fork", "list"]).success());
    assert!(empty.starts_with("No fork or hand-back files"), "{empty}");
}

#[test]
fn consume_prints_and_keeps_the_file_until_done() {
    let fx = Fx::new();
    let repo = fx.sb.repo("r");
    let path = stdout(&fx.run(&repo, &["fork", "--purpose", "side task"]).success());
    let path = path.trim();
    let out = fx.run(&repo, &["fork", "consume", path]).success();
    let printed = stdout(&out);
    assert!(printed.starts_with("# Fork — side task\n"), "{printed}");
    assert!(!printed.contains("<!-- git-handoff"), "{printed}");
    assert!(!Path::new(path).exists(), "consumed files are renamed");
    let kept = format!("{path}.consumed");
    assert!(
        Path::new(&kept).exists(),
        "a crashed child can read it again"
    );
    // Listed as consumed, awaiting `fork done` (issue 34: never forgotten).
    let listed = stdout(&fx.run(&repo, &["fork", "list"]).success());
    assert!(
        listed.contains(&format!("{kept}  (consumed, awaiting `fork done`)\n")),
        "{listed}"
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(
        &fx.run(&repo, &["fork", "list", "--json"]).success(),
    ))
    .unwrap();
    assert_eq!(v[0]["consumed"], true, "{v}");
    // Consumed once only.
    let out = fx.run(&repo, &["fork", "consume", path]).code(1);
    one_error_line(&stderr(&out));
    assert_stderr_has(&out, "was consumed already");
    // `fork done` deletes it (by its .consumed name too).
    let out = fx.run(&repo, &["fork", "done", &kept]).success();
    assert_eq!(stdout(&out), format!("Deleted {kept}\n"));
    assert!(fx.tmp_names().is_empty(), "{:?}", fx.tmp_names());
    let out = fx.run(&repo, &["fork", "done", path]).code(1);
    assert_stderr_has(&out, "does not exist");
    // By bare name too, and from outside any repository.
    let path = stdout(&fx.run(&repo, &["fork", "--purpose", "another"]).success());
    let name = Path::new(path.trim())
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let outside = fx.sb.path("outside");
    std::fs::create_dir_all(&outside).unwrap();
    fx.run(&outside, &["fork", "consume", &name]).success();
    fx.run(&outside, &["fork", "done", &name]).success();
    assert!(fx.tmp_names().is_empty());
}

#[test]
fn hand_back_round_trip() {
    let fx = Fx::new();
    let repo = fx.sb.repo("r");
    let fork = stdout(
        &fx.run(
            &repo,
            &["fork", "--purpose", "Bisect the slowdown", "--hand-back"],
        )
        .success(),
    );
    let fork = fork.trim().to_string();
    // The side session reads (consumes) its fork, works, hands back.
    fx.run(&repo, &["fork", "consume", &fork]).success();
    let out = fx
        .run(
            &repo,
            &[
                "handback",
                "--to",
                &fork,
                "--result",
                "Commit 1a2b3c introduced it",
                "--change",
                "src/cache.rs",
                "--change",
                "benches/read.rs",
                "--merge-guidance",
                "cherry-pick the revert",
                "--open",
                "why only on Linux?",
            ],
        )
        .success();
    let back = PathBuf::from(stdout(&out).trim());
    assert_eq!(
        back,
        fx.tmp
            .join("handoff-bisect-the-slowdown-2026-11-30-handback.md")
    );
    let listed = stdout(&fx.run(&repo, &["fork", "list"]).success());
    assert!(listed.starts_with("hand-back  2026-11-30"), "{listed}");
    // The parent consumes it: printed, then kept until `fork done`.
    let printed = stdout(
        &fx.run(&repo, &["fork", "consume", back.to_str().unwrap()])
            .success(),
    );
    let headings: Vec<&str> = printed.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        headings,
        [
            "## Date",
            "## Result Summary",
            "## Changes / Findings",
            "## Merge Guidance",
            "## Open Items"
        ],
        "{printed}"
    );
    for expected in [
        "## Result Summary\nCommit 1a2b3c introduced it\n",
        "- src/cache.rs\n- benches/read.rs\n",
        "## Merge Guidance\ncherry-pick the revert\n",
        "## Open Items\n- why only on Linux?\n",
    ] {
        assert!(
            printed.contains(expected),
            "missing {expected:?} in\n{printed}"
        );
    }
    assert!(!back.exists());
    assert_eq!(
        fx.tmp_names(),
        [
            "handoff-bisect-the-slowdown-2026-11-30-handback.md.consumed",
            "handoff-bisect-the-slowdown-2026-11-30.md.consumed"
        ]
    );
    // Once the merge is confirmed, `fork done` deletes fork and hand-back.
    let out = stdout(&fx.run(&repo, &["fork", "done", &fork]).success());
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(fx.tmp_names().is_empty(), "{:?}", fx.tmp_names());

    // With the fork file still there, the purpose comes from its header.
    let fork = stdout(&fx.run(&repo, &["fork", "--purpose", "Keep Case"]).success());
    let back = stdout(
        &fx.run(
            &repo,
            &["handback", "--to", fork.trim(), "--result", "done"],
        )
        .success(),
    );
    let text = std::fs::read_to_string(back.trim()).unwrap();
    assert!(text.contains("# Hand-back — Keep Case\n"), "{text}");
    assert!(
        Path::new(fork.trim()).exists(),
        "handback does not consume the fork"
    );
}

#[test]
fn bad_paths_are_refused_and_nothing_is_touched() {
    let fx = Fx::new();
    let repo = fx.sb.repo("r");
    let fork = stdout(&fx.run(&repo, &["fork", "--purpose", "real one"]).success());
    let fork = fork.trim().to_string();
    let fork_text = std::fs::read_to_string(&fork).unwrap();

    // A well-named fork file outside the temp dir.
    let elsewhere = fx.sb.path("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let outside = elsewhere.join("handoff-real-one-2026-11-30.md");
    std::fs::write(&outside, &fork_text).unwrap();
    // A file in the temp dir with the right name but no header.
    let foreign = fx.tmp.join("handoff-foreign-2026-11-30.md");
    std::fs::write(&foreign, "not ours\n").unwrap();
    // A symlink in the temp dir pointing at a fork file elsewhere.
    #[cfg(unix)]
    std::os::unix::fs::symlink(&outside, fx.tmp.join("handoff-link-2026-11-30.md")).unwrap();
    let before = fx.tmp_names();

    let name_with_dots = format!("{}/../handoff-real-one-2026-11-30.md", fx.tmp.display());
    let refused: Vec<Vec<&str>> = vec![
        vec!["fork", "consume", outside.to_str().unwrap()],
        vec!["fork", "consume", "../handoff-real-one-2026-11-30.md"],
        vec!["fork", "consume", "handoff-a/../../x.md"],
        vec!["fork", "consume", &name_with_dots],
        vec!["fork", "consume", "/etc/passwd"],
        vec!["fork", "consume", foreign.to_str().unwrap()],
        #[cfg(unix)]
        vec!["fork", "consume", "handoff-link-2026-11-30.md"],
        vec![
            "handback",
            "--to",
            foreign.to_str().unwrap(),
            "--result",
            "x",
        ],
        vec!["handback", "--to", "notes.md", "--result", "x"],
        vec![
            "handback",
            "--to",
            "handoff-x/../y-2026-11-30.md",
            "--result",
            "x",
        ],
        vec![
            "handback",
            "--to",
            outside.to_str().unwrap(),
            "--result",
            "x",
        ],
        vec!["handback", "--to", &fork, "--result", "  "],
    ];
    for args in &refused {
        let out = fx.run(&repo, args).code(1);
        one_error_line(&stderr(&out));
    }
    // A hand-back is not a fork: handback --to it is refused.
    let back = stdout(
        &fx.run(&repo, &["handback", "--to", &fork, "--result", "ok"])
            .success(),
    );
    let after_one = fx.tmp_names();
    let out = fx
        .run(&repo, &["handback", "--to", back.trim(), "--result", "x"])
        .code(1);
    assert_stderr_has(&out, "is a hand-back, not a fork file");
    assert_eq!(fx.tmp_names(), after_one);
    // Missing --result is a usage error.
    fx.run(&repo, &["handback", "--to", &fork]).code(2);

    // Nothing was deleted or changed by the refusals.
    assert!(outside.exists());
    assert_eq!(std::fs::read_to_string(&foreign).unwrap(), "not ours\n");
    assert_eq!(std::fs::read_to_string(&fork).unwrap(), fork_text);
    let mut expected = before.clone();
    expected.push("handoff-real-one-2026-11-30-handback.md".into());
    expected.sort();
    assert_eq!(fx.tmp_names(), expected);
}

#[test]
fn fork_and_hand_back_files_are_redacted() {
    let fx = Fx::new();
    let repo = fx.sb.repo("r");
    let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
    let purpose = format!("rotate {token} now");
    let out = fx
        .run(
            &repo,
            &[
                "fork",
                "--purpose",
                &purpose,
                "--context",
                &format!("the old one was {token}"),
                "--hand-back",
            ],
        )
        .success();
    let err = stderr(&out);
    // Once per place the purpose appears, plus the context line.
    assert!(
        err.contains("secrets redacted (") && err.contains(" github_token) in the fork file"),
        "{err}"
    );
    assert!(!err.contains(&token), "{err}");
    let path = stdout(&out).trim().to_string();
    assert!(!path.contains(&token), "no secret in the file name: {path}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains(&token), "{text}");
    assert!(text.contains("[REDACTED:github_token]"), "{text}");
    // The header stays readable, so the file is still listed.
    let listed = stdout(&fx.run(&repo, &["fork", "list"]).success());
    assert!(listed.contains(&path), "{listed}");

    let out = fx
        .run(
            &repo,
            &[
                "handback",
                "--to",
                &path,
                "--result",
                &format!("rotated; new is {token}"),
            ],
        )
        .success();
    assert_stderr_has(&out, "github_token");
    let back = std::fs::read_to_string(stdout(&out).trim()).unwrap();
    assert!(!back.contains(&token), "{back}");
    for name in fx.tmp_names() {
        assert!(!name.contains("ghp"), "{name}");
    }
}
