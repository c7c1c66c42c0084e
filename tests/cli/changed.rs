//! CHANGED at scale: the counts `resume` gives for the files to read first
//! must be git's (`git log --format=%H <head>..HEAD -- <file> | wc -l`)
//! through merges (one discarding its side with `-s ours`), renames,
//! deletions, a file that becomes a directory, a path with bytes ≥ 0x80,
//! without a commit-graph, with one without Bloom filters, with filters of
//! both hash versions, of settings other than git's defaults, with filters
//! missing for some commits, and on split chains where only some layers
//! have them. And the Bloom reader must say "definitely not" exactly where
//! git's own filter lookups do.

use std::path::Path;

use crate::support::*;
use git_handoff::bloom;
use serde_json::Value;

/// The paths the brief asks to read first.
const PATHS: &[&str] = &[
    "a.txt",
    "src/b.rs",
    "old.txt",
    "new.txt",
    "gone.txt",
    "p",
    "p/inner.txt",
    "é.txt",
    "deep/x/y/z.txt",
    "deep",
    "keep.txt",
    "never.txt",
    "noise/n1.txt",
];

fn write(dir: &Path, file: &str, content: &str) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

fn lines(tag: &str) -> String {
    (1..=12).map(|i| format!("{tag} line {i}\n")).collect()
}

/// `lines("base")` with line `n` replaced.
fn edit(n: usize, with: &str) -> String {
    (1..=12)
        .map(|i| {
            if i == n {
                format!("{with}\n")
            } else {
                format!("base line {i}\n")
            }
        })
        .collect()
}

/// Build the history; returns the brief's head.
fn history(sb: &Sandbox, dir: &Path) -> String {
    for f in ["a.txt", "src/b.rs", "old.txt", "gone.txt", "p", "é.txt"] {
        write(dir, f, &lines("base"));
    }
    write(dir, "deep/x/y/z.txt", &lines("base"));
    write(dir, "keep.txt", "keep\n");
    sb.git(dir, &["add", "-A"]);
    sb.git(dir, &["commit", "-q", "-m", "base"]);
    sb.commit(dir, "noise/n0.txt", "0\n", "noise before the brief");
    let brief = sb.git(dir, &["rev-parse", "HEAD"]).trim().to_string();

    sb.commit(dir, "a.txt", &edit(1, "main 1"), "main touches a");
    sb.git(dir, &["checkout", "-q", "-b", "side1"]);
    sb.commit(dir, "src/b.rs", &edit(2, "side1"), "side1 touches b");
    let mut a = edit(1, "main 1");
    a = a.replace("base line 12", "side1 12");
    sb.commit(dir, "a.txt", &a, "side1 touches a");
    sb.git(dir, &["checkout", "-q", "main"]);
    sb.git(dir, &["mv", "old.txt", "new.txt"]);
    sb.git(dir, &["commit", "-q", "-m", "rename old to new"]);
    sb.commit(
        dir,
        "a.txt",
        &edit(1, "main 1").replace("base line 6", "main 6"),
        "main a 6",
    );
    sb.commit(dir, "é.txt", &edit(3, "accent"), "main touches é");
    sb.git(dir, &["merge", "-q", "--no-edit", "side1"]);

    // side2's changes are discarded by the merge: git log -- src/b.rs
    // does not go down that side.
    sb.git(dir, &["checkout", "-q", "-b", "side2"]);
    sb.commit(dir, "src/b.rs", &edit(9, "side2"), "side2 touches b");
    sb.commit(dir, "keep.txt", "side2 keep\n", "side2 touches keep");
    sb.git(dir, &["checkout", "-q", "main"]);
    sb.commit(dir, "deep/x/y/z.txt", &edit(4, "main"), "main touches z");
    sb.git(dir, &["merge", "-q", "--no-edit", "-s", "ours", "side2"]);

    // Only the side touches z: the merge is TREESAME to its second parent.
    sb.git(dir, &["checkout", "-q", "-b", "side3"]);
    sb.commit(dir, "deep/x/y/z.txt", &edit(7, "side3"), "side3 touches z");
    sb.git(dir, &["checkout", "-q", "main"]);
    sb.commit(dir, "noise/n1.txt", "1\n", "main adds n1");
    sb.git(dir, &["merge", "-q", "--no-edit", "side3"]);

    sb.git(dir, &["rm", "-q", "gone.txt"]);
    sb.git(dir, &["commit", "-q", "-m", "delete gone"]);
    sb.git(dir, &["rm", "-q", "p"]);
    write(dir, "p/inner.txt", "now a directory\n");
    sb.git(dir, &["add", "p/inner.txt"]);
    sb.git(dir, &["commit", "-q", "-m", "p becomes a directory"]);
    sb.commit(dir, "keep.txt", "changed\n", "keep changed");
    sb.commit(dir, "keep.txt", "keep\n", "keep reverted");
    // Many paths at once: over a low max-changed-paths setting.
    for i in 0..6 {
        write(dir, &format!("wide/w{i}.txt"), "w\n");
    }
    write(dir, "a.txt", &edit(12, "wide"));
    sb.git(dir, &["add", "-A", "wide", "a.txt"]);
    sb.git(dir, &["commit", "-q", "-m", "wide commit"]);
    for i in 0..12 {
        sb.commit(
            dir,
            &format!("noise/n{}.txt", i % 3),
            &format!("noise {i}\n"),
            "noise",
        );
    }
    sb.commit(dir, "src/b.rs", &edit(5, "last"), "main touches b last");
    brief
}

