//! The one decoder: the text as a reader (a shell, a JSON parser, a URL
//! parser, a person looking at a screen) would see it, for the rules to
//! run on beside the text as written.
//!
//! A secret hidden behind an encoding is still a secret: `\u0067hp_…` in a
//! JSON line, `{\"password\":\"…\"}` in a shell command, `password%3D…` in
//! a URL, a token with a zero-width space inside. [`decode`] undoes, in one
//! left-to-right pass (repeated while a pass still changes something, for
//! an escape inside an escape, at most [`PASSES`] times):
//!
//! - backslash escapes: `\uXXXX` (UTF-16 surrogate pairs joined),
//!   `\u{X…}`, `\UXXXXXXXX`, `\xHH` (consecutive ones read as UTF-8),
//!   `\n`, `\r`, `\t`, a backslash before punctuation or a space (the
//!   character itself: `\"`, `\\`, `\$`, `\ `), and a backslash before a
//!   line end (a shell line continuation: both go);
//! - percent-encoding: `%HH` (consecutive ones read as UTF-8);
//! - shell quote joins: a run of two or more quotes between word
//!   characters (`gh''p_…`, `'ghp_'"abc…"`) is removed;
//! - invisible characters, written or decoded: zero-width space, joiners
//!   and non-joiner, word joiner and invisible operators, soft hyphen,
//!   byte-order mark, Mongolian vowel separator and the bidi controls.
//!
//! A backslash before a letter or digit other than those escapes stays as
//! written (`C:\Users`, `\d+`). Every byte of the decoded text remembers
//! where the piece of the original that produced it starts, so that a
//! finding on the decoded text removes the original span, escapes and
//! all. Linear in the text; a text with no backslash, `%`, quote pair or
//! byte outside ASCII is not copied at all.

use std::ops::Range;

/// The most passes (an escape inside an escape inside an escape).
const PASSES: usize = 3;

/// A decoded copy of a text and where each of its bytes came from.
pub(super) struct Decoded {
    pub(super) text: String,
    /// For each byte of `text`, the offset in the original of the piece
    /// that produced it; one more entry, the original's length.
    map: Vec<usize>,
}

impl Decoded {
    /// The span of the original that produced `span` of the decoded text
    /// (from the start of the piece that produced its first byte to the
    /// start of the piece that produced the byte after it).
    pub(super) fn original(&self, span: Range<usize>) -> Range<usize> {
        self.map[span.start]..self.map[span.end]
    }
}

/// `text` decoded, or `None` when decoding changes nothing.
pub(super) fn decode(text: &str) -> Option<Decoded> {
    if !worth_decoding(text.as_bytes()) {
        return None;
    }
    let mut decoded = pass(text)?;
    for _ in 1..PASSES {
        if !worth_decoding(decoded.text.as_bytes()) {
            break;
        }
        let Some(next) = pass(&decoded.text) else {
            break;
        };
        let map = next.map.iter().map(|&at| decoded.map[at]).collect();
        decoded = Decoded {
            text: next.text,
            map,
        };
    }
    Some(decoded)
}

/// Whether `bytes` hold anything [`pass`] may change: a backslash, a `%`,
/// a byte outside ASCII or two quotes in a row.
fn worth_decoding(bytes: &[u8]) -> bool {
    let quote = |b: u8| b == b'\'' || b == b'"';
    bytes.iter().any(|&b| b == b'\\' || b == b'%' || b >= 0x80)
        || bytes.windows(2).any(|w| quote(w[0]) && quote(w[1]))
}

/// One decoding pass, or `None` when it changes nothing (then nothing
/// was copied: the copy starts at the first change).
fn pass(text: &str) -> Option<Decoded> {
    let b = text.as_bytes();
    let mut out = Out {
        text: String::new(),
        map: Vec::new(),
        changed: false,
    };
    let mut at = 0;
    while at < b.len() {
        let next = match b[at] {
            b'\\' => out.escape(text, at),
            b'%' => out.percent(text, at),
            b'\'' | b'"' => out.quotes(text, at),
            _ => None,
        };
        at = match next {
            Some(next) => next,
            None => out.copy(text, at),
        };
    }
    if !out.changed {
        return None;
    }
    out.map.push(text.len());
    Some(Decoded {
        text: out.text,
        map: out.map,
    })
}

/// The decoded text being built: empty until the first change, then
/// the original up to it, and the rest as it is decoded.
struct Out {
    text: String,
    map: Vec<usize>,
    changed: bool,
}

