//! The manual: man pages generated from the clap definition (with the
//! concept, exit status, environment, configuration, examples and see-also
//! sections clap does not know), shell completions, and the tables of
//! configuration keys and environment variables they document.

use std::path::{Path, PathBuf};

use clap::Command;
use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, roman};

/// Every git config key git-handoff reads: key, default, meaning.
pub const CONFIG: &[(&str, &str, &str)] = &[
    (
        "handoff.narrative",
        ".claude/PROJECT_STATE.md",
        "narrative log path, relative to the worktree root; false (or no, off, 0) turns the narrative off: writes add no entry and create no file",
    ),
    (
        "handoff.staleHours",
        "24",
        "age in hours from which resume warns STALE",
    ),
    (
        "handoff.briefMaxLines",
        "30",
        "line cap of `git handoff brief`: may lower the method's ceiling of 30, never lift it",
    ),
    (
        "handoff.lockTimeout",
        "10000",
        "ms to wait for another writer's lock on the narrative file",
    ),
    (
        "handoff.syncLockTimeout",
        "60000",
        "ms a fetch, push or resolve waits for another one with the same remote",
    ),
    (
        "handoff.strict",
        "false",
        "lint findings are errors that write nothing",
    ),
    (
        "handoff.redactEmails",
        "true",
        "redact e-mail addresses as well as secrets",
    ),
    (
        "color.handoff",
        "color.ui, else auto",
        "colour: always, never, auto (only on a terminal)",
    ),
    (
        "core.filesRefLockTimeout",
        "5000 (git's own default is 100)",
        "ms to wait for a ref lock",
    ),
    (
        "handoff.remote",
        "the current branch's upstream remote, else origin",
        "the remote push, fetch and resolve use when none is named",
    ),
    (
        "notes.rewriteRef",
        "unset; `git handoff init` adds refs/notes/handoffs",
        "history notes follow rebase and commit --amend",
    ),
    (
        "notes.handoffs.mergeStrategy",
        "unset; `git handoff init` sets cat_sort_uniq",
        "how a plain `git notes --ref=handoffs merge` merges the history (union of lines)",
    ),
    (
        "handoff.contextWindow",
        "by model: 200000, 1000000 for 1M variants",
        "context window for `git handoff usage` (200k, 1M accepted)",
    ),
    (
        "handoff.threshold",
        "40",
        "utilization in percent from which `git handoff usage` says it is time to hand off",
    ),
    (
        "handoff.autoDraft",
        "true",
        "the pre-compact and session-end hooks store a draft from the transcript (mode AUTO) when the session wrote no brief; false turns that off",
    ),
    (
        "handoff.health",
        "true",
        "the user-prompt-submit hook suggests `git handoff reground` (recover when the context is nearly full) when the transcript shows recall degrading; false turns it off",
    ),
    (
        "merge.handoff-narrative.driver, .name",
        "unset; `git handoff init` sets them",
        "the narrative merge driver (git handoff merge-narrative %O %A %B %P)",
    ),
];

/// Every environment variable git-handoff reads: name, meaning.
pub const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "GIT_HANDOFF_NOW",
        "the clock: 2026-11-30T09:00:00Z or @<unix seconds>; for tests and replays",
    ),
    (
        "GIT_HANDOFF_KEY",
        "the key of keyless commands, over the worktree's sticky key and the branch's",
    ),
    (
        "GIT_HANDOFF_SESSION",
        "the agent session a command runs in (else the one the session-start hook last saw begin in the worktree): a sticky key holds for the session that chose it",
    ),
    (
        "CLAUDE_ENV_FILE",
        "set by Claude Code for its SessionStart hooks: `hook session-start` appends `export GIT_HANDOFF_SESSION=<session_id>` to it",
    ),
    (
        "GIT_HANDOFF_STALE_HOURS",
        "the stale threshold of resume, over handoff.staleHours",
    ),
    (
        "GIT_HANDOFF_HEALTH",
        "0, false, off or no: the user-prompt-submit hook says nothing, as handoff.health false",
    ),
    ("NO_COLOR", "when set and not empty, no colour"),
    (
        "TMPDIR",
        "where fork and hand-back files go (the OS temp dir otherwise)",
    ),
    (
        "CLAUDE_CONFIG_DIR",
        "where `git handoff usage` and `draft` look for transcripts (~/.claude otherwise)",
    ),
    ("GIT_DIR, GIT_WORK_TREE", "honoured as git does"),
    (
        "GIT_HANDOFF_FAILPOINT",
        "test-only: stop at a named stage so a test can kill the process there",
    ),
    (
        "GIT_HANDOFF_FAILPOINT_RESUME",
        "test-only: at that stage, wait until this file exists, then go on",
    ),
    (
        "GIT_HANDOFF_BENCH_PREFILTER",
        "bench-only: stop every redaction after the rules' keyword prefilter (bench/run's baseline)",
    ),
];

