//! Fitting into git: man pages (fresh, warning-free, found by `git help`),
//! completions (also under git's own bash completion), colour rules, and the
//! documented configuration and environment tables.

use std::path::Path;
use std::process::Command;

use crate::support::*;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn committed_man_pages_are_fresh() {
    let sb = Sandbox::new();
    let out = sb.path("pages");
    sb.handoff(sb.dir.path(), &["install-man", out.to_str().unwrap()])
        .success();
    let committed = Path::new(ROOT).join("man");
    let names = |dir: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let hint = "man/ is stale; regenerate it with `cargo run -q -- install-man man`";
    assert_eq!(names(&out), names(&committed), "{hint}");
    for name in names(&out) {
        let fresh = std::fs::read_to_string(out.join(&name)).unwrap();
        let old = std::fs::read_to_string(committed.join(&name)).unwrap();
        assert!(fresh == old, "{name}: {hint}");
    }
    for section in [
        ".SH DESCRIPTION",
        ".SH \"EXIT STATUS\"",
        ".SH ENVIRONMENT",
        ".SH CONFIGURATION",
        ".SH EXAMPLES",
        ".SH \"SEE ALSO\"",
    ] {
        let root = std::fs::read_to_string(committed.join("git-handoff.1")).unwrap();
        assert!(root.contains(section), "git-handoff.1 lacks {section}");
    }
}

#[test]
fn man_pages_render_without_warnings_and_git_help_finds_them() {
    let sb = Sandbox::new();
    for entry in std::fs::read_dir(Path::new(ROOT).join("man")).unwrap() {
        let path = entry.unwrap().path();
        let out = Command::new("man")
            .args(["--warnings", "-l"])
            .arg(&path)
            .env("LC_ALL", "C")
            .env("MANWIDTH", "80")
            .env("MANPAGER", "cat")
            .output()
            .expect("man runs (install man-db)");
        assert!(out.status.success(), "{}", path.display());
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "",
            "warnings in {}",
            path.display()
        );
    }
    let manroot = sb.path("share/man");
    sb.handoff(
        sb.dir.path(),
        &["install-man", manroot.join("man1").to_str().unwrap()],
    )
    .success();
    let mut cmd = sb.command("git", sb.dir.path());
    cmd.args(["help", "-m", "handoff"])
        .env("MANPATH", &manroot)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "80");
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_ok(&out);
    assert!(text.contains("git-handoff - Save and restore"), "{text}");
    assert!(text.contains("refs/notes/handoffs"), "{text}");
}

#[test]
fn help_works_right_after_the_readme_install() {
    let sb = Sandbox::new();
    // a cargo-install-like prefix: <prefix>/bin/git-handoff
    let prefix = sb.path("prefix");
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    std::fs::copy(
        env!("CARGO_BIN_EXE_git-handoff"),
        prefix.join("bin/git-handoff"),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        prefix.join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    let run = |args: &[&str], manpath: Option<&Path>| {
        let mut cmd = sb.command("git", sb.dir.path());
        cmd.args(args)
            .env("PATH", &path)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "80")
            .env_remove("MANPATH");
        if let Some(m) = manpath {
            cmd.env("MANPATH", m);
        }
        cmd.output().unwrap()
    };
    // before install-man: -h says how to get the man pages
    let empty = sb.path("no-man");
    std::fs::create_dir_all(&empty).unwrap();
    let out = run(&["handoff", "-h"], Some(&empty));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.trim_end().lines().last().unwrap(),
        "No man pages for `git handoff --help` to open: run `git handoff install-man`",
        "{text}"
    );
    // the README's second step, with no directory: next to the binary
    let out = run(&["handoff", "install-man"], None);
    assert_ok(&out);
    assert!(prefix.join("share/man/man1/git-handoff.1").exists());
    // man finds them through PATH (no MANPATH), so --help works
    let out = run(&["handoff", "--help"], None);
    assert_ok(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("git-handoff - Save and restore"));
    let out = run(&["handoff", "-h"], None);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("No man pages"));
}

#[test]
fn short_help_prints_without_a_pager() {
    let sb = Sandbox::new();
    let out = sb.handoff(sb.dir.path(), &["-h"]).success();
    assert!(stdout(&out).contains("Usage: git handoff [COMMAND]"));
}

