//! `git handoff init` and `init --check`: the merge driver's config and the
//! narrative's attribute, set up once, idempotently, never in global config.

use std::path::Path;
use std::time::SystemTime;

use crate::support::*;
use serde_json::Value;

const DRIVER: &str = "git handoff merge-narrative %O %A %B %P";
const LINE: &str = ".claude/PROJECT_STATE.md merge=handoff-narrative\n";

fn snapshot(path: &Path) -> (Vec<u8>, SystemTime) {
    (
        std::fs::read(path).unwrap(),
        std::fs::metadata(path).unwrap().modified().unwrap(),
    )
}

/// The merge driver as the repository's own config sets it.
fn local_driver(sb: &Sandbox, dir: &Path) -> String {
    sb.git(
        dir,
        &[
            "config",
            "--local",
            "--get",
            "merge.handoff-narrative.driver",
        ],
    )
}

fn attr(sb: &Sandbox, dir: &Path, path: &str) -> String {
    sb.git(dir, &["check-attr", "merge", "--", path])
        .rsplit(": ")
        .next()
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn init_sets_up_the_driver_and_running_it_twice_changes_nothing() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");

    let out = sb.handoff(&repo, &["init", "--check"]).code(1);
    let text = stdout(&out);
    assert_eq!(text.matches("missing  ").count(), 5, "{text}");
    assert!(
        text.contains("`git handoff init` sets up what is missing"),
        "{text}"
    );
    assert!(
        !repo.join(".gitattributes").exists(),
        "--check writes nothing"
    );
    assert!(
        sb.git_out(
            &repo,
            &["config", "--get", "merge.handoff-narrative.driver"]
        )
        .status
        .code()
            == Some(1)
    );

    let out = sb.handoff(&repo, &["init"]).success();
    let text = stdout(&out);
    assert_eq!(text.matches("set  ").count(), 5, "{text}");
    assert!(text.contains("for this clone only"), "{text}");
    assert_eq!(local_driver(&sb, &repo), format!("{DRIVER}\n"));
    assert!(
        sb.git(
            &repo,
            &["config", "--local", "--get", "merge.handoff-narrative.name"]
        )
        .contains("narrative")
    );
    // The attribute goes where the driver's config goes, per clone: the
    // working tree stays clean (issue 57).
    assert!(!repo.join(".gitattributes").exists());
    assert_eq!(sb.git(&repo, &["status", "--porcelain"]), "");
    assert_eq!(
        std::fs::read_to_string(repo.join(".git/info/attributes")).unwrap(),
        LINE
    );
    assert_eq!(
        attr(&sb, &repo, ".claude/PROJECT_STATE.md"),
        "handoff-narrative"
    );
    let out = sb.handoff(&repo, &["init", "--check"]).success();
    assert!(
        stdout(&out).contains(
            "ok       .git/info/attributes            .claude/PROJECT_STATE.md merge=handoff-narrative, for this clone only"
        ),
        "{}",
        stdout(&out)
    );

    // Second run: nothing written, not even rewritten with the same bytes.
    let config = snapshot(&repo.join(".git/config"));
    let attributes = snapshot(&repo.join(".git/info/attributes"));
    std::thread::sleep(std::time::Duration::from_millis(20));
    let out = sb.handoff(&repo, &["init"]).success();
    let text = stdout(&out);
    assert_eq!(text.matches("ok  ").count(), 6, "{text}");
    assert!(text.contains("nothing to change"), "{text}");
    assert_eq!(snapshot(&repo.join(".git/config")), config);
    assert_eq!(snapshot(&repo.join(".git/info/attributes")), attributes);

    let out = sb.handoff(&repo, &["init", "--check", "--json"]).success();
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["changed"], false);
    // the six items, and whether the pre-push hook is installed (56.11)
    assert_eq!(v["items"].as_array().unwrap().len(), 7);
    assert_eq!(v["items"][6]["name"], "pre-push hook");
    assert_eq!(v["items"][1]["name"], "merge.handoff-narrative.driver");
    assert_eq!(v["items"][1]["status"], "ok");
}

#[test]
fn init_writes_the_repository_config_never_the_global_one() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let global = sb.path("global.gitconfig");
    std::fs::write(&global, "").unwrap();
    let run = |args: &[&str]| {
        sb.command("git", &repo)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", &global)
            .output()
            .unwrap()
    };
    assert!(run(&["handoff", "init"]).status.success());
    assert_eq!(std::fs::read_to_string(&global).unwrap(), "");
    assert!(
        std::fs::read_to_string(repo.join(".git/config"))
            .unwrap()
            .contains("[merge \"handoff-narrative\"]")
    );
    // A driver already configured globally counts as set up; init then
    // writes nothing to the repository config either.
    let other = sb.repo("other");
    std::fs::write(
        &global,
        format!("[merge \"handoff-narrative\"]\n\tname = mine\n\tdriver = {DRIVER}\n"),
    )
    .unwrap();
    let out = sb
        .command("git", &other)
        .args(["handoff", "init", "--json"])
        .env("GIT_CONFIG_GLOBAL", &global)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["items"][1]["status"], "ok");
    assert_eq!(
        v["items"][0]["status"], "set",
        "the name differs: set locally"
    );
    let local = std::fs::read_to_string(other.join(".git/config")).unwrap();
    assert!(!local.contains("driver ="), "{local}");
}

