//! Shared helpers for end-to-end tests: real repositories in temp dirs, a
//! hermetic git environment, and `git handoff …` run through git with the
//! built binary first on PATH.
#![allow(dead_code)]

pub mod setups;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub mod briefs;
pub mod fixtures;

/// The fixed clock for tests.
pub const NOW: &str = "2026-11-30T12:00:00Z";

/// Clock readings for a sequence of writes, an hour apart.
pub const T1: &str = "2026-11-30T09:00:00Z";
pub const T2: &str = "2026-11-30T10:00:00Z";
pub const T3: &str = "2026-11-30T11:00:00Z";
pub const T4: &str = "2026-11-30T12:00:00Z";

/// A temporary home for one test: repositories live under `root`.
pub struct Sandbox {
    pub dir: assert_fs::TempDir,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = assert_fs::TempDir::new().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        Sandbox { dir }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// A new repository with one commit on `main` (a `README` file).
    pub fn repo(&self, name: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::create_dir_all(&path).unwrap();
        self.git(&path, &["init", "-q", "-b", "main"]);
        std::fs::write(path.join("README"), "hello\n").unwrap();
        self.git(&path, &["add", "README"]);
        self.git(&path, &["commit", "-q", "-m", "init"]);
        path
    }

    /// A new repository with no commit.
    pub fn unborn(&self, name: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::create_dir_all(&path).unwrap();
        self.git(&path, &["init", "-q", "-b", "main"]);
        path
    }

    /// A command with the hermetic environment, run in `dir`.
    pub fn command(&self, program: &str, dir: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(dir);
        hermetic(&mut cmd, &self.home());
        cmd
    }

    /// Run git; panic with its stderr if it fails; return stdout.
    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        let out = self
            .command("git", dir)
            .args(args)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Run git with `input` on stdin; panic if it fails; return its stdout
    /// trimmed (an object id for `hash-object -w --stdin` or `mktree`).
    pub fn git_stdin(&self, dir: &Path, args: &[&str], input: impl AsRef<[u8]>) -> String {
        String::from_utf8(self.git_stdin_raw(dir, args, input))
            .unwrap()
            .trim()
            .to_string()
    }

    /// [`Sandbox::git_stdin`], its output as the bytes git wrote.
    pub fn git_stdin_raw(&self, dir: &Path, args: &[&str], input: impl AsRef<[u8]>) -> Vec<u8> {
        let out = assert_cmd::Command::from_std(self.command("git", dir))
            .args(args)
            .write_stdin(input.as_ref().to_vec())
            .assert()
            .success();
        out.get_output().stdout.clone()
    }

    /// Run git and return its output whatever the status.
    pub fn git_out(&self, dir: &Path, args: &[&str]) -> Output {
        self.command("git", dir)
            .args(args)
            .output()
            .expect("git runs")
    }

    /// `git handoff ARGS` in `dir`, as a user would type it.
    pub fn handoff(&self, dir: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
        self.handoff_with(dir, args, None)
    }

    /// `git handoff ARGS` with `stdin` as standard input.
    pub fn handoff_with(
        &self,
        dir: &Path,
        args: &[&str],
        stdin: Option<&str>,
    ) -> assert_cmd::assert::Assert {
        let mut cmd = assert_cmd::Command::from_std(self.command("git", dir));
        cmd.arg("handoff").args(args);
        cmd.write_stdin(stdin.unwrap_or("").as_bytes().to_vec());
        cmd.assert()
    }

    /// `git handoff ARGS` with extra environment variables (`TMPDIR`,
    /// another `GIT_HANDOFF_NOW` …) and optional stdin.
    pub fn handoff_env(
        &self,
        dir: &Path,
        env: &[(&str, &str)],
        args: &[&str],
        stdin: Option<&str>,
    ) -> assert_cmd::assert::Assert {
        let mut cmd = assert_cmd::Command::from_std(self.command("git", dir));
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.arg("handoff").args(args);
        cmd.write_stdin(stdin.unwrap_or("").as_bytes().to_vec());
        cmd.assert()
    }