/// The front door (issue 50): `-h` lists the commands grouped by what you
/// want to do, the common ones first, in at most 40 lines (with the hint
/// that the man pages are missing); every subcommand is named in it.
#[test]
fn short_help_groups_the_commands_in_40_lines() {
    let sb = Sandbox::new();
    let text = stdout(&sb.handoff(sb.dir.path(), &["-h"]).success());
    assert!(
        text.lines().count() <= 40,
        "{} lines:\n{text}",
        text.lines().count()
    );
    let headings: Vec<&str> = text.lines().filter(|l| l.ends_with(':')).collect();
    assert_eq!(
        headings,
        [
            "Hand off:",
            "Pick up:",
            "Share with a team:",
            "Split the work:",
            "Agents:",
            "History and tidying:",
            "Plumbing:",
            "Options:"
        ]
    );
    assert!(text.contains("\n  write     Write a brief"), "{text}");
    let all = stdout(&sb.handoff(sb.dir.path(), &["help", "help"]).success());
    assert!(all.contains("Usage: git handoff help"), "{all}");
    let mut cmd = <git_handoff::Cli as clap::CommandFactory>::command();
    cmd.build();
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        assert!(
            text.contains(&format!("  {} ", sub.get_name()))
                || text.contains(&format!(" {},", sub.get_name()))
                || text.contains(&format!(" {}\n", sub.get_name())),
            "{} missing from -h",
            sub.get_name()
        );
    }
}

/// Issue 57: `git handoff --help` without a terminal is git's `man
/// git-handoff` printed whole, and a fresh agent reads its head: the way
/// to pick up the brief waiting here comes first, whole on one line.
#[test]
fn the_manual_page_leads_with_how_to_resume() {
    let page = render("git-handoff.1");
    let head: Vec<String> = page
        .lines()
        .take(15)
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert!(
        head.iter().any(|l| l.contains("`git handoff resume`")),
        "{}",
        head.join("\n")
    );
}

