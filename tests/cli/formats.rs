//! Every repository format git makes: the core scenario in {files,
//! reftable} × {SHA-1, SHA-256}, and the layouts around them (partial and
//! shared clones, a bare clone's worktrees, `git pack-refs` running
//! meanwhile, `git -c`).

use std::path::{Path, PathBuf};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;

use crate::support::setups::*;
use crate::support::*;

/// A repository format: its ref storage and object hash.
#[derive(Clone, Copy, Debug)]
struct Format {
    refs: &'static str,
    hash: &'static str,
}

impl Format {
    /// The `git init` / `git clone` flags that make it.
    fn flags(self) -> [String; 2] {
        [
            format!("--ref-format={}", self.refs),
            format!("--object-format={}", self.hash),
        ]
    }

    fn hex_len(self) -> usize {
        if self.hash == "sha256" { 64 } else { 40 }
    }
}

/// A bare remote in `format` with one commit on `main`, and two clones of
/// it (A and B) in the same format.
fn team_in(sb: &Sandbox, format: Format) -> (PathBuf, String, PathBuf, PathBuf) {
    let root = sb.dir.path().to_path_buf();
    let [refs, hash] = format.flags();
    let (bare, url) = bare_remote(sb, &[&refs, &hash]);
    let seed = sb.path("seed");
    sb.git(
        &root,
        &[
            "init",
            "-q",
            "-b",
            "main",
            &refs,
            &hash,
            seed.to_str().unwrap(),
        ],
    );
    for (file, text) in [
        ("src/a.rs", "fn a() {}\n"),
        ("src/b.rs", "fn b() {}\n"),
        ("README", "hi\n"),
    ] {
        let path = seed.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    sb.git(&seed, &["add", "."]);
    sb.git(&seed, &["commit", "-q", "-m", "init"]);
    sb.git(&seed, &["push", "-q", &url, "main"]);
    for name in ["A", "B"] {
        sb.git(&root, &["clone", "-q", &refs, &url, name]);
    }
    (bare, url, sb.path("A"), sb.path("B"))
}

/// What plain git says the repository at `dir` holds: every handoff ref
/// (name → object) and the notes history's lines.
fn plain_git_view(sb: &Sandbox, dir: &Path) -> (String, String) {
    let refs = sb.git(
        dir,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/handoffs",
        ],
    );
    let notes = sb.git(dir, &["log", "--notes=handoffs", "--format=%N", "--all"]);
    (refs, notes)
}

/// `git fsck --strict` finds nothing wrong.
fn fsck_clean(sb: &Sandbox, dir: &Path) {
    let out = sb.git_out(dir, &["fsck", "--strict", "--no-progress"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !err.contains("error"),
        "fsck: {err}"
    );
}

const BRIEF: &str = r#"{"resume":{"done_when":"cargo test formats passes","resume_by":"finish src/a.rs"},
 "state":{"next_acceptance_check":"cargo test formats","decisions":["keep both backends - because git 3.0 changes the defaults"]},
 "files_read_first":[{"path":"src/a.rs","why":"under repair"},{"path":"src/b.rs","why":"its caller"}]}"#;

