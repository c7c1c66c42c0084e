//! Fetch staging that must never stop a team (issue 47 D): what a remote
//! or a hand holds under the brief namespaces that is no key.

use crate::support::*;

const T1: &str = "2026-11-30T09:00:00Z";

#[test]
fn remotes_named_origin_and_origin_slash_briefs_keep_their_own_staging() {
    let t = team();
    let (other, _) = t.second_remote("origin/briefs");
    let root = t.sb.dir.path().to_path_buf();
    t.write(&t.b, "one", T1, "on origin");
    t.run(&t.b, &["push"]).success();
    // The second remote has a key of its own.
    let c = t.sb.path("C");
    t.sb.git(&root, &["clone", "-q", other.to_str().unwrap(), "C"]);
    t.write(&c, "two", T1, "on origin/briefs");
    t.run(&c, &["push"]).success();

    t.run(&t.a, &["fetch", "origin"]).success();
    t.run(&t.a, &["fetch", "origin/briefs"]).success();
    t.run(&t.a, &["fetch", "origin"]).success();
    // Fetching one never pruned the other's: both keys are here, and each
    // remote's value is readable as KEY@REMOTE.
    t.run(&t.a, &["show", "one@origin"]).success();
    t.run(&t.a, &["show", "two@origin/briefs"]).success();
    let refs = t.refs(&t.a);
    assert!(
        refs.contains("refs/handoff-fetch/origin%2Fbriefs/briefs/two"),
        "{refs}"
    );
    assert!(
        !refs.contains("refs/handoff-fetch/origin/briefs/briefs/"),
        "{refs}"
    );
    // Nothing diverged, nothing to push to either.
    let out = t.run(&t.a, &["push", "origin/briefs"]).success();
    assert_stdout_has(&out, "create: one (");
}

#[test]
fn a_remote_that_nests_a_key_under_another_never_stops_fetch_or_push() {
    let t = team();
    let id = t.write(&t.b, "a", T1, "a");
    t.run(&t.b, &["push"]).success();
    t.run(&t.a, &["fetch"]).success();
    // The remote replaces refs/handoffs/a by refs/handoffs/a/b.
    t.sb.git(&t.bare, &["update-ref", "-d", "refs/handoffs/a"]);
    t.sb.git(&t.bare, &["update-ref", "refs/handoffs/a/b", &id]);
    for _ in 0..2 {
        t.run(&t.a, &["fetch"]).success();
        t.run(&t.a, &["push"]);
        t.run(&t.a, &["list"]).success();
    }
    // And the reverse.
    t.sb.git(&t.bare, &["update-ref", "-d", "refs/handoffs/a/b"]);
    t.sb.git(&t.bare, &["update-ref", "refs/handoffs/a", &id]);
    for _ in 0..2 {
        t.run(&t.a, &["fetch"]).success();
        t.run(&t.a, &["list"]).success();
    }
}

#[test]
fn an_empty_ref_file_is_named_and_skipped_as_git_does() {
    let t = team();
    t.write(&t.a, "good", T1, "good");
    std::fs::write(t.a.join(".git/refs/handoffs/broken"), "").unwrap();
    let out = t.run(&t.a, &["list"]).success();
    let text = stdout(&out);
    assert!(text.contains("good"), "{text}");
    assert!(
        text.contains("refs/handoffs/broken is a broken ref"),
        "{text}"
    );
    t.run(&t.a, &[]).success();
    t.run(&t.a, &["push"]).success();
    t.run(&t.a, &["fetch"]).success();
    assert_eq!(t.remote_id("broken"), None);
}

#[test]
fn ref_names_that_are_not_utf8_are_named_by_their_bytes_never_renamed() {
    use std::os::unix::ffi::OsStrExt;
    let t = team();
    let id = t.write(&t.a, "good", T1, "good");
    for byte in [0xffu8, 0xfe] {
        let bytes = [b'k', byte];
        let name = std::ffi::OsStr::from_bytes(&bytes);
        std::fs::write(t.a.join(".git/refs/handoffs").join(name), format!("{id}\n")).unwrap();
    }
    let text = stdout(&t.run(&t.a, &["list"]).success());
    assert!(text.contains("k\\xff") && text.contains("k\\xfe"), "{text}");
    let rows = json(&stdout(&t.run(&t.a, &["list", "--json"]).success()));
    let errors: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["error"].as_str())
        .collect();
    assert_eq!(errors.len(), 2, "{rows}");
    assert!(
        errors.iter().all(|e| e.ends_with("its name is not UTF-8")),
        "{errors:?}"
    );
    t.run(&t.a, &["push"]).success();
    let remote = t.sb.git(&t.bare, &["for-each-ref", "refs/handoffs/"]);
    assert_eq!(remote.lines().count(), 1, "{remote}");
    assert!(remote.contains("refs/handoffs/good"), "{remote}");
}

/// Issue 50.5: a fetch of many new briefs reads at a glance: one line for
/// the lot (how many, the first few), `--verbose` for every name.
#[test]
fn a_fetch_of_many_briefs_sums_them_up() {
    let t = team();
    for i in 0..12 {
        t.write(&t.a, &format!("k{i:02}"), T1, "v");
    }
    t.run(&t.a, &["push"]).success();
    let out = t.run(&t.b, &["fetch"]).success();
    let text = stdout(&out);
    assert!(
        text.contains("created: 12 briefs (k00, k01, k02, … and 9 more;"),
        "{text}"
    );
    assert_eq!(text.matches("created:").count(), 1, "{text}");
    let c = t.clone_as("C");
    let out = t.run(&c, &["fetch", "--verbose"]).success();
    assert_eq!(
        stdout(&out).matches("created: k").count(),
        12,
        "{}",
        stdout(&out)
    );
}