#[test]
fn init_follows_handoff_narrative_and_keeps_existing_attributes() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.git(
        &repo,
        &["config", "handoff.narrative", "docs/Project State.md"],
    );
    std::fs::write(repo.join(".gitattributes"), "*.png binary").unwrap();
    sb.handoff(&repo, &["init"]).success();
    assert_eq!(
        std::fs::read_to_string(repo.join(".gitattributes")).unwrap(),
        "*.png binary"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join(".git/info/attributes")).unwrap(),
        "\"docs/Project State.md\" merge=handoff-narrative\n"
    );
    assert_eq!(
        attr(&sb, &repo, "docs/Project State.md"),
        "handoff-narrative"
    );
    assert_eq!(attr(&sb, &repo, "docs/other.md"), "unspecified");
    sb.handoff(&repo, &["init", "--check"]).success();
}

#[test]
fn init_leaves_a_merge_attribute_you_chose_alone() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let mine = ".claude/PROJECT_STATE.md merge=union\n";
    std::fs::write(repo.join(".gitattributes"), mine).unwrap();
    let out = sb.handoff(&repo, &["init"]).code(1);
    let text = stdout(&out);
    assert!(
        text.contains("blocked  .git/info/attributes")
            && text.contains("has merge=union from an attributes file"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join(".gitattributes")).unwrap(),
        mine
    );
    // The independent items were still set up.
    assert_eq!(
        sb.git(
            &repo,
            &["config", "--get", "merge.handoff-narrative.driver"]
        ),
        format!("{DRIVER}\n")
    );
    sb.handoff(&repo, &["init", "--check"]).code(1);
}

#[test]
fn init_in_a_linked_worktree_configures_the_whole_repository() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.git(&repo, &["worktree", "add", "-q", "-b", "side", "../wt"]);
    let wt = sb.path("wt");
    sb.handoff(&wt, &["init"]).success();
    assert!(!wt.join(".gitattributes").exists());
    assert_eq!(
        std::fs::read_to_string(repo.join(".git/info/attributes")).unwrap(),
        LINE
    );
    // The config and info/attributes are shared by every worktree.
    assert_eq!(local_driver(&sb, &repo), format!("{DRIVER}\n"));
    sb.handoff(&repo, &["init", "--check"]).success();
    assert_eq!(
        attr(&sb, &repo, ".claude/PROJECT_STATE.md"),
        "handoff-narrative"
    );
}

/// A team that committed the narrative's line to `.gitattributes` keeps
/// it: init sees the attribute, says where it comes from and adds no
/// second line to info/attributes.
#[test]
fn init_keeps_a_committed_gitattributes_line_working() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.commit(
        &repo,
        ".gitattributes",
        LINE,
        "merge the narrative as a log",
    );
    let out = sb.handoff(&repo, &["init"]).success();
    assert!(
        stdout(&out).contains("merge=handoff-narrative, from a committed .gitattributes"),
        "{}",
        stdout(&out)
    );
    assert!(!repo.join(".git/info/attributes").exists());
    assert_eq!(sb.git(&repo, &["status", "--porcelain"]), "");
    sb.handoff(&repo, &["init", "--check"]).success();
}

#[test]
fn init_outside_a_repository_is_one_clear_error() {
    let sb = Sandbox::new();
    let dir = sb.path("plain");
    std::fs::create_dir_all(&dir).unwrap();
    let out = sb.handoff(&dir, &["init"]).code(128);
    let err = stderr(&out);
    assert!(err.starts_with("fatal: not a git repository"), "{err}");
    assert_eq!(err.lines().count(), 1);
    assert_eq!(stdout(&out), "");
}

