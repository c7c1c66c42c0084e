//! What a shell command line says about a session, read from its text
//! alone: whether it runs tests, whether it only looks around, which files
//! it prints, which files a patch edits. Only the first line of a script
//! counts (later lines are heredoc bodies and commit messages, not
//! commands), split at `&&`, `||`, `;` and `|`.

/// The words of each command of the script's first line, quotes removed.
fn segments(script: &str) -> Vec<Vec<String>> {
    // `2>&1` redirects; it separates no commands.
    let first = script.lines().next().unwrap_or("").replace(">&", "> ");
    let mut out = Vec::new();
    for part in first.split(['|', ';', '&']) {
        let mut words: Vec<String> = Vec::new();
        let mut target = false;
        for word in part.split_whitespace() {
            // A redirection and its file are no words of the command.
            let redirect = word.trim_start_matches(|c: char| c.is_ascii_digit());
            if target {
                target = false;
                continue;
            }
            if redirect.starts_with(['>', '<']) {
                target = redirect.trim_matches(['>', '<']).is_empty();
                continue;
            }
            let word = word.trim_matches(|c| c == '"' || c == '\'');
            if !word.is_empty() {
                words.push(word.to_string());
            }
        }
        if !words.is_empty() {
            out.push(words);
        }
    }
    out
}

/// The words of a command without what only wraps it: variable assignments
/// (`RUST_BACKTRACE=1`), `env`, `time`, `timeout 60`, `nice`, `command`.
fn command_words(words: &[String]) -> &[String] {
    let mut rest = words;
    loop {
        match rest {
            [first, tail @ ..] if first.contains('=') && !first.starts_with('-') => rest = tail,
            [first, tail @ ..] if matches!(first.as_str(), "env" | "time" | "nice" | "command") => {
                rest = tail
            }
            [first, secs, tail @ ..] if first == "timeout" && secs.parse::<f64>().is_ok() => {
                rest = tail
            }
            _ => return rest,
        }
    }
}