/// A page of man/ as `man` prints it to a pipe, 80 columns wide.
fn render(page: &str) -> String {
    let out = Command::new("man")
        .args(["-l", page])
        .current_dir(Path::new(ROOT).join("man"))
        .env("LC_ALL", "C")
        .env("MANWIDTH", "80")
        .env("MANPAGER", "cat")
        .output()
        .expect("man runs (install man-db)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// git-handoff(1) reads in at most 150 lines at 80 columns and opens with
/// the three flows; githandoff(7) keeps the detail it no longer holds.
#[test]
fn the_manual_page_is_short_and_the_detail_has_a_home() {
    let root = render("git-handoff.1");
    assert!(
        root.lines().count() <= 150,
        "{} lines",
        root.lines().count()
    );
    let description = &root[root.find("DESCRIPTION").unwrap()..root.find("COMMANDS").unwrap()];
    let description = description.split_whitespace().collect::<Vec<_>>().join(" ");
    for flow in [
        "Resume, in any worktree or after /clear: `git handoff resume`",
        "Hand off:",
        "Pick up a teammate's work:",
    ] {
        assert!(description.contains(flow), "{flow}\n{description}");
    }
    let concepts = render("githandoff.7");
    for (key, _, _) in git_handoff::manual::CONFIG {
        assert!(concepts.contains(key), "{key} missing from githandoff(7)");
    }
    for (var, _) in git_handoff::manual::ENVIRONMENT {
        assert!(concepts.contains(var), "{var} missing from githandoff(7)");
    }
    let source = std::fs::read_to_string(Path::new(ROOT).join("man/githandoff.7")).unwrap();
    assert!(
        source.contains("the last version both sides agreed on"),
        "the sharing model"
    );
}

#[test]
fn completions_generate_for_each_shell() {
    let sb = Sandbox::new();
    for (shell, needle) in [
        ("bash", "_git__handoff()"),
        ("zsh", "#compdef git-handoff"),
        ("fish", "complete -c git-handoff"),
    ] {
        let out = sb.handoff(sb.dir.path(), &["completions", shell]).success();
        let text = stdout(&out);
        assert!(text.contains(needle), "{shell}");
        assert!(text.contains("resume"), "{shell}");
    }
    sb.handoff(sb.dir.path(), &["completions", "tcsh"]).code(2);
}

/// How bash calls a `complete -F` function: command, current word, previous word.
const DIRECT: &str =
    r#"_git_handoff_direct git-handoff "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}""#;

/// Complete `line` in a real bash with git's completion and ours loaded.
fn complete(sb: &Sandbox, dir: &Path, line: &str, entry: &str) -> Vec<String> {
    let git_completion = [
        "/usr/share/bash-completion/completions/git",
        "/usr/share/git/completion/git-completion.bash",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
    .expect("git's bash completion is installed");
    let script = sb.path("complete.sh");
    std::fs::write(
        &script,
        stdout(&sb.handoff(sb.dir.path(), &["completions", "bash"])),
    )
    .unwrap();
    let program = format!(
        r#"source {git_completion}
source {ours}
COMP_LINE='{line}'
COMP_POINT=${{#COMP_LINE}}
read -ra COMP_WORDS <<< "$COMP_LINE"
[[ "$COMP_LINE" == *' ' ]] && COMP_WORDS+=('')
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
{entry}
printf '%s\n' "${{COMPREPLY[@]}}"
"#,
        ours = script.display(),
    );
    let out = sb
        .command("bash", dir)
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .unwrap();
    assert_ok(&out);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn bash_completes_subcommands_and_keys_also_under_git() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    for key in ["feat-a", "feat-b"] {
        sb.write_brief(&repo, Some(key), ["d", "r", "c"], &[])
            .success();
    }
    assert_eq!(
        complete(&sb, &repo, "git handoff resu", "__git_wrap__git_main"),
        ["resume"]
    );
    assert_eq!(
        complete(
            &sb,
            &repo,
            "git handoff resume feat-",
            "__git_wrap__git_main"
        ),
        ["feat-a", "feat-b"]
    );
    let direct = complete(&sb, &repo, "git-handoff resu", DIRECT);
    assert_eq!(direct, ["resume"]);
    let keys = complete(&sb, &repo, "git-handoff show ", DIRECT);
    assert_eq!(keys, ["feat-a", "feat-b"]);
}

#[test]
fn colour_only_when_asked_and_never_under_no_color() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.write_brief(&repo, None, ["d", "r", "c"], &["--read", "gone.rs=x"])
        .success();
    // piped: plain
    let plain = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(!plain.contains('\x1b'), "{plain:?}");
    sb.git(&repo, &["config", "color.handoff", "always"]);
    let colored = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        colored.contains("\x1b[1;31m!! MISSING: gone.rs\x1b[0m"),
        "{colored:?}"
    );
    let json = stdout(&sb.handoff(&repo, &["resume", "--json"]).success());
    assert!(!json.contains('\x1b'), "JSON is never coloured");
    let mut cmd = assert_cmd::Command::from_std(sb.command("git", &repo));
    cmd.args(["handoff", "resume"]).env("NO_COLOR", "1");
    let out = cmd.assert().success();
    assert!(!stdout(&out).contains('\x1b'));
    sb.git(&repo, &["config", "color.handoff", "never"]);
    sb.git(&repo, &["config", "color.ui", "always"]);
    assert!(
        !stdout(&sb.handoff(&repo, &["resume"]).success()).contains('\x1b'),
        "color.handoff beats color.ui"
    );
}

#[test]
fn colour_follows_what_a_line_is_not_what_it_starts_with() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    // A next step whose later lines look like a heading, a warning and
    // the current-key marker: content, never coloured.
    let step = "step one\n# not a heading\n!! not a warning\n* not a key";
    // (`other` first: the last key written is the session's, and resume
    // reads it)
    sb.write_brief(&repo, Some("other"), ["d2", "r2", "c2"], &[])
        .success();
    sb.write_brief(&repo, Some("main"), ["tests pass", step, "cargo test"], &[])
        .success();
    sb.git(&repo, &["config", "color.handoff", "always"]);
    let colored = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        colored.contains("\x1b[1m# Resume — main\x1b[0m\n"),
        "{colored:?}"
    );
    assert!(
        colored.contains("step one\n  # not a heading\n  !! not a warning\n  * not a key\n"),
        "{colored:?}"
    );
    let listed = stdout(&sb.handoff(&repo, &["list"]).success());
    assert!(listed.starts_with("\x1b[32m* main "), "{listed:?}");
    assert!(listed.contains("\n  other "), "{listed:?}");
    for args in [
        &["list", "--json"][..],
        &["resume", "--json"],
        &["log", "--json"],
    ] {
        let json = stdout(&sb.handoff(&repo, args).success());
        assert!(!json.contains('\x1b'), "{args:?}: JSON is never coloured");
    }
    // Without colour the bytes are the coloured ones minus the escapes.
    sb.git(&repo, &["config", "color.handoff", "never"]);
    let plain = stdout(&sb.handoff(&repo, &["resume"]).success());
    let stripped = colored.replace("\x1b[1m", "").replace("\x1b[0m", "");
    assert_eq!(plain, stripped);
}

fn source_files(dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            source_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(std::fs::read_to_string(path).unwrap());
        }
    }
}

