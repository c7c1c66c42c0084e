//! The narrative prepend (`narrative::prepend`) and the merge driver's
//! parse / merge (`narrative_merge`), on arbitrary text.
#![no_main]

use git_handoff::{narrative, narrative_merge};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (&str, &str, &str)| {
    let (a, b, c) = input;

    // prepend: the entry is in the result, and no earlier text is lost.
    let existing = (!a.is_empty()).then_some(a);
    let out = narrative::prepend(existing, b);
    assert!(out.contains(b.trim_end_matches('\n')), "the entry is kept");
    if let Some(pos) = a.find("\n## ") {
        if a.starts_with("# ") {
            assert!(out.ends_with(&a[pos + 1..]), "earlier entries are kept");
        }
    }
    if !a.trim().is_empty() && !a.starts_with("# ") {
        assert!(out.ends_with(a), "foreign text is kept");
    }

    // the merge driver: no panic; a merge re-parses and merges with itself
    // to itself.
    let _ = narrative_merge::heading_date(a);
    let Ok(merged) = narrative_merge::merge(a, b, c) else {
        return;
    };
    let parsed = narrative_merge::parse(&merged, "merged").expect("a merge re-parses");
    let again = narrative_merge::render(&parsed);
    assert_eq!(
        narrative_merge::merge(&again, &again, &again).expect("merges with itself"),
        again
    );
    // A hand-written entry (`write --narrative FILE`) that is accepted adds
    // exactly one entry the merge driver can read.
    let mut entry = git_handoff::narrative::Entry {
        date: "2026-01-01".into(),
        label: "k".into(),
        title: "t".into(),
        sections: vec![("What was done".into(), "- x\n".into())],
    };
    if git_handoff::narrative::apply_markdown(&mut entry, b).is_ok() {
        let old = "# Project state\n\n## 2025-01-01 — [old] old\n";
        let text = narrative::prepend(Some(old), &entry.render());
        let parsed = narrative_merge::parse(&text, "ours")
            .unwrap_or_else(|e| panic!("the merge driver cannot read it: {e}\n{text}"));
        assert_eq!(parsed.entries.len(), 2, "{text}");
    }
    // Entries are rendered by the narrative writer and then merged.
    if let Ok(ours) = narrative_merge::parse(b, "ours") {
        let _ = narrative_merge::merge(a, &narrative::prepend(Some(b), c), b);
        for e in &ours.entries {
            let _ = narrative_merge::mark(e);
        }
    }
});
