//! Push in one round trip (issue 35, item 3): when nothing changed on the
//! remote since the last fetch, `push` is one `git push` (every key that
//! is ahead leased on its base, the history on its last-known tip) and no
//! fetch; when a lease fails because another clone pushed meanwhile, it
//! fetches, reconciles and sends again, and ends as a push that fetched
//! first ends; what the last fetch cannot decide is fetched first.

use std::path::Path;

use crate::support::setups::*;
use crate::support::*;
use serde_json::Value;

const TOKEN: &str = "ghp_Zq8xW2vN5mZq8xW2vN5mZq8xW2vN5mZq8xW2vN5m";

/// Write a version of `key` in `dir`, each write at a later clock; its id.
fn write(t: &Team, dir: &Path, key: &str, done: &str) -> String {
    static CLOCK: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CLOCK.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let now = format!("2026-11-30T{:02}:{:02}:00Z", 9 + n / 60 % 12, n % 60);
    let args = write_args(Some(key), [done, "carry on", "cargo test"], &["--json"]);
    let out =
        t.sb.handoff_env(dir, &[("GIT_HANDOFF_NOW", &now)], &args, None)
            .success();
    json(&stdout(&out))["id"].as_str().unwrap().to_string()
}

/// The id a ref holds in `dir`'s repository (or the bare remote).
fn id(t: &Team, dir: &Path, name: &str) -> Option<String> {
    let out = t.sb.git_out(dir, &["rev-parse", "--verify", "-q", name]);
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn remote_id(t: &Team, key: &str) -> Option<String> {
    id(t, &t.bare, &format!("refs/handoffs/{key}"))
}

fn base(t: &Team, dir: &Path, key: &str) -> Option<String> {
    id(t, dir, &format!("refs/handoff-remotes/origin/briefs/{key}"))
}

/// `git handoff ARGS` in `dir`, traced: its result, and the git commands
/// that talk to the remote (`push`, `fetch`, `ls-remote`), in order, as
/// `GIT_TRACE` saw them run.
fn traced(t: &Team, dir: &Path, args: &[&str]) -> (assert_cmd::assert::Assert, Vec<String>) {
    let trace = t.sb.path("git-trace");
    let _ = std::fs::remove_file(&trace);
    let trace_var = trace.to_str().unwrap();
    let out =
        t.sb.handoff_env(dir, &[("GIT_TRACE", trace_var)], args, None);
    let text = std::fs::read_to_string(&trace).unwrap_or_default();
    let network = text
        .lines()
        .filter_map(|l| l.split_once("trace: built-in: git ").map(|(_, rest)| rest))
        .filter_map(|rest| rest.split_whitespace().next())
        .filter(|command| ["push", "fetch", "ls-remote"].contains(command))
        .map(str::to_string)
        .collect();
    (out, network)
}

/// The pushed-key row of `key` in a `push --json` report.
fn row<'v>(v: &'v Value, key: &str) -> &'v Value {
    v["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["key"] == key)
        .unwrap_or_else(|| panic!("no row for {key}: {v}"))
}

/// The status of `key` in the fetch a `push --json` report holds.
fn fetched(v: &Value, key: &str) -> String {
    key_status(&v["fetch"], key)
}

/// A and B agree on `keys`, written by A: pushed, fetched by B.
fn synced(keys: &[&str]) -> (Team, Vec<String>) {
    let t = team();
    let ids = keys.iter().map(|k| write(&t, &t.a, k, "v1")).collect();
    t.sb.handoff(&t.a, &["push"]).success();
    t.sb.handoff(&t.b, &["fetch"]).success();
    (t, ids)
}