const CONCEPT: &[&str] = &[
    "git-handoff saves and restores the working state of a coding session, a person's or an AI agent's, so that the next session, a subagent or a teammate can act on it at once.",
    "A brief is a typed JSON packet (schema version 1; `git handoff schema` prints it): what done means, the next step, the next acceptance check, locked decisions, rejected paths, open risks, tests, files to read first. It is stored as a blob under refs/handoffs/<key> in the repository's common git directory, so every linked worktree sees it and plain git reads it: git cat-file -p refs/handoffs/<key>. Ref updates are compare-and-swap transactions: a writer never silently replaces a version written meanwhile.",
    "Every version is also appended, as one JSON line, to the git note of the commit it was written at, in refs/notes/handoffs: git log --notes=handoffs shows each handoff beside its commit, and the history survives drop and gc.",
    "Every write also prepends an entry to the narrative log, <worktree root>/.claude/PROJECT_STATE.md (handoff.narrative), a working-tree file of decisions, reasons and surprises, newest first.",
    "Run git handoff init once per clone: it registers the narrative merge driver, so that merges, rebases and cherry-picks of branches that each wrote handoffs merge the narrative as a log, without conflicts. Without it git merges the narrative as plain text.",
    "History: git handoff log KEY lists every version, newest first, read from the notes commit chain; git handoff show KEY@{N} (0 is the newest) or show KEY --version ID prints one, git handoff diff KEY [OLD [NEW]] compares two.",
    "Sharing goes through an ordinary git remote and the git binary (your credentials, ssh config and insteadOf apply). git handoff fetch [REMOTE] fetches into a staging namespace (refs/handoff-fetch/<remote>/), merges the notes history as a union of lines, and reconciles each key three-way against its base refs/handoff-remotes/<remote>/briefs/<key> (outside refs/remotes/, which is git's), the last version both sides agreed on: unchanged here, it fast-forwards, unless the remote's value is an older version already in the local history (a rollback: the local brief is kept and the next push repairs the remote); unchanged there, it is ahead; both changed, it is diverged, reported on every fetch, never pushed, both versions readable (show KEY, show KEY@REMOTE) until git handoff resolve KEY --keep-local or --take-remote. git handoff push [REMOTE] [KEY...] pushes each key that is ahead with --force-with-lease against its base, and the history with a lease on its last-known tip, in one git push; only when a lease fails (someone pushed since the last fetch), or when the last fetch cannot tell (a diverged key, say), it fetches, reconciles and pushes with the same rules; a key the remote changed meanwhile is rejected by name. Fetch never deletes a local brief; push deletes remotely only with --prune. Nothing from a remote is published before it is validated. Every byte that leaves (briefs, keys, every history line parsed or not) passes the secret gate; after git handoff redact --history, fetch refuses to merge secrets back in (--allow-secrets overrides).",
    "Keys: an explicit KEY, else GIT_HANDOFF_KEY, else the current branch with / turned into - and cut to 80 characters, else HANDOFF on a detached HEAD. A key is one ref component. write and recover without KEY keep the key their worktree last wrote or resumed (the sticky key, in the worktree's git dir as handoff-key) and warn after a branch switch; --key-from-branch follows the branch. The sticky key holds for the session that chose it (GIT_HANDOFF_SESSION, else the session the session-start hook last saw begin): a new session starts on the branch's key, and a keyless write into a key another session chose goes to the branch's key with a warning naming both. Every keyless command and hook (resume, reground, brief, show, log, lint, the hooks) selects its key by this one rule.",
    "On resume, warnings come first, each on a line starting !!: REPO MISMATCH (another project; not resumed, exit 1), BRANCH MISMATCH, STALE, MISSING (a file to read first is gone), CHANGED (commits since touched one), DIRTY (uncommitted changes now, none then); then the commits since the brief was written.",
];

const EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "success"),
    (
        "1",
        "the check's answer is no: invalid brief or input, compare-and-swap conflict, diverged, refused resume (another project, or several briefs and no key), missing key, strict lint",
    ),
    (
        "2",
        "usage error (unknown flag or subcommand, missing argument), as clap reports it",
    ),
    (
        "128",
        "a fatal error, as git's own die(): not a repository (or a bare one), I/O error (a file that cannot be read, a lock file held), corrupt stored data, a remote that cannot be reached",
    ),
];

/// Examples per page (the root page is `git-handoff`).
const EXAMPLES: &[(&str, &[&str])] = &[
    (
        "git-handoff",
        &[
            "git handoff write --done-when 'cargo test auth passes' --resume-by 'add leeway to verify()' --next-check 'cargo test auth::expiry'",
            "git handoff resume",
            "git handoff list",
            "git cat-file -p refs/handoffs/feat-jwt",
            "git log --notes=handoffs",
        ],
    ),
    (
        "git-handoff-write",
        &[
            "echo '{\"resume\":{\"done_when\":\"cargo test auth passes\",\"resume_by\":\"add leeway\"},\"state\":{\"next_acceptance_check\":\"cargo test auth::expiry\"}}' | git handoff write -F -",
            "git handoff write feat-jwt --done-when 'cargo test auth passes' --resume-by 'add leeway' --next-check 'cargo test auth::expiry' --decision 'use <= not < — the expiry second is still valid' --read 'src/auth.rs=under repair'",
        ],
    ),
    (
        "git-handoff-resume",
        &[
            "git handoff resume",
            "git handoff resume feat-jwt --json",
            "GIT_HANDOFF_STALE_HOURS=8 git handoff resume",
        ],
    ),
    (
        "git-handoff-validate",
        &[
            "git handoff validate brief.json",
            "git handoff show feat-jwt | git handoff validate -",
        ],
    ),
    (
        "git-handoff-brief",
        &["git handoff brief --task 'Fix the expiry test' --scope 'src/auth.rs only'"],
    ),
    (
        "git-handoff-hook",
        &["echo '{\"source\":\"compact\"}' | git handoff hook session-start"],
    ),
    (
        "git-handoff-completions",
        &["git handoff completions bash > ~/.local/share/bash-completion/completions/git-handoff"],
    ),
    (
        "git-handoff-init",
        &[
            "git handoff init && git add .gitattributes && git commit -m 'merge the narrative as a log'",
            "git handoff init origin    # also sets handoff.remote",
            "git handoff init --check",
        ],
    ),
    (
        "git-handoff-merge-narrative",
        &[
            "git config merge.handoff-narrative.driver 'git handoff merge-narrative %O %A %B %P'    # what init sets",
        ],
    ),
    (
        "git-handoff-recover",
        &[
            "git handoff recover",
            "git handoff recover feat-jwt --next-check 'cargo test auth::expiry' --decision 'keep JWT'",
        ],
    ),
    (
        "git-handoff-split",
        &[
            "git handoff split --plan plan.json          # the proposal; nothing is written",
            "git handoff split --plan plan.json --yes    # N briefs in one transaction, one narrative entry",
        ],
    ),
    (
        "git-handoff-pipeline",
        &[
            "git handoff pipeline save review-fanout     # a skeleton to edit",
            "git handoff pipeline save review-fanout -F review.md --force",
            "git handoff pipeline list",
        ],
    ),
    (
        "git-handoff-import",
        &[
            "git handoff import                          # .claude/handoffs and .catalyst/handoffs",
            "git handoff import ~/old-handoffs --force",
        ],
    ),
    (
        "git-handoff-export",
        &[
            "git handoff export feat-jwt -o feat-jwt.json",
            "git handoff export --all .claude/handoffs",
        ],
    ),
    (
        "git-handoff-log",
        &[
            "git handoff log feat-jwt",
            "git handoff log feat-jwt --json",
        ],
    ),
    (
        "git-handoff-show",
        &[
            "git handoff show feat-jwt@{1}",
            "git handoff show feat-jwt --version 3f2a1b9",
            "git handoff show feat-jwt@origin",
        ],
    ),
    (
        "git-handoff-diff",
        &[
            "git handoff diff feat-jwt",
            "git handoff diff feat-jwt @{2} @{0} --summary",
            "git handoff diff feat-jwt @origin",
        ],
    ),
    (
        "git-handoff-push",
        &[
            "git handoff push",
            "git handoff push origin feat-jwt",
            "git handoff push --prune --dry-run",
        ],
    ),
    (
        "git-handoff-fetch",
        &["git handoff fetch", "git handoff fetch upstream --json"],
    ),
    (
        "git-handoff-resolve",
        &[
            "git handoff resolve feat-jwt --keep-local && git handoff push",
            "git handoff resolve feat-jwt --take-remote --remote upstream",
        ],
    ),
    (
        "git-handoff-install-man",
        &[
            "git handoff install-man",
            "cargo run -q -- install-man man    # regenerate the pages committed in man/",
        ],
    ),
    (
        "git-handoff-fork",
        &[
            "git handoff fork --purpose 'bisect the slowdown' --pointer benches/read.rs --why 'shows it' --hand-back",
            "git handoff fork list",
            "git handoff fork consume /tmp/handoff-bisect-the-slowdown-2026-11-30.md",
        ],
    ),
    (
        "git-handoff-handback",
        &[
            "git handoff handback --to /tmp/handoff-bisect-the-slowdown-2026-11-30.md --result 'commit 1a2b3c4 did it' --change src/cache.rs",
        ],
    ),
    (
        "git-handoff-usage",
        &[
            "git handoff usage ~/.claude/projects/-work-app/5f1c.jsonl",
            "git handoff usage --json --window 1M",
            "git handoff usage --hook    # as a UserPromptSubmit hook",
        ],
    ),
    (
        "git-handoff-summary",
        &[
            "git handoff summary new --template task --task 'fix the auth expiry'",
            "git handoff summary latest",
            "git handoff summary clean --dry-run",
        ],
    ),
    (
        "git-handoff-prune",
        &[
            "git handoff prune --dry-run",
            "git handoff prune --archive-after 60d --delete-after 180d",
        ],
    ),
    (
        "git-handoff-restore",
        &["git handoff list --archived && git handoff restore feat-jwt"],
    ),
];

