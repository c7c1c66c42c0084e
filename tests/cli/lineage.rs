//! The version graph (issue 47 A): "R fast-forwards L" means L is an
//! ancestor of R among the versions each was written on top of, never
//! that L's history line is reachable (every pushed line, a diverged
//! one's included, is merged everywhere). Each test is a case that
//! replaced a teammate's brief silently before.

use std::path::Path;

use crate::support::*;

const T1: &str = "2026-11-30T09:00:00Z";

/// B writes v1 and pushes; A writes v2 without fetching (its push says
/// diverged but sends its history); B writes v3 and v4, pushing each
/// (merging A's history on the way). A fetch in A must still say
/// diverged: v4 is not written on top of v2.
fn rival_line_merged_in() -> (Team, [String; 4]) {
    let t = team();
    let v1 = t.write(&t.b, "k", T1, "b v1");
    t.run(&t.b, &["push"]).success();
    let v2 = t.write(&t.a, "k", T2, "a v2");
    let out = t.run(&t.a, &["push"]).code(1);
    assert_stdout_has(&out, "diverged, not pushed: k (");
    // The history line does not read as the brief's success.
    assert_stdout_has(&out, "history: push (fast-forward; the lineage only");
    // The staged history the push moved is its own: the next command
    // does not report the divergence again as news `git fetch` brought.
    let next = t.run(&t.a, &["show", "k"]).success();
    assert!(!stderr(&next).contains("diverged"), "{}", stderr(&next));
    let v3 = t.write(&t.b, "k", T3, "b v3");
    t.run(&t.b, &["push"]).success();
    let v4 = t.write(&t.b, "k", T4, "b v4");
    t.run(&t.b, &["push"]).success();
    assert_eq!(t.remote_id("k").as_deref(), Some(v4.as_str()));
    (t, [v1, v2, v3, v4])
}

/// A push that sends one key while another stays diverged moves the
/// staging of both the sent key and the history: the next command takes
/// nothing and repeats no warning. What a plain `git fetch` brings after
/// it is news again.
#[test]
fn a_push_beside_a_diverged_key_leaves_nothing_to_take_again() {
    let t = team();
    t.sb.handoff(&t.a, &["init"]).success();
    t.write(&t.b, "k", T1, "b v1");
    t.run(&t.b, &["push"]).success();
    t.write(&t.a, "k", T2, "a v2");
    let j1 = t.write(&t.a, "j", T2, "a j1");
    let out = t.run(&t.a, &["push"]).code(1);
    assert_stdout_has(&out, "diverged, not pushed: k (");
    assert_eq!(t.remote_id("j").as_deref(), Some(j1.as_str()));
    let next = t.run(&t.a, &["show", "j"]).success();
    assert_eq!(stderr(&next), "");
    t.run(&t.b, &["fetch"]).success();
    let j2 = t.write(&t.b, "j", T3, "b j2");
    t.run(&t.b, &["push"]).success();
    t.sb.git(&t.a, &["fetch", "-q"]);
    let next = t.run(&t.a, &["show", "j"]).success();
    assert!(
        stderr(&next).contains("`git fetch` brought from 'origin': j (updated: "),
        "{}",
        stderr(&next)
    );
    assert_eq!(t.brief_id(&t.a, "j").as_deref(), Some(j2.as_str()));
}