/// The program's name without its directory (`./gradlew` → `gradlew`).
fn program(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Whether one command runs a test suite, by the runners' own names.
fn runs_tests(words: &[String]) -> bool {
    let words = command_words(words);
    let Some(first) = words.first() else {
        return false;
    };
    let second = words.get(1).map(String::as_str).unwrap_or("");
    let third = words.get(2).map(String::as_str).unwrap_or("");
    match program(first) {
        "pytest" | "py.test" | "jest" | "vitest" | "mocha" | "rspec" | "phpunit" | "ctest"
        | "tox" | "nox" => true,
        "cargo" => matches!(second, "test" | "t" | "nextest"),
        "go" | "mix" | "dotnet" | "swift" | "mvn" | "gradle" | "gradlew" => {
            second == "test" || (program(first) == "mvn" && second == "verify")
        }
        "npm" | "yarn" | "pnpm" | "bun" | "deno" => {
            matches!(second, "test" | "t") || (second == "run" && third.starts_with("test"))
        }
        "make" | "just" => second.starts_with("test") || second == "check",
        "python" | "python3" => second == "-m" && matches!(third, "pytest" | "unittest"),
        "npx" => matches!(second, "jest" | "vitest" | "mocha"),
        "bundle" => second == "exec" && third == "rspec",
        _ => false,
    }
}

/// Whether the script runs a test suite.
pub fn is_test(script: &str) -> bool {
    segments(script).iter().any(|w| runs_tests(w))
}

/// Whether one command only looks around (lists, prints, searches, asks
/// git what changed) or only moves (`cd`).
fn looks_only(words: &[String]) -> bool {
    let words = command_words(words);
    let Some(first) = words.first() else {
        return true;
    };
    let second = words.get(1).map(String::as_str).unwrap_or("");
    match program(first) {
        "ls" | "cat" | "nl" | "head" | "tail" | "less" | "more" | "bat" | "grep" | "rg" | "ag"
        | "find" | "fd" | "pwd" | "echo" | "printf" | "wc" | "tree" | "which" | "type" | "file"
        | "stat" | "du" | "df" | "cd" | "true" | "sleep" | "sort" | "uniq" | "cut" | "jq" => true,
        "sed" => words.iter().any(|w| w == "-n"),
        "git-handoff" => handoff_reads(Some(second).filter(|s| !s.is_empty())),
        "git" => {
            let rest = git_subcommand(&words[1..]);
            let sub = rest.first().map(String::as_str).unwrap_or("");
            match sub {
                "handoff" => handoff_reads(rest.get(1).map(String::as_str)),
                _ => matches!(
                    sub,
                    "status"
                        | "diff"
                        | "log"
                        | "show"
                        | "branch"
                        | "rev-parse"
                        | "ls-files"
                        | "blame"
                        | "grep"
                        | "remote"
                ),
            }
        }
        _ => false,
    }
}

/// The words from git's subcommand on, past its global options (`-C
/// DIR`, `-c KEY=VALUE`, `--no-pager` …).
fn git_subcommand(words: &[String]) -> &[String] {
    let mut rest = words;
    loop {
        match rest {
            [flag, _, tail @ ..] if matches!(flag.as_str(), "-C" | "-c") => rest = tail,
            [flag, tail @ ..] if flag.starts_with('-') => rest = tail,
            _ => return rest,
        }
    }
}

/// Whether a `git handoff` subcommand only reads (the overview, when
/// none is named): resuming, listing, showing is no work, and a session
/// that did nothing else leaves the brief it read alone.
fn handoff_reads(sub: Option<&str>) -> bool {
    matches!(
        sub,
        None | Some(
            "resume"
                | "reground"
                | "brief"
                | "list"
                | "show"
                | "log"
                | "diff"
                | "lint"
                | "validate"
                | "schema"
                | "usage"
                | "help"
                | "-h"
                | "--help"
                | "--version"
        )
    )
}

/// Whether every command of the script only looks around: not worth
/// recording as a command of the session.
pub fn is_inspection(script: &str) -> bool {
    segments(script).iter().all(|w| looks_only(w))
}

/// A test command as a check to run again: its first line without what
/// only trims its output (`2>&1 | tail -20`, `| grep FAIL`), which would
/// also hide the runner's exit status.
pub fn check_command(script: &str) -> String {
    let first = script.lines().next().unwrap_or("").trim();
    let mut cut = first.len();
    let pipes: Vec<usize> = first
        .match_indices('|')
        .map(|(i, _)| i)
        .filter(|&i| {
            first.as_bytes().get(i + 1) != Some(&b'|')
                && (i == 0 || first.as_bytes()[i - 1] != b'|')
        })
        .collect();
    for &at in pipes.iter().rev() {
        let filter = segments(&first[at + 1..cut]);
        let trims = filter.len() == 1
            && matches!(
                program(&filter[0][0]),
                "tail" | "head" | "grep" | "rg" | "tee" | "less" | "more" | "cat"
            );
        if !trims {
            break;
        }
        cut = at;
    }
    first[..cut]
        .split_whitespace()
        .filter(|w| *w != "2>&1")
        .collect::<Vec<_>>()
        .join(" ")
}

/// The files a script prints whole or in part (`cat F`, `nl -ba F`,
/// `head -n 40 F`, `sed -n '1,80p' F`): reads, as the Read tool's are.
pub fn read_files(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    for words in segments(script) {
        let words = command_words(&words);
        let Some(first) = words.first() else {
            continue;
        };
        let args = &words[1..];
        let operands: Vec<&String> = match program(first) {
            "cat" | "nl" | "bat" | "less" => args.iter().filter(|w| !w.starts_with('-')).collect(),
            "head" | "tail" => operands_after_counts(args),
            "sed" if args.iter().any(|w| w == "-n") => args
                .iter()
                .filter(|w| !w.starts_with('-'))
                .skip(1)
                .collect(),
            _ => Vec::new(),
        };
        out.extend(
            operands
                .into_iter()
                .filter(|w| !w.contains(['>', '<', '*', '$']))
                .cloned(),
        );
    }
    out
}

/// `head`/`tail` operands: every word that is neither an option nor the
/// count after `-n`/`-c`.
fn operands_after_counts(args: &[String]) -> Vec<&String> {
    let mut out = Vec::new();
    let mut skip = false;
    for w in args {
        if skip {
            skip = false;
        } else if w == "-n" || w == "-c" {
            skip = true;
        } else if !w.starts_with('-') {
            out.push(w);
        }
    }
    out
}

/// The files an `apply_patch` patch adds, updates or moves to (`*** Update
/// File: src/a.rs`); deleted files are not listed.
pub fn patched_files(patch: &str) -> Vec<String> {
    patch
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            ["*** Update File:", "*** Add File:", "*** Move to:"]
                .iter()
                .find_map(|p| line.strip_prefix(p))
                .map(|p| p.trim().to_string())
        })
        .filter(|p| !p.is_empty())
        .collect()
}