/// The examples of one page; none for a page without any.
fn examples(page: &str) -> &'static [&'static str] {
    EXAMPLES
        .iter()
        .find(|(name, _)| *name == page)
        .map_or(&[], |(_, examples)| examples)
}

fn section(roff: &mut Roff, title: &str) {
    roff.control("SH", [title]);
}

fn paragraph(roff: &mut Roff, text: &str) {
    roff.control("PP", []).text([roman(text)]);
}

fn item(roff: &mut Roff, term: &str, text: &str) {
    roff.control("TP", [])
        .text([bold(term)])
        .text([roman(text)]);
}

/// Render one page: clap's title, name, synopsis and description, then
/// the root's grouped commands or a subcommand's concept and options, then
/// our sections.
fn render(cmd: &Command, page: &str, is_root: bool) -> String {
    let man = Man::new(cmd.clone()).date("").manual("Git Manual");
    let mut out = Vec::new();
    man.render_title(&mut out).expect("in memory");
    man.render_name_section(&mut out).expect("in memory");
    man.render_synopsis_section(&mut out).expect("in memory");
    man.render_description_section(&mut out).expect("in memory");
    let mut roff = Roff::new();
    if is_root {
        commands_section(&mut roff, cmd);
    } else {
        paragraph(&mut roff, CONCEPT[0]);
        paragraph(
            &mut roff,
            "Briefs live as blobs under refs/handoffs/<key>, every version in refs/notes/handoffs, and the narrative in .claude/PROJECT_STATE.md; githandoff(7) explains the storage model, keys and drift warnings.",
        );
    }
    roff.to_writer(&mut out).expect("in memory");
    if !is_root && cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out).expect("in memory");
    }
    let mut roff = Roff::new();
    section(&mut roff, "EXIT STATUS");
    for (code, meaning) in EXIT_STATUS {
        item(&mut roff, code, meaning);
    }
    if is_root {
        settings_by_name(&mut roff);
    } else {
        settings_in_full(&mut roff);
    }
    let examples = examples(page);
    if !examples.is_empty() {
        section(&mut roff, "EXAMPLES");
        for e in examples {
            roff.control("PP", []).text([roman(*e)]);
        }
    }
    section(&mut roff, "SEE ALSO");
    let see_also = if is_root {
        "githandoff(7), git(1), git-notes(1), git-for-each-ref(1), git-push(1), git-fetch(1)"
    } else {
        "git-handoff(1), githandoff(7), git(1)"
    };
    paragraph(&mut roff, see_also);
    roff.to_writer(&mut out).expect("in memory");
    if cmd.get_version().is_some() {
        man.render_version_section(&mut out).expect("in memory");
    }
    ascii_roff(&String::from_utf8(out).expect("roff is UTF-8"))
}

