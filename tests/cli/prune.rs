//! Brief retention: prune by age into refs/handoff-archive/, list
//! --archived, restore, one transaction, history untouched.

use std::path::Path;

use crate::support::{Sandbox, assert_stderr_has, brief_lines, stderr, stdout};

/// Write brief `key` as if at `now`.
fn write_at(sb: &Sandbox, repo: &Path, key: &str, now: &str) {
    sb.write_brief_at(repo, now, Some(key), ["d", "r", "c"], &[])
        .success();
}

/// `objecttype refname objectname` of every handoff ref, archive and notes.
fn refs(sb: &Sandbox, repo: &Path) -> String {
    sb.git(
        repo,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/handoffs",
            "refs/handoff-archive",
            "refs/notes",
        ],
    )
}

fn rev(sb: &Sandbox, repo: &Path, name: &str) -> String {
    sb.git(repo, &["rev-parse", name]).trim().to_string()
}

/// Three briefs: fresh (today), old (60 days), ancient (121 days).
fn three(sb: &Sandbox) -> std::path::PathBuf {
    let repo = sb.repo("r");
    write_at(sb, &repo, "fresh", "2026-11-30T11:00:00Z");
    write_at(sb, &repo, "old", "2026-10-01T12:00:00Z");
    write_at(sb, &repo, "ancient", "2026-08-01T12:00:00Z");
    repo
}

