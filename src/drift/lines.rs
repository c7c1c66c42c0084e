//! A file pointer's line range (`t.py:3-5`) mapped through a diff of the
//! file, from the brief's head to now: where those lines are now, and
//! whether they only moved.

use similar::{DiffOp, TextDiff};

/// A line range, 1-based and inclusive, as a pointer records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// The first line.
    pub start: usize,
    /// The last line.
    pub end: usize,
}

impl Range {
    /// The range of a recorded pointer: `path:A-B` or `path:A`; `None`
    /// for no range, a list (`3-5,9`) or nonsense (`9-3`, `0`).
    pub fn of(recorded: &str) -> Option<Range> {
        let (_, lines) = recorded.rsplit_once(':')?;
        let (a, b) = lines.split_once('-').unwrap_or((lines, lines));
        let (start, end) = (a.parse().ok()?, b.parse().ok()?);
        (start >= 1 && start <= end).then_some(Range { start, end })
    }
}

impl std::fmt::Display for Range {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.start == self.end {
            write!(f, "{}", self.start)
        } else {
            write!(f, "{}-{}", self.start, self.end)
        }
    }
}

/// What became of a range's lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mapped {
    /// Every line the same, at the same place.
    Same,
    /// Every line the same, nothing inserted between them, at a new place.
    Moved(Range),
    /// Some lines edited, deleted or inserted among them: where they are now.
    Edited(Range),
    /// Every line deleted, nothing in their place.
    Deleted,
}

/// Map `range` of `old` through the line diff to `new`; `None` when the
/// range runs past the end of `old` (nothing to map).
pub fn map(old: &str, new: &str, range: Range) -> Option<Mapped> {
    let diff = TextDiff::from_lines(old, new);
    let old_lines = old.split_inclusive('\n').count();
    if range.end > old_lines {
        return None;
    }
    let ops = diff.ops();
    // 0-based, half-open.
    let (a, b) = (range.start - 1, range.end);
    let placed: Vec<Option<usize>> = (a..b).map(|line| equal_at(ops, line)).collect();
    let contiguous = placed
        .iter()
        .zip(placed.iter().skip(1))
        .all(|(x, y)| matches!((x, y), (Some(x), Some(y)) if *y == x + 1));
    if placed.iter().all(Option::is_some) && contiguous {
        let start = placed[0].expect("all placed") + 1;
        let now = Range {
            start,
            end: start + (b - a) - 1,
        };
        return Some(if now == range {
            Mapped::Same
        } else {
            Mapped::Moved(now)
        });
    }
    let start = placed[0].unwrap_or_else(|| replaced_at(ops, a).0);
    let end = placed[b - a - 1].map_or_else(|| replaced_at(ops, b - 1).1, |n| n + 1);
    Some(if end <= start {
        Mapped::Deleted
    } else {
        Mapped::Edited(Range {
            start: start + 1,
            end,
        })
    })
}

/// Where old line `line` (0-based) is in the new text, when it is unchanged.
fn equal_at(ops: &[DiffOp], line: usize) -> Option<usize> {
    ops.iter().find_map(|op| match *op {
        DiffOp::Equal {
            old_index,
            new_index,
            len,
        } if (old_index..old_index + len).contains(&line) => Some(new_index + line - old_index),
        _ => None,
    })
}

/// The new lines (0-based, half-open) that took the place of a deleted or
/// replaced old line (0-based): empty for a deletion.
fn replaced_at(ops: &[DiffOp], line: usize) -> (usize, usize) {
    ops.iter()
        .find_map(|op| match *op {
            DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } if (old_index..old_index + old_len).contains(&line) => Some((new_index, new_index)),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } if (old_index..old_index + old_len).contains(&line) => {
                Some((new_index, new_index + new_len))
            }
            _ => None,
        })
        .unwrap_or((0, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "a\nb\nc\nd\ne\nf\n";

    fn r(start: usize, end: usize) -> Range {
        Range { start, end }
    }

    #[test]
    fn ranges_parse_as_recorded() {
        assert_eq!(Range::of("t.py:3-5"), Some(r(3, 5)));
        assert_eq!(Range::of("t.py:7"), Some(r(7, 7)));
        assert_eq!(Range::of("t.py"), None);
        assert_eq!(Range::of("t.py:3-5,9"), None);
        assert_eq!(Range::of("t.py:5-3"), None);
        assert_eq!(Range::of("t.py:0"), None);
        assert_eq!(r(5, 7).to_string(), "5-7");
        assert_eq!(r(7, 7).to_string(), "7");
    }

    #[test]
    fn lines_that_only_moved_are_found_at_their_new_place() {
        let new = "x\ny\na\nb\nc\nd\ne\nf\n";
        assert_eq!(map(OLD, new, r(3, 5)), Some(Mapped::Moved(r(5, 7))));
        let below = "a\nb\nc\nd\ne\nf\nz\n";
        assert_eq!(map(OLD, below, r(3, 5)), Some(Mapped::Same));
        let above_removed = "b\nc\nd\ne\nf\n";
        assert_eq!(
            map(OLD, above_removed, r(3, 5)),
            Some(Mapped::Moved(r(2, 4)))
        );
    }

    #[test]
    fn an_edit_inside_is_a_change_at_the_new_place() {
        let edited = "x\ny\na\nb\nC\nd\ne\nf\n";
        assert_eq!(map(OLD, edited, r(3, 5)), Some(Mapped::Edited(r(5, 7))));
        let inserted = "a\nb\nc\nnew\nd\ne\nf\n";
        assert_eq!(map(OLD, inserted, r(3, 5)), Some(Mapped::Edited(r(3, 6))));
        let first_gone = "a\nb\nd\ne\nf\n";
        assert_eq!(map(OLD, first_gone, r(3, 5)), Some(Mapped::Edited(r(3, 4))));
    }

    #[test]
    fn a_range_whose_lines_are_all_gone_says_so() {
        assert_eq!(map(OLD, "a\nb\nf\n", r(3, 5)), Some(Mapped::Deleted));
        assert_eq!(map(OLD, OLD, r(6, 9)), None);
    }
}