#[test]
fn init_adds_each_remote_s_fetch_refspecs_once_and_check_reports_them() {
    let t = team();
    let dir = &t.a;
    t.sb.git(dir, &["remote", "add", "backup", &t.url]);
    let specs = |remote: &str| {
        t.sb.git(
            dir,
            &["config", "--get-all", &format!("remote.{remote}.fetch")],
        )
    };
    let origin = "+refs/heads/*:refs/remotes/origin/*\n\
                  +refs/handoffs/*:refs/handoff-fetch/origin/briefs/*\n\
                  +refs/notes/handoffs*:refs/handoff-fetch/origin/notes/handoffs*\n";

    let out = t.sb.handoff(dir, &["init", "--check"]).code(1);
    let text = stdout(&out);
    for remote in ["origin", "backup"] {
        assert!(
            text.contains(&format!("missing  remote.{remote}.fetch ")),
            "{text}"
        );
    }
    assert!(
        text.contains("(a plain `git fetch origin` does not bring the briefs)"),
        "{text}"
    );
    assert_eq!(specs("origin"), "+refs/heads/*:refs/remotes/origin/*\n");

    let out = t.sb.handoff(dir, &["init"]).success();
    let text = stdout(&out);
    assert!(text.contains("set      remote.origin.fetch "), "{text}");
    assert!(text.contains("set      remote.backup.fetch "), "{text}");
    assert_eq!(specs("origin"), origin);
    assert!(specs("backup").contains("refs/handoff-fetch/backup/briefs/*"));

    // Idempotent: never a refspec twice; --check agrees, per remote.
    let config = t.sb.git(dir, &["config", "--local", "--list"]);
    let out = t.sb.handoff(dir, &["init"]).success();
    assert_stdout_has(&out, "Everything is set up; nothing to change.");
    assert_eq!(t.sb.git(dir, &["config", "--local", "--list"]), config);
    assert_eq!(specs("origin"), origin);
    let out = t.sb.handoff(dir, &["init", "--check", "--json"]).success();
    let v = json(&stdout(&out));
    let row = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "remote.origin.fetch")
        .unwrap();
    assert_eq!(row["status"], "ok", "{v}");
    assert!(!config.contains(".push="), "{config}");

    // One refspec removed by hand: --check names it, init adds only it.
    t.sb.git(
        dir,
        &[
            "config",
            "--unset",
            "remote.origin.fetch",
            "^\\+refs/handoffs/",
        ],
    );
    let out = t.sb.handoff(dir, &["init", "--check"]).code(1);
    let text = stdout(&out);
    assert!(text.contains("missing  remote.origin.fetch "), "{text}");
    assert!(
        text.contains("lacks +refs/handoffs/*:refs/handoff-fetch/origin/briefs/* ("),
        "{text}"
    );
    t.sb.handoff(dir, &["init"]).success();
    let mut got: Vec<String> = specs("origin").lines().map(str::to_string).collect();
    let mut want: Vec<String> = origin.lines().map(str::to_string).collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);

    // `git remote rename` keeps the refspecs verbatim, staging into the
    // old name's namespace: --check names them, init replaces them.
    t.sb.git(dir, &["remote", "rename", "backup", "team"]);
    let out = t.sb.handoff(dir, &["init", "--check"]).code(1);
    let text = stdout(&out);
    assert!(text.contains("missing  remote.team.fetch "), "{text}");
    assert!(
        text.contains("+refs/handoffs/*:refs/handoff-fetch/backup/briefs/*"),
        "{text}"
    );
    assert!(text.contains("(a renamed remote?)"), "{text}");
    t.sb.handoff(dir, &["init"]).success();
    let team = specs("team");
    assert!(!team.contains("/backup/"), "{team}");
    assert!(
        team.contains("+refs/handoffs/*:refs/handoff-fetch/team/briefs/*\n")
            && team.contains("+refs/notes/handoffs*:refs/handoff-fetch/team/notes/handoffs*\n"),
        "{team}"
    );
    assert!(
        team.starts_with("+refs/heads/*:refs/remotes/team/*\n"),
        "{team}"
    );
    t.sb.handoff(dir, &["init", "--check"]).success();

    // A partial clone's plain fetch would filter the history's blobs out:
    // no refspec there, and init still succeeds.
    let partial = t.sb.path("partial");
    t.sb.git(
        t.sb.dir.path(),
        &[
            "clone",
            "-q",
            "--filter=blob:none",
            &t.url,
            partial.to_str().unwrap(),
        ],
    );
    let out = t.sb.handoff(&partial, &["init"]).success();
    assert_stdout_has(&out, "not added: 'origin' is a partial clone's remote");
    assert_eq!(
        t.sb.git(&partial, &["config", "--get-all", "remote.origin.fetch"]),
        "+refs/heads/*:refs/remotes/origin/*\n"
    );
}

/// A remote added after `init` (the natural order in a new repository)
/// lacks the refspecs that make a plain `git fetch` bring the briefs:
/// `git handoff` alone says to run `init` again, and is quiet after it.
#[test]
fn git_handoff_alone_names_a_remote_added_after_init() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.handoff(&repo, &["init"]).success();
    let out = stdout(&sb.handoff(&repo, &[]).success());
    assert!(!out.contains("git handoff init"), "{out}");
    sb.git(sb.dir.path(), &["init", "-q", "--bare", "team.git"]);
    sb.git(&repo, &["remote", "add", "origin", "../team.git"]);
    let out = stdout(&sb.handoff(&repo, &[]).success());
    assert!(
        out.ends_with("\nA plain `git fetch` does not bring the briefs of 'origin' (added after `git handoff init`): run `git handoff init` again.\n"),
        "{out}"
    );
    sb.handoff(&repo, &["init"]).success();
    let out = stdout(&sb.handoff(&repo, &[]).success());
    assert!(!out.contains("git handoff init"), "{out}");
}