#[test]
fn a_push_when_nothing_changed_there_is_one_git_push_and_no_fetch() {
    let (t, ids) = synced(&["k1"]);
    let v2 = write(&t, &t.a, "k1", "v2");
    let k2 = write(&t, &t.a, "k2", "new here");

    let (out, network) = traced(&t, &t.a, &["push", "--json"]);
    let out = out.success();
    assert_eq!(network, ["push"], "one round trip");
    let v = json(&stdout(&out));
    assert_eq!(v["route"], "optimistic", "{v}");
    assert!(v.get("fetch").is_none(), "nothing was fetched: {v}");
    assert_eq!(row(&v, "k1")["outcome"], "pushed");
    assert_eq!(
        row(&v, "k1")["lease"],
        ids[0].as_str(),
        "leased on the base"
    );
    assert_eq!(row(&v, "k1")["new"], v2.as_str());
    assert_eq!(row(&v, "k2")["outcome"], "pushed");
    assert_eq!(row(&v, "k2")["lease"], Value::Null, "a create");
    assert_eq!(v["history"]["result"], "pushed", "{v}");
    assert_eq!(remote_id(&t, "k1").as_deref(), Some(v2.as_str()));
    assert_eq!(remote_id(&t, "k2").as_deref(), Some(k2.as_str()));
    let notes = id(&t, &t.a, "refs/notes/handoffs");
    assert_eq!(id(&t, &t.bare, "refs/notes/handoffs"), notes);
    // What the remote took is what both sides now agree on.
    assert_eq!(base(&t, &t.a, "k1").as_deref(), Some(v2.as_str()));
    assert_eq!(base(&t, &t.a, "k2").as_deref(), Some(k2.as_str()));
    assert_eq!(id(&t, &t.a, "refs/handoff-remotes/origin/notes"), notes);

    // The text says that nothing was fetched.
    let v3 = write(&t, &t.a, "k1", "v3");
    let (out, network) = traced(&t, &t.a, &["push"]);
    let out = out.success();
    assert_eq!(network, ["push"]);
    let text = stdout(&out);
    assert!(
        text.starts_with("From 'origin': not fetched (pushed optimistically"),
        "{text}"
    );
    assert!(
        text.contains(&format!("push: k1 ({} -> {})", &v2[..7], &v3[..7])),
        "{text}"
    );
    assert!(text.contains("history: push (fast-forward)"), "{text}");
    // Nothing is left to reconcile, and B gets it all.
    t.sb.handoff(&t.a, &["fetch"])
        .success()
        .stdout("From 'origin':\n  briefs: up to date\n  history: up to date\n");
    t.sb.handoff(&t.b, &["fetch"]).success();
    assert_eq!(
        id(&t, &t.b, "refs/handoffs/k1").as_deref(),
        Some(v3.as_str())
    );
    assert_eq!(t.sb.log_ids(&t.b, "k1"), [v3, v2, ids[0].clone()]);
    assert_eq!(t.sb.log_ids(&t.b, "k2"), [k2]);
}

#[test]
fn a_lease_that_failed_because_another_clone_pushed_fetches_and_sends_again() {
    let (t, ids) = synced(&["k1", "k2"]);
    // B pushes a new version of k1 (and so the history) meanwhile.
    let b1 = write(&t, &t.b, "k1", "from b");
    t.sb.handoff(&t.b, &["push"]).success();
    let a2 = write(&t, &t.a, "k2", "from a");

    let (out, network) = traced(&t, &t.a, &["push", "--json"]);
    let out = out.success();
    // The history's lease failed: fetched, merged, and sent again.
    assert_eq!(network, ["push", "ls-remote", "fetch", "push"]);
    let v = json(&stdout(&out));
    assert_eq!(v["route"], "retried", "{v}");
    assert_eq!(fetched(&v, "k1"), "fast-forwarded", "{v}");
    assert_eq!(row(&v, "k2")["outcome"], "pushed");
    assert_eq!(row(&v, "k2")["lease"], ids[1].as_str());
    assert_eq!(v["history"]["result"], "pushed", "{v}");
    assert_eq!(remote_id(&t, "k1").as_deref(), Some(b1.as_str()));
    assert_eq!(remote_id(&t, "k2").as_deref(), Some(a2.as_str()));
    assert_eq!(
        id(&t, &t.a, "refs/handoffs/k1").as_deref(),
        Some(b1.as_str())
    );
    assert_eq!(
        id(&t, &t.bare, "refs/notes/handoffs"),
        id(&t, &t.a, "refs/notes/handoffs")
    );
    // Both lines of work are in the history both sides hold.
    t.sb.handoff(&t.b, &["fetch"]).success();
    assert_eq!(
        id(&t, &t.b, "refs/handoffs/k2").as_deref(),
        Some(a2.as_str())
    );
    assert_eq!(t.sb.log_ids(&t.b, "k1"), [b1.clone(), ids[0].clone()]);
    assert_eq!(t.sb.log_ids(&t.b, "k2"), [a2.clone(), ids[1].clone()]);
    assert_eq!(t.sb.log_ids(&t.a, "k1"), [b1, ids[0].clone()]);

    // The text says why it fetched.
    write(&t, &t.b, "k1", "from b again");
    t.sb.handoff(&t.b, &["push"]).success();
    write(&t, &t.a, "k2", "from a again");
    let text = stdout(&t.sb.handoff(&t.a, &["push"]).success());
    assert!(
        text.starts_with("A lease failed: 'origin' changed since the last fetch; fetched, then pushed again:\nFrom 'origin':\n  fast-forwarded: k1 ("),
        "{text}"
    );
    assert!(text.contains("\nTo 'origin':\n  push: k2 ("), "{text}");
}

