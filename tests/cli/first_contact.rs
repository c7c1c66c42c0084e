//! First contact: what a session that knows nothing meets first — in a
//! teammate's fresh clone, whose remote's briefs were never fetched.

use crate::support::briefs::*;
use crate::support::*;

#[test]
fn a_fresh_clone_says_how_to_get_the_team_s_briefs_not_to_write_one() {
    let t = team();
    t.push_brief_from_a("feat", GO_ON);
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
    // Issue 57: fetch, then resume; init is offered after, not first.
    let fetch = out.find("git handoff fetch").unwrap();
    let resume = out.find("git handoff resume KEY").expect(&out);
    let init = out.find("git handoff init").expect(&out);
    assert!(fetch < resume && resume < init, "{out}");
    assert!(out.contains("After that, `git handoff init` once"), "{out}");
    assert!(!out.contains("not set up yet"), "{out}");
    // The help's recipe for a teammate's work is the same, in that order.
    let help = stdout(&t.sb.handoff(&t.b, &["help"]).success());
    let recipe = &help[help.find("Pick up a teammate's work").expect(&help)..];
    let fetch = recipe.find("git handoff fetch").unwrap();
    let resume = recipe.find("resume KEY").unwrap();
    let init = recipe.find("git handoff init").unwrap();
    assert!(fetch < resume && resume < init, "{recipe}");
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
    t.push_brief_from_a("feat", GO_ON);
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

#[test]
fn after_init_a_plain_git_fetch_brings_the_team_s_briefs_to_the_next_command() {
    let t = team();
    let v1 = t.publish_at("feat", "2026-11-30T09:00:00Z", "v1");
    t.sb.handoff(&t.b, &["init"]).success();
    t.sb.git(&t.b, &["fetch", "-q"]);
    // No `git handoff fetch`: the next reading command takes it, saying so.
    let out = t.sb.handoff(&t.b, &["list"]).success();
    assert_stdout_has(&out, "feat");
    assert_eq!(
        stderr(&out),
        "note: took 1 brief `git fetch` brought from 'origin': feat (new)\n"
    );
    assert_eq!(t.id(&t.b, "refs/handoffs/feat"), Some(v1.clone()));
    assert_eq!(
        t.id(&t.b, "refs/handoff-remotes/origin/briefs/feat"),
        Some(v1.clone())
    );
    let log = stdout(&t.sb.handoff(&t.b, &["log", "feat", "--json"]).success());
    assert!(log.contains(&v1), "the history came too: {log}");
    // Taken once: the next command says nothing.
    let out = t.sb.handoff(&t.b, &["list"]).success();
    assert_eq!(stderr(&out), "");

    // A newer version, by `git pull` this time: a fast-forward, taken by
    // bare `git handoff`, `resume` then reads it.
    let v2 = t.publish_at("feat", "2026-11-30T10:00:00Z", "v2");
    t.sb.git(&t.b, &["pull", "-q"]);
    let out = t.sb.handoff(&t.b, &[]).success();
    assert_eq!(
        stderr(&out),
        format!(
            "note: took 1 brief `git fetch` brought from 'origin': feat (updated: {} -> {})\n",
            &v1[..7],
            &v2[..7]
        )
    );
    assert_eq!(t.id(&t.b, "refs/handoffs/feat"), Some(v2.clone()));
    let out = t.sb.handoff(&t.b, &["show", "feat"]).success();
    assert_stdout_has(&out, "v2");
    assert_eq!(stderr(&out), "");
    // `git handoff fetch` finds nothing left to do.
    let out = t.sb.handoff(&t.b, &["fetch"]).success();
    assert_stdout_has(&out, "briefs: up to date");
}

#[test]
fn a_plain_git_fetch_takes_nothing_a_fetch_would_not() {
    let t = team();
    // Both sides change a shared brief: diverged, reported, neither taken.
    t.publish_at("shared", "2026-11-30T09:00:00Z", "v1");
    t.run(&t.b, &["fetch"]).success();
    t.sb.handoff(&t.b, &["init"]).success();
    t.publish_at("shared", "2026-11-30T10:00:00Z", "theirs");
    let ours = t.write(&t.b, "shared", "2026-11-30T10:30:00Z", "ours");
    // A key that holds a secret, planted on the remote with plain git.
    let token = "ghp_Zq8xW2vN5mZq8xW2vN5mZq8xW2vN5mZq8xW2vN5m";
    let blob = t.sb.git(&t.a, &["rev-parse", "refs/handoffs/shared"]);
    t.sb.git(
        &t.bare,
        &["update-ref", &format!("refs/handoffs/{token}"), blob.trim()],
    );
    t.sb.git(&t.b, &["fetch", "-q"]);
    let out = t.sb.handoff(&t.b, &["resume", "shared"]).success();
    let err = stderr(&out);
    for warning in [
        "warning: diverged from 'origin': shared (both versions kept; `git handoff diff shared@origin` compares them, `git handoff resolve shared --merge` merges them",
        "warning: ignored: '[REDACTED:github_token]' (the key holds a secret",
    ] {
        assert!(err.contains(warning), "{err}");
    }
    assert!(!err.contains(token), "{err}");
    assert!(!err.contains("took 1 brief"), "{err}");
    assert_eq!(t.id(&t.b, "refs/handoffs/shared"), Some(ours));
    let refs = t.sb.git(&t.b, &["for-each-ref", "refs/handoffs/"]);
    assert!(!refs.contains(token), "{refs}");
    // `git handoff fetch` reports the same divergence.
    let out = t.sb.handoff(&t.b, &["fetch"]).code(1);
    assert_stdout_has(&out, "diverged: shared");
}

#[test]
fn after_redact_history_a_plain_git_fetch_never_brings_a_secret_back() {
    let t = team();
    let token = "ghp_Zq8xW2vN5mZq8xW2vN5mZq8xW2vN5mZq8xW2vN5m";
    t.push_secret_with_git("k1", token);
    t.sb.handoff(&t.b, &["fetch"]).success();
    t.sb.handoff(&t.b, &["redact", "--history"]).success();
    t.sb.handoff(&t.b, &["init"]).success();
    let clean_notes = t.id(&t.b, "refs/notes/handoffs");
    t.sb.git(&t.b, &["fetch", "-q"]);
    // Comparing with the remote's version takes first: never the staged
    // secret.
    let out = t.sb.handoff(&t.b, &["diff", "k1", "@origin"]);
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(!text.contains(token) && !err.contains(token), "{text}{err}");
    // The command goes on; the key with the secret is held alone, the
    // history taken without the line that holds it; the warnings say so.
    let out = t.sb.handoff(&t.b, &["list"]).success();
    let err = format!("{err}{}", stderr(&out));
    assert!(
        err.starts_with("warning: held: k1 ('origin' holds a brief with a secret; after `git handoff redact --history` here none is taken back;"),
        "{err}"
    );
    assert!(
        err.contains("warning: took the history `git fetch` brought from 'origin' without the line that holds secrets"),
        "{err}"
    );
    assert!(!err.contains(token), "{err}");
    assert_eq!(t.id(&t.b, "refs/notes/handoffs"), clean_notes);
    let log = stdout(&t.sb.handoff(&t.b, &["log", "k1", "--json"]).success());
    assert!(!log.contains(token), "{log}");
    let brief = stdout(&t.sb.handoff(&t.b, &["show", "k1"]).success());
    assert!(!brief.contains(token), "{brief}");
}

#[test]
fn git_fetch_prune_never_makes_a_brief_vanish_silently() {
    let t = team();
    t.write(&t.a, "k1", "2026-11-30T09:00:00Z", "one");
    let v2 = t.write(&t.a, "k2", "2026-11-30T09:00:00Z", "two");
    for key in ["k3", "k4", "k5", "k6"] {
        t.write(&t.a, key, "2026-11-30T09:00:00Z", "more");
    }
    t.sb.handoff(&t.a, &["push"]).success();
    t.sb.handoff(&t.b, &["init"]).success();
    t.sb.git(&t.b, &["fetch", "-q"]);
    // Many briefs: five named.
    let out = t.sb.handoff(&t.b, &["list"]).success();
    assert_eq!(
        stderr(&out),
        "note: took 6 briefs `git fetch` brought from 'origin': k1 (new), k2 (new), k3 (new), k4 (new), k5 (new) and 1 more (`git handoff list` lists them)\n"
    );
    assert_eq!(t.id(&t.b, "refs/handoffs/k2"), Some(v2.clone()));
    // The team deletes k2 on the remote; a pruning fetch removes the
    // staged value.
    t.sb.handoff(&t.a, &["drop", "k2"]).success();
    t.sb.handoff(&t.a, &["push", "--prune"]).success();
    assert_eq!(t.id(&t.bare, "refs/handoffs/k2"), None);
    t.sb.git(&t.b, &["fetch", "-q", "--prune"]);
    assert_eq!(t.id(&t.b, "refs/handoff-fetch/origin/briefs/k2"), None);
    // As `git handoff fetch` does with a key deleted on the remote: kept
    // here, and said.
    let out = t.sb.handoff(&t.b, &["list"]).success();
    assert_stdout_has(&out, "k2");
    assert_eq!(
        stderr(&out),
        "note: deleted on 'origin': k2 (kept here; `git handoff drop k2` drops it too)\n"
    );
    assert_eq!(t.id(&t.b, "refs/handoffs/k2"), Some(v2));
    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(&out, "deleted on 'origin': k2 (kept here");
}

#[test]
fn a_session_start_after_git_pull_names_the_team_s_briefs() {
    let t = team();
    t.publish_at("feat", "2026-11-30T09:00:00Z", "v1");
    t.sb.handoff(&t.b, &["init"]).success();
    t.sb.git(&t.b, &["pull", "-q"]);
    let input = session_start_input("s", "startup", &t.b);
    let text = t.sb.hook_output(&t.b, "session-start", &input);
    assert!(text.contains("git handoff resume feat"), "{text}");
    assert!(!text.contains("never fetched"), "{text}");
}
