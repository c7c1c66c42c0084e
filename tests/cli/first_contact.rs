//! First contact: what a session that knows nothing meets first — in a
//! teammate's fresh clone, whose remote's briefs were never fetched.

use crate::support::*;

#[test]
fn a_fresh_clone_says_how_to_get_the_team_s_briefs_not_to_write_one() {
    let t = team();
    t.sb.write_brief(
        &t.a,
        Some("feat"),
        ["cargo test passes", "go on", "cargo test"],
        &[],
    )
    .success();
    t.sb.handoff(&t.a, &["push"]).success();
    // B cloned before any brief existed: like a fresh clone, it has none.
    let fetch_hint = "`git handoff fetch` brings them";
    let out = stdout(&t.sb.handoff(&t.b, &["list"]).success());
    assert!(
        out.contains("never fetched") && out.contains(fetch_hint),
        "{out}"
    );
    assert!(
        !out.starts_with("No briefs yet; `git handoff write` creates one."),
        "{out}"
    );
    let out = stdout(&t.sb.handoff(&t.b, &[]).success());
    assert!(out.contains("get them with: git handoff fetch"), "{out}");
    let out = t.sb.handoff(&t.b, &["resume"]).code(1);
    assert!(
        stderr(&out).contains("`git handoff fetch` brings them"),
        "{}",
        stderr(&out)
    );
    let out = t.sb.handoff(&t.b, &["resume", "feat"]).code(1);
    assert!(
        stderr(&out).contains("were never fetched: `git handoff fetch` brings the team's briefs"),
        "{}",
        stderr(&out)
    );
    let input = format!(
        r#"{{"session_id":"s","cwd":"{}","hook_event_name":"SessionStart","source":"startup"}}"#,
        t.b.display()
    );
    let out =
        t.sb.handoff_with(&t.b, &["hook", "session-start"], Some(&input))
            .success();
    assert!(
        stdout(&out).contains("run `git handoff fetch`"),
        "{}",
        stdout(&out)
    );

    // After a fetch the advice is gone, and the brief is there.
    t.sb.handoff(&t.b, &["fetch"]).success();
    let out = stdout(&t.sb.handoff(&t.b, &["list"]).success());
    assert!(out.contains("feat"), "{out}");

    // A remote with nothing to share is not "never fetched" once fetched.
    let lone = t.sb.repo("lone");
    let empty = t.sb.path("empty.git");
    t.sb.git(
        t.sb.dir.path(),
        &["init", "-q", "--bare", empty.to_str().unwrap()],
    );
    t.sb.git(&lone, &["remote", "add", "origin", empty.to_str().unwrap()]);
    let out = stdout(&t.sb.handoff(&lone, &["list"]).success());
    assert!(out.contains("never fetched"), "{out}");
    t.sb.handoff(&lone, &["fetch"]).success();
    let out = stdout(&t.sb.handoff(&lone, &["list"]).success());
    assert_eq!(out, "No briefs yet; `git handoff write` creates one.\n");
}

#[test]
fn a_key_only_a_remote_still_has_is_offered_by_name() {
    let t = team();
    t.sb.write_brief(
        &t.a,
        Some("feat"),
        ["cargo test passes", "go on", "cargo test"],
        &[],
    )
    .success();
    t.sb.handoff(&t.a, &["push"]).success();
    t.sb.handoff(&t.b, &["fetch"]).success();
    t.sb.handoff(&t.b, &["drop", "feat"]).success();
    let out = t.sb.handoff(&t.b, &["resume", "feat"]).code(1);
    assert_eq!(
        stderr(&out),
        "error: no brief for key 'feat' here; 'origin' has one as of the last fetch: `git handoff resume feat@origin` reads it\n"
    );
    let out = stdout(&t.sb.handoff(&t.b, &["resume", "feat@origin"]).success());
    assert!(out.contains("# Resume — feat"), "{out}");
}