#[test]
fn a_lease_that_failed_on_a_key_both_changed_reports_the_divergence() {
    let (t, ids) = synced(&["k1"]);
    let vb = write(&t, &t.b, "k1", "b's version");
    t.sb.handoff(&t.b, &["push"]).success();
    let va = write(&t, &t.a, "k1", "a's version");
    let k2 = write(&t, &t.a, "k2", "new here");

    let (out, network) = traced(&t, &t.a, &["push"]);
    let out = out.code(1);
    assert_eq!(network, ["push", "ls-remote", "fetch", "push"]);
    let text = stdout(&out);
    assert!(text.contains("  diverged: k1 (local "), "{text}");
    assert!(text.contains("diverged, not pushed: k1 ("), "{text}");
    assert!(
        text.contains(&format!("create: k2 ({})", &k2[..7])),
        "{text}"
    );
    assert_eq!(
        stderr(&out),
        "error: not pushed to 'origin': k1; `git handoff fetch origin` shows where each stands, and `git handoff resolve k1 --merge` (or `--keep-local|--take-remote`) ends a divergence\n"
    );
    // The remote keeps B's version, A keeps its own, the base stays.
    assert_eq!(remote_id(&t, "k1").as_deref(), Some(vb.as_str()));
    assert_eq!(remote_id(&t, "k2").as_deref(), Some(k2.as_str()));
    assert_eq!(
        id(&t, &t.a, "refs/handoffs/k1").as_deref(),
        Some(va.as_str())
    );
    assert_eq!(base(&t, &t.a, "k1").as_deref(), Some(ids[0].as_str()));
    // Both versions stay in the history, which went too.
    assert_eq!(
        id(&t, &t.bare, "refs/notes/handoffs"),
        id(&t, &t.a, "refs/notes/handoffs")
    );
    assert_eq!(
        t.sb.log_ids(&t.a, "k1"),
        [va.clone(), vb.clone(), ids[0].clone()]
    );

    // The next push knows it diverged: it fetches first, and never sends it.
    let (out, network) = traced(&t, &t.a, &["push", "--json"]);
    let v = json(&stdout(&out.code(1)));
    assert_eq!(network, ["ls-remote"], "nothing new there: a listing");
    assert_eq!(v["route"], "fetch-first", "{v}");
    assert_eq!(row(&v, "k1")["outcome"], "diverged");
    assert_eq!(remote_id(&t, "k1").as_deref(), Some(vb.as_str()));
}

#[test]
fn an_atomic_push_whose_lease_failed_is_sent_again_whole() {
    let (t, ids) = synced(&["k1", "k2"]);
    let b1 = write(&t, &t.b, "k1", "from b");
    t.sb.handoff(&t.b, &["push"]).success();
    let a2 = write(&t, &t.a, "k2", "from a");
    let notes_before = id(&t, &t.bare, "refs/notes/handoffs");

    let (out, network) = traced(&t, &t.a, &["push", "--atomic", "--json"]);
    let v = json(&stdout(&out.success()));
    assert_eq!(network, ["push", "ls-remote", "fetch", "push"]);
    assert_eq!(v["route"], "retried", "{v}");
    assert_eq!(row(&v, "k2")["outcome"], "pushed", "{v}");
    assert_eq!(row(&v, "k2")["lease"], ids[1].as_str());
    assert_eq!(v["history"]["result"], "pushed", "{v}");
    assert_eq!(remote_id(&t, "k1").as_deref(), Some(b1.as_str()));
    assert_eq!(remote_id(&t, "k2").as_deref(), Some(a2.as_str()));
    let notes = id(&t, &t.bare, "refs/notes/handoffs");
    assert_ne!(notes, notes_before);
    assert_eq!(notes, id(&t, &t.a, "refs/notes/handoffs"));
}