    /// Make a commit touching `file`.
    pub fn commit(&self, dir: &Path, file: &str, content: &str, message: &str) {
        let path = dir.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, content).unwrap();
        self.git(dir, &["add", file]);
        self.git(dir, &["commit", "-q", "-m", message]);
    }

    /// `git handoff init`, then commit the narrative's merge line it put
    /// in `.git/info/attributes` (this clone only) to `.gitattributes`,
    /// as a team that shares it does (docs/sharing.md).
    pub fn init_and_commit_attribute(&self, dir: &Path) {
        self.handoff(dir, &["init"]).success();
        let info = self.git(
            dir,
            &[
                "rev-parse",
                "--path-format=absolute",
                "--git-path",
                "info/attributes",
            ],
        );
        let line = std::fs::read_to_string(info.trim_end()).unwrap();
        let file = dir.join(".gitattributes");
        let mut text = std::fs::read_to_string(&file).unwrap_or_default();
        text.push_str(&line);
        self.commit(dir, ".gitattributes", &text, "merge the narrative as a log");
    }
}

/// The directory holding the built `git-handoff`.
pub fn bin_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_git-handoff"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Set the hermetic environment on `cmd`.
pub fn hermetic(cmd: &mut Command, home: &Path) {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin_dir()];
    paths.extend(std::env::split_paths(&path));
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_COMMON_DIR",
        "GIT_HANDOFF_KEY",
        "GIT_HANDOFF_SESSION",
        "CLAUDE_CODE_SESSION_ID",
        "CLAUDE_ENV_FILE",
        "GIT_HANDOFF_STALE_HOURS",
        "GIT_HANDOFF_HEALTH",
        "NO_COLOR",
        "EMAIL",
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("PATH", std::env::join_paths(paths).unwrap())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Ada Author")
        .env("GIT_AUTHOR_EMAIL", "ada@example.invalid")
        .env("GIT_COMMITTER_NAME", "Ada Author")
        .env("GIT_COMMITTER_EMAIL", "ada@example.invalid")
        .env("GIT_AUTHOR_DATE", "2026-11-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-11-01T00:00:00Z")
        .env("GIT_HANDOFF_NOW", NOW)
        .env("LC_ALL", "C")
        .env("TZ", "UTC");
}

/// The README's example brief.
pub const EXAMPLE: &str = r#"{"resume":{"done_when":"cargo test auth passes","resume_by":"add leeway to verify()"},
 "state":{"next_acceptance_check":"cargo test auth::expiry","decisions":["use <= not < — the expiry second is still valid"],
          "rejected_paths":["< operator (off by one)"]},
 "files_read_first":[{"path":"src/auth.rs","why":"under repair"}]}"#;

/// Every file under `dir` (a git dir included), sorted; none when `dir`
/// does not exist.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// stdout of an assert as text.
pub fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

/// stderr of an assert as text.
pub fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

/// Every ref name under refs/handoffs and refs/notes in `dir`'s repository.
pub fn handoff_refs(sb: &Sandbox, dir: &Path) -> String {
    sb.git(
        dir,
        &[
            "for-each-ref",
            "--format=%(objecttype) %(refname)",
            "refs/handoffs",
            "refs/notes",
        ],
    )
}

/// Parse `s` as JSON; panic with the text if it is not.
pub fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

/// Every entry below `dir` (files, directories, links), depth first; an
/// entry named in `skip` is neither listed nor entered, nor is a linked
/// directory entered. A missing `dir` has no entries.
pub fn walk(dir: &Path, skip: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        if skip.iter().any(|s| entry.file_name() == *s) {
            continue;
        }
        let path = entry.path();
        out.push(path.clone());
        if path.is_dir() && !path.is_symlink() {
            out.extend(walk(&path, skip));
        }
    }
    out
}

/// Every `*.lock` file below `dir` that blocks the next command: git's,
/// and git-handoff's own (`handoff-sync-*.lock`, which record their owner)
/// whose owner still runs — a killed owner's is taken over.
pub fn lock_files(dir: &Path) -> Vec<PathBuf> {
    walk(dir, &[])
        .into_iter()
        .filter(|p| !p.is_dir() && p.extension().is_some_and(|x| x == "lock"))
        .filter(|p| !owner_is_gone(p))
        .collect()
}

/// Whether `lock` is a git-handoff sync lock whose owner process is gone.
pub fn owner_is_gone(lock: &Path) -> bool {
    let name = lock.file_name().unwrap_or_default().to_string_lossy();
    if !name.starts_with("handoff-sync-") {
        return false;
    }
    let text = std::fs::read_to_string(lock).unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("pid "))
        .is_some_and(|pid| !Path::new("/proc").join(pid).exists())
}

/// The arguments of `git handoff write [KEY] --done-when DONE --resume-by
/// RESUME --next-check CHECK EXTRA…`: the three flags `write` requires.
pub fn write_args<'a>(
    key: Option<&'a str>,
    [done, resume_by, next_check]: [&'a str; 3],
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec!["write"];
    args.extend(key);
    args.extend([
        "--done-when",
        done,
        "--resume-by",
        resume_by,
        "--next-check",
        next_check,
    ]);
    args.extend_from_slice(extra);
    args
}