/// Every `handoff.*` config key and `GIT_HANDOFF_*` variable the code
/// reads is in the manual's tables and in docs/configuration.md.
#[test]
fn every_config_key_and_variable_is_documented() {
    let mut sources = Vec::new();
    source_files(&Path::new(ROOT).join("src"), &mut sources);
    let readme = std::fs::read_to_string(Path::new(ROOT).join("docs/configuration.md")).unwrap();
    let page = std::fs::read_to_string(Path::new(ROOT).join("man/git-handoff.1")).unwrap();
    let key_re = regex::Regex::new(r#""(handoff\.[A-Za-z]+)""#).unwrap();
    let env_re = regex::Regex::new(r#""(GIT_HANDOFF_[A-Z_]+)""#).unwrap();
    let mut keys = std::collections::BTreeSet::new();
    let mut vars = std::collections::BTreeSet::new();
    for src in &sources {
        keys.extend(key_re.captures_iter(src).map(|c| c[1].to_string()));
        vars.extend(env_re.captures_iter(src).map(|c| c[1].to_string()));
    }
    assert!(
        keys.contains("handoff.narrative") && vars.contains("GIT_HANDOFF_NOW"),
        "the scan works"
    );
    for key in &keys {
        assert!(
            git_handoff::manual::CONFIG.iter().any(|(k, _, _)| k == key),
            "{key} missing from manual::CONFIG"
        );
        assert!(
            readme.contains(&format!("`{key}`")),
            "{key} missing from docs/configuration.md's table"
        );
        assert!(
            page.contains(key.as_str()),
            "{key} missing from git-handoff.1"
        );
    }
    for var in &vars {
        assert!(
            git_handoff::manual::ENVIRONMENT
                .iter()
                .any(|(k, _)| k.contains(var.as_str())),
            "{var} missing from manual::ENVIRONMENT"
        );
        assert!(
            readme.contains(var.as_str()),
            "{var} missing from docs/configuration.md"
        );
    }
}

#[test]
fn demo_shows_every_warning_and_never_touches_the_current_repository() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let before = sb.git(&repo, &["for-each-ref"]);
    let dir = sb.path("demo");
    let out = sb
        .handoff(&repo, &["demo", dir.to_str().unwrap()])
        .success();
    let text = stdout(&out);
    for tag in [
        "!! REPO MISMATCH",
        "!! BRANCH MISMATCH",
        "!! STALE",
        "!! MISSING",
        "!! CHANGED",
        "!! DIRTY",
        "Commits since brief written: 2",
    ] {
        assert!(text.contains(tag), "{tag} missing from the tour:\n{text}");
    }
    assert_eq!(
        sb.git(&repo, &["for-each-ref"]),
        before,
        "the current repository is untouched"
    );
    assert_eq!(sb.git(&repo, &["status", "--porcelain"]), "");
    assert!(dir.join("app/.git").exists());
    // a non-empty directory is refused
    sb.handoff(&repo, &["demo", dir.to_str().unwrap()])
        .code(1)
        .stderr(predicates::str::contains("not empty"));
}

#[test]
fn the_agent_integration_files_work_as_shipped() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let skill =
        std::fs::read_to_string(Path::new(ROOT).join("contrib/claude/skills/git-handoff/SKILL.md"))
            .unwrap();
    let start = skill.find("<<'JSON'\n").unwrap() + "<<'JSON'\n".len();
    let end = skill[start..].find("\nJSON\n").unwrap() + start;
    let example = &skill[start..end];
    let out = sb
        .handoff_with(&repo, &["write", "-F", "-"], Some(example))
        .success();
    assert!(stdout(&out).contains("Wrote brief 'main'"));
    let settings: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(ROOT).join("contrib/claude/settings.json")).unwrap(),
    )
    .unwrap();
    for (event, sub) in [
        ("SessionStart", "session-start"),
        ("PreCompact", "pre-compact"),
    ] {
        let command = settings["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap();
        assert_eq!(command, format!("git handoff hook {sub}"));
        let args: Vec<&str> = command.split(' ').skip(2).collect();
        sb.handoff_with(&repo, &args, Some(r#"{"source":"compact"}"#))
            .success();
    }
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    assert!(
        readme.contains("git handoff hook session-start") && readme.contains("contrib/claude/")
    );
}

fn editor_script(sb: &Sandbox, name: &str, body: &str) -> String {
    let path = sb.path(name);
    std::fs::write(&path, format!("#!/bin/sh\nset -e\n{body}\n")).unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&path)
        .status()
        .unwrap();
    path.display().to_string()
}

fn write_with_editor(sb: &Sandbox, repo: &Path, editor: &str) -> assert_cmd::assert::Assert {
    let mut cmd = assert_cmd::Command::from_std(sb.command("git", repo));
    cmd.args(["handoff", "write", "--edit", "--no-lint"])
        .env("GIT_EDITOR", editor);
    cmd.assert()
}

#[test]
fn the_editor_flow_saves_fixes_and_aborts_like_git_commit() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let valid = r#"{"resume":{"done_when":"cargo test ok","resume_by":"edit"},"state":{"next_acceptance_check":"cargo test x"}}"#;
    let capture = sb.path("template.txt");
    // a valid save; the template is kept for inspection
    let ed = editor_script(
        &sb,
        "ok.sh",
        &format!(
            "cp \"$1\" '{}'\nprintf '%s' '{valid}' > \"$1\"",
            capture.display()
        ),
    );
    write_with_editor(&sb, &repo, &ed).success();
    let template = std::fs::read_to_string(&capture).unwrap();
    assert!(
        template.contains("# Lines starting with # are ignored"),
        "{template}"
    );
    assert!(
        template.contains("\"done_when\": \"\""),
        "an empty skeleton the first time: {template}"
    );
    let brief: serde_json::Value =
        serde_json::from_str(&sb.git(&repo, &["cat-file", "-p", "refs/handoffs/main"])).unwrap();
    assert_eq!(brief["resume"]["resume_by"], "edit");
    // the next time, the template is prefilled with the current brief
    let ed = editor_script(
        &sb,
        "look.sh",
        &format!(
            "cp \"$1\" '{}'\nprintf '%s' '{}' > \"$1\"",
            capture.display(),
            valid.replace("edit", "edit again")
        ),
    );
    write_with_editor(&sb, &repo, &ed).success();
    let template = std::fs::read_to_string(&capture).unwrap();
    assert!(template.contains("\"resume_by\": \"edit\""), "{template}");
    let body: String = template.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(
        !body.contains("head_sha") && !body.contains("\"key\"") && !body.contains("timestamp"),
        "filled-in fields are not offered: {body}"
    );

    // invalid, then fixed: the errors come back as comments
    let count = sb.path("count");
    let invalid = valid.replace("cargo test ok", "");
    let ed = editor_script(
        &sb,
        "fix.sh",
        &format!(
            "if [ -e '{c}' ]; then grep -q '^# error: resume.done_when' \"$1\" && printf '%s' '{valid}' > \"$1\"; else touch '{c}'; printf '%s' '{invalid}' > \"$1\"; fi",
            c = count.display()
        ),
    );
    write_with_editor(&sb, &repo, &ed).success();
    assert!(count.exists(), "the editor ran twice");

    // empty: aborted, nothing written
    let before = handoff_refs(&sb, &repo);
    let narrative = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    let ed = editor_script(&sb, "empty.sh", "printf '# just a comment\\n' > \"$1\"");
    let out = write_with_editor(&sb, &repo, &ed).code(1);
    assert_stderr_has(&out, "the brief is empty; aborted, nothing was written");
    assert_eq!(handoff_refs(&sb, &repo), before);
    assert_eq!(
        std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap(),
        narrative
    );
    assert!(
        !repo.join(".git/HANDOFF_EDITBRIEF.json").exists(),
        "the edit file is cleaned up"
    );

    // saved unchanged: nothing written (like an untouched commit message)
    let out = write_with_editor(&sb, &repo, "true").code(1);
    assert_stderr_has(&out, "the brief was not changed; nothing was written");
    assert_eq!(handoff_refs(&sb, &repo), before);
    // a failing editor aborts too
    let ed = editor_script(&sb, "fail.sh", "exit 3");
    write_with_editor(&sb, &repo, &ed)
        .code(1)
        .stderr(predicates::str::contains("nothing was written"));
    // not on a terminal and no input: an error, not a hang
    sb.handoff(&repo, &["write"])
        .code(1)
        .stderr(predicates::str::contains("nothing to write"));
}

