//! Hostile input for `import`, `split` and `resume` (and the other read
//! commands): the corpus in `tests/corpus/`, plan-shaped variants, folders
//! of awkward files, and stored briefs that are valid but nasty or not
//! briefs at all. Each refusal is one `error:` line last on stderr, exit 1,
//! nothing written; each render is clean; nothing panics.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use crate::support::setups::*;
use crate::support::*;
use serde_json::{Value, json};

/// `git handoff ARGS` in `dir`, its raw output.
fn run(sb: &Sandbox, dir: &Path, args: &[&str]) -> Output {
    sb.command("git", dir)
        .arg("handoff")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// A refusal: exit 1, no panic, the last stderr line an `error:` line.
fn refused(out: &Output, what: &str) -> String {
    failed_with(out, 1, what)
}

/// A fatal error (corrupt data, I/O): exit 128, as git's die(); no panic,
/// the last stderr line an `error:` line.
fn fatal(out: &Output, what: &str) -> String {
    failed_with(out, 128, what)
}

fn failed_with(out: &Output, code: i32, what: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "{what}: {err}");
    assert_eq!(out.status.code(), Some(code), "{what}: {err}");
    let last = err.lines().last().unwrap_or("");
    // As git: `fatal:` for what dies (128), `error:` for a refusal.
    let prefix = if code == 128 { "fatal: " } else { "error: " };
    assert!(last.starts_with(prefix), "{what}: {err}");
    err
}

/// Everything a command could have written: every ref and every file of
/// the worktree (outside .git) with its content.
fn state(sb: &Sandbox, repo: &Path) -> String {
    let mut files: Vec<String> = walk(repo, &[".git"])
        .into_iter()
        .filter(|p| !p.is_dir() || p.is_symlink())
        .map(|p| {
            let content = std::fs::read(&p).unwrap_or_default();
            format!("{} {}", p.display(), content.len())
        })
        .collect();
    files.sort();
    format!(
        "{}\n{}",
        sb.git(repo, &["for-each-ref", "--format=%(objectname) %(refname)"]),
        files.join("\n")
    )
}

/// A complete brief for `key`, valid against the schema.
fn full_brief(key: &str) -> Value {
    json!({
        "schema_version": "1", "key": key, "timestamp": "2026-11-01T00:00:00Z", "mode": "WRITE",
        "resume": {"done_when": "cargo test passes", "resume_by": "carry on"},
        "state": {"branch": "main", "next_acceptance_check": "cargo test x",
                  "worktree": {"root": "/elsewhere", "is_linked": false, "git_common_dir": "/elsewhere/.git"}}
    })
}

fn generated_huge(sb: &Sandbox) -> PathBuf {
    let huge = sb.path("huge.json");
    if !huge.exists() {
        std::fs::write(
            &huge,
            format!(
                "{{\"why\":\"{}\",\"resume\":{{\"done_when\":\"x\"}}}}",
                "x".repeat(50 * 1024 * 1024)
            ),
        )
        .unwrap();
    }
    huge
}

fn generated_deep(sb: &Sandbox) -> PathBuf {
    let deep = sb.path("deep.json");
    std::fs::write(
        &deep,
        "{\"why\":".to_string() + &"[".repeat(100_000) + &"]".repeat(100_000) + "}",
    )
    .unwrap();
    deep
}

// ---------------------------------------------------------------------------
// import

