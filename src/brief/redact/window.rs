//! Running a rule only near its keywords, where that finds exactly what
//! a run over the whole text finds.
//!
//! A rule runs on a text when one of its keywords occurs anywhere in it
//! (the gitleaks prefilter), and a match of its pattern need not hold the
//! keyword. But when the pattern proves that every match holds one of the
//! rule's keywords and is at most `reach` bytes long ([`reach`]), every
//! match lies within `reach` bytes of a keyword's occurrence, and a search
//! restricted to those windows finds the same matches in the same order
//! (the windows are spans of the whole text: look-around assertions still
//! see past their ends). A rule woken by one chance occurrence of its
//! keyword in a long text then costs a few short searches, not a pass
//! over the text.
//!
//! The proof reads the pattern's syntax tree: a literal holding the
//! keyword, or a run of literals and small classes every spelling of
//! which holds it (`(?i)key` is `[Kk\u{212A}][Ee][Yy]`); through groups,
//! repetitions of at least one, and alternations whose every branch holds
//! it. Case-insensitive classes hold two non-ASCII letters that fold to
//! ASCII ones (the Kelvin sign and the long s); the keyword lookup matches
//! ASCII only, so a text holding either is searched whole.

use regex_syntax::hir::{Class, Hir, HirKind};

/// The most strings a run of literals and classes is spelled out into.
const SPELLINGS: usize = 256;

/// The most characters a class may hold to be spelled out.
const CLASS_CHARS: u32 = 16;

/// `Some(n)` when every match of `pattern` holds one of `keywords`
/// (lowercase; ASCII case aside) and is at most `n` bytes long; `None`
/// when that cannot be shown, and the rule runs on the whole text.
pub(super) fn reach(pattern: &str, keywords: &[super::Text]) -> Option<usize> {
    if keywords.is_empty() {
        return None;
    }
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .ok()?;
    let most = hir.properties().maximum_len()?;
    let keywords: Vec<Vec<u8>> = keywords
        .iter()
        .map(|k| k.to_ascii_lowercase().into_bytes())
        .collect();
    holds(&hir, &keywords).then_some(most)
}

/// Whether every string `hir` matches holds one of `keywords`.
fn holds(hir: &Hir, keywords: &[Vec<u8>]) -> bool {
    match hir.kind() {
        HirKind::Literal(lit) => contains(&fold(&lit.0), keywords),
        HirKind::Capture(cap) => holds(&cap.sub, keywords),
        HirKind::Repetition(rep) => rep.min >= 1 && holds(&rep.sub, keywords),
        HirKind::Alternation(alts) => alts.iter().all(|h| holds(h, keywords)),
        HirKind::Concat(parts) => {
            parts.iter().any(|h| holds(h, keywords)) || run_holds(parts, keywords)
        }
        HirKind::Empty | HirKind::Class(_) | HirKind::Look(_) => false,
    }
}

/// Whether some run of consecutive `parts`, each spelled out, holds a
/// keyword in every spelling.
fn run_holds(parts: &[Hir], keywords: &[Vec<u8>]) -> bool {
    (0..parts.len()).any(|from| {
        let mut spelled: Vec<Vec<u8>> = vec![Vec::new()];
        for part in &parts[from..] {
            let Some(ways) = spellings(part) else {
                return false;
            };
            if spelled.len() * ways.len() > SPELLINGS {
                return false;
            }
            spelled = spelled
                .iter()
                .flat_map(|s| {
                    ways.iter().map(move |w| {
                        let mut s = s.clone();
                        s.extend_from_slice(w);
                        s
                    })
                })
                .collect();
            if spelled.iter().all(|s| contains(s, keywords)) {
                return true;
            }
        }
        false
    })
}

/// Every string `hir` matches, folded, when there are few: a literal, a
/// class of a few characters, an assertion (the empty string), a group or
/// alternation of those.
fn spellings(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    let mut ways = match hir.kind() {
        HirKind::Literal(lit) => vec![fold(&lit.0)],
        HirKind::Empty | HirKind::Look(_) => vec![Vec::new()],
        HirKind::Capture(cap) => spellings(&cap.sub)?,
        HirKind::Alternation(alts) => {
            let mut all = Vec::new();
            for alt in alts {
                all.extend(spellings(alt)?);
                if all.len() > SPELLINGS {
                    return None;
                }
            }
            all
        }
        HirKind::Class(Class::Unicode(class)) => {
            let size: u32 = class
                .ranges()
                .iter()
                .map(|r| u32::from(r.end()) - u32::from(r.start()) + 1)
                .sum();
            if size > CLASS_CHARS {
                return None;
            }
            class
                .iter()
                .flat_map(|r| r.start()..=r.end())
                .map(|c| fold(c.to_string().as_bytes()))
                .collect()
        }
        HirKind::Class(Class::Bytes(class)) => {
            let size: usize = class
                .ranges()
                .iter()
                .map(|r| usize::from(r.end() - r.start()) + 1)
                .sum();
            if size > CLASS_CHARS as usize {
                return None;
            }
            class
                .iter()
                .flat_map(|r| r.start()..=r.end())
                .map(|b| vec![b.to_ascii_lowercase()])
                .collect()
        }
        HirKind::Repetition(_) | HirKind::Concat(_) => return None,
    };
    ways.sort_unstable();
    ways.dedup();
    Some(ways)
}