/// The README's walkthrough, pasted into bash as a newcomer would.
#[test]
fn the_readme_walkthrough_runs_as_written() {
    let sb = Sandbox::new();
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let section = &readme[readme.find("## 60-second walkthrough").unwrap()..];
    let mut blocks = section
        .split("```sh\n")
        .skip(1)
        .map(|b| &b[..b.find("```").unwrap()]);
    let walkthrough = blocks.next().unwrap();
    let plain_git = blocks.next().unwrap();
    let json = blocks.next().unwrap();
    let script = format!("set -e\n{walkthrough}\n{plain_git}\n{json}\n");
    let out = sb
        .command("bash", sb.dir.path())
        .args(["--noprofile", "--norc", "-c", &script])
        .env("TMPDIR", sb.dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the walkthrough failed:\n{text}\n{err}"
    );
    for expected in [
        "!! BRANCH MISMATCH: brief is for 'feat/jwt', checked out in ",
        "— drift below is measured on 'feat/jwt'",
        "create: feat-jwt",
        "created: feat-jwt",
        "# Resume — feat-jwt",
        "Commits since brief written: 0",
        "blob\trefs/handoffs/feat-jwt",
        "Notes (handoffs):",
        "handoff-validate: OK",
        "Dropped brief 'feat-jwt'",
    ] {
        assert!(
            text.contains(expected),
            "{expected:?} missing from:\n{text}"
        );
    }
}