impl Sandbox {
    /// Store a brief written at `sha` in this repository, the way `write`
    /// stores one (blob + ref), without touching HEAD: `files` to read
    /// first, and the `diff_summary` it recorded.
    pub fn put_brief(
        &self,
        dir: &Path,
        key: &str,
        sha: &str,
        files: &[&str],
        diff_summary: Option<&str>,
    ) {
        let root = self.git(dir, &["rev-parse", "--show-toplevel"]);
        let common = self.git(
            dir,
            &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        );
        let mut brief = serde_json::json!({
            "schema_version": "1", "key": key, "timestamp": "2026-11-30T11:00:00Z", "mode": "WRITE",
            "resume": {"done_when": "d", "resume_by": "r"},
            "state": {"branch": "main", "next_acceptance_check": "c", "head_sha": sha,
                      "worktree": {"root": root.trim(), "is_linked": false,
                                   "git_common_dir": common.trim()}}
        });
        if let Some(diff) = diff_summary {
            brief["state"]["diff_summary"] = diff.into();
        }
        if !files.is_empty() {
            let files: Vec<serde_json::Value> = files
                .iter()
                .map(|p| serde_json::json!({"path": p, "why": "w"}))
                .collect();
            brief["files_read_first"] = files.into();
        }
        let path = dir.join(".git").join("brief.json");
        std::fs::write(&path, brief.to_string()).unwrap();
        let blob = self.git(dir, &["hash-object", "-w", path.to_str().unwrap()]);
        self.git(
            dir,
            &["update-ref", &format!("refs/handoffs/{key}"), blob.trim()],
        );
    }

    /// A linked worktree of `repo` at `name` on a new branch `branch`.
    pub fn worktree(&self, repo: &Path, name: &str, branch: &str) -> PathBuf {
        let path = self.path(name);
        self.git(
            repo,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                branch,
                path.to_str().unwrap(),
            ],
        );
        path
    }

    /// `git handoff write [KEY]` in `dir` with the three required flags
    /// (`[done_when, resume_by, next_check]`) and `extra` arguments.
    pub fn write_brief(
        &self,
        dir: &Path,
        key: Option<&str>,
        flags: [&str; 3],
        extra: &[&str],
    ) -> assert_cmd::assert::Assert {
        self.handoff(dir, &write_args(key, flags, extra))
    }

    /// [`Sandbox::write_brief`] with the clock at `now`.
    pub fn write_brief_at(
        &self,
        dir: &Path,
        now: &str,
        key: Option<&str>,
        flags: [&str; 3],
        extra: &[&str],
    ) -> assert_cmd::assert::Assert {
        let args = write_args(key, flags, extra);
        self.handoff_env(dir, &[("GIT_HANDOFF_NOW", now)], &args, None)
    }
}

/// A bare remote over file:// with one commit on `main`, cloned as A and B.
pub struct Team {
    pub sb: Sandbox,
    pub bare: PathBuf,
    pub url: String,
    pub a: PathBuf,
    pub b: PathBuf,
}

/// A new [`Team`] in its own sandbox.
pub fn team() -> Team {
    team_in("sha1")
}

/// A new [`Team`] whose repositories use the object format `hash`
/// (`sha1` or `sha256`).
pub fn team_in(hash: &str) -> Team {
    let sb = Sandbox::new();
    let root = sb.dir.path().to_path_buf();
    let bare = sb.path("remote.git");
    let format = format!("--object-format={hash}");
    sb.git(
        &root,
        &[
            "init",
            "-q",
            "--bare",
            "-b",
            "main",
            &format,
            bare.to_str().unwrap(),
        ],
    );
    let url = format!("file://{}", bare.display());
    let seed = sb.path("seed");
    sb.git(
        &root,
        &["init", "-q", "-b", "main", &format, seed.to_str().unwrap()],
    );
    sb.commit(&seed, "README", "hello\n", "init");
    sb.git(&seed, &["push", "-q", &url, "main"]);
    for name in ["A", "B"] {
        sb.git(&root, &["clone", "-q", &url, name]);
    }
    let (a, b) = (sb.path("A"), sb.path("B"));
    Team {
        sb,
        bare,
        url,
        a,
        b,
    }
}

