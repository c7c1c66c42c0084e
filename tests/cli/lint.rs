//! lint: one brief that trips each rule and a near-miss that does not.

use crate::support::*;
use serde_json::{Value, json};

fn base() -> Value {
    json!({"resume": {"done_when": "cargo test auth passes", "resume_by": "add leeway to verify()"},
           "state": {"next_acceptance_check": "cargo test auth::expiry", "decisions": ["use <= not < — the expiry second is still valid"],
                     "rejected_paths": ["< operator (off by one)"]},
           "files_read_first": [{"path": "src/auth.rs:1-3", "why": "under repair"}]})
}

fn lint(sb: &Sandbox, dir: &std::path::Path, brief: &Value) -> Vec<String> {
    let out = sb
        .handoff_with(
            dir,
            &["lint", "-F", "-", "--json"],
            Some(&brief.to_string()),
        )
        .success();
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} {}",
                f["rule"].as_str().unwrap(),
                f["field"].as_str().unwrap()
            )
        })
        .collect()
}

fn repo(sb: &Sandbox) -> std::path::PathBuf {
    let repo = sb.repo("r");
    sb.commit(
        &repo,
        "src/auth.rs",
        "fn verify(exp: u64, now: u64) -> bool {\n    now < exp\n}\n",
        "auth",
    );
    repo
}

#[test]
fn the_readme_example_is_clean() {
    let sb = Sandbox::new();
    let repo = repo(&sb);
    assert_eq!(lint(&sb, &repo, &base()), Vec::<String>::new());
    let out = sb
        .handoff_with(
            &repo,
            &["lint", "-F", "-"],
            Some(&EXAMPLE.replace("src/auth.rs", "src/auth.rs:1-3")),
        )
        .success();
    assert_eq!(stdout(&out), "lint: no findings\n");
}

/// A change to a brief.
type Edit = Box<dyn Fn(&mut Value)>;