/// The script a command vector runs: `["bash", "-lc", "cargo test"]` →
/// `cargo test`; any other vector joined with spaces, words with spaces
/// quoted.
pub fn argv_script(argv: &[String]) -> String {
    if let [shell, flag, script] = argv
        && matches!(program(shell), "bash" | "sh" | "zsh")
        && flag.starts_with('-')
        && flag.ends_with('c')
    {
        return script.clone();
    }
    argv.iter()
        .map(|w| {
            if w.contains(char::is_whitespace) {
                format!("'{w}'")
            } else {
                w.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a test runner's own output says: `Some(false)` when it reports a
/// failure (`test result: FAILED`, `--- FAIL`, `3 failed`), `Some(true)`
/// when it reports success and no failure, `None` when it says neither.
pub fn runner_verdict(output: &str) -> Option<bool> {
    let failed = output.lines().any(|line| {
        let line = line.trim();
        line.contains("test result: FAILED")
            || line.starts_with("--- FAIL")
            || line.starts_with("FAIL ")
            || line.starts_with("FAIL\t")
            || line.starts_with("FAILED (")
            || counts_word(line, "failed")
    });
    if failed {
        return Some(false);
    }
    let passed = output.lines().any(|line| {
        let line = line.trim();
        line.contains("test result: ok")
            || line.starts_with("ok  \t")
            || counts_word(line, "passed")
    });
    passed.then_some(true)
}

/// Whether `line` holds a number followed by `word` (`3 failed`), as test
/// runners' summaries do; `0 failed` does not count.
fn counts_word(line: &str, word: &str) -> bool {
    let words: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(2).any(|pair| {
        pair[1].trim_matches(|c: char| !c.is_alphabetic()) == word
            && pair[0]
                .trim_matches(|c: char| !c.is_ascii_digit())
                .parse::<u64>()
                .is_ok_and(|n| n > 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_runners_are_known_by_name() {
        for cmd in [
            "cargo test",
            "cargo test auth -- --nocapture 2>&1 | tail -20",
            "RUST_BACKTRACE=1 cargo test --locked",
            "cd app && npm test",
            "npm run test:unit",
            "python -m pytest -x tests/",
            "timeout 300 go test ./...",
            "./gradlew test",
            "make test",
            "bundle exec rspec spec/a_spec.rb",
        ] {
            assert!(is_test(cmd), "{cmd}");
        }
        for cmd in [
            "cargo build",
            "git commit -m \"cargo test passes\"",
            "echo test",
            "npm install",
            "git commit -F - <<'EOF'\ncargo test\nEOF",
        ] {
            assert!(!is_test(cmd), "{cmd}");
        }
    }

    #[test]
    fn checks_drop_what_only_trims_the_output() {
        assert_eq!(
            check_command("cargo test expiry 2>&1 | tail -15"),
            "cargo test expiry"
        );
        assert_eq!(
            check_command("cargo test 2>&1 | grep FAIL | head"),
            "cargo test"
        );
        assert_eq!(check_command("cd app && npm test"), "cd app && npm test");
        assert_eq!(check_command("make test || true"), "make test || true");
        assert_eq!(check_command("pytest | sort"), "pytest | sort");
    }

    #[test]
    fn inspection_is_only_looking() {
        assert!(is_inspection("ls -la src"));
        assert!(is_inspection("cd src && rg -n verify | head"));
        assert!(is_inspection("git status --short"));
        assert!(is_inspection("sed -n '1,80p' src/a.rs"));
        assert!(!is_inspection("sed -i 's/a/b/' src/a.rs"));
        assert!(!is_inspection("cargo build"));
        assert!(!is_inspection("git commit -am x"));
        // Reading a brief is no work; writing one is.
        assert!(is_inspection("git handoff resume feat-x"));
        assert!(is_inspection("git handoff"));
        assert!(is_inspection("git handoff list && git handoff show k"));
        assert!(is_inspection("git -C . status"));
        assert!(!is_inspection("git handoff write --done-when x"));
        assert!(!is_inspection("git handoff resolve k --keep-local"));
    }

    #[test]
    fn printed_files_are_reads() {
        assert_eq!(
            read_files("cat src/a.rs src/b.rs"),
            ["src/a.rs", "src/b.rs"]
        );
        assert_eq!(read_files("sed -n '1,80p' src/a.rs"), ["src/a.rs"]);
        assert_eq!(
            read_files("nl -ba src/a.rs | sed -n '10,20p'"),
            ["src/a.rs"]
        );
        assert_eq!(read_files("head -n 40 README"), ["README"]);
        assert!(read_files("cat > out.txt").is_empty());
        assert!(read_files("cargo test").is_empty());
    }

    #[test]
    fn patches_name_their_files() {
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: src/new.rs\n+z\n*** Delete File: src/old.rs\n*** End Patch";
        assert_eq!(patched_files(patch), ["src/a.rs", "src/new.rs"]);
    }

    #[test]
    fn argv_is_read_as_its_script() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            argv_script(&v(&["bash", "-lc", "cargo test"])),
            "cargo test"
        );
        assert_eq!(argv_script(&v(&["rg", "-n", "a b"])), "rg -n 'a b'");
    }

    #[test]
    fn runners_say_pass_or_fail() {
        assert_eq!(
            runner_verdict("test result: FAILED. 1 passed; 1 failed"),
            Some(false)
        );
        assert_eq!(
            runner_verdict("=== 2 failed, 10 passed in 0.3s ==="),
            Some(false)
        );
        assert_eq!(
            runner_verdict("test result: ok. 3 passed; 0 failed"),
            Some(true)
        );
        assert_eq!(runner_verdict("--- FAIL: TestX (0.00s)"), Some(false));
        assert_eq!(runner_verdict("compiling"), None);
    }
}