/// The shipped skill and `/handoff-resume` command teach the whole method
/// (issue 16, item 8; issue 34 names the gates as the method does: Forget,
/// Input, Output): every mode, the key rules, READ's six steps, the PIPELINE
/// rules, the gates and continue-or-fork — and what they show runs: each
/// `git handoff <command>` they name exists, the method's pipeline stage
/// format is accepted, and `/handoff-resume`'s command resumes and makes the key
/// the session's.
#[test]
fn the_skill_and_resume_command_teach_the_method_as_shipped() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let read = |p: &str| std::fs::read_to_string(Path::new(ROOT).join(p)).unwrap();
    let skill = read("contrib/claude/skills/git-handoff/SKILL.md");
    let command = read("contrib/claude/commands/handoff-resume.md");
    for needle in [
        "WRITE",
        "READ",
        "RECOVER",
        "REGROUND",
        "SPLIT",
        "BRIEF",
        "PIPELINE",
        "unless the branch changed",
        "The selected key becomes the sticky",
        "highest-ROI",
        "Redact secrets, API keys, tokens and PII",
        "Read the `files_read_first`",
        "Do not open `PROJECT_STATE.md` by default",
        "Resumed from <key>",
        "offer to `cd`",
        "Sprint contract",
        "No self-grading",
        "at most 3 iterations by default and 5 as a hard limit",
        // issue 58: the loop stops at the evaluator's pass mark or after
        // two iterations without a score gain (no longer "on a stall")
        "stop\n  at the pass mark, or after two iterations without a score gain",
        "Sequential when in doubt",
        "never run parallel stages on overlapping\n  files",
        "Synthesis is not concatenation",
        "continue or fork?",
        "Forget gate",
        "Input gate",
        "Output gate",
        "fork done",
        "RECOVER instead",
    ] {
        assert!(
            skill.contains(needle),
            "the skill does not teach {needle:?}"
        );
    }
    for needle in [
        "git handoff resume $ARGUMENTS",
        "files_read_first",
        "Do not open `.claude/PROJECT_STATE.md` by default",
        "Resumed from <key>",
        "offer to `cd` there",
        "session key",
    ] {
        assert!(
            command.contains(needle),
            "/handoff-resume does not say {needle:?}"
        );
    }
    // Every subcommand the skill names exists.
    let named = regex::Regex::new(r"git handoff ([a-z][a-z-]+)").unwrap();
    let mut subs: Vec<&str> = named
        .captures_iter(&skill)
        .chain(named.captures_iter(&command))
        .map(|c| c.get(1).unwrap().as_str())
        .collect();
    subs.sort_unstable();
    subs.dedup();
    assert!(subs.len() >= 12, "{subs:?}");
    for sub in subs {
        sb.handoff(&repo, &[sub, "--help"]).success();
    }
    // The stage format the skill teaches is the one `pipeline save` takes.
    let template = "## When to use\nbig features\n\n## Decomposition axis\nstage\n\n## Stages\n1. **explore** (parallel) — read-only explorers\n2. **build** (sequential) — the lead\n\n## Synthesis\nmerge and re-check\n";
    assert!(skill.contains("`1. **<stage-name>** (parallel | sequential | background)`"));
    sb.handoff_with(&repo, &["pipeline", "save", "p", "-F", "-"], Some(template))
        .success();
    // `/handoff-resume`'s command, as shipped, with a split thread as its argument.
    let plan = r#"{"why":"w","threads":[{"key":"api-docs","resume":{"done_when":"make docs passes","resume_by":"r"},"state":{"next_acceptance_check":"make docs"}}]}"#;
    sb.handoff_with(&repo, &["split", "--plan", "-", "--yes"], Some(plan))
        .success();
    let line = command
        .lines()
        .find(|l| l.contains("git handoff resume $ARGUMENTS"))
        .unwrap();
    let start = line.find("`git handoff ").unwrap() + "`git handoff ".len();
    let end = start + line[start..].find('`').unwrap();
    let args: Vec<String> = line[start..end]
        .replace("$ARGUMENTS", "api-docs")
        .split(' ')
        .map(String::from)
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = stdout(&sb.handoff(&repo, &args).success());
    assert!(out.contains("api-docs"), "{out}");
    let out = sb
        .write_brief(&repo, None, ["make docs passes", "next", "make docs"], &[])
        .success();
    assert_stdout_has(&out, "Wrote brief 'api-docs'");
}

