//! The safety net checked against a reference model: seeded random
//! schedules of a person's writes and `--update`s and of sessions that
//! end (or compact, then end) through the hooks, having worked or only
//! looked. The model is the person's latest version; after every step:
//!
//! 1. a session that only looked leaves the brief as it was;
//! 2. a session that worked, over a brief written before it began,
//!    stores a draft (mode AUTO);
//! 3. every draft keeps the person's latest version: its next step and
//!    every decision, word for word, and says which version it went over
//!    (`AUTO draft over <id>`), also when it replaces an earlier draft;
//! 4. a person's write or update is stored as written (mode WRITE).
//!
//! A failing schedule prints its seed and steps; `GIT_HANDOFF_NET_SEED=N`
//! replays one. `cargo test` runs 40 seeds of 8 steps.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

/// The transcript fixture's working directory and session id.
const SESSION_DIR: &str = "/home/dev/app";
const SESSION_ID: &str = "5f1c2a7e-0b3d-4c1e-9a2f-3d4e5f6a7b8c";

/// A small deterministic generator (xorshift64*), so that a seed replays.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n as u64) as usize
    }
}

#[derive(Debug, Clone, Copy)]
enum Step {
    Write,
    Update,
    /// A session that worked (or only looked), ending with SessionEnd, or
    /// with PreCompact then SessionEnd.
    Session {
        worked: bool,
        compacts: bool,
    },
}

/// The person's latest version: its id, next step and decisions.
struct Person {
    id: String,
    resume_by: String,
    decisions: Vec<String>,
}

struct Run<'a> {
    sb: &'a Sandbox,
    repo: &'a Path,
    fixture: &'a str,
    person: Option<Person>,
    day: u32,
    log: Vec<String>,
    seed: u64,
}