/// `bytes` (UTF-8) with ASCII letters lowercased and the two non-ASCII
/// letters that case-fold to ASCII ones written as those.
fn fold(bytes: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(bytes)
        .chars()
        .map(|c| match c {
            '\u{212A}' => 'k',
            '\u{17F}' => 's',
            c => c.to_ascii_lowercase(),
        })
        .collect::<String>()
        .into_bytes()
}

/// Whether `s` holds one of `keywords`.
fn contains(s: &[u8], keywords: &[Vec<u8>]) -> bool {
    keywords
        .iter()
        .any(|k| !k.is_empty() && s.windows(k.len()).any(|w| w == k.as_slice()))
}

/// Whether `text` holds a letter that case-folds to an ASCII letter
/// without being one: keyword hits do not see it, so no rule is run in
/// windows on such a text.
pub(super) fn folds_to_ascii(text: &str) -> bool {
    text.contains(['\u{212A}', '\u{17F}'])
}

/// The windows of a text one rule is searched in: sorted, disjoint spans
/// `start..end`, each reaching `reach` bytes from a keyword's occurrence
/// on both sides (widened to character boundaries).
#[derive(Debug)]
pub(super) struct Windows {
    spans: Vec<(usize, usize)>,
    /// The first window a search can still start in.
    next: usize,
}

impl Windows {
    /// The windows around `hits` (start and length of each occurrence of
    /// one of the rule's keywords, in any order) for matches of at most
    /// `reach` bytes.
    pub(super) fn new(text: &str, hits: &[(usize, usize)], reach: usize) -> Self {
        // Each hit's window; sorted by where it starts (a longer keyword
        // just before a shorter one can start later).
        let mut each: Vec<(usize, usize)> = hits
            .iter()
            .map(|&(at, len)| {
                let mut start = (at + len).saturating_sub(reach);
                while !text.is_char_boundary(start) {
                    start -= 1;
                }
                let mut end = (at + reach).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                (start, end)
            })
            .collect();
        each.sort_unstable();
        let mut spans: Vec<(usize, usize)> = Vec::with_capacity(each.len());
        for (start, end) in each {
            match spans.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => spans.push((start, end)),
            }
        }
        Windows { spans, next: 0 }
    }

    /// The span to search next for a match starting at or after `at`,
    /// or `None` past the last window. Call [`Windows::exhausted`] when a
    /// search of the span found nothing.
    pub(super) fn span(&mut self, at: usize) -> Option<(usize, usize)> {
        while let Some(&(start, end)) = self.spans.get(self.next) {
            let from = at.max(start);
            if from < end {
                return Some((from, end));
            }
            self.next += 1;
        }
        None
    }

    /// The current window holds no further match.
    pub(super) fn exhausted(&mut self) {
        self.next += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kw(words: &[&str]) -> Vec<super::super::Text> {
        words.iter().map(|w| (*w).to_string().into()).collect()
    }

    /// The proof accepts what it can show and nothing else.
    #[test]
    fn reach_is_shown_only_where_every_match_holds_a_keyword() {
        assert_eq!(reach(r"okta[0-9]{4}", &kw(&["okta"])), Some(8));
        assert!(reach(r"(?i)\bkey=[a-z]{2}", &kw(&["key"])).is_some());
        assert_eq!(reach(r"(?-i:[Oo]kta|OKTA)_x", &kw(&["okta"])), Some(6));
        assert_eq!(reach(r"(?:ab|cd)ef", &kw(&["bef", "def"])), Some(4));
        // Unbounded, a branch without the keyword, an optional keyword,
        // no keywords at all.
        assert_eq!(reach(r"okta[0-9]+", &kw(&["okta"])), None);
        assert_eq!(reach(r"okta|[0-9]{4}", &kw(&["okta"])), None);
        assert_eq!(reach(r"(?:okta)?[0-9]{4}", &kw(&["okta"])), None);
        assert_eq!(reach(r"okta", &[]), None);
        // A keyword the match holds only with a character of a class
        // picked (`[a-z]` could be anything): not shown.
        assert_eq!(reach(r"ok[a-z]a", &kw(&["okta"])), None);
    }

    /// The premise of windows: the only letters outside ASCII that
    /// case-fold to an ASCII letter are the Kelvin sign and the long s.
    #[test]
    fn only_two_letters_outside_ascii_fold_to_ascii() {
        let ascii = regex::Regex::new(r"(?i)^[a-z]$").unwrap();
        let folding: Vec<char> = (0x80..=0x10_FFFF)
            .filter_map(char::from_u32)
            .filter(|c| ascii.is_match(c.encode_utf8(&mut [0; 4])))
            .collect();
        assert_eq!(folding, vec!['\u{17F}', '\u{212A}']);
        assert!(folds_to_ascii("a \u{212A}ey"));
        assert!(!folds_to_ascii("a key"));
    }

    /// Windows merge where they overlap, stay on character boundaries and
    /// hand out what is left of each in turn.
    #[test]
    fn windows_merge_and_advance() {
        let text = "é".repeat(50);
        let hits = [(40, 2), (2, 2), (10, 2)];
        let mut w = Windows::new(&text, &hits, 5);
        assert_eq!(w.spans, vec![(0, 16), (36, 46)]);
        assert_eq!(w.span(0), Some((0, 16)));
        assert_eq!(w.span(12), Some((12, 16)));
        w.exhausted();
        assert_eq!(w.span(12), Some((36, 46)));
        assert_eq!(w.span(50), None);
        // A longer keyword just before a shorter one: the shorter one's
        // window starts first.
        let w = Windows::new(&"x".repeat(40), &[(10, 10), (12, 2)], 12);
        assert_eq!(w.spans, vec![(2, 24)]);
    }
}
