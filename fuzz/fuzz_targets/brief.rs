//! Bytes → `brief::parse_json` → `brief::validate` → (valid) `Brief` → every
//! renderer, with a synthetic drift report; the stored form must read back
//! as the same brief.
#![no_main]

use git_handoff::brief::{self, Brief};
use git_handoff::drift::{Commits, MeasuredOn, Origin, Report, Warning};
use git_handoff::render;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = brief::parse_json(data) else {
        return;
    };
    let issues = brief::validate(&value);
    // The read path (a typed parse and a native check first, the schema
    // only when they refuse) accepts exactly what the schema accepts.
    assert_eq!(
        Brief::from_slice(data).is_ok(),
        issues.is_empty(),
        "from_slice and validate disagree: {issues:?}"
    );
    if !issues.is_empty() {
        let _ = render::invalid(&issues);
        return;
    }
    let brief: Brief = serde_json::from_value(value).expect("a valid brief deserializes");
    // The stored form reads back as the same brief.
    let stored = brief.to_pretty_json();
    if stored.len() <= brief::MAX_BRIEF_BYTES {
        let again = Brief::from_slice(stored.as_bytes()).expect("the stored form is valid");
        assert_eq!(again, brief);
    }
    let _ = brief.resume_prompt();
    let _ = brief.to_compact_json();

    let seed = data.first().copied().unwrap_or(0);
    let mut warnings = Vec::new();
    for f in brief.files_read_first.iter().take(4) {
        warnings.push(if seed & 1 == 0 {
            Warning::Missing {
                path: f.path.clone(),
            }
        } else {
            Warning::Changed {
                path: f.path.clone(),
                change: "modified".into(),
                commits: seed as usize,
                newest: None,
                now: (seed & 16 == 0).then(|| "5-8".to_string()),
                lines_deleted: seed & 32 == 0,
            }
        });
    }
    warnings.push(Warning::BranchMismatch {
        brief: brief.state.branch.clone(),
        current: "main".into(),
        worktree: (seed & 2 == 0).then(|| "../feat".to_string()),
        measured_on: (seed & 4 == 0).then(|| brief.state.branch.clone()),
        exists: seed & 8 == 0,
        switch: (seed & 8 == 0).then(|| brief.state.branch.clone()),
    });
    warnings.push(Warning::Stale {
        hours: seed as i64 * 7,
        timestamp: brief.timestamp.clone(),
    });
    if let Some(d) = &brief.state.diff_summary {
        warnings.push(Warning::Dirty {
            summary: d.clone(),
            worktree: brief.state.worktree.root.clone(),
            files: brief.files_read_first.iter().take(3).map(|f| f.path.clone()).collect(),
            more: seed as usize % 5,
        });
    }
    let origin = match seed % 4 {
        0 => Origin::SameRepository,
        1 => Origin::OtherClone {
            root: brief.state.worktree.root.clone(),
        },
        2 => Origin::FromRemote {
            remote: "origin".into(),
        },
        _ => Origin::Mismatch,
    };
    if origin == Origin::Mismatch {
        warnings.insert(
            0,
            Warning::RepoMismatch {
                git_common_dir: brief.state.worktree.git_common_dir.clone(),
            },
        );
    }
    let commits = match seed % 3 {
        0 => Commits::Since {
            count: seed as usize,
            only_narrative: seed & 2 == 0,
            narrative: (seed as usize) / 2,
            recent: Vec::new(),
        },
        1 => Commits::NotInHistory {
            sha7: brief
                .state
                .head_sha
                .as_deref()
                .map(|h| h.chars().take(7).collect())
                .unwrap_or_default(),
            histories: vec![brief.state.branch.clone(), "main".into()],
        },
        _ => Commits::Unknown,
    };
    let unchecked = brief
        .files_read_first
        .iter()
        .filter(|f| git_handoff::drift::path_outside(&f.path))
        .map(|f| f.path.clone())
        .collect();
    let report = Report {
        origin,
        warnings,
        commits,
        unchecked,
        measured_on: MeasuredOn {
            branch: brief.state.branch.clone(),
            tip: brief.state.head_sha.clone(),
            current: "main".into(),
        },
        worktree: Some(brief.state.worktree.root.clone()),
        moved: Vec::new(),
        auto_over: None,
    };
    let others = vec!["other".to_string()];
    let text = render::resume_text(&brief, &report, &others);
    let _ = git_handoff::Output::human(text).plain();
    let _ = render::reground_text(&brief);
    let scope: Vec<String> = brief.state.commands.iter().take(2).cloned().collect();
    let source = render::SubagentSource::of(&serde_json::to_value(&brief).expect("a brief serializes"), Some(brief.key.clone()));
    let _ = render::subagent_text(
        &source,
        brief.resume.prompt.as_deref().unwrap_or(&brief.resume.resume_by),
        &scope,
        (seed as usize) * 4,
    );
    let from = render::fence::Source {
        key: &brief.key,
        version: "abc1234",
        record: None,
        timestamp: &brief.timestamp,
    };
    let _ = render::hook_context(&brief, "clear", &report, &from, 40);
    let _ = render::one_line(&brief.resume.resume_by, (seed as usize) % 90);
    let _ = render::json(&brief);
    let _ = git_handoff::drift::strip_lines(
        brief
            .files_read_first
            .first()
            .map(|f| f.path.as_str())
            .unwrap_or(""),
    );
    // Its narrative entry goes into the log as exactly one entry that the
    // merge driver can read, whatever the brief holds.
    let entry = git_handoff::narrative::entry_from_brief(
        &brief,
        Some("abc1234"),
        &git_handoff::narrative::Commits::default(),
    )
    .render();
    let old = "# Project state\n\n## 2025-01-01 — [old] old\n\n### What was done\n- x\n";
    let text = git_handoff::narrative::prepend(Some(old), &entry);
    let parsed = git_handoff::narrative_merge::parse(&text, "ours")
        .unwrap_or_else(|e| panic!("the merge driver cannot read it: {e}\n{text}"));
    assert_eq!(parsed.entries.len(), 2, "{text}");
    assert!(!text.chars().any(git_handoff::escape::is_unsafe));
});