/// The root page's COMMANDS: grouped by what you want to do, as `-h`.
fn commands_section(roff: &mut Roff, cmd: &Command) {
    use crate::cli::groups::{GROUPS, Shape};
    section(roff, "COMMANDS");
    for (title, shape, names) in GROUPS {
        roff.control("SS", [*title]);
        match shape {
            Shape::Rows => {
                // Tight rows, the summary beside the name.
                roff.control("PD", ["0"]);
                for name in *names {
                    roff.control("TP", ["10"])
                        .text([bold(*name)])
                        .text([roman(crate::cli::groups::about(cmd, name))]);
                }
                roff.control("PD", []);
            }
            Shape::Names => {
                roff.control("PP", []).text([roman(names.join(", "))]);
            }
        }
    }
    paragraph(
        roff,
        "Each command has its page: git help handoff-<command> (or git handoff <command> -h).",
    );
}

/// The root page names the environment variables and configuration keys;
/// githandoff(7) and each command's page say what they do.
fn settings_by_name(roff: &mut Roff) {
    section(roff, "ENVIRONMENT");
    let vars: Vec<&str> = ENVIRONMENT.iter().map(|(name, _)| *name).collect();
    paragraph(roff, &format!("{}: see githandoff(7).", vars.join(", ")));
    section(roff, "CONFIGURATION");
    let keys: Vec<&str> = CONFIG.iter().map(|(key, _, _)| *key).collect();
    paragraph(
        roff,
        &format!(
            "git config only; git-handoff has no configuration file of its own. {}: see githandoff(7).",
            keys.join(", ")
        ),
    );
}

/// ENVIRONMENT and CONFIGURATION with what each does.
fn settings_in_full(roff: &mut Roff) {
    section(roff, "ENVIRONMENT");
    for (name, meaning) in ENVIRONMENT {
        item(roff, name, meaning);
    }
    section(roff, "CONFIGURATION");
    paragraph(
        roff,
        "git config only; git-handoff has no configuration file of its own.",
    );
    for (key, default, meaning) in CONFIG {
        item(roff, key, &format!("{meaning} (default: {default})"));
    }
}

/// githandoff(7): the storage model, keys, sharing and drift warnings,
/// every environment variable and configuration key.
fn concepts_page(version: &str) -> String {
    let mut roff = Roff::new();
    roff.control(
        "TH",
        [
            "GITHANDOFF",
            "7",
            "",
            &format!("git-handoff {version}"),
            "Git Manual",
        ],
    );
    section(&mut roff, "NAME");
    roff.text([roman(
        "githandoff - how git-handoff stores, names and shares briefs, and its settings",
    )]);
    section(&mut roff, "DESCRIPTION");
    for p in CONCEPT {
        paragraph(&mut roff, p);
    }
    settings_in_full(&mut roff);
    section(&mut roff, "SEE ALSO");
    paragraph(&mut roff, "git-handoff(1), git(1), git-notes(1)");
    ascii_roff(&roff.render())
}