/// One `git commit-graph write`: its arguments after `write`, extra
/// environment, and the commit to write from (`None`: `--reachable`).
type Write = (
    Vec<&'static str>,
    Vec<(&'static str, &'static str)>,
    Option<&'static str>,
);

/// A way to write (or not) the commit-graph.
struct Graph {
    name: &'static str,
    /// The writes, in order (a split chain has several).
    writes: Vec<Write>,
    /// How many layers must have filters.
    with_filters: usize,
}

fn graph_modes() -> Vec<Graph> {
    let plain = |name, args: Vec<&'static str>, env, with_filters| Graph {
        name,
        writes: vec![(args, env, None)],
        with_filters,
    };
    vec![
        Graph {
            name: "no commit-graph",
            writes: vec![],
            with_filters: 0,
        },
        plain("plain commit-graph", vec!["--no-changed-paths"], vec![], 0),
        plain(
            "Bloom filters, hash version 1",
            vec!["--changed-paths"],
            vec![(
                "GIT_CONFIG_PARAMETERS",
                "'commitgraph.changedpathsversion'='1'",
            )],
            1,
        ),
        plain(
            "Bloom filters, hash version 2",
            vec!["--changed-paths"],
            vec![(
                "GIT_CONFIG_PARAMETERS",
                "'commitgraph.changedpathsversion'='2'",
            )],
            1,
        ),
        plain(
            "Bloom filters, 3 hashes, 4 bits per entry, at most 3 paths",
            vec!["--changed-paths"],
            vec![
                ("GIT_TEST_BLOOM_SETTINGS_NUM_HASHES", "3"),
                ("GIT_TEST_BLOOM_SETTINGS_BITS_PER_ENTRY", "4"),
                ("GIT_TEST_BLOOM_SETTINGS_MAX_CHANGED_PATHS", "3"),
            ],
            1,
        ),
        plain(
            "Bloom filters for 5 commits only",
            vec!["--changed-paths", "--max-new-filters=5"],
            vec![],
            1,
        ),
        Graph {
            name: "split chain, filters on the newer layer only",
            writes: vec![
                (
                    vec!["--split=no-merge", "--no-changed-paths", "--stdin-commits"],
                    vec![],
                    Some("HEAD~12"),
                ),
                (vec!["--split=no-merge", "--changed-paths"], vec![], None),
            ],
            with_filters: 1,
        },
        Graph {
            name: "split chain, filters on the base layer only",
            writes: vec![
                (
                    vec!["--split=no-merge", "--changed-paths", "--stdin-commits"],
                    vec![],
                    Some("HEAD~12"),
                ),
                (vec!["--split=no-merge", "--no-changed-paths"], vec![], None),
            ],
            with_filters: 1,
        },
    ]
}