#[test]
fn each_rule_and_its_near_miss() {
    let sb = Sandbox::new();
    let repo = repo(&sb);
    let cases: Vec<(&str, Edit, Edit)> = vec![
        (
            "vague-check resume.done_when",
            Box::new(|b| b["resume"]["done_when"] = json!("tests pass")),
            Box::new(|b| b["resume"]["done_when"] = json!("the auth tests pass: cargo test auth")),
        ),
        (
            "vague-check state.next_acceptance_check",
            Box::new(|b| b["state"]["next_acceptance_check"] = json!("continue the work")),
            Box::new(|b| b["state"]["next_acceptance_check"] = json!("GET /health returns 200")),
        ),
        (
            "inlined-content state.decisions[0]",
            Box::new(|b| b["state"]["decisions"][0] = json!("```rust\nfn x() {}\n``` — one clock")),
            Box::new(|b| b["state"]["decisions"][0] = json!("use `<=` in verify() — one clock")),
        ),
        (
            "inlined-content state.open_risks[0]",
            Box::new(|b| b["state"]["open_risks"] = json!(["a\nb\nc\nd\ne\nf\ng\nh\ni\nj"])),
            Box::new(|b| b["state"]["open_risks"] = json!(["two\nlines"])),
        ),
        (
            "inlined-content state.decisions[0]",
            Box::new(|b| {
                b["state"]["decisions"][0] = json!(
                    "keep verify — it reads:\nfn verify(exp: u64, now: u64) -> bool {\n    now < exp\n}"
                )
            }),
            Box::new(|b| {
                b["state"]["decisions"][0] =
                    json!("verify() compares now < exp — as the tests expect")
            }),
        ),
        (
            "no-rejected-paths state.rejected_paths",
            Box::new(|b| b["state"]["rejected_paths"] = json!([])),
            Box::new(|b| {
                b["state"]["rejected_paths"] = json!(["< (off by one)"]);
                b["state"]["decisions"] = json!([]);
            }),
        ),
        // Issue 16: a brief with neither decisions nor rejected paths no
        // longer passes — rejected paths are the highest-ROI entry.
        (
            "no-rejected-paths state.rejected_paths",
            Box::new(|b| {
                b["state"]["rejected_paths"] = json!([]);
                b["state"]["decisions"] = json!([]);
            }),
            Box::new(|b| b["state"]["decisions"] = json!([])),
        ),
        (
            "over-long state.decisions",
            Box::new(|b| {
                b["state"]["decisions"] =
                    json!((0..13).map(|i| format!("d{i} — w")).collect::<Vec<_>>())
            }),
            Box::new(|b| {
                b["state"]["decisions"] =
                    json!((0..12).map(|i| format!("d{i} — w")).collect::<Vec<_>>())
            }),
        ),
        // Issue 34, item 9: a decision without a why is named; the
        // separators people write are all understood.
        (
            "decision-without-why state.decisions[0]",
            Box::new(|b| b["state"]["decisions"][0] = json!("Operator is <=")),
            Box::new(|b| {
                b["state"]["decisions"] = json!([
                    "Operator is <= - because the expiry second is valid",
                    "B: because b",
                    "C (because c)",
                    "D -- d"
                ])
            }),
        ),
        (
            "dangling-pointer files_read_first[0].path",
            Box::new(|b| b["files_read_first"][0]["path"] = json!("src/auht.rs")),
            Box::new(|b| b["files_read_first"][0]["path"] = json!("src/auth.rs")),
        ),
        (
            "dangling-pointer files_read_first[0].path",
            Box::new(|b| b["files_read_first"][0]["path"] = json!("src/auth.rs:1-900")),
            Box::new(|b| b["files_read_first"][0]["path"] = json!("src/auth.rs:2-3")),
        ),
        (
            "dangling-pointer files_read_first[0].path",
            Box::new(|b| b["files_read_first"][0]["path"] = json!("../outside.rs")),
            Box::new(|b| b["files_read_first"][0]["path"] = json!("src/")),
        ),
        (
            "placeholder state.open_risks[0]",
            Box::new(|b| b["state"]["open_risks"] = json!(["none"])),
            Box::new(|b| {
                b["state"]["open_risks"] = json!(["none of the fixtures cover leap seconds"])
            }),
        ),
        (
            "placeholder resume.prompt",
            Box::new(|b| b["resume"]["prompt"] = json!("TBD")),
            Box::new(|b| b["resume"]["prompt"] = json!("Start with src/auth.rs.")),
        ),
        (
            "secret state.commands[0]",
            Box::new(|b| {
                b["state"]["commands"] =
                    json!(["export GITHUB_TOKEN=ghp_a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5"])
            }),
            Box::new(|b| b["state"]["commands"] = json!(["export GITHUB_TOKEN=$(pass show gh)"])),
        ),
    ];
    for (expected, bad, near) in cases {
        let mut b = base();
        bad(&mut b);
        assert_eq!(
            lint(&sb, &repo, &b),
            [expected],
            "bad example for {expected}"
        );
        let mut n = base();
        near(&mut n);
        assert_eq!(
            lint(&sb, &repo, &n),
            Vec::<String>::new(),
            "near-miss for {expected}"
        );
    }
}

#[test]
fn a_file_deleted_from_the_worktree_but_at_head_is_not_dangling() {
    let sb = Sandbox::new();
    let repo = repo(&sb);
    std::fs::remove_file(repo.join("src/auth.rs")).unwrap();
    let mut b = base();
    b["files_read_first"][0]["path"] = json!("src/auth.rs");
    assert_eq!(lint(&sb, &repo, &b), Vec::<String>::new());
}

