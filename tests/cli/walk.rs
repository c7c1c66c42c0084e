//! The commit walk behind `resume`'s "Commits since brief written": one walk
//! that answers ancestry and count together must give git's answers
//! (`merge-base --is-ancestor`, `rev-list --count`) on merges, forks,
//! unrelated roots and skewed commit dates, with the commit-graph, with one
//! that covers only older commits, and without one.

use std::path::Path;

use crate::support::*;
use serde_json::Value;

/// `git commit-tree` of HEAD's tree with `parents`, committed at `time`
/// (seconds): dates are chosen per commit to skew them.
fn commit(sb: &Sandbox, dir: &Path, parents: &[&str], time: u64, message: &str) -> String {
    let tree = sb.git(dir, &["rev-parse", "HEAD^{tree}"]);
    let mut args = vec!["commit-tree", tree.trim(), "-m", message];
    for p in parents {
        args.extend(["-p", p]);
    }
    let date = format!("@{time} +0000");
    let out = sb
        .command("git", dir)
        .args(&args)
        .env("GIT_COMMITTER_DATE", &date)
        .env("GIT_AUTHOR_DATE", &date)
        .output()
        .unwrap();
    assert_ok(&out);
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// git's answer: (in history, commits since).
fn git_answer(sb: &Sandbox, dir: &Path, sha: &str) -> (bool, Option<u64>) {
    let ancestor = sb
        .git_out(dir, &["merge-base", "--is-ancestor", sha, "HEAD"])
        .status
        .success();
    let count = ancestor.then(|| {
        sb.git(dir, &["rev-list", "--count", &format!("{sha}..HEAD")])
            .trim()
            .parse()
            .unwrap()
    });
    (ancestor, count)
}

/// Ours, from `resume KEY --json`.
fn our_answer(sb: &Sandbox, dir: &Path, key: &str) -> (bool, Option<u64>) {
    let out = stdout(&sb.handoff(dir, &["resume", key, "--json"]).success());
    let v: Value = serde_json::from_str(&out).unwrap();
    (
        v["in_history"].as_bool().expect("in_history known"),
        v["commits_since"].as_u64(),
    )
}

const GRAPH: &str = ".git/objects/info/commit-graph";

/// Write the commit-graph of every commit reachable now; its bytes.
fn write_graph(sb: &Sandbox, dir: &Path) -> Vec<u8> {
    sb.git(dir, &["commit-graph", "write", "--reachable"]);
    std::fs::read(dir.join(GRAPH)).unwrap()
}

/// Put in `dir`, in turn, the `full` commit-graph, the `partial` one (of
/// older commits only) and none, and `check` after each, named.
fn in_each_graph_state(dir: &Path, full: &[u8], partial: &[u8], mut check: impl FnMut(&str)) {
    for (mode, graph) in [
        ("full commit-graph", Some(full)),
        ("partial commit-graph", Some(partial)),
        ("no commit-graph", None),
    ] {
        match graph {
            Some(bytes) => std::fs::write(dir.join(GRAPH), bytes).unwrap(),
            None => std::fs::remove_file(dir.join(GRAPH)).unwrap(),
        }
        check(mode);
    }
}

#[test]
fn one_walk_answers_as_git_does_with_and_without_a_commit_graph() {
    let sb = Sandbox::new();
    let dir = sb.repo("r");
    let root = sb.git(&dir, &["rev-parse", "HEAD"]).trim().to_string();
    // Dates are skewed on purpose: the side branch b* is dated before the
    // commits it forks from, and d1 (on main) is older than everything.
    let a1 = commit(&sb, &dir, &[&root], 2_000, "a1");
    let a2 = commit(&sb, &dir, &[&a1], 3_000, "a2");
    let b1 = commit(&sb, &dir, &[&a1], 500, "b1");
    let b2 = commit(&sb, &dir, &[&b1], 600, "b2");
    let m1 = commit(&sb, &dir, &[&a2, &b2], 4_000, "m1");
    let c1 = commit(&sb, &dir, &[&a2], 3_500, "c1 (not merged)");
    let z1 = commit(&sb, &dir, &[], 4_500, "z1 (unrelated root)");
    sb.git(&dir, &["update-ref", "refs/heads/main", &m1]);
    sb.git(&dir, &["update-ref", "refs/heads/other", &c1]);
    sb.git(&dir, &["update-ref", "refs/heads/unrelated", &z1]);
    // The commit-graph as of now covers only the commits above.
    let partial = write_graph(&sb, &dir);
    let a3 = commit(&sb, &dir, &[&m1], 5_000, "a3");
    let e1 = commit(&sb, &dir, &[&m1], 5_100, "e1");
    let m2 = commit(&sb, &dir, &[&a3, &e1], 5_200, "m2");
    let d1 = commit(&sb, &dir, &[&m2], 100, "d1 (dated before all)");
    let a4 = commit(&sb, &dir, &[&d1], 6_000, "a4");
    let ahead = commit(&sb, &dir, &[&a4], 7_000, "ahead of HEAD");
    sb.git(&dir, &["update-ref", "refs/heads/main", &a4]);
    sb.git(&dir, &["update-ref", "refs/heads/ahead", &ahead]);
    let full = write_graph(&sb, &dir);

    let heads = [
        ("root", &root),
        ("a1", &a1),
        ("a2", &a2),
        ("b1", &b1),
        ("b2", &b2),
        ("m1", &m1),
        ("c1", &c1),
        ("z1", &z1),
        ("a3", &a3),
        ("e1", &e1),
        ("m2", &m2),
        ("d1", &d1),
        ("a4", &a4),
        ("ahead", &ahead),
    ];
    for (key, sha) in heads {
        sb.put_brief(&dir, key, sha, &[], None);
    }
    let mut checked = 0;
    in_each_graph_state(&dir, &full, &partial, |mode| {
        for (key, sha) in heads {
            let git = git_answer(&sb, &dir, sha);
            assert_eq!(our_answer(&sb, &dir, key), git, "{key} with {mode}");
            checked += 1;
        }
    });
    assert_eq!(checked, 42);
    // The cases cover both answers and counts through merges.
    assert_eq!(git_answer(&sb, &dir, &b1), (true, Some(8)));
    assert_eq!(git_answer(&sb, &dir, &c1), (false, None));
    assert_eq!(git_answer(&sb, &dir, &ahead), (false, None));
}

#[test]
fn a_brief_head_missing_from_the_database_is_unknown_not_an_error() {
    let sb = Sandbox::new();
    let dir = sb.repo("r");
    sb.put_brief(&dir, "gone", &"1".repeat(40), &[], None);
    let out = stdout(&sb.handoff(&dir, &["resume", "gone", "--json"]).success());
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["in_history"], Value::Null, "{out}");
    assert_eq!(v["commits_since"], Value::Null, "{out}");
    let text = stdout(&sb.handoff(&dir, &["resume", "gone"]).success());
    assert!(
        !text.contains("Commits since") && !text.contains("not in current history"),
        "{text}"
    );
}