#[test]
fn help_works_after_any_first_call_without_an_install_step() {
    let sb = Sandbox::new();
    // A binary copied onto PATH (as `cargo install` or a package leaves it).
    let prefix = sb.path("prefix");
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    let exe = prefix.join("bin/git-handoff");
    std::fs::copy(env!("CARGO_BIN_EXE_git-handoff"), &exe).unwrap();
    // Without the directories of an installed git-handoff, whose pages
    // `man` would find beside it.
    let rest: Vec<String> = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .filter(|dir| !dir.join("git-handoff").exists())
        .map(|dir| dir.display().to_string())
        .collect();
    let path = format!("{}:{}", prefix.join("bin").display(), rest.join(":"));
    let run = |args: &[&str]| {
        sb.command("git", sb.dir.path())
            .args(args)
            .env("PATH", &path)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "80")
            .env_remove("MANPATH")
            .output()
            .unwrap()
    };
    let page = prefix.join("share/man/man1/git-handoff.1");
    let out = run(&["handoff", "--help"]);
    assert!(!out.status.success(), "no page before any call");
    assert!(!page.exists());
    // Any first call, even one that fails (here: outside a repository).
    let out = run(&["handoff", "list"]);
    assert_eq!(out.status.code(), Some(128));
    assert!(page.exists(), "the pages are written beside the binary");
    let out = run(&["handoff", "--help"]);
    assert_ok(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("git-handoff - Save and restore"));
    // Pages older than the binary (an upgrade) are rewritten on its first
    // run; current ones are left alone.
    let status = Command::new("touch")
        .args(["-d", "2001-01-01 00:00:00"])
        .arg(&page)
        .status()
        .unwrap();
    assert!(status.success());
    let year_2002 = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_009_843_200);
    assert!(std::fs::metadata(&page).unwrap().modified().unwrap() < year_2002);
    run(&["handoff", "--version"]);
    let written = std::fs::metadata(&page).unwrap().modified().unwrap();
    assert!(written > year_2002, "the stale page was rewritten");
    run(&["handoff", "--version"]);
    assert_eq!(
        std::fs::metadata(&page).unwrap().modified().unwrap(),
        written
    );
    assert_ok(&run(&["handoff", "--help"]));
}