impl Out {
    /// The piece of `text` at `at` changes: from here on the decoded
    /// text is built (on the first change, from a copy of what came
    /// before, each byte mapped to itself).
    fn change(&mut self, text: &str, at: usize) {
        if !self.changed {
            self.changed = true;
            self.text.reserve(text.len());
            self.text.push_str(&text[..at]);
            self.map.reserve(text.len() + 1);
            self.map.extend(0..at);
        }
    }

    /// Append `c`, produced by the piece of the original starting at
    /// `from` (nothing when it is invisible; nothing before the first
    /// change, which copies what came before).
    fn push(&mut self, c: char, from: usize) {
        if invisible(c) || !self.changed {
            return;
        }
        let before = self.text.len();
        self.text.push(c);
        self.map
            .extend(std::iter::repeat_n(from, self.text.len() - before));
    }

    /// Copy the character at `at` as it is (or drop it, invisible);
    /// where the next one starts.
    fn copy(&mut self, text: &str, at: usize) -> usize {
        let b = text.as_bytes()[at];
        if b.is_ascii() {
            if self.changed {
                self.text.push(char::from(b));
                self.map.push(at);
            }
            return at + 1;
        }
        let c = text[at..].chars().next().expect("a character boundary");
        if invisible(c) {
            self.change(text, at);
        }
        self.push(c, at);
        at + c.len_utf8()
    }

    /// A backslash escape at `at`: where the text after it starts, or
    /// `None` when the backslash stays as written.
    fn escape(&mut self, text: &str, at: usize) -> Option<usize> {
        let b = text.as_bytes();
        let n = *b.get(at + 1)?;
        let (c, end) = match n {
            b'u' | b'U' => return self.unicode(text, at),
            b'x' => return self.bytes(text, at, b"\\x"),
            b'n' => ('\n', at + 2),
            b'r' => ('\r', at + 2),
            b't' => ('\t', at + 2),
            b'\n' => {
                self.change(text, at);
                return Some(at + 2);
            }
            b'\r' if b.get(at + 2) == Some(&b'\n') => {
                self.change(text, at);
                return Some(at + 3);
            }
            _ if n.is_ascii_punctuation() || n == b' ' => (char::from(n), at + 2),
            _ => return None,
        };
        self.change(text, at);
        self.push(c, at);
        Some(end)
    }

    /// `\uXXXX` (a surrogate pair as two), `\u{X…}` or `\UXXXXXXXX` at `at`.
    fn unicode(&mut self, text: &str, at: usize) -> Option<usize> {
        let b = text.as_bytes();
        let (code, end) = if b[at + 1] == b'U' {
            (hex(b, at + 2, 8)?, at + 10)
        } else if b.get(at + 2) == Some(&b'{') {
            let close = (at + 3..b.len().min(at + 10)).find(|&i| b[i] == b'}')?;
            (hex(b, at + 3, close - at - 3)?, close + 1)
        } else {
            let unit = hex(b, at + 2, 4)?;
            match unit {
                0xD800..=0xDBFF
                    if b.get(at + 6) == Some(&b'\\') && b.get(at + 7) == Some(&b'u') =>
                {
                    let low = hex(b, at + 8, 4)?;
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return None;
                    }
                    (0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00), at + 12)
                }
                _ => (unit, at + 6),
            }
        };
        let c = char::from_u32(code)?;
        self.change(text, at);
        self.push(c, at);
        Some(end)
    }

    /// A run of `%HH` at `at`: one character, read as UTF-8.
    fn percent(&mut self, text: &str, at: usize) -> Option<usize> {
        self.bytes(text, at, b"%")
    }

    /// One character written as bytes each behind `lead` (`%` or `\x`)
    /// at `at`: an ASCII one that is not a control character other than
    /// a tab or line end, or a whole UTF-8 sequence.
    fn bytes(&mut self, text: &str, at: usize, lead: &[u8]) -> Option<usize> {
        let b = text.as_bytes();
        let step = lead.len() + 2;
        let byte = |i: usize| -> Option<u8> {
            let from = at + i * step;
            b.get(from..from + lead.len())
                .filter(|l| *l == lead)
                .and_then(|_| hex(b, from + lead.len(), 2))
                .and_then(|v| u8::try_from(v).ok())
        };
        let first = byte(0)?;
        let len = match first {
            0x09 | 0x0A | 0x0D | 0x20..=0x7E => 1,
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => return None,
        };
        let mut seq = [0u8; 4];
        for (i, slot) in seq.iter_mut().enumerate().take(len) {
            *slot = byte(i)?;
        }
        let c = std::str::from_utf8(&seq[..len]).ok()?.chars().next()?;
        self.change(text, at);
        self.push(c, at);
        Some(at + len * step)
    }

    /// A run of two or more quotes at `at` between word characters (a
    /// shell joining quoted pieces): removed.
    fn quotes(&mut self, text: &str, at: usize) -> Option<usize> {
        let b = text.as_bytes();
        let end = (at..b.len())
            .find(|&i| !matches!(b[i], b'\'' | b'"'))
            .unwrap_or(b.len());
        let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        // What stands before, decoded (the original, before any change).
        let before = if self.changed {
            self.text.as_bytes().last().copied()
        } else {
            at.checked_sub(1).map(|i| b[i])
        };
        let joins =
            end - at >= 2 && before.is_some_and(word) && b.get(end).is_some_and(|&c| word(c));
        if !joins {
            return None;
        }
        self.change(text, at);
        Some(end)
    }
}