/// The page with every non-ASCII character as a roff escape, so that it
/// renders without warnings in any locale (`LC_ALL=C man`): the dashes,
/// ellipsis, arrows and quotes this manual uses by name, anything else as
/// `\[uXXXX]`.
pub fn ascii_roff(page: &str) -> String {
    let mut out = String::with_capacity(page.len());
    for c in page.chars() {
        match c {
            c if c.is_ascii() => out.push(c),
            '—' => out.push_str("\\(em"),
            '–' => out.push_str("\\(en"),
            '…' => out.push_str("\\&..."),
            '→' => out.push_str("\\(->"),
            '←' => out.push_str("\\(<-"),
            '≤' => out.push_str("\\(<="),
            '≥' => out.push_str("\\(>="),
            '×' => out.push_str("\\(mu"),
            '‘' => out.push_str("\\(oq"),
            '’' => out.push_str("\\(cq"),
            '“' => out.push_str("\\(lq"),
            '”' => out.push_str("\\(rq"),
            c => out.push_str(&format!("\\[u{:04X}]", u32::from(c))),
        }
    }
    out
}

/// Every man page: `(file name, roff)` for the root command and each
/// visible subcommand.
pub fn pages(cmd: Command) -> Vec<(String, String)> {
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let version = cmd.get_version().unwrap_or_default().to_string();
    let mut out = vec![
        (
            "git-handoff.1".to_string(),
            render(&cmd, "git-handoff", true),
        ),
        ("githandoff.7".to_string(), concepts_page(&version)),
    ];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let page = format!("git-handoff-{}", sub.get_name());
        out.push((format!("{page}.1"), render(sub, &page, false)));
    }
    out
}

/// Write every page into `dir` (created if missing), each through a
/// temporary file renamed into place; how many were written.
pub fn write_pages(dir: &Path) -> anyhow::Result<usize> {
    use anyhow::Context;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut pages = pages(<crate::cli::Cli as clap::CommandFactory>::command());
    if dir.file_name().and_then(|n| n.to_str()) == Some("man1") {
        pages.extend(help_aliases(&pages));
    }
    for (name, content) in &pages {
        let dir = &section_dir(dir, name);
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir)
            .with_context(|| format!("cannot write in {}", dir.display()))?;
        std::io::Write::write_all(&mut tmp, content.as_bytes())
            .context("cannot write a man page")?;
        tmp.persist(dir.join(name)).map_err(|e| {
            anyhow::anyhow!("cannot write {}: {}", dir.join(name).display(), e.error)
        })?;
    }
    Ok(pages.len())
}

/// `git help handoff-CMD` asks `man` for `githandoff-CMD`: git looks a
/// name up as `git-NAME` only when `git-NAME` is a command on PATH, and
/// `git-handoff-CMD` is not one. So each subcommand's page has an alias of
/// that name, a one-line page that sources it (`.so`, resolved from the
/// top of the man hierarchy: written only into a `man1` directory).
fn help_aliases(pages: &[(String, String)]) -> Vec<(String, String)> {
    pages
        .iter()
        .filter_map(|(name, _)| {
            let sub = name.strip_prefix("git-handoff-")?;
            Some((format!("githandoff-{sub}"), format!(".so man1/{name}\n")))
        })
        .collect()
}

/// The page `git handoff CMD … --help` opens, as `git commit --help`
/// opens git-commit(1): `git-handoff-CMD` when `args` name a subcommand
/// that has a page and ask for `--help` (before any `--`).
pub fn help_page(args: &[std::ffi::OsString]) -> Option<String> {
    let sub = args.first()?.to_str()?;
    let paged = crate::cli::groups::GROUPS
        .iter()
        .flat_map(|(_, _, names)| names.iter())
        .any(|name| *name == sub && *name != "help");
    let asks = args
        .iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--help");
    (paged && asks).then(|| format!("git-handoff-{sub}"))
}

