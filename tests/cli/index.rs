//! The index as git treats it: racily clean entries (modified in the second
//! the index was written, as every file of a fresh clone) are compared by
//! content, never trusted by stat; the index is written back, as `git
//! status` does, so that the next reader trusts them; never when its lock
//! is held or it holds what this writer cannot write again.

use std::path::Path;

use crate::support::*;

const PAST: &str = "2020-01-01 00:00:00";

fn touch(sb: &Sandbox, dir: &Path, args: &[&str]) {
    let out = sb
        .command("touch", dir)
        .args(["-h", "-d", PAST])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A repository with a brief and 20 files whose index entries are all
/// racily clean: the files and the index share one (past) second.
fn racy_repo(sb: &Sandbox) -> std::path::PathBuf {
    racy_repo_of(sb, 20)
}

/// [`racy_repo`] with `files` files.
fn racy_repo_of(sb: &Sandbox, files: usize) -> std::path::PathBuf {
    let repo = sb.repo("r");
    for n in 0..files {
        std::fs::write(repo.join(format!("f{n}.txt")), format!("file {n}\n")).unwrap();
    }
    sb.git(&repo, &["add", "."]);
    sb.git(&repo, &["commit", "-q", "-m", "files"]);
    sb.write_brief(
        &repo,
        None,
        ["cargo test passes", "go", "cargo test"],
        &["--no-narrative"],
    )
    .success();
    let files: Vec<String> = (0..files)
        .map(|n| format!("f{n}.txt"))
        .chain(["README".into()])
        .collect();
    let names: Vec<&str> = files.iter().map(String::as_str).collect();
    touch(sb, &repo, &names);
    sb.git(&repo, &["update-index", "-q", "--refresh"]);
    touch(sb, &repo, &[".git/index"]);
    repo
}

fn index_mtime(repo: &Path) -> std::time::SystemTime {
    std::fs::metadata(repo.join(".git/index"))
        .unwrap()
        .modified()
        .unwrap()
}

#[test]
fn racily_clean_entries_are_read_once_then_trusted() {
    let sb = Sandbox::new();
    let repo = racy_repo(&sb);
    let before = sb.git(&repo, &["ls-files", "-s"]);
    let stale = index_mtime(&repo);
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(!out.contains("!! DIRTY"), "{out}");
    // Written back: a newer index, the same entries, and git reads it.
    assert!(index_mtime(&repo) > stale, "the index was written back");
    assert_eq!(sb.git(&repo, &["ls-files", "-s"]), before);
    let clean = sb.git_out(&repo, &["diff-index", "--quiet", "HEAD"]);
    assert!(clean.status.success());
    sb.git(&repo, &["status", "--porcelain"]);
    let fsck = sb.git_out(&repo, &["fsck", "--no-progress"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
}

#[test]
fn a_racy_file_changed_without_a_stat_trace_is_dirty() {
    let sb = Sandbox::new();
    let repo = racy_repo(&sb);
    // Same size, same mtime, ctime not trusted: only the content tells.
    sb.git(&repo, &["config", "core.trustctime", "false"]);
    std::fs::write(repo.join("f3.txt"), "FILE 3\n").unwrap();
    touch(&sb, &repo, &["f3.txt"]);
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        out.contains("!! DIRTY: uncommitted changes now in") && out.contains("f3.txt"),
        "{out}"
    );
    // Nothing was marked clean that is not: git agrees.
    let diff = sb.git(&repo, &["diff", "--name-only"]);
    assert_eq!(diff, "f3.txt\n");
}

#[test]
fn the_index_is_left_alone_when_locked_or_holding_what_cannot_be_rewritten() {
    let sb = Sandbox::new();
    let repo = racy_repo(&sb);
    let lock = repo.join(".git/index.lock");
    std::fs::write(&lock, "").unwrap();
    let bytes = std::fs::read(repo.join(".git/index")).unwrap();
    sb.handoff(&repo, &["resume"]).success();
    assert_eq!(std::fs::read(repo.join(".git/index")).unwrap(), bytes);
    assert_eq!(std::fs::read(&lock).unwrap(), b"", "the lock is another's");
    std::fs::remove_file(&lock).unwrap();

    // An untracked cache (which this writer would drop): never rewritten.
    sb.git(&repo, &["config", "core.untrackedCache", "true"]);
    sb.git(&repo, &["status", "--porcelain"]);
    touch(&sb, &repo, &[".git/index"]);
    let bytes = std::fs::read(repo.join(".git/index")).unwrap();
    assert!(bytes.windows(4).any(|w| w == b"UNTR"), "an untracked cache");
    sb.handoff(&repo, &["resume"]).success();
    assert_eq!(std::fs::read(repo.join(".git/index")).unwrap(), bytes);
}

/// The stat check and the racy reads are split across threads (as git's
/// `preload_index`, one per 500 entries): a change in any part is seen,
/// the first as the last, with `core.preloadIndex` on or off.
#[test]
fn every_part_of_a_large_index_is_checked() {
    let sb = Sandbox::new();
    let repo = racy_repo_of(&sb, 1600);
    sb.git(&repo, &["config", "core.trustctime", "false"]);
    let bytes = std::fs::read(repo.join(".git/index")).unwrap();
    // Index order is by name: f1599.txt sorts among the last entries,
    // f0.txt first; each is changed without a trace in its stat.
    for (changed, content) in [("f1599.txt", "FILE 1599\n"), ("f0.txt", "FILE 0\n")] {
        let old = std::fs::read(repo.join(changed)).unwrap();
        std::fs::write(repo.join(changed), content).unwrap();
        touch(&sb, &repo, &[changed]);
        for preload in ["true", "false"] {
            let mut git = assert_cmd::Command::from_std(sb.command("git", &repo));
            git.args([
                "-c",
                &format!("core.preloadIndex={preload}"),
                "handoff",
                "resume",
            ]);
            let out = stdout(&git.assert().success());
            assert!(
                out.contains("!! DIRTY: uncommitted changes now in") && out.contains(changed),
                "{changed}, preloadIndex={preload}: {out}"
            );
            assert_eq!(std::fs::read(repo.join(".git/index")).unwrap(), bytes);
        }
        std::fs::write(repo.join(changed), old).unwrap();
        touch(&sb, &repo, &[changed]);
    }
    // Unchanged: every racy file read, the index written back once.
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(!out.contains("!! DIRTY"), "{out}");
    assert_ne!(std::fs::read(repo.join(".git/index")).unwrap(), bytes);
    let clean = sb.git_out(&repo, &["diff-index", "--quiet", "HEAD"]);
    assert!(clean.status.success());
}

/// The stat scan walks a tree of nested directories (each file looked up
/// from its open directory): every kind of change at every depth is seen
/// as git sees it, and a clean tree is clean.
#[test]
fn changes_at_every_depth_are_seen_as_git_sees_them() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let files = [
        "top.txt",
        "a/x.txt",
        "a/b.txt",
        "a/b/c/deep.txt",
        "a/b/c2.txt",
        "a/bc/d.txt",
        "z/y/w.txt",
    ];
    for f in files {
        std::fs::create_dir_all(repo.join(f).parent().unwrap()).unwrap();
        std::fs::write(repo.join(f), format!("{f}\n")).unwrap();
    }
    sb.git(&repo, &["add", "."]);
    sb.git(&repo, &["commit", "-q", "-m", "tree"]);
    sb.write_brief(&repo, None, ["d", "r", "c"], &["--no-narrative"])
        .success();
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(!out.contains("!! DIRTY"), "{out}");
    let copy = sb.path("y-copy");
    type Change = fn(&Path, &Path);
    let changes: [(&str, Change); 4] = [
        ("a/b/c/deep.txt", |repo, _| {
            std::fs::write(repo.join("a/b/c/deep.txt"), "changed, longer\n").unwrap()
        }),
        ("a/bc/d.txt", |repo, _| {
            std::fs::remove_file(repo.join("a/bc/d.txt")).unwrap()
        }),
        ("a/b.txt", |repo, _| {
            std::fs::write(repo.join("a/b.txt"), "a/b.txt\nmore\n").unwrap()
        }),
        ("z/y/w.txt", |repo, copy| {
            // The same file behind a symlinked directory: git does not
            // look through it.
            std::fs::rename(repo.join("z/y"), copy).unwrap();
            std::os::unix::fs::symlink(copy, repo.join("z/y")).unwrap();
        }),
    ];
    for (path, change) in changes {
        change(&repo, &copy);
        let git = sb.git(&repo, &["diff", "--name-only"]);
        assert_eq!(git.trim(), path);
        let out = stdout(&sb.handoff(&repo, &["resume"]).success());
        assert!(
            out.contains("!! DIRTY: uncommitted changes now in") && out.contains(path),
            "{path}: {out}"
        );
        if repo.join("z/y").is_symlink() {
            std::fs::remove_file(repo.join("z/y")).unwrap();
            std::fs::rename(&copy, repo.join("z/y")).unwrap();
        }
        sb.git(&repo, &["reset", "-q", "--hard"]);
        let out = stdout(&sb.handoff(&repo, &["resume"]).success());
        assert!(!out.contains("!! DIRTY"), "{path}, undone: {out}");
    }
}
