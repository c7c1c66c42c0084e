//! Merging the narrative as a log, not as text: the pure part of the
//! `merge-narrative` merge driver.
//!
//! A narrative is a header (everything before the first entry heading) and
//! entries, each starting at its `## YYYY-MM-DD — [label] title` line and
//! running to the next one. A three-way merge of three versions:
//!
//! - the header: the side that changed it, ours when both agree; changed
//!   differently on both sides → [`MergeError`];
//! - entries are matched by their heading line (the n-th entry with the same
//!   heading, counted from the oldest, since new entries are prepended);
//!   present in both → once; edited on one side only → the edited one;
//!   edited differently on both → both, the second marked with [`BOTH_EDITED_NOTE`];
//!   added on one side → kept; deleted on one side and unchanged on the
//!   other → deleted (this is what makes cherry-pick and rebase bring only
//!   the picked commit's entries); deleted on one side and edited on the
//!   other → the edited one is kept;
//! - the result is ordered newest first by heading date, stably; within a
//!   day, by time as the files tell it: an entry only theirs has goes above
//!   the entry that follows it in theirs (each file is newest first), and
//!   where neither file orders two entries, ours' come first.
//!
//! Anything that is not clearly a narrative (a `## ` line outside a code
//! fence that is not a dated entry heading, an unclosed fence, conflict
//! markers, NUL bytes) is a [`MergeError`]: the caller falls back to a
//! plain text merge, so no text is ever lost.

use std::collections::{HashMap, HashSet};
use std::fmt;

/// The one-line note that marks the second version of an entry edited
/// differently on both sides of a merge.
pub const BOTH_EDITED_NOTE: &str = "> Note (git handoff merge-narrative): this entry was edited differently on both sides of a merge; both versions are kept, this is the other side's.";

/// Why three versions could not be merged as a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeError {
    /// Which version: `base`, `ours` or `theirs`, or `header`.
    pub side: &'static str,
    /// The 1-based line, when the problem is on one line.
    pub line: Option<usize>,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{} line {}: {}", self.side, line, self.reason),
            None => write!(f, "{}: {}", self.side, self.reason),
        }
    }
}

impl std::error::Error for MergeError {}

/// One entry of a parsed narrative.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The heading line, without its line ending.
    pub heading: String,
    /// `YYYY-MM-DD` from the heading.
    pub date: String,
    /// The whole entry, heading included, without trailing whitespace.
    pub text: String,
}

/// A parsed narrative: header and entries, in file order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Narrative {
    /// Everything before the first entry heading, without trailing whitespace.
    pub header: String,
    /// The entries, in file order (newest first by convention).
    pub entries: Vec<Entry>,
}

/// The date of an entry heading (`## YYYY-MM-DD`, then the end of the line
/// or a space), or `None` when the line is not one.
pub fn heading_date(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("## ")?;
    let date = rest.get(..10)?;
    let after = &rest[10..];
    if !(after.is_empty() || after.starts_with(' ')) {
        return None;
    }
    let b = date.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if !(digits(0..4) && b[4] == b'-' && digits(5..7) && b[7] == b'-' && digits(8..10)) {
        return None;
    }
    let month: u32 = date[5..7].parse().ok()?;
    let day: u32 = date[8..10].parse().ok()?;
    ((1..=12).contains(&month) && (1..=31).contains(&day)).then_some(date)
}

fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

fn is_conflict_marker(line: &str) -> bool {
    line.starts_with("<<<<<<<") || line.starts_with(">>>>>>>")
}

/// Split a narrative into header and entries. `side` names the version in
/// errors.
pub fn parse(text: &str, side: &'static str) -> Result<Narrative, MergeError> {
    let err = |line: Option<usize>, reason: String| MergeError { side, line, reason };
    if text.contains('\0') {
        return Err(err(None, "contains NUL bytes; not a text file".into()));
    }
    let mut header = String::new();
    let mut entries: Vec<(String, String, String)> = Vec::new();
    let mut in_fence = false;
    let mut fence_line = 0;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let n = i + 1;
        let line = raw.trim_end_matches(['\n', '\r']);
        if is_conflict_marker(line) {
            return Err(err(
                Some(n),
                "holds a conflict marker from an unresolved merge".into(),
            ));
        }
        if is_fence(line) {
            in_fence = !in_fence;
            fence_line = n;
        } else if !in_fence && line.starts_with("## ") {
            let Some(date) = heading_date(line) else {
                return Err(err(
                    Some(n),
                    format!(
                        "'{}' is not an entry heading like `## YYYY-MM-DD — [key] title`",
                        line.chars().take(60).collect::<String>()
                    ),
                ));
            };
            entries.push((line.to_string(), date.to_string(), String::new()));
        }
        match entries.last_mut() {
            Some(entry) => entry.2.push_str(raw),
            None => header.push_str(raw),
        }
    }
    if in_fence {
        return Err(err(
            Some(fence_line),
            "a code fence opened here is never closed".into(),
        ));
    }
    Ok(Narrative {
        header: header.trim_end().to_string(),
        entries: entries
            .into_iter()
            .map(|(heading, date, text)| Entry {
                heading,
                date,
                text: text.trim_end().to_string(),
            })
            .collect(),
    })
}