/// The core scenario in one format: write from a linked worktree, resume
/// from the main worktree with CHANGED, MISSING and DIRTY, log, diff,
/// split, drop, push and fetch between two clones, export and import,
/// `redact --history`, a write over MCP, `gc --prune=now`; then plain git
/// agrees and `fsck --strict` is clean everywhere.
fn core_scenario(format: Format) {
    let sb = Sandbox::new();
    let (bare, _url, a, b) = team_in(&sb, format);
    let wt = sb.worktree(&a, "A-feat", "feat");
    std::fs::write(sb.path("brief.json"), BRIEF).unwrap();
    let input = sb.path("brief.json");
    sb.handoff(&wt, &["write", "-F", input.to_str().unwrap()])
        .success();
    let head = sb.git(&wt, &["rev-parse", "HEAD"]);
    let shown = json(&stdout(&sb.handoff(&a, &["show", "feat"]).success()));
    assert_eq!(shown["state"]["head_sha"], head.trim(), "{format:?}");
    assert_eq!(head.trim().len(), format.hex_len());

    // Drift: a commit touching src/a.rs, src/b.rs deleted, a dirty file.
    sb.commit(&wt, "src/a.rs", "fn a() { todo!() }\n", "touch a");
    std::fs::remove_file(wt.join("src/b.rs")).unwrap();
    std::fs::write(wt.join("README"), "dirty\n").unwrap();
    let out = stdout(&sb.handoff(&a, &["resume", "feat"]).success());
    for needle in [
        "!! BRANCH MISMATCH: brief is for 'feat'",
        "!! MISSING: src/b.rs",
        "!! CHANGED: src/a.rs — 1 commit since the brief touched it (modified)",
        "!! DIRTY: uncommitted changes now",
        "Commits since brief written: 1",
    ] {
        assert!(out.contains(needle), "{format:?}: {needle} in\n{out}");
    }

    // A second version: log and diff read both.
    sb.git(&wt, &["checkout", "-q", "--", "src/b.rs", "README"]);
    sb.write_brief(
        &wt,
        None,
        [
            "cargo test formats passes",
            "review a.rs",
            "cargo test formats",
        ],
        &[],
    )
    .success();
    let log = stdout(&sb.handoff(&a, &["log", "feat"]).success());
    assert_eq!(log.lines().count(), 2, "{format:?}: {log}");
    let diff = stdout(&sb.handoff(&a, &["diff", "feat"]).success());
    assert!(
        diff.contains("+    \"resume_by\": \"review a.rs\""),
        "{diff}"
    );

    // split: two threads in one transaction; drop one.
    std::fs::write(
        sb.path("plan.json"),
        r#"{"why":"two halves","threads":[
          {"key":"half-a","resume":{"done_when":"cargo test a passes","resume_by":"do a"},"state":{"next_acceptance_check":"cargo test a"}},
          {"key":"half-b","resume":{"done_when":"cargo test b passes","resume_by":"do b"},"state":{"next_acceptance_check":"cargo test b"}}]}"#,
    )
    .unwrap();
    let plan = sb.path("plan.json");
    sb.handoff(&a, &["split", "--plan", plan.to_str().unwrap(), "--yes"])
        .success();
    sb.handoff(&a, &["drop", "half-b"]).success();

    // A write over MCP.
    mcp_write(&sb, &a);

    // Share: push from A, fetch into B.
    sb.handoff(&a, &["push"]).success();
    sb.handoff(&b, &["fetch"]).success();
    let listed = stdout(&sb.handoff(&b, &["list"]).success());
    for key in ["feat", "half-a", "over-mcp"] {
        assert!(listed.contains(key), "{format:?}: {key} in B: {listed}");
    }
    assert!(!listed.contains("half-b"), "{listed}");
    assert_eq!(
        sb.git(&a, &["rev-parse", "refs/handoffs/feat"]),
        sb.git(&b, &["rev-parse", "refs/handoffs/feat"])
    );
    let b_log = stdout(&sb.handoff(&b, &["log", "feat"]).success());
    assert_eq!(b_log.lines().count(), 2, "{format:?}: {b_log}");

    // Export from A, import into a third clone.
    let exported = sb.path("exported");
    sb.handoff(&a, &["export", "--all", exported.to_str().unwrap()])
        .success();
    let c = sb.path("C");
    let [refs, _] = format.flags();
    sb.git(
        sb.dir.path(),
        &["clone", "-q", &refs, &_url, c.to_str().unwrap()],
    );
    sb.handoff(&c, &["import", exported.to_str().unwrap()])
        .success();
    assert_eq!(
        sb.git(&a, &["cat-file", "-p", "refs/handoffs/feat"]),
        sb.git(&c, &["cat-file", "-p", "refs/handoffs/feat"])
    );

    // redact --history removes a secret a plain-git note line put there.
    let token = format!("ghp_{}", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8");
    sb.git(
        &a,
        &[
            "notes",
            "--ref=handoffs",
            "append",
            "-m",
            &format!("leaked {token}"),
            "main",
        ],
    );
    sb.handoff(&a, &["redact", "--history"]).success();
    let (_, notes) = plain_git_view(&sb, &a);
    assert!(!notes.contains(&token), "{format:?}: the token stayed");

    // Briefs survive git's garbage collection: git sees their refs.
    for dir in [&a, &b, &c] {
        sb.git(dir, &["gc", "-q", "--prune=now"]);
        sb.handoff(dir, &["show", "feat"]).success();
        fsck_clean(&sb, dir);
    }
    fsck_clean(&sb, &bare);
    plain_git_agrees(&sb, &a, format);
    plain_git_agrees(&sb, &b, format);
    if format.refs == "reftable" {
        for dir in [&a, &b, &c] {
            let loose = walk(&dir.join(".git/refs"), &[]);
            assert!(
                loose
                    .iter()
                    .all(|p| !p.to_string_lossy().contains("handoff")),
                "loose handoff refs in a reftable repository: {loose:?}"
            );
        }
    }
}

