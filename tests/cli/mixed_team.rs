//! A team mixing 0.3 and this version (issue 55): the remote as the real
//! 0.3.0 binary left it (`tests/fixtures/v03/`: resolve lines, an `import
//! --force` rollback, an AUTO draft, `redact --history`), and a 0.3
//! teammate's later writes emulated with plain git, line for line as 0.3
//! wrote them. A version is never lost; a key whose 0.3 lineage had
//! parents added after the fact is diverged until resolved with this
//! version; no 0.3 line re-parents a version of this one.

use std::path::Path;

use crate::support::fixtures::*;
use crate::support::*;

const KEYS: [&str; 4] = ["auth", "db", "ops", "ui"];

/// 0.3's blobs of `auth` in the fixture: Ada's first version, Bob's, Ada's
/// (resolved --keep-local over Bob's), Bob's last (over Ada's).
const AUTH_A1: &str = "12d38501cfe15a8eb4eca5756e58f9867e9b2674";
const AUTH_B2: &str = "5d68e14a46a0c284de97dcfc52151b859af69661";
const AUTH_A2: &str = "0cf98491be5824f10c74f526ad9c3c77095f4677";
const AUTH_B3: &str = "ddccf27895aacf3d6aff6e049e5d8fc08a5b7121";
/// `ui`'s first version, imported again with --force over the second.
const UI_1: &str = "7481bce2ef96bd952518383b885d8cd679781dbf";
const UI_2: &str = "4f9d6fe423565688b38cdb6da69e0182736de17a";

/// Every history line of the remote's notes.
fn remote_notes(t: &Team) -> String {
    t.sb.git(&t.bare, &["log", "--notes=handoffs", "--format=%N", "main"])
}

/// Every version 0.3's own `log` listed is listed here and readable.
#[track_caller]
fn assert_keeps_every_0_3_version(t: &Team, dir: &Path) {
    for (key, id) in v03_versions() {
        let ids = t.log_ids(dir, &key);
        assert!(ids.contains(&id), "{key} {id} lost: {ids:?}");
        let out = t.run(dir, &["show", &key, "--version", &id]).success();
        assert_eq!(json(&stdout(&out))["key"], key.as_str());
    }
}