#[test]
fn import_of_a_folder_of_hostile_files_stores_nothing() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let dir = sb.path("hostile");
    std::fs::create_dir_all(&dir).unwrap();
    let mut expected = Vec::new();
    let mut put = |name: &std::ffi::OsStr, data: &[u8]| {
        std::fs::write(dir.join(name), data).unwrap();
        expected.push(name.to_string_lossy().into_owned());
    };
    for file in corpus_files() {
        put(file.file_name().unwrap(), &std::fs::read(&file).unwrap());
    }
    put(
        "deep.json".as_ref(),
        &std::fs::read(generated_deep(&sb)).unwrap(),
    );
    put(
        "huge.json".as_ref(),
        &std::fs::read(generated_huge(&sb)).unwrap(),
    );
    // Valid briefs whose key is not one.
    for key in [
        "-x", ".x", "x.lock", "@", "a@{b", "a~b", "a^b", "a:b", "a?b", "a*b", "a[b", "a\\b", "a b",
        "a\u{1}b", "a\u{7f}b",
    ] {
        put(
            format!("{key}.json").as_ref(),
            full_brief(key).to_string().as_bytes(),
        );
    }
    let long = "k".repeat(200);
    put(
        format!("{long}.json").as_ref(),
        full_brief(&long).to_string().as_bytes(),
    );
    // The key does not match the file name.
    put(
        "named.json".as_ref(),
        full_brief("other").to_string().as_bytes(),
    );
    // Non-UTF-8 file names: the key is not the name, even when it is its
    // lossy reading.
    put(
        std::ffi::OsStr::from_bytes(b"\xff\xfe.json"),
        full_brief("x").to_string().as_bytes(),
    );
    put(
        std::ffi::OsStr::from_bytes(b"\xff.json"),
        full_brief("\u{fffd}").to_string().as_bytes(),
    );
    // Valid as a file, but more than 1 MiB once stored (indented).
    let mut grows = full_brief("grows");
    grows["state"]["decisions"] = json!(vec!["a"; 200_000]);
    put("grows.json".as_ref(), grows.to_string().as_bytes());
    // Not regular files.
    let outside = sb.path("outside.json");
    std::fs::write(&outside, full_brief("linked").to_string()).unwrap();
    for (name, target) in [
        ("linked.json", outside.clone()),
        ("zero.json", PathBuf::from("/dev/zero")),
        ("loop.json", dir.join("loop.json")),
        ("dangling.json", sb.path("nowhere")),
        ("dir-link.json", PathBuf::from("/etc")),
    ] {
        std::os::unix::fs::symlink(&target, dir.join(name)).unwrap();
        expected.push(name.to_string());
    }
    assert!(
        std::process::Command::new("mkfifo")
            .arg(dir.join("fifo.json"))
            .status()
            .unwrap()
            .success()
    );
    expected.push("fifo.json".into());
    // A directory named like a brief is not a file to import: not listed.
    std::fs::create_dir(dir.join("folder.json")).unwrap();

    let before = state(&sb, &repo);
    let out = run(&sb, &repo, &["import", dir.to_str().unwrap()]);
    let err = refused(&out, "import");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let rows: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(rows.len(), expected.len(), "{text}");
    for row in &rows {
        assert!(row.starts_with("skipped-invalid "), "{row}");
    }
    for name in &expected {
        // Printed with control characters escaped, as JSON would.
        let shown: String = name
            .chars()
            .map(|c| {
                if c.is_control() {
                    format!("\\u{:04x}", c as u32)
                } else {
                    c.to_string()
                }
            })
            .collect();
        assert!(
            rows.iter().any(|r| r.contains(&format!("/{shown}:"))),
            "{name} not reported: {text}"
        );
    }
    assert!(
        text.contains(&format!("0 imported, {} skipped-invalid", expected.len())),
        "{text}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(state(&sb, &repo), before, "nothing written");

    // The JSON report is JSON whatever the names.
    let out = run(&sb, &repo, &["import", dir.to_str().unwrap(), "--json"]);
    refused(&out, "import --json");
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.len(), expected.len());
    assert_eq!(state(&sb, &repo), before, "nothing written");
    eprintln!("import: {} hostile files refused", expected.len());
}

// ---------------------------------------------------------------------------
// split --plan

#[test]
fn split_refuses_hostile_plans_and_writes_nothing() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.write_brief(
        &repo,
        Some("existing"),
        ["cargo test ok passes", "r", "cargo test c"],
        &["--no-lint"],
    )
    .success();
    let before = state(&sb, &repo);
    let mut inputs: Vec<(String, PathBuf)> = corpus_files()
        .into_iter()
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    inputs.push(("deep".into(), generated_deep(&sb)));
    inputs.push(("50 MB".into(), generated_huge(&sb)));
    // Plan-shaped hostile input: each must be refused as a whole.
    let plans = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/plans");
    let mut files: Vec<_> = std::fs::read_dir(plans)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 40);
    inputs.extend(
        files
            .into_iter()
            .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p)),
    );
    for (what, file) in &inputs {
        let f = file.to_str().unwrap();
        for args in [
            vec!["split", "--plan", f, "--yes", "--no-lint"],
            vec!["split", "--plan", f, "--json", "--no-lint"],
        ] {
            let out = run(&sb, &repo, &args);
            refused(&out, &format!("{what} {args:?}"));
            assert!(out.stdout.is_empty(), "{what}: nothing on stdout");
        }
        assert_eq!(state(&sb, &repo), before, "{what}: nothing written");
    }
    // The plan from stdin takes the same path.
    let out = sb
        .handoff_with(&repo, &["split", "--plan", "-", "--yes"], Some("{\"why\":"))
        .code(1);
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert_eq!(state(&sb, &repo), before);
    eprintln!("split: {} hostile plans refused", inputs.len());
}