/// Render a narrative: the header, a blank line, the entries separated by
/// blank lines, a final newline.
pub fn render(n: &Narrative) -> String {
    let mut blocks: Vec<&str> = Vec::new();
    if !n.header.is_empty() {
        blocks.push(&n.header);
    }
    blocks.extend(n.entries.iter().map(|e| e.text.as_str()));
    if blocks.is_empty() {
        return String::new();
    }
    let mut out = blocks.join("\n\n");
    out.push('\n');
    out
}

/// An entry's identity across versions: its heading and how many entries
/// with the same heading are below it (older), so that prepending never
/// shifts the identity of an existing entry.
type Id = (String, usize);

fn ids(entries: &[Entry]) -> Vec<Id> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut out: Vec<Id> = entries
        .iter()
        .rev()
        .map(|e| {
            let n = seen.entry(e.heading.as_str()).or_insert(0);
            *n += 1;
            (e.heading.clone(), *n - 1)
        })
        .collect();
    out.reverse();
    out
}

fn index(entries: &[Entry]) -> (Vec<Id>, HashMap<Id, &Entry>) {
    let ids = ids(entries);
    let map = ids.iter().cloned().zip(entries.iter()).collect();
    (ids, map)
}

/// Mark the second version of an entry edited on both sides: the note goes
/// on its own line right below the heading (once, however often it is
/// merged).
pub fn mark(entry: &Entry) -> Entry {
    let (heading, body) = entry
        .text
        .split_once('\n')
        .unwrap_or((entry.text.as_str(), ""));
    let body = body.trim_start_matches(['\n', '\r']);
    if body.starts_with(BOTH_EDITED_NOTE) {
        return entry.clone();
    }
    let text = if body.is_empty() {
        format!("{heading}\n\n{BOTH_EDITED_NOTE}")
    } else {
        format!("{heading}\n\n{BOTH_EDITED_NOTE}\n\n{body}")
    };
    Entry {
        text,
        ..entry.clone()
    }
}

fn merge_header(base: &str, ours: &str, theirs: &str) -> Result<String, MergeError> {
    if ours == theirs || theirs == base {
        Ok(ours.to_string())
    } else if ours == base {
        Ok(theirs.to_string())
    } else {
        Err(MergeError {
            side: "header",
            line: None,
            reason:
                "the header (the text above the first entry) was changed differently on both sides"
                    .into(),
        })
    }
}

/// Merge parsed versions (see the module documentation for the rules).
pub fn merge_parsed(
    base: &Narrative,
    ours: &Narrative,
    theirs: &Narrative,
) -> Result<Narrative, MergeError> {
    let header = merge_header(&base.header, &ours.header, &theirs.header)?;
    let (_, b) = index(&base.entries);
    let (ours_ids, o) = index(&ours.entries);
    let (theirs_ids, t) = index(&theirs.entries);

    // Ours' entries in ours' order, each resolved against base and theirs
    // (with the id each stands for, to place theirs' own entries by).
    let mut merged: Vec<(Option<&Id>, Entry)> = Vec::new();
    for id in &ours_ids {
        let ov = o[id];
        let mut keep = |e: Entry| merged.push((Some(id), e));
        match (b.get(id), t.get(id)) {
            (_, Some(tv)) if tv.text == ov.text => keep(ov.clone()),
            (Some(bv), Some(tv)) if bv.text == ov.text => keep((*tv).clone()),
            (Some(bv), Some(tv)) if bv.text == tv.text => keep(ov.clone()),
            (Some(_), Some(tv)) => {
                keep(ov.clone());
                merged.push((None, mark(tv)));
            }
            // Both added an entry under the same heading: two entries.
            (None, Some(tv)) => {
                keep(ov.clone());
                merged.push((None, (*tv).clone()));
            }
            // Deleted by theirs, unchanged by ours: deleted.
            (Some(bv), None) if bv.text == ov.text => {}
            // Deleted by theirs but edited by ours, or added by ours: kept.
            (_, None) => keep(ov.clone()),
        }
    }
    // What only theirs has goes where theirs has it: above the entry that
    // follows it in theirs' file (theirs is newest first too), so that a
    // merged branch's entry written after an older entry of the same day
    // stays above it.
    let in_ours: HashSet<&Id> = ours_ids.iter().collect();
    for (i, id) in theirs_ids.iter().enumerate() {
        if in_ours.contains(id) {
            continue;
        }
        let tv = t[id];
        if matches!(b.get(id), Some(bv) if bv.text == tv.text) {
            // Deleted by ours, unchanged by theirs: deleted.
            continue;
        }
        let at = theirs_ids[i + 1..]
            .iter()
            .find_map(|next| merged.iter().position(|(p, _)| *p == Some(next)))
            .unwrap_or(merged.len());
        merged.insert(at, (Some(id), tv.clone()));
    }
    let mut merged: Vec<Entry> = merged.into_iter().map(|(_, e)| e).collect();
    // Newest first; `sort_by` is stable, so entries of the same day keep
    // the order above: each side's own order, ours first where neither
    // tells.
    merged.sort_by(|a, b| b.date.cmp(&a.date));
    Ok(Narrative {
        header,
        entries: merged,
    })
}

