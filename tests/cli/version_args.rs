//! One `KEY@REMOTE` syntax (issue 55): `show`, `diff`, `log` and the MCP
//! tools name a remote's version, and an earlier one, the same way.

use crate::mcp::{call, connect, is_error, text};
use crate::support::*;

const T1: &str = "2026-11-30T09:00:00Z";

/// A's k is one version ahead of origin's (fetched) one.
fn ahead_of_origin() -> (Team, String, String) {
    let t = team();
    t.write(&t.a, "k", T1, "first");
    let theirs = t.write(&t.a, "k", T2, "origin's");
    t.run(&t.a, &["push"]).success();
    let mine = t.write(&t.a, "k", T3, "mine");
    (t, theirs, mine)
}

#[test]
fn diff_key_at_remote_compares_the_remotes_version_with_the_current_one() {
    let (t, theirs, mine) = ahead_of_origin();
    let out = t.run(&t.a, &["diff", "k@origin", "--json"]).success();
    let v = json(&stdout(&out));
    assert_eq!(v["old"]["label"], "k@origin");
    assert_eq!(v["old"]["id"], theirs.as_str());
    assert_eq!(v["new"]["id"], mine.as_str());
    // The older form is an alias, with the same answer.
    let alias = t.run(&t.a, &["diff", "k", "@origin", "--json"]).success();
    assert_eq!(stdout(&alias), stdout(&out));
    // KEY@{N} names OLD the same way; one more positional is NEW.
    let out = t
        .run(&t.a, &["diff", "k@{2}", "k@origin", "--json"])
        .success();
    let v = json(&stdout(&out));
    assert_eq!(v["old"]["label"], "k@{2}");
    assert_eq!(v["new"]["id"], theirs.as_str());
    // Three versions are one too many.
    let out = t.run(&t.a, &["diff", "k@origin", "@{1}", "@{0}"]).code(1);
    assert_stderr_has(&out, "names the older version already");
}

#[test]
fn log_key_at_remote_lists_from_the_remotes_version_down() {
    let (t, theirs, _) = ahead_of_origin();
    let out = t.run(&t.a, &["log", "k@origin", "--json"]).success();
    let rows = json(&stdout(&out));
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["id"], theirs.as_str());
    assert_eq!(rows[0]["index"], 1);
    let out = t.run(&t.a, &["log", "k@{2}", "--json"]).success();
    assert_eq!(json(&stdout(&out)).as_array().unwrap().len(), 1);
    // A remote never fetched names no version.
    t.sb.git(&t.a, &["remote", "add", "other", &t.url]);
    t.run(&t.a, &["log", "k@other"]).code(1);
}

#[tokio::test]
async fn the_mcp_tools_take_key_at_remote() {
    let (t, theirs, _) = ahead_of_origin();
    let client = connect(&t.sb, &t.a, &[]).await;
    let log = call(&client, "log", serde_json::json!({"key": "k@origin"})).await;
    assert!(!is_error(&log), "{}", text(&log));
    assert!(text(&log).contains(&theirs[..7]), "{}", text(&log));
    let show = call(&client, "show", serde_json::json!({"key": "k@origin"})).await;
    assert!(!is_error(&show), "{}", text(&show));
    assert!(text(&show).contains("origin's"), "{}", text(&show));
    client.cancel().await.unwrap();
}