/// `list --json` names exactly the refs plain git lists, with the same ids,
/// and every version `log --json` lists is a line of `git log
/// --notes=handoffs`.
fn plain_git_agrees(sb: &Sandbox, dir: &Path, format: Format) {
    let (refs, notes) = plain_git_view(sb, dir);
    let listed = json(&stdout(&sb.handoff(dir, &["list", "--json"]).success()));
    let mut ours: Vec<String> = listed
        .as_array()
        .or_else(|| listed["briefs"].as_array())
        .expect("a list")
        .iter()
        .map(|b| {
            format!(
                "refs/handoffs/{} {}",
                b["key"].as_str().unwrap(),
                b["id"].as_str().unwrap()
            )
        })
        .collect();
    ours.sort();
    let mut theirs: Vec<String> = refs.lines().map(str::to_string).collect();
    theirs.sort();
    assert_eq!(ours, theirs, "{format:?}");
    let log = json(&stdout(
        &sb.handoff(dir, &["log", "feat", "--json"]).success(),
    ));
    let versions = log
        .as_array()
        .or_else(|| log["versions"].as_array())
        .expect("versions");
    assert!(!versions.is_empty());
    for version in versions {
        let ts = version["timestamp"].as_str().unwrap();
        assert!(
            notes.contains(&format!("\"timestamp\":\"{ts}\"")),
            "{format:?}: {ts} not in git log --notes"
        );
    }
}

/// Write the brief `over-mcp` through `git handoff mcp`.
fn mcp_write(sb: &Sandbox, dir: &Path) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut cmd = sb.command("git", dir);
        cmd.arg("handoff").arg("mcp");
        let transport = TokioChildProcess::new(tokio::process::Command::from(cmd)).unwrap();
        let client = ().serve(transport).await.expect("initialize");
        let brief: serde_json::Value = serde_json::from_str(EXAMPLE).unwrap();
        let serde_json::Value::Object(args) = json!({"key": "over-mcp", "brief": brief}) else {
            unreachable!()
        };
        let result = client
            .call_tool(CallToolRequestParams::new("write").with_arguments(args))
            .await
            .expect("answered");
        assert_ne!(result.is_error, Some(true), "{:?}", result.content);
        client.cancel().await.unwrap();
    });
    let shown = json(&stdout(&sb.handoff(dir, &["show", "over-mcp"]).success()));
    assert_eq!(shown["key"], "over-mcp");
}

#[test]
fn the_core_scenario_in_files_sha1() {
    core_scenario(Format {
        refs: "files",
        hash: "sha1",
    });
}

#[test]
fn the_core_scenario_in_files_sha256() {
    core_scenario(Format {
        refs: "files",
        hash: "sha256",
    });
}

#[test]
fn the_core_scenario_in_reftable_sha1() {
    core_scenario(Format {
        refs: "reftable",
        hash: "sha1",
    });
}

#[test]
fn the_core_scenario_in_reftable_sha256() {
    core_scenario(Format {
        refs: "reftable",
        hash: "sha256",
    });
}

/// A bare remote that serves partial clones, with a brief on `main`
/// written before two commits (one touching `src/a.rs`), and a
/// `--filter=tree:0` clone of it (`P`) that fetched the brief.
fn partial_clone(sb: &Sandbox) -> (PathBuf, PathBuf) {
    let root = sb.dir.path().to_path_buf();
    let bare = sb.path("remote.git");
    sb.git(
        &root,
        &["init", "-q", "--bare", "-b", "main", bare.to_str().unwrap()],
    );
    sb.git(&bare, &["config", "uploadpack.allowFilter", "true"]);
    sb.git(&bare, &["config", "uploadpack.allowAnySHA1InWant", "true"]);
    let url = format!("file://{}", bare.display());
    let a = sb.repo("A");
    sb.git(&a, &["remote", "add", "origin", &url]);
    sb.commit(&a, "src/a.rs", "1\n", "add a");
    sb.commit(&a, "src/b.rs", "1\n", "add b");
    sb.write_brief(
        &a,
        None,
        ["cargo test a passes", "finish a", "cargo test a"],
        &[
            "--read",
            "src/a.rs=under repair",
            "--read",
            "src/b.rs=caller",
        ],
    )
    .success();
    sb.commit(&a, "src/a.rs", "2\n", "touch a");
    sb.commit(&a, "README", "3\n", "touch readme");
    sb.git(&a, &["push", "-q", "origin", "main"]);
    sb.handoff(&a, &["push"]).success();
    sb.git(&root, &["clone", "-q", "--filter=tree:0", &url, "P"]);
    let p = sb.path("P");
    sb.handoff(&p, &["fetch"]).success();
    (bare, p)
}