/// The value of the `len` hex digits at `at` of `b`.
fn hex(b: &[u8], at: usize, len: usize) -> Option<u32> {
    if len == 0 || len > 8 {
        return None;
    }
    let digits = b.get(at..at + len)?;
    digits.iter().try_fold(0u32, |acc, &d| {
        let v = char::from(d).to_digit(16)?;
        Some((acc << 4) | v)
    })
}

/// A character that shows nothing: zero-width space, non-joiner and
/// joiner, word joiner and the invisible operators, soft hyphen,
/// byte-order mark (zero-width no-break space), Mongolian vowel separator,
/// Arabic letter mark and the bidi controls (marks, embeddings,
/// overrides, isolates).
pub(super) fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
    )
}

#[cfg(test)]
mod tests {
    use super::decode;

    fn decoded(text: &str) -> String {
        decode(text).map_or_else(|| text.to_string(), |d| d.text)
    }

    #[test]
    fn escapes_are_read_as_a_reader_reads_them() {
        let cases = [
            (
                r#"curl -d "{\"password\":\"x\"}""#,
                r#"curl -d "{"password":"x"}""#,
            ),
            (r"deploy with \u0067hp_", "deploy with ghp_"),
            (
                r"\ud83d\ude00 \u{1F600} \U0001F600",
                "\u{1F600} \u{1F600} \u{1F600}",
            ),
            (r"$'\x67\x68p_'", "$'ghp_'"),
            ("password%3Dabc%20d", "password=abc d"),
            ("caf%C3%A9", "café"),
            ("gh''p_ 'ab'\"cd\"", "ghp_ 'abcd\""),
            // The first change after text copied as it is.
            (r"naïve — gh''p_ \u00e9", "naïve — ghp_ é"),
            ("a\\\nb", "ab"),
            ("gh\u{200B}p_\u{00AD}x\u{FEFF}\u{202E}y", "ghp_xy"),
            (r"gh\u200bp_", "ghp_"),
            // Escapes inside escapes.
            (r#"{\\\"token\\\":1}"#, r#"{"token":1}"#),
            (r"\\u0067", "g"),
        ];
        for (text, want) in cases {
            assert_eq!(decoded(text), want, "{text:?}");
        }
    }

    #[test]
    fn what_is_not_an_encoding_is_left_alone() {
        for text in [
            r"C:\Users\dev\d+",
            "50% done, 100%",
            "%ZZ %4 %",
            r"\u12 \x4 \uD800x \u{}",
            "it's \"quoted\" and ''",
            "plain text",
            "café ünïcödé",
            "%00 %01",
        ] {
            assert!(decode(text).is_none(), "{text:?} -> {:?}", decoded(text));
        }
    }

    #[test]
    fn every_decoded_byte_points_into_the_original() {
        let text = "a\\u0067b%41c\u{200B}d\\\\e";
        let d = decode(text).expect("decodes");
        assert_eq!(d.text, "agbAcd\\e");
        let at = |i: usize| d.original(i..i + 1);
        assert_eq!(&text[at(1)], "\\u0067");
        assert_eq!(&text[at(3)], "%41");
        // The invisible character goes with the piece before the next.
        assert_eq!(&text[at(4)], "c\u{200B}");
        assert_eq!(&text[at(6)], "\\\\");
        assert_eq!(d.original(0..d.text.len()), 0..text.len());
    }
}