impl Run<'_> {
    fn fail(&self, what: &str) -> ! {
        panic!(
            "safety-net model seed {} broke an invariant: {what}\nsteps:\n  {}\nreplay: GIT_HANDOFF_NET_SEED={} cargo test --test cli net_model::",
            self.seed,
            self.log.join("\n  "),
            self.seed
        );
    }

    fn stored(&self) -> Option<(String, Value)> {
        let out = self
            .sb
            .command("git", self.repo)
            .args(["rev-parse", "-q", "--verify", "refs/handoffs/main"])
            .output()
            .unwrap();
        let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (!id.is_empty()).then(|| {
            let text = self.sb.git(self.repo, &["cat-file", "-p", &id]);
            (id, serde_json::from_str(&text).unwrap())
        })
    }

    fn at(&self, hour: u32) -> String {
        format!("2026-12-{:02}T{hour:02}:00:00Z", self.day)
    }

    /// A person's write (or update), the day before any session of it.
    fn write(&mut self, update: bool) {
        if update && self.stored().is_none() {
            return;
        }
        let n = self.log.len();
        let decision = format!("decision {n} — reason {n}");
        let next = format!("step {n}");
        let mut args = vec![
            "write",
            "--no-lint",
            "--no-narrative",
            "--decision",
            &decision,
        ];
        if update {
            args.push("--update");
        } else {
            args.extend([
                "--done-when",
                "cargo test passes",
                "--next-check",
                "cargo test",
            ]);
        }
        args.extend(["--resume-by", &next]);
        self.day += 1;
        let now = self.at(9);
        let out = self
            .sb
            .handoff_env(self.repo, &[("GIT_HANDOFF_NOW", &now)], &args, None);
        let out = out.get_output().clone();
        if !out.status.success() {
            self.fail(&format!("write: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let (id, brief) = self.stored().unwrap();
        if brief["mode"] != "WRITE" {
            self.fail(&format!("a person's write is stored as {}", brief["mode"]));
        }
        let decisions = brief["state"]["decisions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_str().unwrap().to_string())
            .collect();
        self.person = Some(Person {
            id,
            resume_by: next,
            decisions,
        });
    }

    /// A session on a new day: its transcript (the fixture, moved to that
    /// day, its edits and commands dropped when it only looked), then its
    /// hooks.
    fn session(&mut self, worked: bool, compacts: bool) {
        self.day += 1;
        let session = format!("s{}", self.log.len());
        let text = self
            .fixture
            .replace(SESSION_DIR, &self.repo.display().to_string())
            .replace(SESSION_ID, &session)
            .replace("2026-11-30T10:", &format!("2026-12-{:02}T10:", self.day));
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| {
                worked
                    || !["\"Edit\"", "\"Write\"", "\"Bash\""]
                        .iter()
                        .any(|t| l.contains(t))
            })
            .collect();
        let path = self.sb.path(&format!("{session}.jsonl"));
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let before = self.stored();
        let events: &[(&str, &str)] = if compacts {
            &[("PreCompact", "pre-compact"), ("SessionEnd", "session-end")]
        } else {
            &[("SessionEnd", "session-end")]
        };
        for (i, (event, hook)) in events.iter().enumerate() {
            let input = json!({
                "session_id": session, "transcript_path": path.display().to_string(),
                "cwd": self.repo.display().to_string(), "hook_event_name": event,
                "trigger": "auto", "reason": "other",
            });
            let now = self.at(11 + i as u32);
            let out = self.sb.handoff_env(
                self.repo,
                &[("GIT_HANDOFF_NOW", &now)],
                &["hook", hook],
                Some(&input.to_string()),
            );
            if !out.get_output().status.success() {
                self.fail(&format!("hook {hook} failed"));
            }
            self.check_after_hook(worked, i == 0, before.as_ref());
        }
    }

    /// Invariants 1 to 3 after one hook.
    fn check_after_hook(&self, worked: bool, first: bool, before: Option<&(String, Value)>) {
        let after = self.stored();
        let changed = after.as_ref().map(|a| &a.0) != before.map(|b| &b.0);
        if !worked {
            if changed {
                self.fail("a session that only looked changed the brief");
            }
            return;
        }
        if first && !changed {
            self.fail("a session that worked, over an older brief, stored no draft");
        }
        let Some((_, draft)) = after else {
            self.fail("the brief is gone");
        };
        if draft["mode"] != "AUTO" {
            self.fail(&format!("a hook stored mode {}", draft["mode"]));
        }
        let Some(person) = &self.person else {
            return;
        };
        if draft["resume"]["resume_by"] != person.resume_by.as_str() {
            self.fail(&format!(
                "the draft's next step is {}, the person's '{}'",
                draft["resume"]["resume_by"], person.resume_by
            ));
        }
        let decisions = &draft["state"]["decisions"];
        for d in &person.decisions {
            if !decisions
                .as_array()
                .is_some_and(|all| all.iter().any(|x| x == d.as_str()))
            {
                self.fail(&format!(
                    "the draft lost the person's decision '{d}': {decisions}"
                ));
            }
        }
        let over = format!("AUTO draft over {}", &person.id[..7]);
        let first_risk = draft["state"]["open_risks"][0].as_str().unwrap_or_default();
        if !first_risk.starts_with(&over) {
            self.fail(&format!("the draft says '{first_risk}', not '{over}'"));
        }
    }

    fn apply(&mut self, step: Step) {
        self.log.push(format!("{step:?}"));
        match step {
            Step::Write => self.write(false),
            Step::Update => self.write(true),
            Step::Session { worked, compacts } => self.session(worked, compacts),
        }
    }
}

impl<'a> Run<'a> {
    /// A run in `repo`, with nothing written yet.
    fn new(sb: &'a Sandbox, repo: &'a Path, fixture: &'a str, seed: u64) -> Run<'a> {
        Run {
            sb,
            repo,
            fixture,
            person: None,
            day: 0,
            log: Vec::new(),
            seed,
        }
    }
}

fn fixture() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/draft-claude.jsonl"),
    )
    .unwrap()
}

fn run_seed(fixture: &str, seed: u64, steps: usize) {
    let sb = Sandbox::new();
    let repo = sb.repo("app");
    sb.commit(&repo, "src/auth.rs", "pub fn verify() {}\n", "auth");
    let mut run = Run::new(&sb, &repo, fixture, seed);
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    for _ in 0..steps {
        let step = match rng.below(6) {
            0 => Step::Write,
            1 => Step::Update,
            n => Step::Session {
                worked: n != 2,
                compacts: rng.below(2) == 0,
            },
        };
        run.apply(step);
    }
}

#[test]
fn a_persons_brief_survives_every_automatic_path() {
    let fixture = fixture();
    let seeds: Vec<u64> = match std::env::var("GIT_HANDOFF_NET_SEED") {
        Ok(seed) => vec![seed.parse().expect("a number")],
        Err(_) => (0..40).collect(),
    };
    for seed in seeds {
        run_seed(&fixture, seed, 8);
    }
}

/// Issue 55 item 7: however long a chain of drafts grows (no person's
/// write between), each keeps the person's version.
#[test]
fn a_long_chain_of_drafts_keeps_the_persons_brief() {
    let (sb, fixture) = (Sandbox::new(), fixture());
    let repo = sb.repo("app");
    let mut run = Run::new(&sb, &repo, &fixture, 0);
    run.apply(Step::Write);
    for _ in 0..20 {
        run.apply(Step::Session {
            worked: true,
            compacts: false,
        });
    }
}

/// Issue 55 item 6: Ada's session ends over her brief (a draft) and she
/// pushes; Bob fetches and his session ends: his draft keeps Ada's next
/// step and decisions, read from the history (her version's blob never
/// reached his clone).
#[test]
fn a_teammates_draft_keeps_the_persons_brief() {
    let (t, fixture) = (team(), fixture());
    let mut ada = Run::new(&t.sb, &t.a, &fixture, 0);
    ada.apply(Step::Write);
    ada.apply(Step::Session {
        worked: true,
        compacts: false,
    });
    let person = ada.person.take().expect("Ada wrote");
    t.run(&t.a, &["push"]).success();
    t.run(&t.b, &["fetch"]).success();
    let missing = t.sb.git_out(&t.b, &["cat-file", "-e", &person.id]);
    assert!(
        !missing.status.success(),
        "the test needs Ada's blob absent"
    );
    let mut bob = Run::new(&t.sb, &t.b, &fixture, 0);
    bob.person = Some(person);
    bob.day = ada.day;
    bob.apply(Step::Session {
        worked: true,
        compacts: false,
    });
}