#[test]
fn a_partial_clone_measures_changed_through_git_or_says_why_not() {
    let sb = Sandbox::new();
    let (_, p) = partial_clone(&sb);
    let out = stdout(&sb.handoff(&p, &["resume", "main"]).success());
    assert!(out.contains("Commits since brief written: 2"), "{out}");
    assert!(
        out.contains("!! CHANGED: src/a.rs — 1 commit since the brief touched it (modified):")
            && out.contains("touch a"),
        "the trees are fetched as `git log` fetches them:\n{out}"
    );
    assert!(!out.contains("!! CHANGED: src/b.rs"), "{out}");

    // The remote gone before the trees were fetched: one line says so.
    let sb = Sandbox::new();
    let (bare, p) = partial_clone(&sb);
    std::fs::rename(&bare, sb.path("moved.git")).unwrap();

    let out = stdout(&sb.handoff(&p, &["resume", "main"]).success());
    let line = out
        .lines()
        .find(|l| l.starts_with("!! CHANGED not measured: "))
        .unwrap_or_else(|| panic!("no line says CHANGED was not measured:\n{out}"));
    assert!(line.contains("not in this repository"), "{line}");
    assert!(!out.contains("!! CHANGED: "), "{out}");
}

#[test]
fn a_partial_clone_fetches_briefs_and_history_whole() {
    // A partial clone whose filter drops every blob: `git handoff fetch`
    // must not apply it, or the history's notes would be left on the
    // promisor remote and `log` would find no version.
    let sb = Sandbox::new();
    let (bare, _) = partial_clone(&sb);
    let url = format!("file://{}", bare.display());
    sb.git(
        sb.dir.path(),
        &["clone", "-q", "--filter=blob:none", &url, "Q"],
    );
    let q = sb.path("Q");
    sb.handoff(&q, &["fetch"]).success();
    let notes = sb.git(&q, &["ls-tree", "-r", "refs/handoff-remotes/origin/notes"]);
    for line in notes.lines() {
        let blob = line.split_whitespace().nth(2).unwrap();
        let here = sb
            .command("git", &q)
            .args(["cat-file", "-e", blob])
            .env("GIT_NO_LAZY_FETCH", "1")
            .output()
            .unwrap();
        assert!(here.status.success(), "note {blob} was left behind");
    }
    std::fs::rename(&bare, sb.path("moved.git")).unwrap();
    let log = stdout(&sb.handoff(&q, &["log", "main"]).success());
    assert_eq!(log.lines().count(), 1, "{log}");
}