/// Merge three narrative texts into the text to store, or say why they
/// cannot be merged as a log. The result keeps our line endings: a file
/// written with CRLF throughout stays CRLF throughout.
pub fn merge(base: &str, ours: &str, theirs: &str) -> Result<String, MergeError> {
    use crate::narrative::{is_crlf, to_crlf, to_lf};
    // Three identical sides merge to that text, byte for byte, as git's
    // own trivial merge does (a file with mixed line endings included,
    // which the line-ending round trip below would change).
    if base == ours && ours == theirs {
        parse(ours, "ours")?;
        return Ok(ours.to_string());
    }
    let crlf = if ours.is_empty() {
        is_crlf(theirs)
    } else {
        is_crlf(ours)
    };
    let base = parse(&to_lf(base), "base")?;
    let ours = parse(&to_lf(ours), "ours")?;
    let theirs = parse(&to_lf(theirs), "theirs")?;
    let merged = render(&merge_parsed(&base, &ours, &theirs)?);
    Ok(if crlf { to_crlf(&merged) } else { merged })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `narrative` fuzz target: a log whose lines end both
    /// ways merged with itself came back with other line endings.
    #[test]
    fn three_identical_sides_merge_to_the_same_bytes() {
        let mixed =
            "# Project state\r\nnotes\n\n## 2026-01-01 — [k] t\r\n\n### What was done\n- x\n";
        assert_eq!(merge(mixed, mixed, mixed).unwrap(), mixed);
        let crash = "J\u{e}\r\nJ\u{e}\n";
        assert_eq!(merge(crash, crash, crash).unwrap(), crash);
    }

    const HEADER: &str = "# Project state\n\nA log, newest first.\n";

    fn entry(date: &str, key: &str, body: &str) -> String {
        format!("## {date} — [{key}] title {key}\n\n### What was done\n- {body}\n")
    }

    fn doc(entries: &[String]) -> String {
        let mut s = HEADER.to_string();
        for e in entries {
            s.push('\n');
            s.push_str(e);
        }
        s
    }

    /// A narrative of these entries, each (date, key, body).
    fn log(entries: &[(&str, &str, &str)]) -> String {
        doc(&entries
            .iter()
            .map(|(date, key, body)| entry(date, key, body))
            .collect::<Vec<_>>())
    }

    fn headings(text: &str) -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("## "))
            .map(str::to_string)
            .collect()
    }

    /// The key of each entry heading, `[KEY]`, in order.
    fn keys(text: &str) -> Vec<String> {
        headings(text)
            .iter()
            .map(|h| {
                h.split('[')
                    .nth(1)
                    .unwrap()
                    .split(']')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn parse_splits_header_and_entries_and_ignores_fenced_headings() {
        let text = doc(&[
            entry("2026-11-30", "a", "x"),
            "## 2026-11-29 — [b] t\n\n```md\n## not a heading\n```\n".to_string(),
        ]);
        let n = parse(&text, "ours").unwrap();
        assert_eq!(n.header, HEADER.trim_end());
        assert_eq!(n.entries.len(), 2);
        assert_eq!(n.entries[0].date, "2026-11-30");
        assert!(n.entries[1].text.contains("## not a heading"));
        // Rendering a parsed file gives the file back (modulo blank lines).
        assert_eq!(render(&n), text);
        assert_eq!(parse("", "base").unwrap(), Narrative::default());
        assert_eq!(render(&Narrative::default()), "");
    }

    #[test]
    fn parse_refuses_what_it_cannot_place() {
        let undated = doc(&[entry("2026-11-30", "a", "x"), "## Notes\n- y\n".into()]);
        let e = parse(&undated, "theirs").unwrap_err();
        assert_eq!((e.side, e.line), ("theirs", Some(10)));
        assert!(e.to_string().contains("'## Notes' is not an entry heading"));
        assert!(parse("## 2026-13-01 — [a] bad month\n", "ours").is_err());
        assert!(parse("## 2026-11-30x\n", "ours").is_err());
        assert!(parse("# h\n\n```\nopen fence\n", "ours").is_err());
        assert!(parse("# h\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n", "ours").is_err());
        assert!(parse("# h\0\n", "ours").is_err());
        // A heading with nothing after the date is still an entry.
        assert_eq!(parse("## 2026-11-30\n", "ours").unwrap().entries.len(), 1);
    }

    #[test]
    fn union_of_entries_added_on_both_sides_newest_first_header_once() {
        let base = log(&[("2026-11-01", "base", "b")]);
        let ours = log(&[
            ("2026-11-04", "o2", "x"),
            ("2026-11-02", "o1", "x"),
            ("2026-11-01", "base", "b"),
        ]);
        let theirs = log(&[
            ("2026-11-05", "t2", "y"),
            ("2026-11-03", "t1", "y"),
            ("2026-11-01", "base", "b"),
        ]);
        let out = merge(&base, &ours, &theirs).unwrap();
        assert_eq!(keys(&out), ["t2", "o2", "t1", "o1", "base"]);
        assert_eq!(out.matches("# Project state").count(), 1);
        assert!(out.starts_with(HEADER));
        // Symmetric in content.
        let swapped = merge(&base, &theirs, &ours).unwrap();
        assert_eq!(headings(&swapped), headings(&out));
    }

    #[test]
    fn equal_dates_keep_ours_before_theirs_and_each_sides_order() {
        let base = doc(&[]);
        let ours = log(&[("2026-11-30", "o2", "x"), ("2026-11-30", "o1", "x")]);
        let theirs = log(&[("2026-11-30", "t2", "y"), ("2026-11-30", "t1", "y")]);
        let out = merge(&base, &ours, &theirs).unwrap();
        let order: Vec<usize> = ["[o2]", "[o1]", "[t2]", "[t1]"]
            .iter()
            .map(|k| out.find(k).unwrap())
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{out}");
    }

    /// Issue 34, item 15: the merged branch's entry of the same day as an
    /// older entry both sides have stays above it, where theirs had it.
    #[test]
    fn a_merged_branchs_same_day_entry_stays_above_the_older_one() {
        let base = log(&[("2026-11-30", "morning", "b"), ("2026-11-29", "old", "b")]);
        let theirs = log(&[
            ("2026-11-30", "noon", "y"),
            ("2026-11-30", "morning", "b"),
            ("2026-11-29", "old", "b"),
        ]);
        let ours = log(&[
            ("2026-11-30", "evening", "x"),
            ("2026-11-30", "morning", "b"),
            ("2026-11-29", "old", "b"),
        ]);
        assert_eq!(
            keys(&merge(&base, &base, &theirs).unwrap()),
            ["noon", "morning", "old"]
        );
        assert_eq!(
            keys(&merge(&base, &ours, &theirs).unwrap()),
            ["evening", "noon", "morning", "old"]
        );
        // A theirs-only entry older than every shared one goes below them.
        let older = log(&[
            ("2026-11-30", "morning", "b"),
            ("2026-11-29", "old", "b"),
            ("2026-11-29", "older", "y"),
        ]);
        assert_eq!(
            keys(&merge(&base, &base, &older).unwrap()),
            ["morning", "old", "older"]
        );
    }

    #[test]
    fn an_entry_edited_on_one_side_is_taken_from_that_side() {
        let base = log(&[("2026-11-01", "a", "original")]);
        let ours = log(&[("2026-11-02", "o", "new"), ("2026-11-01", "a", "original")]);
        let theirs = log(&[("2026-11-01", "a", "edited by theirs")]);
        let out = merge(&base, &ours, &theirs).unwrap();
        assert!(out.contains("edited by theirs"));
        assert!(!out.contains("original"));
        assert!(out.contains("[o]"));
        assert!(!out.contains(BOTH_EDITED_NOTE));
    }

    #[test]
    fn an_entry_edited_on_both_sides_is_kept_twice_and_the_second_marked() {
        let base = log(&[("2026-11-01", "a", "original")]);
        let ours = log(&[("2026-11-01", "a", "ours' edit")]);
        let theirs = log(&[("2026-11-01", "a", "theirs' edit")]);
        let out = merge(&base, &ours, &theirs).unwrap();
        let o = out.find("ours' edit").unwrap();
        let note = out.find(BOTH_EDITED_NOTE).unwrap();
        let t = out.find("theirs' edit").unwrap();
        assert!(o < note && note < t, "{out}");
        assert_eq!(out.matches(BOTH_EDITED_NOTE).count(), 1);
        assert_eq!(headings(&out).len(), 2);
        // Merging the result again does not mark twice.
        let again = mark(&parse(&out, "ours").unwrap().entries[1]);
        assert_eq!(again.text.matches(BOTH_EDITED_NOTE).count(), 1);
        // The marked entry parses as an entry with the same heading.
        assert!(
            again
                .text
                .starts_with("## 2026-11-01 — [a] title a\n\n> Note")
        );
    }

    #[test]
    fn deletions_win_over_unchanged_entries_but_never_over_edits() {
        let base = log(&[("2026-11-02", "b", "x"), ("2026-11-01", "a", "x")]);
        // ours dropped `a` (as a cherry-pick onto a branch without it does);
        // theirs left it alone and added `c`.
        let ours = log(&[("2026-11-02", "b", "x")]);
        let theirs = log(&[
            ("2026-11-03", "c", "x"),
            ("2026-11-02", "b", "x"),
            ("2026-11-01", "a", "x"),
        ]);
        let out = merge(&base, &ours, &theirs).unwrap();
        assert_eq!(headings(&out).len(), 2);
        assert!(!out.contains("[a]"));
        // Edited on the side that did not delete: kept.
        let theirs = log(&[("2026-11-02", "b", "x"), ("2026-11-01", "a", "edit")]);
        let out = merge(&base, &ours, &theirs).unwrap();
        assert!(out.contains("- edit"));
        let out = merge(&base, &theirs, &ours).unwrap();
        assert!(out.contains("- edit"));
    }

    #[test]
    fn same_heading_added_on_both_sides_with_different_text_keeps_both() {
        let base = doc(&[]);
        let ours = log(&[("2026-11-30", "k", "one")]);
        let theirs = log(&[("2026-11-30", "k", "two")]);
        let out = merge(&base, &ours, &theirs).unwrap();
        assert!(out.find("- one").unwrap() < out.find("- two").unwrap());
        // Identical additions appear once.
        let out = merge(&base, &ours, &ours).unwrap();
        assert_eq!(headings(&out).len(), 1);
    }

    #[test]
    fn duplicate_headings_are_matched_from_the_oldest() {
        let e = |body| entry("2026-11-30", "k", body);
        let base = doc(&[e("second"), e("first")]);
        let ours = doc(&[e("third"), e("second"), e("first")]);
        let theirs = doc(&[e("second"), e("first, edited")]);
        let out = merge(&base, &ours, &theirs).unwrap();
        let bodies: Vec<&str> = out.lines().filter_map(|l| l.strip_prefix("- ")).collect();
        assert_eq!(bodies, ["third", "second", "first, edited"]);
    }

    #[test]
    fn header_is_three_way_and_a_double_edit_is_refused() {
        let base = format!("{HEADER}\n{}", entry("2026-11-01", "a", "x"));
        let theirs = base.replace("A log", "The log");
        let out = merge(&base, &base, &theirs).unwrap();
        assert!(out.starts_with("# Project state\n\nThe log"));
        let ours = base.replace("A log", "Our log");
        let e = merge(&base, &ours, &theirs).unwrap_err();
        assert_eq!(e.side, "header");
        // No base file (both sides added it): equal headers merge.
        let out = merge("", &ours, &ours.replace("- x", "- y")).unwrap();
        assert_eq!(out.matches("Our log").count(), 1);
    }

    #[test]
    fn no_text_is_lost_when_both_sides_only_add() {
        let base = log(&[("2026-11-01", "a", "x")]);
        let ours = doc(&[
            entry("2026-11-03", "o", "ours line"),
            "## 2026-11-02 — [p] with code\n\n```\n## fenced\n```\n".into(),
            entry("2026-11-01", "a", "x"),
        ]);
        let theirs = log(&[("2026-11-30", "t", "theirs line"), ("2026-11-01", "a", "x")]);
        let out = merge(&base, &ours, &theirs).unwrap();
        for text in [&ours, &theirs] {
            for line in text.lines() {
                assert!(out.contains(line), "lost {line:?} in\n{out}");
            }
        }
    }
}