/// Run `git handoff ARGS` in `dir` until it stands at failpoint `point`,
/// then run `meanwhile` and let the command go on; its output.
pub fn pause_at(
    sb: &Sandbox,
    dir: &Path,
    args: &[&str],
    point: &str,
    meanwhile: impl FnOnce(),
) -> std::process::Output {
    use std::io::{BufRead, BufReader, Read};
    use std::process::Stdio;
    let resume = sb.path(&format!("resume-{point}"));
    let _ = std::fs::remove_file(&resume);
    let mut cmd = sb.command("git", dir);
    cmd.arg("handoff")
        .args(args)
        .env("GIT_HANDOFF_FAILPOINT", point)
        .env("GIT_HANDOFF_FAILPOINT_RESUME", &resume)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let mut line = String::new();
    while !line.starts_with("failpoint:") {
        line.clear();
        let read = stderr.read_line(&mut line).unwrap_or(0);
        seen.push_str(&line);
        assert!(read > 0, "{args:?} ended before {point}: {seen}");
    }
    meanwhile();
    std::fs::write(&resume, "").unwrap();
    stderr.read_to_string(&mut seen).unwrap();
    let mut out = child.wait_with_output().unwrap();
    out.stderr = seen.into_bytes();
    out
}

/// Run `git handoff ARGS` in `dir` until it stops at failpoint `point`,
/// then SIGKILL the git-handoff process there (git runs it as a child in
/// the same process group; the git parent exits when it dies), and wait
/// until nothing of the group is left.
pub fn kill_at(sb: &Sandbox, dir: &Path, args: &[&str], point: &str) {
    let mut cmd = sb.command("git", dir);
    cmd.arg("handoff").args(args);
    let seen = kill_at_point(cmd, point);
    assert!(
        seen.is_ok(),
        "{args:?} ended before {point}: {}",
        seen.unwrap_err()
    );
}

/// Run `cmd` (a `git handoff …` command line) until it stops at failpoint
/// `point`, then SIGKILL the git-handoff process there and wait until
/// nothing of its process group is left. `Err` with what it printed when
/// it ended before reaching the point (nothing was killed).
pub fn kill_at_point(mut cmd: Command, point: &str) -> Result<(), String> {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    cmd.env("GIT_HANDOFF_FAILPOINT", point)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().unwrap();
    let pgid = child.id();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    // Lint warnings may come first; wait for the failpoint.
    let mut line = String::new();
    let mut seen = String::new();
    while !line.starts_with("failpoint:") {
        line.clear();
        if stderr.read_line(&mut line).unwrap_or(0) == 0 {
            child.wait().unwrap();
            return Err(seen);
        }
        seen.push_str(&line);
    }
    assert_eq!(line.trim(), format!("failpoint: {point}"));
    let pids = handoff_pids(pgid);
    assert_eq!(pids.len(), 1, "one git-handoff in the group: {pids:?}");
    sigkill(&pids[0]);
    child.wait().unwrap();
    wait_for_group(pgid);
    Ok(())
}

