//! Shared helpers for end-to-end tests: real repositories in temp dirs, a
//! hermetic git environment, and `git handoff …` run through git with the
//! built binary first on PATH.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The fixed clock for tests.
pub const NOW: &str = "2026-11-30T12:00:00Z";

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
        "GIT_HANDOFF_STALE_HOURS",
        "NO_COLOR",
        "EMAIL",
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
 "state":{"next_acceptance_check":"cargo test auth::expiry","decisions":["use <= not <"],
          "rejected_paths":["< operator (off by one)"]},
 "files_read_first":[{"path":"src/auth.rs","why":"under repair"}]}"#;

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