/// Whether `man` finds `page` (`man -w`).
pub fn found(page: &str) -> bool {
    std::process::Command::new("man")
        .args(["-w", page])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Where a page goes: beside the others, except that a page of another
/// section than 1 goes to `manN` beside a `man1` directory.
fn section_dir(dir: &Path, page: &str) -> PathBuf {
    let section = page.rsplit('.').next().unwrap_or("1");
    match (dir.file_name().and_then(|n| n.to_str()), dir.parent()) {
        (Some("man1"), Some(parent)) if section != "1" => parent.join(format!("man{section}")),
        _ => dir.to_path_buf(),
    }
}

/// Where `man` looks for the pages of the binary at `exe`: its prefix's
/// `share/man/man1` (`~/.cargo/bin/git-handoff` → `~/.cargo/share/man/man1`;
/// man-db maps every `…/bin` on `PATH` to its sibling `share/man`).
pub fn dir_beside(exe: &Path) -> Option<PathBuf> {
    let prefix = exe.parent()?.parent()?;
    Some(prefix.join("share").join("man").join("man1"))
}

/// Make `git handoff --help` work after any install that puts the binary
/// on `PATH` (`cargo install`, a copied binary, a package): when the binary
/// lives in a `bin` folder and its pages beside it are missing or older
/// than it, write them there. Silent, and never fails the command (a
/// folder it may not write to is left alone): two `stat`s when they are
/// current.
pub fn refresh_beside_binary() {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    if exe.parent().and_then(Path::file_name) != Some(std::ffi::OsStr::new("bin")) {
        return;
    }
    let Some(dir) = dir_beside(&exe) else {
        return;
    };
    let built = std::fs::metadata(&exe).and_then(|m| m.modified());
    let page = std::fs::metadata(dir.join("git-handoff.1")).and_then(|m| m.modified());
    if let (Ok(built), Ok(page)) = (built, page)
        && page >= built
    {
        return;
    }
    let _ = write_pages(&dir);
}

/// The subcommands whose first positional argument is a brief key.
pub const KEYED: &[&str] = &[
    "write", "show", "drop", "resume", "reground", "brief", "recover", "log", "diff", "export",
    "resolve", "restore", "lint",
];

/// Shell completions; bash also completes keys dynamically and plugs into
/// git's own completion (`git handoff <TAB>`).
pub fn completions(shell: clap_complete::Shell, cmd: Command) -> String {
    // Complete the binary's own name; git's completion is wired below.
    let mut cmd = cmd.bin_name("git-handoff");
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "git-handoff", &mut buf);
    let mut out = String::from_utf8(buf).expect("completions are UTF-8");
    if shell == clap_complete::Shell::Bash {
        let subs: Vec<String> = cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| s.get_name().to_string())
            .collect();
        out.push_str(&format!(
            r#"
# --- git-handoff: dynamic keys, and `git handoff <TAB>` under git's completion ---
__git_handoff_keys() {{
    git for-each-ref --format='%(refname:strip=2)' refs/handoffs 2>/dev/null
}}
__git_handoff_keyed=" {keyed} "

_git_handoff_direct() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" sub="${{COMP_WORDS[1]}}"
    if [[ $COMP_CWORD -ge 2 && "$cur" != -* && "$__git_handoff_keyed" == *" $sub "* ]]; then
        COMPREPLY=( $(compgen -W "$(__git_handoff_keys)" -- "$cur") )
        [[ ${{#COMPREPLY[@]}} -gt 0 ]] && return 0
    fi
    _git__handoff "$@"
}}
complete -F _git_handoff_direct -o bashdefault -o default git-handoff

# git's completion calls _git_<subcommand> for `git handoff …`
_git_handoff() {{
    local subcommands="{subs}"
    local subcommand
    subcommand="$(__git_find_on_cmdline "$subcommands")"
    if [ -z "$subcommand" ]; then
        __gitcomp "$subcommands"
        return
    fi
    case "$cur" in
    -*) return ;;
    esac
    if [[ "$__git_handoff_keyed" == *" $subcommand "* ]]; then
        __gitcomp_nl "$(__git_handoff_keys)"
    fi
}}
"#,
            keyed = KEYED.join(" "),
            subs = subs.join(" "),
        ));
    }
    out
}

/// The last line of `git handoff -h` when `man` cannot find the pages.
pub const MISSING_HINT: &str =
    "No man pages for `git handoff --help` to open: run `git handoff install-man`";

/// Whether `man` finds git-handoff(1) (`man -w git-handoff`), as
/// `git handoff --help` (that is, `git help handoff`) needs.
pub fn installed() -> bool {
    found("git-handoff")
}