#[test]
fn a_rival_line_merged_into_the_history_is_no_fast_forward() {
    let (t, [_, v2, _, v4]) = rival_line_merged_in();
    for _ in 0..2 {
        let out = t.run(&t.a, &["fetch"]).code(1);
        assert_stdout_has(&out, "  diverged: k (local ");
        assert_eq!(t.brief_id(&t.a, "k").as_deref(), Some(v2.as_str()));
    }
    // A third clone that writes after merging both histories does no
    // better: its write is on top of v4 only.
    let c = t.clone_as("C");
    t.run(&c, &["fetch"]).success();
    assert_eq!(t.brief_id(&c, "k").as_deref(), Some(v4.as_str()));
    let v5 = t.write(&c, "k", "2026-11-30T13:00:00Z", "c v5");
    t.run(&c, &["push"]).success();
    let out = t.run(&t.a, &["fetch"]).code(1);
    assert_stdout_has(&out, "  diverged: k (local ");
    assert_eq!(t.brief_id(&t.a, "k").as_deref(), Some(v2.as_str()));
    assert_eq!(t.remote_id("k").as_deref(), Some(v5.as_str()));
    // `list` and the overview mark the key.
    let out = t.run(&t.a, &["list"]).success();
    assert!(
        stdout(&out).contains("[diverged: origin]"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_kept_brief_is_not_fast_forwarded_by_a_write_that_never_saw_the_resolve() {
    let (t, [_, v2, _, _]) = rival_line_merged_in();
    t.run(&t.a, &["fetch"]).code(1);
    t.run(&t.a, &["resolve", "k", "--keep-local"]).success();
    // The teammate writes once more without fetching the resolve.
    let v5 = t.write(&t.b, "k", "2026-11-30T13:00:00Z", "b v5");
    t.run(&t.b, &["push"]).success();
    let out = t.run(&t.a, &["push"]).code(1);
    assert_stdout_has(&out, "diverged, not pushed: k (");
    assert_eq!(t.remote_id("k").as_deref(), Some(v5.as_str()));
    assert_eq!(t.brief_id(&t.a, "k").as_deref(), Some(v2.as_str()));
}

#[test]
fn a_resolve_is_a_version_on_top_of_both_sides() {
    let (t, [_, v2, _, v4]) = rival_line_merged_in();
    t.run(&t.a, &["fetch"]).code(1);
    t.run(&t.a, &["resolve", "k", "--keep-local"]).success();
    t.run(&t.a, &["push"]).success();
    assert_eq!(t.remote_id("k").as_deref(), Some(v2.as_str()));
    // B, at v4, fast-forwards to the kept version: it names v4 as a parent.
    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(&out, "fast-forwarded: k");
    assert_eq!(t.brief_id(&t.b, "k").as_deref(), Some(v2.as_str()));
    // B's own version stays in its history.
    assert!(t.log_ids(&t.b, "k").contains(&v4));
}

/// Three clones: C writes R and pushes; A, which never fetched the key,
/// wrote L. A's first fetch merges R's history line into A's history; a
/// later write in A is on top of L only, so A's push must not call it
/// ahead of R, and C's fetch must keep R.
#[test]
fn siblings_stay_diverged_after_one_side_merged_the_others_history() {
    let t = team();
    let c = t.clone_as("C");
    t.write(&t.a, "k", T1, "a's line");
    let r = t.write(&c, "k", T2, "c's line");
    t.run(&c, &["push"]).success();
    let out = t.run(&t.a, &["fetch"]).code(1);
    assert_stdout_has(&out, "  diverged: k (local ");
    let l2 = t.write(&t.a, "k", T3, "a's line, again");
    let out = t.run(&t.a, &["push"]).code(1);
    assert_stdout_has(&out, "diverged, not pushed: k (");
    assert_eq!(t.remote_id("k").as_deref(), Some(r.as_str()));
    t.run(&c, &["fetch"]).success();
    assert_eq!(t.brief_id(&c, "k").as_deref(), Some(r.as_str()));
    assert_eq!(t.brief_id(&t.a, "k").as_deref(), Some(l2.as_str()));
    // B, a bystander that fetches, takes neither side's line for the other.
    t.run(&t.b, &["fetch"]).success();
    assert_eq!(t.brief_id(&t.b, "k").as_deref(), Some(r.as_str()));
}

#[test]
fn a_write_on_a_diverged_key_stays_diverged_and_says_so() {
    let t = team();
    t.write(&t.a, "k", T1, "v0");
    t.run(&t.a, &["push"]).success();
    t.run(&t.b, &["fetch"]).success();
    let theirs = t.write(&t.a, "k", T2, "a's");
    t.run(&t.a, &["push"]).success();
    t.write(&t.b, "k", T3, "b's");
    t.run(&t.b, &["fetch"]).code(1);
    // One more write in B: warned at write time, still not pushed.
    let out =
        t.sb.write_brief_at(&t.b, T4, Some("k"), ["b's again", "r", "c"], &["--no-lint"])
            .success();
    assert!(
        stderr(&out).contains("warning: 'k' is still diverged from 'origin'"),
        "{}",
        stderr(&out)
    );
    let out = t.run(&t.b, &["push"]).code(1);
    assert_stdout_has(&out, "diverged, not pushed: k (");
    assert_eq!(t.remote_id("k").as_deref(), Some(theirs.as_str()));
    let out = t.run(&t.b, &["list"]).success();
    assert!(
        stdout(&out).contains("[diverged: origin]"),
        "{}",
        stdout(&out)
    );
    // resume says so every time, first thing to act on.
    for _ in 0..2 {
        let out = t.run(&t.b, &["resume", "k"]).success();
        assert!(
            stdout(&out).contains("!! DIVERGED: 'k' has diverged from 'origin'"),
            "{}",
            stdout(&out)
        );
    }
    // The overview names it too, with the command that ends it (the only
    // brief here, so it shows it as resume does).
    let out = t.run(&t.b, &[]).success();
    assert!(
        stdout(&out).contains("!! DIVERGED: 'k' has diverged from 'origin' (")
            && stdout(&out).contains("`git handoff resolve k --merge` merges them"),
        "{}",
        stdout(&out)
    );
}

/// What a newer git-handoff writes: `key`'s brief in `dir` with
/// `schema_version` set to `schema` and, when given, a field this version
/// does not know. Stored as a blob; its id.
fn newer_brief(t: &Team, dir: &Path, key: &str, schema: &str, extra: Option<&str>) -> String {
    let current =
        t.sb.git(dir, &["cat-file", "-p", &format!("refs/handoffs/{key}")]);
    let mut brief: serde_json::Value = serde_json::from_str(&current).unwrap();
    brief["schema_version"] = schema.into();
    if let Some(field) = extra {
        brief["state"][field] = "high".into();
    }
    let path = t.sb.path(&format!("{key}-newer.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&brief).unwrap() + "\n").unwrap();
    t.sb.git(dir, &["hash-object", "-w", path.to_str().unwrap()])
        .trim()
        .to_string()
}

#[test]
fn a_newer_git_handoffs_brief_is_carried_never_replaced() {
    for (schema, extra, shown) in [("2", None, "schema 2"), ("1", Some("priority"), "schema 1")] {
        let t = team();
        t.write(&t.a, "k", T1, "v1");
        t.run(&t.a, &["push"]).success();
        t.run(&t.b, &["fetch"]).success();
        // B runs a newer git-handoff: its brief lands on the remote.
        let newer = newer_brief(&t, &t.b, "k", schema, extra);
        t.sb.git(&t.b, &["update-ref", "refs/handoffs/k", &newer]);
        t.sb.git(
            &t.b,
            &["push", "-q", "--force", "origin", "refs/handoffs/k"],
        );
        // A wrote on; its push never replaces the newer brief.
        let mine = t.write(&t.a, "k", T2, "v2");
        let out = t.run(&t.a, &["push"]);
        let text = stdout(&out);
        assert!(
            text.contains(&format!("newer git-handoff ({shown})")),
            "{text}"
        );
        assert_eq!(t.remote_id("k").as_deref(), Some(newer.as_str()));
        // A fetch names it and takes nothing.
        let out = t.run(&t.a, &["fetch"]).success();
        assert_stdout_has(
            &out,
            &format!(
                "newer: k ('origin' holds {}, written by a newer git-handoff ({shown}): upgrade to read it",
                &newer[..7]
            ),
        );
        assert_eq!(t.brief_id(&t.a, "k").as_deref(), Some(mine.as_str()));
        // Dropped here, a prune does not delete it there.
        t.run(&t.a, &["drop", "k"]).success();
        t.run(&t.a, &["push", "--prune"]);
        assert_eq!(t.remote_id("k").as_deref(), Some(newer.as_str()));
        // Where it is the local brief, every command says what it is and
        // a write of this version refuses to replace it.
        let out = t.run(&t.b, &["resume", "k"]).code(128);
        assert_stderr_has(
            &out,
            &format!("written by a newer git-handoff ({shown}): upgrade to read it"),
        );
        let out =
            t.sb.write_brief(&t.b, Some("k"), ["d", "r", "c"], &["--no-lint"])
                .code(1);
        assert_stderr_has(
            &out,
            &format!(
                "brief 'k' was written by a newer git-handoff ({shown}): upgrade to write over it"
            ),
        );
        assert_eq!(t.brief_id(&t.b, "k").as_deref(), Some(newer.as_str()));
        // B's own push leaves it too.
        t.run(&t.b, &["push"]);
        assert_eq!(t.remote_id("k").as_deref(), Some(newer.as_str()));
    }
}

/// The version graph, the staging namespace and the divergence record in
/// SHA-256 repositories: lineage lines hold 64-digit ids, a diverged key
/// is reported until resolved, the resolve fast-forwards the teammate,
/// and a plain `git fetch` after `init` stages what the next command takes.
#[test]
fn the_version_graph_and_staging_work_in_sha256() {
    let t = team_in("sha256");
    assert_eq!(
        t.sb.git(&t.a, &["rev-parse", "--show-object-format"])
            .trim(),
        "sha256"
    );
    let v1 = t.write(&t.a, "k", T1, "a v1");
    assert_eq!(v1.len(), 64);
    t.run(&t.a, &["push"]).success();
    t.run(&t.b, &["fetch"]).success();
    let va = t.write(&t.a, "k", T2, "a v2");
    let vb = t.write(&t.b, "k", T3, "b v3");
    t.run(&t.a, &["push"]).success();
    for _ in 0..2 {
        let out = t.run(&t.b, &["fetch"]).code(1);
        assert_stdout_has(&out, "  diverged: k (local ");
        assert_eq!(t.brief_id(&t.b, "k").as_deref(), Some(vb.as_str()));
    }
    let lineage = t.sb.git(&t.b, &["log", "--notes=handoffs", "--format=%N"]);
    // Each version is named by a 64-digit id that binds its brief and its
    // parents: vb's parent is v1's version, not v1's blob.
    let version_of = |blob: &str| {
        let line = lineage
            .lines()
            .find(|l| l.contains(&format!("\"brief\":\"{blob}\"")))
            .unwrap_or_else(|| panic!("no lineage line for {blob}: {lineage}"));
        line[12..76].to_string()
    };
    let (v1_version, vb_version) = (version_of(&v1), version_of(&vb));
    assert!(
        v1_version.bytes().all(|b| b.is_ascii_hexdigit()),
        "{lineage}"
    );
    assert_ne!(v1_version, v1);
    assert!(
        lineage.contains(&format!("\"parents\":[\"{v1_version}\"]")),
        "{lineage}"
    );
    assert_ne!(vb_version, v1_version);
    t.run(&t.b, &["resolve", "k", "--keep-local"]).success();
    t.run(&t.b, &["push"]).success();
    assert_eq!(t.remote_id("k").as_deref(), Some(vb.as_str()));
    // A takes the kept version: it is on top of A's.
    t.run(&t.a, &["init"]).success();
    t.sb.git(&t.a, &["fetch", "-q", "origin"]);
    let out = t.run(&t.a, &["list"]).success();
    assert!(stderr(&out).contains("k (updated: "), "{}", stderr(&out));
    assert_eq!(t.brief_id(&t.a, "k").as_deref(), Some(vb.as_str()));
    assert_ne!(va, vb);
}