// ---------------------------------------------------------------------------
// resume and the read commands on stored briefs

/// Store `data` as the brief `key`, as a teammate's push or another tool
/// could: no check of ours on the way in.
fn store_raw(sb: &Sandbox, repo: &Path, key: &str, data: &[u8]) {
    let id = sb.git_stdin(repo, &["hash-object", "-w", "--stdin"], data);
    sb.git(repo, &["update-ref", &format!("refs/handoffs/{key}"), &id]);
}

fn pretty(v: &Value) -> Vec<u8> {
    let mut s = serde_json::to_string_pretty(v).unwrap();
    s.push('\n');
    s.into_bytes()
}

/// Control characters a terminal would act on (everything below 0x20 but
/// newline and tab, DEL, and the C1 range).
fn control_chars(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| c.is_control() && !matches!(c, '\n' | '\t'))
        .collect()
}

#[test]
fn hostile_but_valid_stored_briefs_render_cleanly() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.write_brief(
        &repo,
        Some("base"),
        ["cargo test ok passes", "r", "cargo test c"],
        &["--no-lint"],
    )
    .success();
    let base: Value =
        serde_json::from_str(&sb.git(&repo, &["cat-file", "-p", "refs/handoffs/base"])).unwrap();
    // A symlink in the worktree that leads out of it.
    std::os::unix::fs::symlink("/etc", repo.join("etc-link")).unwrap();
    let secret = sb.path("secret.txt");
    std::fs::write(
        &secret,
        "TOP-SECRET-LINE one\nTOP-SECRET-LINE two\nTOP-SECRET-LINE three\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&secret, repo.join("secret-link.txt")).unwrap();

    let nasty = "a\u{0}b\u{1b}[31mred\u{1b}]0;title\u{7}\r\u{8}\u{7f}\u{9b}2J\u{202e}rtl";
    let mut variants: Vec<(&str, Value)> = Vec::new();
    let mut v = base.clone();
    v["files_read_first"] = json!([
        {"path": "../../../../etc/passwd", "why": "escape"},
        {"path": "/etc/passwd", "why": "absolute"},
        {"path": "a/../../../etc/shadow", "why": "sneaky"},
        {"path": "./../outside", "why": "dot"},
        {"path": "etc-link/passwd", "why": "through a symlink"},
        {"path": "secret-link.txt:1-3", "why": "a symlink to a file outside"},
        {"path": "x\u{0}y", "why": "NUL"},
        {"path": "README:1-99999999999999999999999", "why": "huge range"},
        {"path": "p".repeat(5000), "why": "long"},
        {"path": ":", "why": "colon"},
    ]);
    variants.push(("paths", v));
    let mut v = base.clone();
    v["resume"]["resume_by"] = json!(nasty);
    v["resume"]["done_when"] = json!(nasty);
    v["resume"]["history_pointer"] = json!(nasty);
    v["state"]["next_acceptance_check"] = json!(nasty);
    v["state"]["decisions"] = json!([nasty]);
    v["state"]["commands"] = json!([nasty]);
    v["state"]["tests"] = json!([{"cmd": nasty, "result": "fail"}]);
    v["state"]["branch"] = json!(nasty);
    v["files_read_first"] = json!([{"path": nasty, "why": nasty}]);
    variants.push(("control characters", v));
    let mut v = base.clone();
    v["state"]["decisions"] =
        json!(["TOP-SECRET-LINE one\nTOP-SECRET-LINE two\nTOP-SECRET-LINE three"]);
    v["files_read_first"] = json!([{"path": "secret-link.txt:1-3", "why": "leads out"}]);
    variants.push(("symlink out", v));
    let mut v = base.clone();
    v["state"]["decisions"] = json!(
        (0..10_000)
            .map(|i| format!("decision {i}"))
            .collect::<Vec<_>>()
    );
    v["state"]["open_risks"] = json!(vec!["r"; 10_000]);
    v["files_read_first"] = json!(
        (0..2_000)
            .map(|i| json!({"path": format!("f{i}"), "why": "w"}))
            .collect::<Vec<_>>()
    );
    variants.push(("10,000-entry lists", v));
    let mut v = base.clone();
    v["resume"]["resume_by"] = json!("é".repeat(200_000));
    v["state"]["decisions"] = json!(["🦀".repeat(50_000)]);
    variants.push(("very long strings", v));
    let mut v = base.clone();
    v["state"]["head_sha"] = json!("0000000");
    v["state"]["worktree"]["root"] = json!("/");
    v["timestamp"] = json!("9999-12-31T23:59:59Z");
    variants.push(("impossible facts", v));
    let mut v = base.clone();
    v["state"]["head_sha"] = json!("ffffffffffffffffffffffffffffffffffffffff");
    v["timestamp"] = json!("0000-01-01T00:00:00Z");
    variants.push(("unknown head", v));

    for (what, value) in &variants {
        let key = "hostile";
        let mut value = value.clone();
        value["key"] = json!(key);
        let data = pretty(&value);
        sb.handoff_with(
            &repo,
            &["validate", "-"],
            Some(&String::from_utf8_lossy(&data)),
        )
        .success();
        store_raw(&sb, &repo, key, &data);
        for args in [
            vec!["resume", key],
            vec!["resume", key, "--json"],
            vec!["reground", key],
            vec!["brief", key],
            vec!["show", key],
            vec!["list"],
            vec!["log", key],
            vec!["lint", key],
            vec!["hook", "session-start"],
        ] {
            let out = run(&sb, &repo, &args);
            let err = String::from_utf8_lossy(&out.stderr);
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(!err.contains("panicked"), "{what} {args:?}: {err}");
            assert!(
                matches!(out.status.code(), Some(0) | Some(1)),
                "{what} {args:?}: {err}"
            );
            if out.status.code() == Some(1) && out.stdout.is_empty() {
                assert!(
                    err.lines().last().unwrap_or("").starts_with("error: "),
                    "{what} {args:?}: {err}"
                );
            }
            assert!(!text.contains("root:x:0"), "{what} {args:?}: read outside");
            if args[0] != "show" && !args.contains(&"--json") {
                assert_eq!(
                    control_chars(&text),
                    Vec::<char>::new(),
                    "{what} {args:?}: raw control characters reach the terminal"
                );
            }
            assert_eq!(
                control_chars(&err),
                Vec::<char>::new(),
                "{what} {args:?}: raw control characters on stderr"
            );
        }
        if *what == "paths" {
            let out = stdout(&sb.handoff(&repo, &["resume", key]).success());
            for p in ["../../../../etc/passwd", "a/../../../etc/shadow"] {
                assert!(
                    out.contains(&format!("- Not checked (outside the worktree): {p}")),
                    "{p}: {out}"
                );
            }
            // Issue 58: an absolute path is checked for existence as it
            // is (nothing read); /etc/passwd exists.
            assert!(!out.contains("worktree): /etc/passwd\n"), "{out}");
            assert!(!out.contains("MISSING: /etc/passwd"), "{out}");
        }
        if *what == "symlink out" {
            // Lint never reads a file through a symlink out of the
            // worktree: it reports the pointer instead of comparing the
            // brief with the file's lines.
            let out = run(&sb, &repo, &["lint", key]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!err.contains("copies lines of"), "{err}");
            assert!(
                err.contains("leads outside the worktree through a symlink"),
                "{err}"
            );
        }
    }
    eprintln!("resume: {} hostile stored briefs rendered", variants.len());
}