#[test]
fn clock_skew_below_the_brief_head_is_handled_like_git() {
    // q, the brief's head, is dated before its own parent y: walking by
    // date, y and its ancestors are taken (and would be counted) before q
    // shows they are q's ancestors.
    let sb = Sandbox::new();
    let dir = sb.repo("r");
    let root = sb.git(&dir, &["rev-parse", "HEAD"]).trim().to_string();
    let r0 = commit(&sb, &dir, &[&root], 2_000, "r0");
    let y = commit(&sb, &dir, &[&r0], 3_000, "y");
    sb.git(&dir, &["update-ref", "refs/heads/main", &y]);
    let partial = write_graph(&sb, &dir);
    let q = commit(&sb, &dir, &[&y], 10, "q (dated before its parent)");
    let p = commit(&sb, &dir, &[&y], 4_000, "p");
    let m = commit(&sb, &dir, &[&p, &q], 5_000, "m");
    sb.git(&dir, &["update-ref", "refs/heads/main", &m]);
    let full = write_graph(&sb, &dir);
    sb.put_brief(&dir, "q", &q, &[], None);
    sb.put_brief(&dir, "y", &y, &[], None);
    assert_eq!(git_answer(&sb, &dir, &q), (true, Some(2)));
    in_each_graph_state(&dir, &full, &partial, |mode| {
        assert_eq!(our_answer(&sb, &dir, "q"), (true, Some(2)), "q with {mode}");
        assert_eq!(
            our_answer(&sb, &dir, "y"),
            git_answer(&sb, &dir, &y),
            "y with {mode}"
        );
    });
}

#[test]
fn changed_counts_commits_through_merges_as_git_rev_list_does() {
    let sb = Sandbox::new();
    let dir = sb.repo("r");
    let lines: Vec<String> = (1..=12).map(|i| format!("line {i}\n")).collect();
    sb.commit(&dir, "src/f.txt", &lines.concat(), "f");
    sb.write_brief(
        &dir,
        Some("k"),
        ["d", "r", "c"],
        &["--read", "src/f.txt=the file"],
    )
    .success();
    let brief_head = sb.git(&dir, &["rev-parse", "HEAD"]).trim().to_string();
    sb.git(&dir, &["checkout", "-q", "-b", "side"]);
    let mut side = lines.clone();
    side[11] = "side\n".into();
    sb.commit(&dir, "src/f.txt", &side.concat(), "side touches f");
    sb.commit(&dir, "other.txt", "o\n", "side touches other");
    sb.git(&dir, &["checkout", "-q", "main"]);
    let mut main = lines.clone();
    main[0] = "main\n".into();
    sb.commit(&dir, "src/f.txt", &main.concat(), "main touches f");
    sb.commit(&dir, "g.txt", "g\n", "main touches g");
    sb.git(&dir, &["merge", "-q", "--no-edit", "side"]);
    let git_count = sb.git(
        &dir,
        &[
            "rev-list",
            "--count",
            &format!("{brief_head}..HEAD"),
            "--",
            "src/f.txt",
        ],
    );
    assert_eq!(git_count.trim(), "3");
    for graph in [false, true] {
        if graph {
            sb.git(&dir, &["commit-graph", "write", "--reachable"]);
        }
        let out = stdout(&sb.handoff(&dir, &["resume", "k"]).success());
        assert!(
            out.contains(
                "!! CHANGED: src/f.txt — 3 commits since the brief touched it (modified), newest: "
            ),
            "commit-graph {graph}: {out}"
        );
    }
}