/// The pids of the git-handoff processes in process group `pgid`.
pub fn handoff_pids(pgid: u32) -> Vec<String> {
    let out = Command::new("pgrep")
        .args(["-g", &pgid.to_string(), "-x", "git-handoff"])
        .output()
        .expect("pgrep runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Wait until no process of the group `pgid` is left (git children of a
/// killed git-handoff finish on their own).
pub fn wait_for_group(pgid: u32) {
    use std::time::{Duration, Instant};
    let start = Instant::now();
    loop {
        let alive = Command::new("pgrep")
            .args(["-g", &pgid.to_string()])
            .output()
            .expect("pgrep runs");
        if alive.stdout.is_empty() {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "processes of group {pgid} outlived the kill"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// SIGKILL `target` (a pid, or `-PGID` for a group); it may have finished
/// already, which is fine.
pub fn sigkill(target: &str) {
    Command::new("kill")
        .args(["-9", "--", target])
        .stderr(std::process::Stdio::null())
        .status()
        .expect("kill runs");
}

/// Assert that `a`'s stdout contains `needle`; show all of it if not.
#[track_caller]
pub fn assert_stdout_has(a: &assert_cmd::assert::Assert, needle: &str) {
    let text = stdout(a);
    assert!(text.contains(needle), "{text}");
}

/// Assert that `a`'s stderr contains `needle`; show all of it if not.
#[track_caller]
pub fn assert_stderr_has(a: &assert_cmd::assert::Assert, needle: &str) {
    let text = stderr(a);
    assert!(text.contains(needle), "{text}");
}

/// Assert that a finished command succeeded; show its stderr if not.
#[track_caller]
pub fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Sandbox {
    /// The version ids `git handoff log KEY --json` lists in `dir`.
    pub fn log_ids(&self, dir: &Path, key: &str) -> Vec<String> {
        let out = self.handoff(dir, &["log", key, "--json"]).success();
        json(&stdout(&out))
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect()
    }
}

/// What every sharing test does with a team: run, write a version, read
/// a ref here or on the remote.
impl Team {
    /// `git handoff ARGS` in `dir`.
    pub fn run(&self, dir: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
        self.sb.handoff(dir, args)
    }

    /// Write a version of `key` in `dir` at the clock `now`; its id.
    pub fn write(&self, dir: &Path, key: &str, now: &str, done: &str) -> String {
        let mut cmd = self.sb.command("git", dir);
        cmd.env("GIT_HANDOFF_NOW", now).args([
            "handoff",
            "write",
            key,
            "--done-when",
            done,
            "--resume-by",
            "carry on",
            "--next-check",
            "cargo test",
            "--json",
            // Store as given: the push-side secret check is under test here,
            // and lint has no say in these tests.
            "--no-redact",
            "--no-lint",
        ]);
        let out = assert_cmd::Command::from_std(cmd).assert().success();
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        v["id"].as_str().unwrap().to_string()
    }

    /// The blob `refs/handoffs/<key>` holds in `dir`'s repository.
    pub fn brief_id(&self, dir: &Path, key: &str) -> Option<String> {
        self.id(dir, &format!("refs/handoffs/{key}"))
    }

    /// The id a ref holds in `dir`'s repository (or the bare remote).
    pub fn id(&self, dir: &Path, name: &str) -> Option<String> {
        let out = self.sb.git_out(dir, &["rev-parse", "--verify", "-q", name]);
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    pub fn remote_id(&self, key: &str) -> Option<String> {
        self.id(&self.bare, &format!("refs/handoffs/{key}"))
    }

    pub fn log_ids(&self, dir: &Path, key: &str) -> Vec<String> {
        self.sb.log_ids(dir, key)
    }

    /// Every ref of `dir`'s repository, as `for-each-ref` prints them.
    pub fn refs(&self, dir: &Path) -> String {
        self.sb.git(dir, &["for-each-ref"])
    }
}

impl Team {
    /// A second bare remote, a copy of the team's at `name`.git, added to
    /// A as `name`: its path and URL.
    pub fn second_remote(&self, name: &str) -> (PathBuf, String) {
        let bare = self.sb.path(&format!("{name}.git"));
        let root = self.sb.dir.path().to_path_buf();
        self.sb.git(
            &root,
            &["clone", "-q", "--bare", &self.url, bare.to_str().unwrap()],
        );
        let url = format!("file://{}", bare.display());
        self.sb.git(&self.a, &["remote", "add", name, &url]);
        (bare, url)
    }

    /// Append `line` to the history note of HEAD in `dir` with plain git,
    /// as any teammate can.
    pub fn append_note(&self, dir: &Path, line: &str) {
        self.sb.git(
            dir,
            &["notes", "--ref=handoffs", "append", "-m", line, "HEAD"],
        );
    }

    /// Another clone of the team's remote, at `name`.
    pub fn clone_as(&self, name: &str) -> PathBuf {
        let root = self.sb.dir.path().to_path_buf();
        self.sb.git(&root, &["clone", "-q", &self.url, name]);
        self.sb.path(name)
    }
}

/// The version lines of a history note (`git notes --ref=handoffs show`):
/// its briefs, without the lineage lines that record what each was
/// written on top of.
pub fn brief_lines(note: &str) -> Vec<&str> {
    note.lines()
        .filter(|l| !l.starts_with("{\"lineage\""))
        .collect()
}

/// The lineage lines of a history note.
pub fn lineage_lines(note: &str) -> Vec<&str> {
    note.lines()
        .filter(|l| l.starts_with("{\"lineage\""))
        .collect()
}

/// The files under `dir` (a git dir, say) whose bytes hold `needle`, as
/// `grep -rl` lists them.
pub fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    files_under(dir)
        .into_iter()
        .filter(|p| {
            std::fs::read(p)
                .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
        })
        .collect()
}

impl Sandbox {
    /// Move the brief `key` of `dir`'s repository to its archive ref with
    /// plain git, as `prune` leaves it.
    pub fn archive(&self, dir: &Path, key: &str) {
        let id = self.git(dir, &["rev-parse", &format!("refs/handoffs/{key}")]);
        let archived = format!("refs/handoff-archive/{key}");
        self.git(dir, &["update-ref", &archived, id.trim()]);
        self.git(dir, &["update-ref", "-d", &format!("refs/handoffs/{key}")]);
    }
}