#[test]
fn unreadable_stored_briefs_are_one_error_line() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let mut too_big = full_brief("big");
    too_big["state"]["decisions"] = json!(vec!["a"; 200_000]);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", vec![]),
        ("not-json", b"{oops".to_vec()),
        (
            "truncated",
            b"{\"schema_version\": \"1\", \"key\": \"trunc".to_vec(),
        ),
        ("array", b"[1, 2]".to_vec()),
        ("partial", b"{\"resume\": {\"done_when\": \"x\"}}".to_vec()),
        ("nul", b"{\"key\": \"a\0b\"}".to_vec()),
        ("non-utf8", b"{\"key\": \"\xff\"}".to_vec()),
        (
            "deep",
            ("[".repeat(100_000) + &"]".repeat(100_000)).into_bytes(),
        ),
        ("big", pretty(&too_big)),
    ];
    for (key, data) in &cases {
        store_raw(&sb, &repo, key, data);
    }
    // A valid brief of this repository, stored under another key.
    sb.write_brief(
        &repo,
        Some("someone-else"),
        ["cargo test ok passes", "r", "cargo test c"],
        &["--no-lint"],
    )
    .success();
    let other = sb.git(&repo, &["rev-parse", "refs/handoffs/someone-else"]);
    sb.git(
        &repo,
        &["update-ref", "refs/handoffs/wrong-key", other.trim()],
    );
    // A ref to a commit, to a tree, a symbolic ref, and one to a missing
    // object.
    sb.git(&repo, &["update-ref", "refs/handoffs/commit", "HEAD"]);
    sb.git(&repo, &["update-ref", "refs/handoffs/tree", "HEAD^{tree}"]);
    sb.git(
        &repo,
        &["symbolic-ref", "refs/handoffs/sym", "refs/heads/main"],
    );
    std::fs::write(
        repo.join(".git/refs/handoffs/ghost"),
        "0123456789abcdef0123456789abcdef01234567\n",
    )
    .unwrap();
    let before = state(&sb, &repo);
    let mut keys: Vec<&str> = cases.iter().map(|(k, _)| *k).collect();
    keys.extend(["commit", "tree", "sym", "ghost", "wrong-key"]);
    for key in &keys {
        for args in [
            vec!["resume", key],
            vec!["resume", key, "--json"],
            vec!["reground", key],
            vec!["brief", key],
        ] {
            let out = run(&sb, &repo, &args);
            // what is stored is damaged: fatal, as git's corrupt objects are
            let err = fatal(&out, &format!("{key} {args:?}"));
            assert_eq!(err.lines().count(), 1, "{key} {args:?}: {err}");
            assert!(err.contains(key), "{key} {args:?}: the key is named: {err}");
            assert!(out.stdout.is_empty(), "{key} {args:?}");
        }
        // lint reads what it can: findings (1), or a damaged brief (128)
        let out = run(&sb, &repo, &["lint", key]);
        assert!(
            matches!(out.status.code(), Some(0) | Some(1) | Some(128)),
            "lint {key}"
        );
        assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    }
    for args in [vec!["list"], vec!["list", "--json"], vec!["resume"]] {
        let out = run(&sb, &repo, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            matches!(out.status.code(), Some(0) | Some(1)),
            "{args:?}: {err}"
        );
    }
    assert_eq!(state(&sb, &repo), before, "reading wrote nothing");
    eprintln!("resume: {} unreadable stored briefs refused", keys.len());
}