fn write_graph(sb: &Sandbox, dir: &Path, mode: &Graph) {
    let info = dir.join(".git/objects/info");
    let _ = std::fs::remove_file(info.join("commit-graph"));
    let _ = std::fs::remove_dir_all(info.join("commit-graphs"));
    for (args, env, from) in &mode.writes {
        let mut cmd = sb.command("git", dir);
        cmd.args(["commit-graph", "write"]).args(args);
        if from.is_none() {
            cmd.arg("--reachable");
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let input = from.map(|rev| sb.git(dir, &["rev-parse", rev]));
        let out = match input {
            Some(sha) => {
                use std::io::Write;
                let mut child = cmd
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap();
                child
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(sha.as_bytes())
                    .unwrap();
                child.wait_with_output().unwrap()
            }
            None => cmd.output().unwrap(),
        };
        assert!(
            out.status.success(),
            "{}: {}",
            mode.name,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The mode is what it says: count the layers holding filters.
    let mut files = vec![info.join("commit-graph")];
    if let Ok(chain) = std::fs::read_to_string(info.join("commit-graphs/commit-graph-chain")) {
        files.extend(
            chain
                .lines()
                .map(|l| info.join(format!("commit-graphs/graph-{l}.graph"))),
        );
    }
    let layers: Vec<Vec<u8>> = files.iter().filter_map(|f| std::fs::read(f).ok()).collect();
    let filtered = layers
        .iter()
        .filter(|d| d.windows(4).any(|w| w == b"BDAT"))
        .count();
    assert_eq!(filtered, mode.with_filters, "{}", mode.name);
    assert_eq!(layers.len(), mode.writes.len(), "{}", mode.name);
}

/// git's count and whether the path differs between `brief` and HEAD.
fn git_count(sb: &Sandbox, dir: &Path, brief: &str, path: &str) -> (usize, bool) {
    let log = sb.git(
        dir,
        &["log", "--format=%H", &format!("{brief}..HEAD"), "--", path],
    );
    let differs = !sb
        .git_out(dir, &["diff", "--quiet", brief, "HEAD", "--", path])
        .status
        .success();
    (log.lines().count(), differs)
}

/// Ours: path → commits, from `resume --json`.
fn our_counts(sb: &Sandbox, dir: &Path) -> std::collections::HashMap<String, u64> {
    let out = stdout(&sb.handoff(dir, &["resume", "k", "--json"]).success());
    let v: Value = serde_json::from_str(&out).unwrap();
    v["changed_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap().to_string(),
                c["commits"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn changed_counts_are_git_logs_with_and_without_bloom_filters() {
    let sb = Sandbox::new();
    let dir = sb.repo("r");
    let brief = history(&sb, &dir);
    sb.put_brief(&dir, "k", &brief, PATHS, Some("1 file changed"));
    let want: Vec<(usize, bool)> = PATHS
        .iter()
        .map(|p| git_count(&sb, &dir, &brief, p))
        .collect();
    // The history exercises what it claims: simplification hides side2's
    // commit from src/b.rs, net-unchanged and never-present paths exist.
    let full_history = sb.git(
        &dir,
        &[
            "rev-list",
            "--count",
            "--full-history",
            &format!("{brief}..HEAD"),
            "--",
            "src/b.rs",
        ],
    );
    assert_eq!(want[1], (2, true), "git log -- src/b.rs");
    let full_history: usize = full_history.trim().parse().unwrap();
    assert!(
        full_history > 2,
        "--full-history also counts side2's commit"
    );
    assert_eq!(want[10], (2, false), "keep.txt changed and reverted");
    assert_eq!(want[11], (0, false), "never.txt");
    assert_eq!(
        want[8].0, 2,
        "deep/x/y/z.txt: main and side3, not the merge"
    );
    for mode in graph_modes() {
        write_graph(&sb, &dir, &mode);
        let ours = our_counts(&sb, &dir);
        for (path, (count, differs)) in PATHS.iter().zip(&want) {
            let got = ours.get(*path).copied();
            let expected = differs.then_some(*count as u64);
            assert_eq!(got, expected, "{path} with {}", mode.name);
        }
    }
}

/// git's Bloom statistics for `git log -- <path>`: (maybe, definitely not).
fn git_bloom(sb: &Sandbox, dir: &Path, path: &str) -> (u64, u64) {
    let trace = dir.join(".git").join("trace.json");
    let _ = std::fs::remove_file(&trace);
    let out = sb
        .command("git", dir)
        .args(["log", "--format=%H", "--", path])
        .env("GIT_TRACE2_EVENT", &trace)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = std::fs::read_to_string(&trace).unwrap();
    let stats = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["category"] == "bloom" && e["key"] == "statistics")
        .unwrap_or_else(|| panic!("git used no Bloom filter for {path}"));
    let v = &stats["value"];
    (
        v["maybe"].as_u64().unwrap(),
        v["definitely_not"].as_u64().unwrap(),
    )
}

#[test]
fn the_bloom_reader_says_definitely_not_where_git_does() {
    let sb = Sandbox::new();
    let dir = sb.repo("r");
    // A linear history: git checks every commit's filter for `log -- path`.
    let written = ["a.txt", "d/é.txt", "d/sub/ü-x.txt", "z/ascii.txt"];
    let paths = [
        "a.txt",
        "d/é.txt",
        "d/sub/ü-x.txt",
        "d",
        "d/sub",
        "z/ascii.txt",
        "nothing",
    ];
    for i in 0..40 {
        let path = written[i % 4];
        write(&dir, path, &format!("{i}\n"));
        sb.git(&dir, &["add", "-A"]);
        sb.git(&dir, &["commit", "-q", "-m", &format!("c{i}")]);
    }
    let settings: [(&str, Vec<(&str, &str)>); 3] = [
        (
            "version 1",
            vec![(
                "GIT_CONFIG_PARAMETERS",
                "'commitgraph.changedpathsversion'='1'",
            )],
        ),
        (
            "version 2",
            vec![(
                "GIT_CONFIG_PARAMETERS",
                "'commitgraph.changedpathsversion'='2'",
            )],
        ),
        (
            "2 hashes, 3 bits",
            vec![
                ("GIT_TEST_BLOOM_SETTINGS_NUM_HASHES", "2"),
                ("GIT_TEST_BLOOM_SETTINGS_BITS_PER_ENTRY", "3"),
            ],
        ),
    ];
    let mut seen_versions = Vec::new();
    for (name, env) in settings {
        // git keeps an existing graph's settings: start afresh.
        let _ = std::fs::remove_file(dir.join(".git/objects/info/commit-graph"));
        let mut cmd = sb.command("git", &dir);
        cmd.args(["commit-graph", "write", "--reachable", "--changed-paths"]);
        for (k, v) in &env {
            cmd.env(k, v);
        }
        assert!(cmd.output().unwrap().status.success());
        let repo = gix::open(&dir).unwrap();
        let graph = repo.commit_graph().unwrap();
        let filters = bloom::Filters::open(&dir.join(".git/objects"), &graph).expect(name);
        let [Some(layer)] = filters.settings()[..] else {
            panic!("{name}: one layer with filters");
        };
        seen_versions.push(layer.hash_version);
        if name.starts_with("2 hashes") {
            assert_eq!((layer.num_hashes, layer.bits_per_entry), (2, 3));
        }
        for path in paths {
            let components: Vec<&str> = path.split('/').collect();
            let keys = bloom::path_keys(&components, layer);
            let (mut maybe, mut not) = (0, 0);
            for pos in 0..graph.num_commits() {
                let (filter, _) = filters.filter(pos).expect("every commit has a filter");
                if bloom::definitely_not(filter, &keys) {
                    not += 1;
                } else {
                    maybe += 1;
                }
            }
            assert_eq!((maybe, not), git_bloom(&sb, &dir, path), "{name}: {path}");
        }
    }
    assert_eq!(seen_versions, [1, 2, 1], "settings are read from the file");
}

/// The byte range of chunk `id` in a commit-graph file.
fn chunk(data: &[u8], id: &[u8; 4]) -> std::ops::Range<usize> {
    let chunks = usize::from(data[6]);
    let entry = |i: usize| {
        let at = 8 + 12 * i;
        let offset = u64::from_be_bytes(data[at + 4..at + 12].try_into().unwrap());
        (&data[at..at + 4], offset as usize)
    };
    let i = (0..chunks)
        .find(|&i| entry(i).0 == id)
        .expect("chunk present");
    entry(i).1..entry(i + 1).1
}

#[test]
fn damaged_bloom_chunks_fall_back_to_trees_with_the_same_answers() {
    let sb = Sandbox::new();
    let dir = sb.repo("r");
    let brief = history(&sb, &dir);
    sb.put_brief(&dir, "k", &brief, PATHS, Some("1 file changed"));
    let want: Vec<Option<u64>> = PATHS
        .iter()
        .map(|p| {
            let (count, differs) = git_count(&sb, &dir, &brief, p);
            differs.then_some(count as u64)
        })
        .collect();
    sb.git(
        &dir,
        &["commit-graph", "write", "--reachable", "--changed-paths"],
    );
    let path = dir.join(".git/objects/info/commit-graph");
    let good = std::fs::read(&path).unwrap();
    let bidx = chunk(&good, b"BIDX");
    let bdat = chunk(&good, b"BDAT");
    let mut damages: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut out_of_range = good.clone();
    out_of_range[bidx.clone()].fill(0xff);
    damages.push(("BIDX offsets past BDAT", out_of_range));
    let mut backwards = good.clone();
    for (i, b) in backwards[bidx].chunks_mut(4).enumerate() {
        b.copy_from_slice(&(1_000u32 - i as u32).to_be_bytes());
    }
    damages.push(("BIDX offsets going backwards", backwards));
    let mut version = good.clone();
    version[bdat.start..bdat.start + 4].copy_from_slice(&9u32.to_be_bytes());
    damages.push(("unknown hash version", version));
    let mut truncated = good.clone();
    truncated.truncate(bdat.start + 6);
    damages.push(("BDAT header cut short", truncated));
    for (name, bytes) in damages {
        std::fs::write(&path, &bytes).unwrap();
        let ours = our_counts(&sb, &dir);
        for (p, expected) in PATHS.iter().zip(&want) {
            assert_eq!(ours.get(*p).copied(), *expected, "{p} with {name}");
        }
    }
}

/// How many trees of `dir` are stored as deltas in a pack, and how many
/// objects are loose.
fn deltified_trees_and_loose(sb: &Sandbox, dir: &Path) -> (usize, usize) {
    let check = sb.git(
        dir,
        &[
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(objecttype) %(deltabase)",
        ],
    );
    let deltas = check
        .lines()
        .filter(|l| l.starts_with("tree ") && !l.ends_with(&"0".repeat(40)))
        .count();
    let loose = sb.git(dir, &["count-objects"]);
    let loose: usize = loose.split_whitespace().next().unwrap().parse().unwrap();
    (deltas, loose)
}

#[test]
fn changed_counts_hold_in_packs_whatever_their_delta_order_and_cache() {
    let sb = Sandbox::new();
    let dir = sb.repo("r");
    history(&sb, &dir);
    // As `git gc` packs: newer trees whole, older ones deltas of them.
    sb.git(&dir, &["repack", "-a", "-d", "-f", "-q", "--depth=50"]);
    // As `git fast-import` packs: each tree a delta of its previous
    // version, so a walk from the tip meets the chains newest first.
    let imported = sb.unborn("imported");
    let stream = sb.git(&dir, &["fast-export", "--all"]);
    let mut import = sb
        .command("git", &imported)
        .args(["fast-import", "--quiet"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = import.stdin.take().unwrap();
        stdin.write_all(stream.as_bytes()).unwrap();
    }
    assert!(import.wait().unwrap().success());
    sb.git(&imported, &["reset", "-q", "--hard", "main"]);
    for repo in [&dir, &imported] {
        let (deltas, loose) = deltified_trees_and_loose(&sb, repo);
        assert!(deltas > 5, "{deltas} deltified trees in {repo:?}");
        assert_eq!(loose, 0, "every object packed in {repo:?}");
    }
    let plain = &graph_modes()[1];
    // No delta-base cache, and one too small to hold a chain.
    for (repo, cache) in [
        (&dir, None),
        (&imported, None),
        (&imported, Some("0")),
        (&imported, Some("300")),
    ] {
        if let Some(limit) = cache {
            sb.git(repo, &["config", "core.deltaBaseCacheLimit", limit]);
        }
        let brief = sb.git(
            repo,
            &[
                "log",
                "-1",
                "--format=%H",
                "--grep=^noise before the brief$",
                "main",
            ],
        );
        let brief = brief.trim();
        assert_eq!(brief.len(), 40, "the brief's commit in {repo:?}");
        sb.put_brief(repo, "k", brief, PATHS, Some("1 file changed"));
        write_graph(&sb, repo, plain);
        let ours = our_counts(&sb, repo);
        for path in PATHS {
            let (count, differs) = git_count(&sb, repo, brief, path);
            let got = ours.get(*path).copied();
            let expected = differs.then_some(count as u64);
            assert_eq!(got, expected, "{path} in {repo:?}, cache {cache:?}");
        }
    }
}

/// Issue 57: a read-first range is mapped through the diff from the
/// brief's head to the worktree. Lines that only moved are not CHANGED and
/// are shown at their new place; an edit inside makes it CHANGED, with its
/// new place; lines all deleted say so. JSON carries the new range. And
/// the header names the parts of the brief (next step, tests…) that name
/// a CHANGED file, to re-check.
#[test]
fn a_range_follows_its_lines_and_the_parts_naming_it_are_marked() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let body = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n";
    sb.commit(&repo, "t.py", body, "t");
    sb.write_brief(
        &repo,
        None,
        ["pytest passes", "fix the loop in t.py", "pytest"],
        &[
            "--read",
            "t.py:3-5=the loop",
            "--test",
            "pytest t.py=fail",
            "--no-lint",
        ],
    )
    .success();
    // Two lines inserted above: the lines moved, nothing else.
    sb.commit(&repo, "t.py", &format!("a\nb\n{body}"), "two above");
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(!out.contains("!! CHANGED"), "{out}");
    assert!(!out.contains("RE-CHECK"), "{out}");
    assert!(out.contains("- t.py:3-5 (now 5-7) — the loop\n"), "{out}");
    let v = json(&stdout(&sb.handoff(&repo, &["resume", "--json"]).success()));
    assert_eq!(v["changed_files"], serde_json::json!([]), "{v}");
    assert_eq!(
        v["moved_ranges"],
        serde_json::json!([{"path": "t.py:3-5", "now": "5-7"}]),
        "{v}"
    );
    // An uncommitted edit inside the range: CHANGED, at its new place.
    std::fs::write(repo.join("t.py"), "a\nb\nl1\nl2\nl3\nL4\nl5\nl6\nl7\nl8\n").unwrap();
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        out.contains(
            "!! CHANGED: t.py:3-5 (now 5-7) — 1 commit since the brief touched it (modified)"
        ),
        "{out}"
    );
    assert!(
        out.contains("!! RE-CHECK: the next step and the tests name a CHANGED file"),
        "{out}"
    );
    let v = json(&stdout(&sb.handoff(&repo, &["resume", "--json"]).success()));
    assert_eq!(v["changed_files"][0]["now"], "5-7", "{v}");
    assert_eq!(
        v["recheck"],
        serde_json::json!(["the next step", "the tests"]),
        "{v}"
    );
    // Every line of the range deleted.
    sb.commit(&repo, "t.py", "a\nb\nl1\nl2\nl6\nl7\nl8\n", "drop the loop");
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        out.contains(
            "!! CHANGED: t.py:3-5 (its lines were deleted) — 2 commits since the brief touched it"
        ),
        "{out}"
    );
}

/// Issue 57: when a file the brief's next step, done-when, next check,
/// tests or decisions name is CHANGED, the resume header says which of
/// those parts to re-check (not only the decisions); parts that name no
/// CHANGED file are not listed.
#[test]
fn the_header_names_the_parts_that_name_a_changed_file() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.commit(&repo, "src/auth.py", "a\n", "auth");
    sb.commit(&repo, "src/other.py", "o\n", "other");
    sb.write_brief(
        &repo,
        None,
        [
            "pytest passes",
            "fix verify() in src/auth.py",
            "pytest tests",
        ],
        &[
            "--read",
            "src/auth.py=the bug",
            "--read",
            "src/other.py=context",
            "--decision",
            "keep auth.py's API — callers rely on it",
            "--decision",
            "no new dependency — policy",
            "--no-lint",
        ],
    )
    .success();
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(!out.contains("RE-CHECK"), "{out}");
    sb.commit(&repo, "src/auth.py", "b\n", "auth changed");
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        out.contains("!! RE-CHECK: the next step and the decisions name a CHANGED file"),
        "{out}"
    );
    let v = json(&stdout(&sb.handoff(&repo, &["resume", "--json"]).success()));
    assert_eq!(
        v["recheck"],
        serde_json::json!(["the next step", "the decisions"])
    );
}

/// A brief (key `auth`, not the branch's) whose next step and decisions
/// name src/auth.py, committed over since: the fixture of the RE-CHECK
/// line's renders for a model.
fn auth_changed(sb: &Sandbox) -> std::path::PathBuf {
    let repo = sb.repo("r");
    sb.commit(&repo, "src/auth.py", "a\n", "auth");
    sb.write_brief(
        &repo,
        Some("auth"),
        [
            "pytest passes",
            "fix verify() in src/auth.py",
            "pytest tests",
        ],
        &[
            "--read",
            "src/auth.py=the bug",
            "--decision",
            "keep auth.py's API — callers rely on it",
            "--no-lint",
        ],
    )
    .success();
    sb.commit(&repo, "src/auth.py", "b\n", "auth changed");
    repo
}

const RECHECK: &str = "!! RE-CHECK: the next step and the decisions name a CHANGED file";

/// Issue 57: the MCP `resume` result carries the RE-CHECK line too,
/// outside the marked block, after the CHANGED warning.
#[tokio::test]
async fn the_mcp_resume_says_which_parts_to_re_check() {
    let sb = Sandbox::new();
    let repo = auth_changed(&sb);
    let client = crate::mcp::connect(&sb, &repo, &[]).await;
    let result = crate::mcp::call(&client, "resume", serde_json::json!({})).await;
    let text = crate::mcp::text(&result);
    let line = text.find(RECHECK).expect(&text);
    assert!(
        text.find("!! CHANGED: src/auth.py").expect(&text) < line,
        "{text}"
    );
    assert!(line < text.find("--- BEGIN BRIEF").expect(&text), "{text}");
    client.cancel().await.ok();
}

/// Issue 57: the SessionStart hook's context (after /clear, the only
/// brief, not this session's: drift measured in full) carries the RE-CHECK
/// line too, with the warnings before the marked block.
#[test]
fn the_session_start_context_says_which_parts_to_re_check() {
    let sb = Sandbox::new();
    let repo = auth_changed(&sb);
    let out = sb
        .handoff_with(
            &repo,
            &["hook", "session-start"],
            Some(r#"{"source":"clear","session_id":"s"}"#),
        )
        .success();
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let context = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    let line = context.find(RECHECK).expect(context);
    assert!(
        line < context.find("--- BEGIN BRIEF").expect(context),
        "{context}"
    );
}