/// The fixture is 0.3's (no lineage line names a `"brief"`), holds what
/// the story says (a resolve and a rollback gave a version a second parent
/// set), and [`v03_line`] writes 0.3's lines byte for byte.
#[test]
fn the_fixture_is_0_3s_and_its_lines_are_emulated_byte_for_byte() {
    let t = v03_team("final");
    let notes = remote_notes(&t);
    let lines = lineage_lines(&notes);
    assert!(lines.len() >= 10, "{notes}");
    for line in &lines {
        let v = json(line);
        assert!(v.get("brief").is_none(), "not a line of 0.3: {line}");
        let parents: Vec<&str> = v["parents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        let rebuilt = v03_line(
            v["key"].as_str().unwrap(),
            v["lineage"].as_str().unwrap(),
            &parents,
            v["at"].as_str().unwrap(),
        );
        assert_eq!(&rebuilt, line);
    }
    for (blob, sets) in [(AUTH_A2, 2), (UI_1, 2), (AUTH_B3, 1)] {
        let of: Vec<&&str> = lines
            .iter()
            .filter(|l| l.contains(&format!(r#""lineage":"{blob}""#)))
            .collect();
        let mut parents: Vec<String> = of.iter().map(|l| json(l)["parents"].to_string()).collect();
        parents.sort();
        parents.dedup();
        assert_eq!(parents.len(), sets, "{blob}: {of:?}");
    }
    // The brief lines are the stored briefs in one line each.
    let stored = t.sb.git(&t.bare, &["cat-file", "-p", AUTH_B3]);
    assert!(notes.lines().any(|l| l == compact(&stored)), "{notes}");
}

/// A clone of this version joins a 0.3 team: it fetches every brief,
/// resumes each, writes over a 0.3 version and pushes, and a teammate
/// fast-forwards to it; every 0.3 version stays listed and readable.
#[test]
fn a_clone_of_this_version_joins_a_0_3_team() {
    let t = v03_team("final");
    let out = t.run(&t.a, &["fetch"]).success();
    for key in KEYS {
        assert_stdout_has(&out, &format!("  created: {key} ("));
        assert_eq!(t.brief_id(&t.a, key), t.remote_id(key), "{key}");
        t.run(&t.a, &["resume", key]).success();
    }
    let out = t.run(&t.a, &["resume", "db"]).success();
    assert_stdout_has(&out, "ship the online migration");
    t.run(&t.b, &["fetch"]).success();
    let mine = t.write(&t.a, "auth", T1, "cargo test auth passes, mine");
    t.run(&t.a, &["push"]).success();
    assert_eq!(t.remote_id("auth"), Some(mine.clone()));
    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(&out, "  fast-forwarded: auth (");
    assert_eq!(t.brief_id(&t.b, "auth"), Some(mine.clone()));
    for dir in [&t.a, &t.b] {
        assert_keeps_every_0_3_version(&t, dir);
        assert!(t.log_ids(dir, "auth").contains(&mine));
    }
}

/// A clone of this version that fetched before 0.3's `resolve` gave
/// Ada's version a second parent set: that key is diverged (0.3 would
/// have fast-forwarded it), on every fetch, until resolved with this
/// version; a key whose 0.3 lines have one parent set fast-forwards. The
/// resolution then fast-forwards a teammate.
#[test]
fn a_key_0_3_resolved_stays_diverged_until_resolved_here() {
    let t = v03_team("first");
    t.run(&t.a, &["fetch"]).success();
    assert_eq!(t.brief_id(&t.a, "auth"), Some(AUTH_A1.to_string()));
    // The 0.3 teammates push on: the resolve, the rollback, more writes.
    t.load_v03("final");
    t.run(&t.b, &["fetch"]).success();
    assert_eq!(t.brief_id(&t.b, "auth"), Some(AUTH_B3.to_string()));
    for _ in 0..2 {
        let out = t.run(&t.a, &["fetch"]).code(1);
        assert_stdout_has(&out, "  diverged: auth (local 12d3850");
        assert_eq!(t.brief_id(&t.a, "auth"), Some(AUTH_A1.to_string()));
        assert_eq!(t.brief_id(&t.a, "db"), t.remote_id("db"));
    }
    let out = t.run(&t.a, &["push"]).code(1);
    assert_stdout_has(&out, "diverged, not pushed: auth (");
    assert_eq!(t.remote_id("auth"), Some(AUTH_B3.to_string()));
    // The version 0.3 gave a second parent set is drawn with no parent,
    // and named so: not as the child of the row below it.
    let text = stdout(&t.run(&t.a, &["log", "auth", "--graph"]).success());
    assert!(text.contains(" parents unknown "), "{text}");
    // The two sides share no version the graph believes: every field
    // they differ in is a conflict, listed, nothing changed.
    let out = t.run(&t.a, &["resolve", "auth", "--merge"]).code(1);
    assert_stdout_has(&out, "resume.resume_by");
    assert_eq!(t.brief_id(&t.a, "auth"), Some(AUTH_A1.to_string()));
    t.run(&t.a, &["resolve", "auth", "--keep-local"]).success();
    t.run(&t.a, &["push"]).success();
    assert_eq!(t.remote_id("auth"), Some(AUTH_A1.to_string()));
    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(&out, "  fast-forwarded: auth (ddccf27 -> 12d3850)");
    for dir in [&t.a, &t.b] {
        assert_keeps_every_0_3_version(&t, dir);
        for id in [AUTH_A1, AUTH_B2, AUTH_A2, AUTH_B3] {
            assert!(t.log_ids(dir, "auth").contains(&id.to_string()));
        }
    }
}

/// A 0.3 teammate's write over a version of this one (its line names the
/// blob as the parent) fast-forwards every clone; a 0.3 line appended
/// later that names a version of this one as written over another (as
/// 0.3's `resolve` writes it) re-parents nothing: the clone that holds the
/// other is diverged, not fast-forwarded, and settles it with `resolve
/// --merge`, which a teammate fast-forwards to.
#[test]
fn lines_of_0_3_written_later_never_reparent_a_version_of_this_one() {
    let t = v03_team("final");
    t.run(&t.a, &["fetch"]).success();
    t.run(&t.b, &["fetch"]).success();
    let zoe = t.v03_clone("zoe");
    let n = t.write(&t.a, "auth", T1, "n");
    t.run(&t.a, &["push"]).success();
    t.run(&t.b, &["fetch"]).success();
    // Zoe, on 0.3, writes over it and pushes.
    t.v03_pull(&zoe);
    let stored = t.sb.git(&zoe, &["cat-file", "-p", &n]);
    let theirs = stored.replace(r#""done_when": "n""#, r#""done_when": "w""#);
    let w = t.push_as_v03(&zoe, "auth", &theirs, &[&n], T2);
    for dir in [&t.a, &t.b] {
        let out = t.run(dir, &["fetch"]).success();
        assert_stdout_has(&out, "  fast-forwarded: auth (");
        assert_eq!(t.brief_id(dir, "auth"), Some(w.clone()));
    }
    // B adds a risk (not pushed); A a decision, pushed.
    let update = |dir: &Path, now: &str, flag: &str, text: &str| {
        let args = ["write", "auth", "--update", flag, text, "--no-lint"];
        t.sb.handoff_env(dir, &[("GIT_HANDOFF_NOW", now)], &args, None)
            .success();
        t.brief_id(dir, "auth").unwrap()
    };
    let v = update(&t.b, T3, "--risk", "the clock skews");
    let y = update(&t.a, T3, "--decision", "keep 1 h — the spec says so");
    t.run(&t.a, &["push"]).success();
    // A 0.3 line names A's version as written over B's.
    t.v03_pull(&zoe);
    let stored = t.sb.git(&zoe, &["cat-file", "-p", &y]);
    let head = json(&stored)["state"]["head_sha"]
        .as_str()
        .unwrap()
        .to_string();
    t.v03_note(
        &zoe,
        &head,
        &format!("{}\n", v03_line("auth", &y, &[&v], T4)),
    );
    t.sb.git(&zoe, &["push", "-q", "origin", "refs/notes/handoffs"]);
    for _ in 0..2 {
        let out = t.run(&t.b, &["fetch"]).code(1);
        assert_stdout_has(&out, "  diverged: auth (local ");
        assert_eq!(t.brief_id(&t.b, "auth"), Some(v.clone()));
    }
    let out = t.run(&t.b, &["resolve", "auth", "--merge"]).success();
    assert_stdout_has(&out, "auth");
    let merged = t.brief_id(&t.b, "auth").unwrap();
    let brief = json(&t.sb.git(&t.b, &["cat-file", "-p", &merged]));
    assert_eq!(brief["state"]["open_risks"][0], "the clock skews");
    assert_eq!(
        brief["state"]["decisions"][0],
        "keep 1 h — the spec says so"
    );
    t.run(&t.b, &["push"]).success();
    let out = t.run(&t.a, &["fetch"]).success();
    assert_stdout_has(&out, "  fast-forwarded: auth (");
    assert_eq!(t.brief_id(&t.a, "auth"), Some(merged));
    for dir in [&t.a, &t.b] {
        assert_keeps_every_0_3_version(&t, dir);
        let ids = t.log_ids(dir, "auth");
        for id in [&n, &w, &v, &y] {
            assert!(ids.contains(id), "{id} lost: {ids:?}");
        }
    }
}

/// `resolve --keep-local` that keeps a content 0.3 recorded (Ada's first
/// `auth`, over Bob's last) writes 0.3's own resolve line beside its
/// version, so that 0.3 clones see a divergence rather than a rollback
/// their next push "repairs"; and when a 0.3 teammate pushes back a
/// version 0.3 wrote over the old content anyway (as 0.3's repair push
/// does), it does not fast-forward the resolution away.
#[test]
fn keeping_an_older_0_3_content_is_never_fast_forwarded_away() {
    let t = v03_team("first");
    t.run(&t.a, &["fetch"]).success();
    t.load_v03("final");
    t.run(&t.a, &["fetch"]).code(1);
    t.run(&t.a, &["resolve", "auth", "--keep-local"]).success();
    t.run(&t.a, &["push"]).success();
    assert_eq!(t.remote_id("auth"), Some(AUTH_A1.to_string()));
    let echo = v03_line("auth", AUTH_A1, &[AUTH_B3], NOW);
    let notes = remote_notes(&t);
    assert!(notes.lines().any(|l| l == echo), "{echo}\n{notes}");
    // Bob, on 0.3, still holds his first version (over the old content):
    // his push puts it back over the resolution.
    let zoe = t.v03_clone("zoe");
    let out = t
        .run(&t.a, &["show", "auth", "--version", AUTH_B2])
        .success();
    let b2 =
        t.sb.git_stdin(&zoe, &["hash-object", "-w", "--stdin"], stdout(&out));
    assert_eq!(b2, AUTH_B2);
    t.sb.git(
        &zoe,
        &["push", "-q", "origin", &format!("+{b2}:refs/handoffs/auth")],
    );
    for _ in 0..2 {
        let out = t.run(&t.a, &["fetch"]).code(1);
        assert_stdout_has(&out, "  diverged: auth (local 12d3850");
        assert_eq!(t.brief_id(&t.a, "auth"), Some(AUTH_A1.to_string()));
    }
    // The old content is their merge base: Bob's changes merge in whole.
    t.run(&t.a, &["resolve", "auth", "--merge"]).success();
    let merged = json(&t.sb.git(&t.a, &["cat-file", "-p", "refs/handoffs/auth"]));
    assert_eq!(
        merged["resume"]["resume_by"],
        "refresh tokens in the background"
    );
    t.run(&t.a, &["push"]).success();
    t.run(&t.b, &["fetch"]).success();
    assert_eq!(t.brief_id(&t.b, "auth"), t.remote_id("auth"));
    assert_keeps_every_0_3_version(&t, &t.a);
}

/// An import of an older content 0.3 recorded is a new version here (a
/// teammate fast-forwards to it) and is echoed in 0.3's shape, the line
/// 0.3's own `import --force` writes.
#[test]
fn importing_an_older_0_3_content_is_echoed_for_0_3() {
    let t = v03_team("final");
    t.run(&t.a, &["fetch"]).success();
    t.run(&t.b, &["fetch"]).success();
    let out = t.run(&t.a, &["show", "ui", "--version", UI_1]).success();
    let folder = t.sb.path("exported");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("ui.json"), stdout(&out)).unwrap();
    let folder = folder.to_str().unwrap();
    t.run(&t.a, &["import", "--force", folder]).success();
    assert_eq!(t.brief_id(&t.a, "ui"), Some(UI_1.to_string()));
    t.run(&t.a, &["push"]).success();
    let echo = v03_line("ui", UI_1, &[UI_2], NOW);
    let notes = remote_notes(&t);
    assert!(notes.lines().any(|l| l == echo), "{echo}\n{notes}");
    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(&out, "  fast-forwarded: ui (4f9d6fe -> 7481bce)");
}

/// The content a 0.3 teammate wrote over, brought back here with `import
/// --force` on top of their version: the 0.3 line's parent blob never
/// stands for a version written over that line's own version (a cycle
/// that made every question about the key answer diverged), so a teammate
/// who holds the 0.3 version fast-forwards to it.
#[test]
fn bringing_back_what_a_0_3_write_was_over_fast_forwards_a_teammate() {
    let t = team();
    let a0 = t.write(&t.a, "k", T1, "a0");
    t.run(&t.a, &["push"]).success();
    let zoe = t.v03_clone("zoe");
    let stored = t.sb.git(&zoe, &["cat-file", "-p", &a0]);
    let theirs = stored.replace(r#""done_when": "a0""#, r#""done_when": "w""#);
    let w = t.push_as_v03(&zoe, "k", &theirs, &[&a0], T2);
    for dir in [&t.a, &t.b] {
        t.run(dir, &["fetch"]).success();
        assert_eq!(t.brief_id(dir, "k"), Some(w.clone()));
    }
    let folder = t.sb.path("exported");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("k.json"), &stored).unwrap();
    let folder = folder.to_str().unwrap();
    t.run(&t.a, &["import", "--force", folder]).success();
    assert_eq!(t.brief_id(&t.a, "k"), Some(a0.clone()));
    t.run(&t.a, &["push"]).success();
    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(&out, "  fast-forwarded: k (");
    assert_eq!(t.brief_id(&t.b, "k"), Some(a0));
}
