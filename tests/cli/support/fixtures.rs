//! A team that used git-handoff 0.3: its remote as the real 0.3.0 binary
//! left it (`tests/fixtures/v03/make.sh` made the bundles), and a 0.3
//! teammate's writes emulated with plain git, line for line as 0.3 wrote
//! them.

use std::path::{Path, PathBuf};

use super::{Sandbox, Team};

/// A file of `tests/fixtures/v03/`.
pub fn v03_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/v03")
        .join(name)
}

/// `(key, id)` of every version 0.3's own `log` listed in the 0.3 team's
/// clones at the end (`versions.txt`).
pub fn v03_versions() -> Vec<(String, String)> {
    std::fs::read_to_string(v03_fixture("versions.txt"))
        .unwrap()
        .lines()
        .map(|l| {
            let (key, id) = l.split_once(' ').unwrap();
            (key.to_string(), id.to_string())
        })
        .collect()
}

/// A team whose remote is the 0.3 team's as of `snapshot` (`first` or
/// `final`), cloned as A and B (clones of this version, nothing fetched
/// yet).
pub fn v03_team(snapshot: &str) -> Team {
    let sb = Sandbox::new();
    let root = sb.dir.path().to_path_buf();
    let bare = sb.path("remote.git");
    sb.git(
        &root,
        &["init", "-q", "--bare", "-b", "main", bare.to_str().unwrap()],
    );
    let url = format!("file://{}", bare.display());
    let t = Team {
        sb,
        bare,
        url,
        a: root.join("A"),
        b: root.join("B"),
    };
    t.load_v03(snapshot);
    for name in ["A", "B"] {
        t.sb.git(&root, &["clone", "-q", &t.url, name]);
    }
    t
}

impl Team {
    /// Every ref of the remote as the 0.3 team left it at `snapshot`: what
    /// its pushes made of it meanwhile.
    pub fn load_v03(&self, snapshot: &str) {
        let bundle = v03_fixture(&format!("{snapshot}.bundle"));
        self.sb.git(
            &self.bare,
            &[
                "fetch",
                "-q",
                "--prune",
                bundle.to_str().unwrap(),
                "+refs/*:refs/*",
            ],
        );
    }

    /// A clone at `name` whose briefs and history are the remote's, taken
    /// with plain git: a 0.3 teammate's, whose writes
    /// [`Team::push_as_v03`] makes.
    pub fn v03_clone(&self, name: &str) -> PathBuf {
        let dir = self.clone_as(name);
        self.v03_pull(&dir);
        dir
    }

    /// Take the remote's briefs and history into `dir` with plain git.
    pub fn v03_pull(&self, dir: &Path) {
        self.sb.git(
            dir,
            &[
                "fetch",
                "-q",
                "origin",
                "+refs/handoffs/*:refs/handoffs/*",
                "+refs/notes/handoffs:refs/notes/handoffs",
            ],
        );
    }

    /// As a 0.3 teammate in `dir` (a [`Team::v03_clone`]): store `pretty`
    /// (a brief's stored form) under `key`, append its two lines to the
    /// note of its head as 0.3 did — the brief, then its lineage over
    /// `parents` (blob ids) at `at` — and push the brief and the history
    /// with plain git. The brief's blob id.
    pub fn push_as_v03(
        &self,
        dir: &Path,
        key: &str,
        pretty: &str,
        parents: &[&str],
        at: &str,
    ) -> String {
        let blob = self.write_as_v03(dir, key, pretty, parents, at);
        self.sb.git(
            dir,
            &[
                "push",
                "-q",
                "origin",
                &format!("+refs/handoffs/{key}"),
                "refs/notes/handoffs",
            ],
        );
        blob
    }

    /// [`Team::push_as_v03`] without the push: the brief stored and its two
    /// lines appended, as 0.3's write left them. The brief's blob id.
    pub fn write_as_v03(
        &self,
        dir: &Path,
        key: &str,
        pretty: &str,
        parents: &[&str],
        at: &str,
    ) -> String {
        let blob = self
            .sb
            .git_stdin(dir, &["hash-object", "-w", "--stdin"], pretty);
        let brief: serde_json::Value = serde_json::from_str(pretty).unwrap();
        let head = brief["state"]["head_sha"].as_str().unwrap();
        let lines = format!(
            "{}\n{}\n",
            compact(pretty),
            v03_line(key, &blob, parents, at)
        );
        self.v03_note(dir, head, &lines);
        self.sb
            .git(dir, &["update-ref", &format!("refs/handoffs/{key}"), &blob]);
        blob
    }

    /// Append `lines` to the history note of `commit` in `dir`, as 0.3's
    /// notes hold them: one per line, no blank line between.
    pub fn v03_note(&self, dir: &Path, commit: &str, lines: &str) {
        let old = self
            .sb
            .git_out(dir, &["notes", "--ref=handoffs", "show", commit]);
        let mut note = String::from_utf8(old.stdout).unwrap();
        note.push_str(lines);
        self.sb.git_stdin(
            dir,
            &["notes", "--ref=handoffs", "add", "-f", "-F", "-", commit],
            note,
        );
    }
}

/// A lineage line exactly as 0.3 wrote it: the brief's blob id as the
/// version, no `"brief"` field, the parents' blob ids sorted.
pub fn v03_line(key: &str, blob: &str, parents: &[&str], at: &str) -> String {
    let mut parents: Vec<&str> = parents.to_vec();
    parents.sort();
    parents.dedup();
    let quoted: Vec<String> = parents.iter().map(|p| format!("\"{p}\"")).collect();
    format!(
        r#"{{"lineage":"{blob}","key":{},"parents":[{}],"at":"{at}"}}"#,
        serde_json::to_string(key).unwrap(),
        quoted.join(",")
    )
}

/// The one-line form of a brief's pretty JSON, its fields in their order
/// (as 0.3's history lines hold a brief).
pub fn compact(pretty: &str) -> String {
    let (mut out, mut in_string, mut escaped) = (String::new(), false, false);
    for c in pretty.chars() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if !c.is_whitespace() {
            in_string = c == '"';
            out.push(c);
        }
    }
    out
}