#[test]
fn lists_never_fail_nor_miss_a_key_while_git_packs_refs() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let threads: Vec<String> = (0..60)
        .map(|i| format!(r#"{{"key":"k{i}","resume":{{"done_when":"cargo test k{i} passes","resume_by":"go"}},"state":{{"next_acceptance_check":"cargo test k{i}"}}}}"#))
        .collect();
    std::fs::write(
        sb.path("plan.json"),
        format!(r#"{{"why":"many","threads":[{}]}}"#, threads.join(",")),
    )
    .unwrap();
    let plan = sb.path("plan.json");
    sb.handoff(&repo, &["split", "--plan", plan.to_str().unwrap(), "--yes"])
        .success();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churn = |what: &'static str| {
        let stop = stop.clone();
        let repo = repo.clone();
        let home = sb.home();
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let mut cmd = std::process::Command::new("git");
                cmd.current_dir(&repo);
                hermetic(&mut cmd, &home);
                if what == "pack" {
                    cmd.args(["pack-refs", "--all"]);
                } else {
                    let k = format!("k{}", n % 60);
                    cmd.args([
                        "handoff",
                        "write",
                        &k,
                        "--done-when",
                        "cargo test x passes",
                        "--resume-by",
                        "go",
                        "--next-check",
                        "cargo test x",
                        "--no-lint",
                        "--no-narrative",
                    ]);
                }
                let _ = cmd.output();
                n += 1;
            }
        })
    };
    let packer = churn("pack");
    let writer = churn("write");
    for round in 0..30 {
        let out = sb.handoff(&repo, &["list", "--json"]);
        let out = out.get_output();
        assert!(
            out.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let listed = json(&String::from_utf8_lossy(&out.stdout));
        let keys = listed
            .as_array()
            .or_else(|| listed["briefs"].as_array())
            .unwrap();
        assert_eq!(keys.len(), 60, "round {round}: a key went missing");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    packer.join().unwrap();
    writer.join().unwrap();
}

#[test]
fn a_shared_repository_keeps_what_it_creates_group_writable() {
    let sb = Sandbox::new();
    let root = sb.dir.path().to_path_buf();
    sb.git(&root, &["init", "-q", "--shared=group", "-b", "main", "r"]);
    let repo = sb.path("r");
    sb.commit(&repo, "README", "hi\n", "init");
    let before: std::collections::BTreeSet<PathBuf> =
        walk(&repo.join(".git"), &[]).into_iter().collect();
    sb.write_brief(
        &repo,
        None,
        ["cargo test x passes", "go", "cargo test x"],
        &["--decision", "a - because b"],
    )
    .success();
    sb.handoff(&repo, &["log", "main"]).success();
    sb.handoff(&repo, &["list"]).success();
    use std::os::unix::fs::PermissionsExt;
    let mut wrong = Vec::new();
    for path in walk(&repo.join(".git"), &[]) {
        if before.contains(&path) && !path.is_dir() {
            continue;
        }
        let mode = std::fs::symlink_metadata(&path)
            .unwrap()
            .permissions()
            .mode()
            & 0o7777;
        let ok = if path.is_dir() {
            mode & 0o2070 == 0o2070
        } else if mode & 0o200 == 0 {
            mode & 0o040 == 0o040 // read-only objects: group-readable
        } else {
            mode & 0o060 == 0o060
        };
        if !ok {
            wrong.push(format!("{:o} {}", mode, path.display()));
        }
    }
    assert!(
        wrong.is_empty(),
        "not shared with the group:\n{}",
        wrong.join("\n")
    );
    for name in ["refs/handoffs", "refs/handoffs/main", "refs/notes/handoffs"] {
        assert!(repo.join(".git").join(name).exists(), "{name}");
    }
}

#[test]
fn a_linked_worktree_of_a_bare_clone_is_not_bare() {
    let sb = Sandbox::new();
    let src = sb.repo("src");
    let root = sb.dir.path().to_path_buf();
    sb.git(
        &root,
        &["clone", "-q", "--bare", src.to_str().unwrap(), "bare.git"],
    );
    let bare = sb.path("bare.git");
    let wt = sb.path("wt");
    sb.git(
        &bare,
        &["worktree", "add", "-q", "-b", "feat", wt.to_str().unwrap()],
    );
    assert_eq!(
        sb.git(&wt, &["rev-parse", "--is-bare-repository"]),
        "false\n"
    );
    sb.write_brief(
        &wt,
        None,
        ["cargo test x passes", "go", "cargo test x"],
        &[],
    )
    .success();
    let out = stdout(&sb.handoff(&wt, &["resume"]).success());
    assert!(out.contains("# Resume — feat"), "{out}");
    // The bare repository itself has no worktree: refused, and says so.
    let out = sb.handoff(&bare, &["list"]).code(128);
    assert!(
        stderr(&out).contains("is a bare repository"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn one_shot_git_c_settings_are_read() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let vague = [
        "write",
        "--done-when",
        "x",
        "--resume-by",
        "y",
        "--next-check",
        "z",
    ];
    let mut args = vec!["-c", "handoff.strict=true", "handoff"];
    args.extend(vague);
    let out = sb.git_out(&repo, &args);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        sb.git_out(
            &repo,
            &["rev-parse", "-q", "--verify", "refs/handoffs/main"]
        )
        .stdout
        .is_empty()
    );
    sb.handoff(&repo, &vague).success();
    // Another setting, read by another command: the stale threshold.
    let out = sb.git_out(&repo, &["-c", "handoff.staleHours=1", "handoff", "resume"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("!! STALE"), "written now: {text}");
    let out = sb
        .command("git", &repo)
        .args(["-c", "handoff.staleHours=1", "handoff", "resume"])
        .env("GIT_HANDOFF_NOW", "2026-11-30T15:00:00Z")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("!! STALE: brief written ~3h ago"), "{text}");
}

#[test]
fn outside_a_repository_the_error_is_git_s() {
    let sb = Sandbox::new();
    let dir = sb.path("plain");
    std::fs::create_dir_all(&dir).unwrap();
    let out = sb.handoff(&dir, &["list"]).code(128);
    let err = stderr(&out);
    assert!(
        err.starts_with("fatal: not a git repository (or any of the parent directories)"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}