#[test]
fn a_stale_clones_rollback_found_by_a_failed_lease_is_repaired() {
    let (t, ids) = synced(&["k1"]);
    let new = write(&t, &t.a, "k1", "new");
    t.sb.handoff(&t.a, &["push"]).success();
    // B is stale and pushes everything it has with plain git: k1 and the
    // history go back.
    t.sb.git(&t.b, &["push", "-q", "--mirror", "origin"]);
    assert_eq!(remote_id(&t, "k1").as_deref(), Some(ids[0].as_str()));
    let k2 = write(&t, &t.a, "k2", "new here");

    let (out, network) = traced(&t, &t.a, &["push"]);
    let out = out.success();
    assert_eq!(network, ["push", "ls-remote", "fetch", "push"]);
    let text = stdout(&out);
    assert!(text.contains("rolled back on 'origin': k1"), "{text}");
    assert!(
        text.contains(&format!("push: k1 ({} -> {})", &ids[0][..7], &new[..7])),
        "{text}"
    );
    assert!(
        text.contains(&format!("create: k2 ({})", &k2[..7])),
        "{text}"
    );
    assert_eq!(remote_id(&t, "k1").as_deref(), Some(new.as_str()));
    assert_eq!(remote_id(&t, "k2").as_deref(), Some(k2.as_str()));
    assert_eq!(
        id(&t, &t.bare, "refs/notes/handoffs"),
        id(&t, &t.a, "refs/notes/handoffs")
    );
}

#[test]
fn a_history_the_gate_refuses_is_never_sent_and_is_fetched_first() {
    let (t, _) = synced(&["k1"]);
    let notes_there = id(&t, &t.bare, "refs/notes/handoffs");
    let v2 = write(&t, &t.a, "k1", "v2");
    // A line added with plain git notes, unparsed, holding a token.
    t.sb.git(
        &t.a,
        &[
            "notes",
            "--ref=handoffs",
            "append",
            "-m",
            &format!("deploy with {TOKEN}"),
            "HEAD",
        ],
    );

    // The gate runs before anything is sent; what it refuses depends on
    // the remote's history now, so the push fetches first.
    let (out, network) = traced(&t, &t.a, &["push"]);
    let out = out.code(1);
    assert_eq!(network, ["ls-remote", "push"]);
    let text = stdout(&out);
    assert!(text.starts_with("From 'origin':\n"), "{text}");
    assert!(
        text.contains("history: refused, not pushed (1 history line holds secrets: "),
        "{text}"
    );
    assert!(!text.contains(TOKEN), "{text}");
    assert!(text.contains("push: k1 ("), "the key still went: {text}");
    assert_eq!(remote_id(&t, "k1").as_deref(), Some(v2.as_str()));
    assert_eq!(id(&t, &t.bare, "refs/notes/handoffs"), notes_there);
    let objects =
        t.sb.git_out(&t.bare, &["cat-file", "--batch-all-objects", "--batch"])
            .stdout;
    assert!(!String::from_utf8_lossy(&objects).contains(TOKEN));
}

#[test]
fn what_the_last_fetch_cannot_decide_is_fetched_first() {
    let (t, _) = synced(&["k1"]);
    // A plain `git fetch` staged a new value that no command took yet.
    let a2 = write(&t, &t.a, "k1", "from a");
    t.sb.handoff(&t.a, &["push"]).success();
    t.sb.git(
        &t.b,
        &[
            "fetch",
            "-q",
            "origin",
            "+refs/handoffs/*:refs/handoff-fetch/origin/briefs/*",
            "+refs/notes/handoffs*:refs/handoff-fetch/origin/notes/handoffs*",
        ],
    );
    write(&t, &t.b, "k2", "from b");
    let (out, network) = traced(&t, &t.b, &["push", "--json"]);
    let v = json(&stdout(&out.success()));
    assert_eq!(network, ["ls-remote", "push"]);
    assert_eq!(v["route"], "fetch-first", "{v}");
    assert_eq!(fetched(&v, "k1"), "fast-forwarded", "{v}");
    assert_eq!(
        id(&t, &t.b, "refs/handoffs/k1").as_deref(),
        Some(a2.as_str())
    );

    // A dry run fetches nothing and sends nothing.
    write(&t, &t.b, "k2", "again");
    let (out, network) = traced(&t, &t.b, &["push", "--dry-run", "--json"]);
    let v = json(&stdout(&out.success()));
    assert_eq!(network, ["push"], "git push --dry-run checks the leases");
    assert_eq!(v["route"], "last-fetch", "{v}");

    // A remote never fetched here: its first push fetches first.
    let c = t.sb.path("C");
    t.sb.git(t.sb.dir.path(), &["clone", "-q", &t.url, "C"]);
    write(&t, &c, "k3", "from c");
    let (out, network) = traced(&t, &c, &["push", "--json"]);
    let v = json(&stdout(&out.success()));
    assert_eq!(network, ["ls-remote", "fetch", "push"]);
    assert_eq!(v["route"], "fetch-first", "{v}");
    assert_eq!(id(&t, &c, "refs/handoffs/k1").as_deref(), Some(a2.as_str()));
}