#[test]
fn an_over_long_render_is_reported() {
    let sb = Sandbox::new();
    let repo = repo(&sb);
    let mut b = base();
    // 9 lists of 12 entries, each two lines… a render of over 200 lines
    for list in ["decisions", "rejected_paths", "open_risks", "commands"] {
        b["state"][list] = json!((0..12).map(|i| format!("{list} {i}")).collect::<Vec<_>>());
    }
    b["state"]["tests"] = json!(
        (0..12)
            .map(|i| json!({"cmd": format!("cargo test t{i}"), "result": "pass"}))
            .collect::<Vec<_>>()
    );
    b["files_skip"] = json!(
        (0..12)
            .map(|_| json!({"path": "src/auth.rs", "why": "x"}))
            .collect::<Vec<_>>()
    );
    for key in ["schema_version", "key", "timestamp", "mode"] {
        b[key] = json!(match key {
            "schema_version" => "1",
            "key" => "k",
            "timestamp" => "2026-01-01T00:00:00Z",
            _ => "WRITE",
        });
    }
    b["state"]["branch"] = json!("main");
    b["state"]["worktree"] =
        json!({"root": repo.display().to_string(), "is_linked": false, "git_common_dir": "/x"});
    b["resume"]["prompt"] = json!(
        (0..120)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let found = lint(&sb, &repo, &b);
    assert!(
        found.contains(&"over-long (brief)".to_string()),
        "{found:?}"
    );
}

#[test]
fn strict_turns_warnings_into_errors() {
    let sb = Sandbox::new();
    let repo = repo(&sb);
    let mut b = base();
    b["resume"]["done_when"] = json!("finish");
    let out = sb
        .handoff_with(&repo, &["lint", "-F", "-"], Some(&b.to_string()))
        .success();
    assert!(
        stderr(&out)
            .starts_with("warning: resume.done_when: vague-check: 'finish' names no command"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("; fix: "));
    let out = sb
        .handoff_with(
            &repo,
            &["lint", "-F", "-", "--strict"],
            Some(&b.to_string()),
        )
        .code(1);
    assert!(
        stderr(&out).starts_with("error: resume.done_when: vague-check"),
        "{}",
        stderr(&out)
    );
    sb.git(&repo, &["config", "handoff.strict", "true"]);
    sb.handoff_with(&repo, &["lint", "-F", "-"], Some(&b.to_string()))
        .code(1);
    // a stored brief
    sb.git(&repo, &["config", "handoff.strict", "false"]);
    sb.handoff_with(&repo, &["write", "-F", "-"], Some(&base().to_string()))
        .success();
    sb.handoff(&repo, &["lint"])
        .success()
        .stdout("lint: no findings\n");
}

#[test]
fn every_rule_is_documented_with_examples() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/redaction.md")).unwrap();
    for (name, _, bad, good) in git_handoff::lint::RULES {
        assert!(readme.contains(&format!("| `{name}` |")), "{name}");
        assert!(
            readme.contains(bad) && readme.contains(good),
            "{name}: examples missing from docs/redaction.md"
        );
    }
}

#[test]
fn invalid_json_is_a_refusal_as_validate_and_write_answer_it() {
    let sb = Sandbox::new();
    let repo = repo(&sb);
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let inputs: [(&str, Vec<u8>); 4] = [
        ("truncated", b"{\"resume\":".to_vec()),
        ("not UTF-8", b"{\"resume\": \"\xff\xfe\"}".to_vec()),
        ("too deep", deep.into_bytes()),
        ("not an object", b"[1]".to_vec()),
    ];
    for (what, bytes) in inputs {
        let file = sb.path("input.json");
        std::fs::write(&file, &bytes).unwrap();
        let mut commands = vec![vec!["lint", "-F", file.to_str().unwrap()]];
        if what != "not an object" {
            // validate lists a schema issue per line for a non-object
            commands.push(vec!["validate", file.to_str().unwrap()]);
        }
        for args in commands {
            let out = sb.handoff(&repo, &args).code(1);
            let err = stderr(&out);
            assert_eq!(err.lines().count(), 1, "{what}, {args:?}: {err}");
            assert!(err.starts_with("error: "), "{what}, {args:?}: {err}");
        }
    }
}