#[test]
fn prune_archives_by_age_and_deletes_old_archived_briefs() {
    let sb = Sandbox::new();
    let repo = three(&sb);
    let ids = |k: &str| rev(&sb, &repo, &format!("refs/handoffs/{k}"));
    let (old_id, ancient_id, fresh_id) = (ids("old"), ids("ancient"), ids("fresh"));
    let notes_before = rev(&sb, &repo, "refs/notes/handoffs");
    let history_before = sb.git(&repo, &["notes", "--ref=handoffs", "show", "HEAD"]);
    assert_eq!(brief_lines(&history_before).len(), 3);

    // Dry run: said, not done.
    let before = refs(&sb, &repo);
    let out = sb.handoff(&repo, &["prune", "--dry-run"]).success();
    assert_eq!(
        stdout(&out),
        "would archive 'ancient' (written 2026-08-01T12:00:00Z, 121d ago) to refs/handoff-archive/ancient\n\
         would archive 'old' (written 2026-10-01T12:00:00Z, 60d ago) to refs/handoff-archive/old\n\
         The history in refs/notes/handoffs keeps every version.\n"
    );
    assert_eq!(refs(&sb, &repo), before);

    sb.handoff(&repo, &["prune"]).success();
    assert_eq!(
        refs(&sb, &repo),
        format!(
            "refs/handoff-archive/ancient {ancient_id}\nrefs/handoff-archive/old {old_id}\nrefs/handoffs/fresh {fresh_id}\nrefs/notes/handoffs {notes_before}\n"
        )
    );
    // Archived refs are the same blobs, readable by plain git.
    assert_eq!(
        sb.git(&repo, &["cat-file", "-t", "refs/handoff-archive/old"]),
        "blob\n"
    );
    // History untouched: same notes commit, every version still there.
    assert_eq!(
        sb.git(&repo, &["notes", "--ref=handoffs", "show", "HEAD"]),
        history_before
    );
    let listed = stdout(&sb.handoff(&repo, &["list"]).success());
    assert!(
        listed.contains("fresh") && !listed.contains("old"),
        "{listed}"
    );
    let archived = stdout(&sb.handoff(&repo, &["list", "--archived"]).success());
    assert!(
        archived.contains("ancient  121d") && archived.contains("old       60d"),
        "{archived}"
    );
    let json: serde_json::Value = serde_json::from_str(&stdout(
        &sb.handoff(&repo, &["list", "--archived", "--json"])
            .success(),
    ))
    .unwrap();
    assert_eq!(json.as_array().unwrap().len(), 2);
    assert_eq!(json[1]["key"], "old");
    assert_eq!(json[1]["id"], old_id.as_str());

    // The next run deletes what was archived and is past 90 days; the
    // 60-day-old archived brief stays. Never archive and delete in one run.
    let out = sb.handoff(&repo, &["prune"]).success();
    assert_eq!(
        stdout(&out),
        "deleted archived 'ancient' (written 2026-08-01T12:00:00Z, 121d ago)\n\
         The history in refs/notes/handoffs keeps every version.\n"
    );
    assert_eq!(
        refs(&sb, &repo),
        format!(
            "refs/handoff-archive/old {old_id}\nrefs/handoffs/fresh {fresh_id}\nrefs/notes/handoffs {notes_before}\n"
        )
    );
    // The deleted brief is still in the history.
    assert!(
        sb.git(&repo, &["notes", "--ref=handoffs", "show", "HEAD"])
            .contains("\"key\":\"ancient\"")
    );
    let out = sb.handoff(&repo, &["prune"]).success();
    assert!(
        stdout(&out).starts_with("Nothing to prune"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn prune_ages_are_configurable_and_checked() {
    let sb = Sandbox::new();
    let repo = three(&sb);
    let out = sb
        .handoff(
            &repo,
            &[
                "prune",
                "--archive-after",
                "61d",
                "--delete-after",
                "200d",
                "--json",
            ],
        )
        .success();
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["archive_after_days"], 61);
    assert_eq!(v["actions"].as_array().unwrap().len(), 1);
    assert_eq!(v["actions"][0]["action"], "archive");
    assert_eq!(v["actions"][0]["key"], "ancient");
    assert_eq!(v["actions"][0]["age_days"], 121);
    // A later clock archives more.
    let out = sb
        .handoff_env(
            &repo,
            &[("GIT_HANDOFF_NOW", "2027-01-15T00:00:00Z")],
            &["prune", "--dry-run"],
            None,
        )
        .success();
    let text = stdout(&out);
    assert!(
        text.contains("would archive 'fresh'") && text.contains("would archive 'old'"),
        "{text}"
    );
    assert!(text.contains("would delete archived 'ancient'"), "{text}");

    let before = refs(&sb, &repo);
    sb.handoff(&repo, &["prune", "--archive-after", "soon"])
        .code(2);
    let out = sb
        .handoff(
            &repo,
            &["prune", "--archive-after", "30d", "--delete-after", "7d"],
        )
        .code(1);
    assert_stderr_has(&out, "--delete-after");
    assert_eq!(refs(&sb, &repo), before);
}

#[test]
fn prune_is_one_transaction() {
    let sb = Sandbox::new();
    let repo = three(&sb);
    sb.git(&repo, &["config", "core.filesRefLockTimeout", "0"]);
    let before = refs(&sb, &repo);
    // A lock on one of the refs blocks every move: all or none.
    let lock = repo.join(".git/refs/handoffs/old.lock");
    std::fs::write(&lock, "").unwrap();
    let out = sb.handoff(&repo, &["prune"]).code(128);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("old.lock"), "{err}");
    assert_eq!(refs(&sb, &repo), before);
    std::fs::remove_file(&lock).unwrap();
    sb.handoff(&repo, &["prune"]).success();
    assert!(refs(&sb, &repo).contains("refs/handoff-archive/ancient"));
}

#[test]
fn restore_moves_an_archived_brief_back_and_never_over_a_live_one() {
    let sb = Sandbox::new();
    let repo = three(&sb);
    let old_id = rev(&sb, &repo, "refs/handoffs/old");
    sb.handoff(&repo, &["prune"]).success();

    let out = sb.handoff(&repo, &["restore", "old"]).success();
    assert_eq!(
        stdout(&out),
        format!(
            "Restored brief 'old' (version {}) from refs/handoff-archive/old.\n",
            &old_id[..7]
        )
    );
    assert_eq!(rev(&sb, &repo, "refs/handoffs/old"), old_id);
    assert!(!refs(&sb, &repo).contains("refs/handoff-archive/old"));

    // A live brief of the same key exists: refused, nothing moves.
    write_at(&sb, &repo, "ancient", "2026-11-30T12:00:00Z");
    let before = refs(&sb, &repo);
    let out = sb.handoff(&repo, &["restore", "ancient"]).code(1);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("a live brief 'ancient' exists"), "{err}");
    assert_eq!(refs(&sb, &repo), before);

    // Unknown or invalid keys.
    let out = sb.handoff(&repo, &["restore", "nope"]).code(1);
    assert_stderr_has(&out, "no archived brief 'nope'");
    sb.handoff(&repo, &["restore", "a/b"]).code(1);
    sb.handoff(&repo, &["restore", "--json", "old"]).code(1);
    assert_eq!(refs(&sb, &repo), before);
}