// ---------------------------------------------------------------------------
// keys

/// Issue 30, item 4: a key of 70 emoji is 70 characters but 280 bytes, a
/// file name no file system takes. Every way in refuses it with the key
/// rule (exit 1), before anything is written; 62 emoji (248 bytes) fit.
#[test]
fn a_key_too_long_in_bytes_is_refused_with_the_key_rule() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let before = state(&sb, &repo);
    let long = "\u{1F600}".repeat(70);
    let write = [
        "write",
        long.as_str(),
        "--done-when",
        "d",
        "--resume-by",
        "r",
        "--next-check",
        "c",
    ];
    let err = refused(&run(&sb, &repo, &write), "write");
    assert!(err.contains("a key is at most 250 bytes"), "{err}");
    assert!(!err.contains("os error"), "{err}");
    let plan = json!({"why": "w", "threads": [{"key": long, "resume": {"done_when": "d", "resume_by": "r"},
        "state": {"next_acceptance_check": "c"}}]});
    let out = sb
        .handoff_with(
            &repo,
            &["split", "--plan", "-", "--yes", "--no-lint"],
            Some(&plan.to_string()),
        )
        .get_output()
        .clone();
    let err = refused(&out, "split");
    assert!(err.contains("250 bytes"), "{err}");
    assert_eq!(state(&sb, &repo), before, "nothing written on refusal");

    let fits = "\u{1F600}".repeat(62);
    let mut write = write;
    write[1] = fits.as_str();
    let out = run(&sb, &repo, &write);
    assert_eq!(out.status.code(), Some(0), "{:?}", out);
    assert!(
        sb.git(&repo, &["for-each-ref", "refs/handoffs"])
            .contains(&fits)
    );
}