/// Issue 57: off a terminal `-h` wraps at 80 columns, the top level's and
/// every subcommand's; a subcommand's required flags come first, one
/// clause each; every `-h` ends naming the glossary.
#[test]
fn every_short_help_fits_80_columns_and_lists_required_flags_first() {
    let sb = Sandbox::new();
    let mut cmd = <git_handoff::Cli as clap::CommandFactory>::command();
    cmd.build();
    let mut pages = vec![(
        String::new(),
        stdout(&sb.handoff(sb.dir.path(), &["-h"]).success()),
    )];
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        let name = sub.get_name().to_string();
        let text = stdout(&sb.handoff(sb.dir.path(), &[&name, "-h"]).success());
        pages.push((name, text));
    }
    for (name, text) in &pages {
        for line in text.lines() {
            assert!(
                line.chars().count() <= 80,
                "`git handoff {name} -h` has a line of {} columns:\n{line}",
                line.chars().count()
            );
        }
        assert!(text.contains("Terms: docs/glossary.md"), "{name}:\n{text}");
    }
    let options = |name: &str| -> Vec<String> {
        let text = &pages.iter().find(|(n, _)| n == name).unwrap().1;
        text[text.find("Options:\n").unwrap()..]
            .lines()
            .skip(1)
            .filter(|l| l.trim_start().starts_with('-'))
            .map(str::to_string)
            .collect()
    };
    let write = options("write");
    for (line, flag) in write
        .iter()
        .zip(["--done-when", "--next-check", "--resume-by"])
    {
        assert!(
            line.contains(flag) && line.contains("Required: "),
            "{write:#?}"
        );
    }
    assert!(!write[3].contains("Required"), "{write:#?}");
    assert!(
        options("fork")[0].contains("--purpose"),
        "{:#?}",
        options("fork")
    );
}

/// Issue 57: `git handoff CMD --help` opens git-handoff-CMD(1) on a
/// terminal, as `git commit --help` does; in a pipe (an agent) it prints
/// the command's own help, not a whole page; `git help handoff-CMD` finds
/// the page of installed man pages.
#[test]
fn subcommand_help_opens_its_page_on_a_terminal_and_git_help_finds_it() {
    let sb = Sandbox::new();
    let manroot = sb.path("prefix/share/man");
    sb.handoff(
        sb.dir.path(),
        &["install-man", manroot.join("man1").to_str().unwrap()],
    )
    .success();
    let run = |program: &str, args: &[&str]| {
        let out = sb
            .command(program, sb.dir.path())
            .args(args)
            .env("MANPATH", &manroot)
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env("MANWIDTH", "80")
            .output()
            .unwrap();
        assert_ok(&out);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let page = run("git", &["help", "handoff-write"]);
    assert!(page.starts_with("git-handoff-write(1)"), "{page}");
    assert!(page.contains("EXIT STATUS"), "{page}");
    let piped = run("git", &["handoff", "write", "--help"]);
    assert!(piped.starts_with("Write a brief for KEY"), "{piped}");
    assert!(!piped.contains("EXIT STATUS"), "{piped}");
    // A terminal: `script` gives the command one.
    let terminal = run("script", &["-qec", "git handoff write --help", "/dev/null"]);
    assert!(
        terminal.contains("git-handoff-write(1)        General Commands Manual"),
        "{terminal}"
    );
}
