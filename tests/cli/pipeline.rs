//! `pipeline save|list|show`, end to end in real repositories.

use crate::support::*;
use serde_json::Value;

const TEMPLATE: &str = "# Pipeline: review fan-out

## When to use
A change touches several modules and each needs its own review.

## Decomposition axis
module

## Stages
### 1. Review each module
- run: parallel
- role: one read-only reviewer subagent per module
- brief contract: gets the module's diff; returns findings with file:line

### 2. Fix
- run: sequential
- role: the lead session
- brief contract: gets all findings; returns commits

## Synthesis
The lead merges findings, dedupes them and re-runs the full test suite.
";

#[test]
fn save_list_and_show_round_trip() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.handoff(&repo, &["pipeline", "list"])
        .success()
        .stdout(predicates::str::contains("No pipeline templates yet"));
    let out = sb
        .handoff_with(
            &repo,
            &["pipeline", "save", "review-fanout", "-F", "-"],
            Some(TEMPLATE),
        )
        .success();
    assert_eq!(
        stdout(&out),
        "Pipeline 'review-fanout' saved: .claude/pipelines/review-fanout.md\n"
    );
    let path = repo.join(".claude/pipelines/review-fanout.md");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), TEMPLATE);
    assert!(
        !repo
            .join(".claude/pipelines/review-fanout.md.lock")
            .exists()
    );

    // Without -F, a valid skeleton.
    sb.handoff(&repo, &["pipeline", "save", "blank"]).success();
    let skeleton = std::fs::read_to_string(repo.join(".claude/pipelines/blank.md")).unwrap();
    for section in [
        "## When to use",
        "## Decomposition axis",
        "## Stages",
        "## Synthesis",
    ] {
        assert!(skeleton.contains(section), "{skeleton}");
    }

    let listed = stdout(&sb.handoff(&repo, &["pipeline", "list"]).success());
    assert_eq!(
        listed,
        "blank          <one line: the kind of task this decomposition fits>\n\
         review-fanout  A change touches several modules and each needs its own review.\n"
    );
    let rows: Value = serde_json::from_str(&stdout(
        &sb.handoff(&repo, &["pipeline", "list", "--json"]).success(),
    ))
    .unwrap();
    assert_eq!(rows[1]["name"], "review-fanout");
    assert_eq!(rows[1]["path"], ".claude/pipelines/review-fanout.md");

    sb.handoff(&repo, &["pipeline", "show", "review-fanout"])
        .success()
        .stdout(TEMPLATE);
    let shown: Value = serde_json::from_str(&stdout(
        &sb.handoff(&repo, &["pipeline", "show", "review-fanout", "--json"])
            .success(),
    ))
    .unwrap();
    assert_eq!(shown["markdown"], TEMPLATE);
    assert_eq!(shown["problems"], serde_json::json!([]));

    // Saving the same text again is a no-op; other text needs --force.
    sb.handoff_with(
        &repo,
        &["pipeline", "save", "review-fanout", "-F", "-"],
        Some(TEMPLATE),
    )
    .success()
    .stdout(predicates::str::contains("unchanged"));
    let changed = TEMPLATE.replace("module\n", "concern\n");
    sb.handoff_with(
        &repo,
        &["pipeline", "save", "review-fanout", "-F", "-"],
        Some(&changed),
    )
    .code(1)
    .stderr(predicates::str::contains("pass --force to replace it"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), TEMPLATE);
    sb.handoff_with(
        &repo,
        &["pipeline", "save", "review-fanout", "-F", "-", "--force"],
        Some(&changed),
    )
    .success()
    .stdout(predicates::str::contains("replaced"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), changed);
    sb.handoff(&repo, &["pipeline", "show", "nope"])
        .code(1)
        .stderr(predicates::str::contains("no pipeline template 'nope'"));
}

#[test]
fn templates_live_in_the_current_worktree() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let wt = sb.worktree(&repo, "wt", "x");
    sb.handoff_with(&wt, &["pipeline", "save", "p", "-F", "-"], Some(TEMPLATE))
        .success();
    assert!(wt.join(".claude/pipelines/p.md").exists());
    assert!(!repo.join(".claude").exists());
}

#[test]
fn an_invalid_template_lists_every_problem_and_writes_nothing() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let bad = "## When to use\nalways\n\n## Decomposition axis\nconcern and module\n\n## Stages\n### Only\n- run: whenever\n";
    let out = sb
        .handoff_with(&repo, &["pipeline", "save", "bad", "-F", "-"], Some(bad))
        .code(1);
    let err = stderr(&out);
    for needle in [
        "handoff-pipeline: INVALID",
        "  - '## Decomposition axis' must name exactly one axis: concern, module or stage (it names concern, module)",
        "  - missing section '## Synthesis'",
        "  - stage 'Only': run: 'whenever' must be parallel, sequential or background",
        "  - stage 'Only': missing 'role: …'",
        "  - stage 'Only': missing 'brief contract: …'",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in {err}");
    }
    assert!(
        err.lines()
            .last()
            .unwrap()
            .starts_with("error: template 'bad' is invalid")
    );
    assert!(!repo.join(".claude").exists());
}

#[test]
fn names_that_could_leave_the_folder_are_refused() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    for name in [
        "../escape",
        "../../etc/x",
        "a/b",
        "..",
        "x..y",
        ".hidden",
        "-dash",
        "a\\b",
        "x.md",
        "",
        "with space",
    ] {
        // `--` keeps names like -dash positional.
        for full in [
            vec!["pipeline", "save", "-F", "-", "--", name],
            vec!["pipeline", "show", "--", name],
        ] {
            let out = sb.handoff_with(&repo, &full, Some(TEMPLATE)).code(1);
            let err = stderr(&out);
            assert!(
                err.starts_with("error: invalid pipeline name"),
                "{name:?}: {err}"
            );
            assert_eq!(err.lines().count(), 1, "{err}");
        }
    }
    assert!(!repo.join(".claude").exists());
    assert!(!sb.path("escape.md").exists());
    assert!(!sb.path("r/escape.md").exists());
}

#[cfg(unix)]
#[test]
fn a_symlinked_pipelines_folder_pointing_outside_is_refused() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let outside = sb.path("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(repo.join(".claude")).unwrap();
    std::os::unix::fs::symlink(&outside, repo.join(".claude/pipelines")).unwrap();
    sb.handoff_with(&repo, &["pipeline", "save", "p", "-F", "-"], Some(TEMPLATE))
        .code(1)
        .stderr(predicates::str::contains("resolves outside the worktree"));
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
}
