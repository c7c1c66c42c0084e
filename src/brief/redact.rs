//! Redaction: secrets and personal data never land in a ref, a note or a
//! file written by git-handoff. Each finding is replaced by
//! `[REDACTED:<kind>]` and counted, never echoed.
//!
//! The rules are data, not code: `rules/gitleaks.json` is the gitleaks rule
//! set (MIT, see `rules/LICENSE-gitleaks`; ids, patterns, keywords, entropy
//! thresholds and allowlists), and `rules/handoff.json` adds the shapes
//! handoff text carries that gitleaks leaves to its generic rule and the
//! personal-data kinds (e-mail, phone, US SSN, UK National Insurance
//! numbers, IBANs, Luhn-checked payment cards, IP addresses). Both are
//! embedded at build time. A rule runs only when one of its keywords
//! occurs in the text (the gitleaks prefilter: one Aho-Corasick pass for
//! every keyword of every rule), and each pattern is compiled once, on
//! first use. A rule whose pattern shows that every match holds one of
//! its keywords within a bounded length is searched only in windows
//! around its keywords' occurrences ([`window`]), with the same findings.
//! Every kind can be switched off with
//! `git config handoff.redact.<kind> false`.
//!
//! Every text is read as written and, when it holds an encoding, as a
//! reader would decode it ([`decode`]: JSON and shell escapes,
//! percent-encoding, invisible characters); a finding on the decoded copy
//! removes the original span that produced it, escapes and all. Every
//! entry point below ([`redact`], [`scan`], [`find_in_line`], …) reads
//! through it, so write, the gate and `redact --history` do alike.
//!
//! What is removed is the whole secret-bearing span: the rule's secret
//! widened to the token it is part of ([`widen`]), never a piece of it;
//! the findings of every rule are taken on the original text and
//! overlapping ones merge into one `[REDACTED:<kind>]`. The cost is
//! linear in the text: each rule that runs is at most one regex pass, every check
//! on a finding looks at the finding (a line-wide allowlist looks at each
//! line once), and the text is rebuilt once.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};
use regex::{Regex, RegexBuilder};
use regex_automata::util::captures::Captures;
use regex_automata::{Input, meta};
use serde::Deserialize;
use serde_json::Value;

mod decode;
mod window;
use window::Windows;

/// The gitleaks rule set, as data (what `build.rs` compiled in is checked
/// against it).
#[cfg(test)]
const GITLEAKS: &str = include_str!("../../rules/gitleaks.json");
/// This project's complementary rules and the PII kinds, as data.
#[cfg(test)]
const HANDOFF: &str = include_str!("../../rules/handoff.json");

/// A text of the rule data: borrowed from what `build.rs` compiled in
/// (the rule set holds thousands of allowlist strings: copying them would
/// cost every process more than it spends redacting), owned when parsed.
type Text = Cow<'static, str>;

/// A list of texts of the rule data, borrowed likewise.
type Texts = Cow<'static, [Text]>;

/// One allowlist group of a rule: a finding it matches is not a secret.
#[derive(Debug, Deserialize)]
struct Allow {
    /// What the regexes look at: `secret`, `match` or `line`.
    target: Text,
    /// `or` (any predicate) or `and` (all of them).
    #[serde(default)]
    condition: Text,
    #[serde(default)]
    regexes: Texts,
    /// Substrings of the secret (any case) that mark it as an example.
    #[serde(default)]
    stopwords: Texts,
    #[serde(skip)]
    compiled: OnceLock<Compiled>,
}

/// An allowlist group as it runs: its regexes as one alternation and its
/// stopwords as one automaton, so that a finding costs one pass over its
/// secret for each, not one per regex or word.
#[derive(Debug)]
struct Compiled {
    regex: Option<Regex>,
    words: Option<AhoCorasick>,
}

/// One redaction rule as the data files hold it.
#[derive(Debug, Deserialize)]
struct Rule {
    id: Text,
    kind: Text,
    pattern: Text,
    /// The capture group holding the secret; absent: the first group that
    /// took part in the match, else the whole match (gitleaks'
    /// `secretGroup`). What is removed is that secret widened to the token
    /// it is part of ([`widen`]).
    group: Option<usize>,
    /// Lowercase substrings one of which must occur for the rule to run.
    #[serde(default)]
    keywords: Texts,
    /// The secret's Shannon entropy must be above this (as in gitleaks:
    /// a finding at or below it is dropped).
    entropy: Option<f64>,
    #[serde(default)]
    allow: Vec<Allow>,
    /// Also apply every allowlist of the rule with this id (this
    /// project's generic assignments take the generic rule's).
    allow_from: Option<Text>,
    /// How the stopwords of `allow_from`'s groups apply: `all` (as
    /// gitleaks: any stopword in the secret) or `long` (a stopword of six
    /// letters or more, or one that makes a third of the secret: a value
    /// that passed an entropy check and holds `beta` somewhere is one
    /// random token in fifty, not a placeholder; `EXAMPLE`, `your_token`,
    /// `identification` are).
    #[serde(default)]
    allow_from_stopwords: Words,
    /// Personal data (e-mail, phone, …) rather than a credential:
    /// gitleaks' global allowlist does not apply to it.
    #[serde(default)]
    personal: bool,
    /// A named validator run on each finding (see [`check`]).
    check: Option<Text>,
    /// The rule runs only on a text holding at least this many ASCII
    /// digits, the fewest its pattern can match (`\d` is ASCII here): a
    /// prefilter, like keywords, for the rules that have none.
    #[serde(default)]
    min_digits: usize,
    /// Likewise, the fewest ASCII capital letters its pattern can match
    /// (for case-sensitive patterns only).
    #[serde(default)]
    min_upper: usize,
    #[serde(skip)]
    compiled: OnceLock<Option<meta::Regex>>,
    /// How far a match reaches around a keyword it always holds, when
    /// the pattern shows it does ([`window::reach`]): the rule is then
    /// searched only in windows around its keywords' occurrences.
    #[serde(skip)]
    reach: OnceLock<Option<usize>>,
    /// The allowlists borrowed from the gitleaks set.
    #[serde(skip)]
    inherits: Inherit,
}

/// The allowlists a rule borrows: those of its `allow_from` rule (by
/// index) and, for this project's credential rules, gitleaks' global
/// allowlist (placeholders, `$VAR`, `{{ x }}`, paths, …).
#[derive(Debug, Default, Clone, Copy)]
struct Inherit {
    from: Option<usize>,
    global: bool,
}

/// Which stopwords dismiss a finding (see `allow_from_stopwords`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Words {
    /// Any stopword in the secret.
    #[default]
    All,
    /// A stopword of six letters or more, or a third of the secret.
    Long,
}

/// The rule files as serde reads them: what `build.rs` compiles in is
/// checked against this parse.
#[cfg(test)]
#[derive(Debug, Deserialize)]
struct GitleaksFile {
    rules: Vec<Rule>,
}

#[cfg(test)]
#[derive(Debug, Deserialize)]
struct HandoffFile {
    before: Vec<Rule>,
    after: Vec<Rule>,
}

/// A digest of the rule sets the gate runs, as compiled in (to key
/// cached verdicts), computed when they were compiled in.
pub fn rules_digest() -> &'static str {
    RULES_DIGEST
}

/// The rule whose first allowlist group is gitleaks' global allowlist
/// (every rule of the set carries it first; this one always has one).
const GLOBAL_ALLOW_FROM: &str = "generic-api-key";

// `builtin_rules()`: the rule files compiled into calls of [`rule`] and
// [`allow`] by `build.rs`, so that no process parses them.
include!(concat!(env!("OUT_DIR"), "/redaction_rules.rs"));

/// One rule as `build.rs` writes it, each field as serde would give it,
/// borrowed from the compiled-in data (no process copies the rule set).
#[allow(clippy::too_many_arguments)]
fn rule(
    id: &'static str,
    kind: &'static str,
    pattern: &'static str,
    group: Option<usize>,
    keywords: &'static [Text],
    entropy: Option<f64>,
    allow: Vec<Allow>,
    allow_from: Option<&'static str>,
    allow_from_stopwords: Words,
    personal: bool,
    check: Option<&'static str>,
    (min_digits, min_upper): (usize, usize),
) -> Rule {
    Rule {
        id: Cow::Borrowed(id),
        kind: Cow::Borrowed(kind),
        pattern: Cow::Borrowed(pattern),
        group,
        keywords: Cow::Borrowed(keywords),
        entropy,
        allow,
        allow_from: allow_from.map(Cow::Borrowed),
        allow_from_stopwords,
        personal,
        check: check.map(Cow::Borrowed),
        min_digits,
        min_upper,
        compiled: OnceLock::new(),
        reach: OnceLock::new(),
        inherits: Inherit::default(),
    }
}

/// One allowlist group as `build.rs` writes it.
fn allow(
    target: &'static str,
    condition: &'static str,
    regexes: &'static [Text],
    stopwords: &'static [Text],
) -> Allow {
    Allow {
        target: Cow::Borrowed(target),
        condition: Cow::Borrowed(condition),
        regexes: Cow::Borrowed(regexes),
        stopwords: Cow::Borrowed(stopwords),
        compiled: OnceLock::new(),
    }
}

/// The rule set in the order it is applied: this project's specific rules,
/// the gitleaks rules (their generic rule last), then the generic
/// assignments and the personal-data kinds. Where findings of several
/// rules overlap, the first rule in this order names the kind. `build.rs`
/// compiles them in in this order.
fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| lend(builtin_rules()))
}

/// One of this project's rules: it takes gitleaks' global allowlist
/// unless it finds personal data.
fn own(mut rule: Rule) -> Rule {
    rule.inherits.global = !rule.personal;
    rule
}

/// The rules with what each borrows (`allow_from`) looked up.
fn lend(mut all: Vec<Rule>) -> Vec<Rule> {
    // Few rules borrow: each looks its lender up.
    let from: Vec<Option<usize>> = all
        .iter()
        .map(|rule| {
            let id = rule.allow_from.as_deref()?;
            all.iter().position(|r| r.id == id)
        })
        .collect();
    for (rule, from) in all.iter_mut().zip(from) {
        rule.inherits.from = from;
    }
    all
}

/// The three rule lists of the files in the order they apply, as
/// [`rules`] holds them (what `build.rs` does, for the test that checks
/// it).
#[cfg(test)]
fn ordered(before: Vec<Rule>, gitleaks: Vec<Rule>, after: Vec<Rule>) -> Vec<Rule> {
    let (generic, specific): (Vec<Rule>, Vec<Rule>) = gitleaks
        .into_iter()
        .partition(|r| r.id.starts_with("generic"));
    let mut all: Vec<Rule> = before.into_iter().map(own).collect();
    all.extend(specific);
    all.extend(generic);
    all.extend(after.into_iter().map(own));
    lend(all)
}

/// The index of the rule holding gitleaks' global allowlist first.
fn global_allow() -> Option<&'static Allow> {
    static AT: OnceLock<Option<usize>> = OnceLock::new();
    let at = AT.get_or_init(|| rules().iter().position(|r| r.id == GLOBAL_ALLOW_FROM));
    at.and_then(|i| rules()[i].allow.first())
}

/// Which rules' keywords occur in a text: one Aho-Corasick automaton over
/// every keyword of every rule, matched ASCII-case-insensitively (gitleaks
/// lowercases the text and looks the keywords up the same way). The
/// automaton costs more to build than a few short texts cost to search
/// keyword by keyword, so it is built only once the texts looked at
/// reach [`NAIVE_BYTES`] (a `resume` redacts three commit subjects).
struct Prefilter {
    /// Every keyword, lowercase; its index is its pattern id.
    words: Vec<Cow<'static, str>>,
    automaton: OnceLock<AhoCorasick>,
    /// For each keyword (pattern id), the rules it wakes.
    wakes: Groups,
    /// Rules without keywords: they run on every text with enough digits.
    always: Vec<usize>,
    /// For each rule, its keywords (pattern ids).
    keywords: Groups,
    /// The length of each keyword.
    lens: Vec<usize>,
    /// The keywords (pattern ids) by their first byte: a short text is
    /// looked up at each of its bytes, not once per keyword.
    first: Groups,
}

/// What the prefilter found in a text: the rules to run and where their
/// keywords occur.
struct Woken {
    /// For each rule, whether it runs.
    wanted: Vec<bool>,
    /// Each keyword's occurrences (starts), grouped by keyword: those of
    /// keyword `k` are `starts[from[k]..from[k + 1]]`; `None` for a
    /// keyword seen so often that windows around it would not pay.
    starts: Vec<usize>,
    from: Vec<usize>,
    dense: Vec<bool>,
    /// Whether every occurrence was looked at (the lookup stops early
    /// once every keyword was seen).
    complete: bool,
}

/// How many bytes of text are searched keyword by keyword, in all, before
/// the automaton is built instead.
const NAIVE_BYTES: usize = 2048;

fn prefilter() -> &'static Prefilter {
    static PREFILTER: OnceLock<Prefilter> = OnceLock::new();
    PREFILTER.get_or_init(|| {
        let mut ids: HashMap<Cow<'static, str>, usize> = HashMap::with_capacity(512);
        let mut words: Vec<Cow<'static, str>> = Vec::with_capacity(512);
        // (keyword, rule) pairs, each once, in rule order.
        let mut pairs: Vec<(usize, usize)> = Vec::with_capacity(1024);
        let mut always = Vec::new();
        for (i, rule) in rules().iter().enumerate() {
            if rule.keywords.is_empty() {
                always.push(i);
            }
            let own = pairs.len();
            for k in rule.keywords.iter() {
                // Borrowed from the rule set unless it must be lowercased.
                let k: Cow<'static, str> = if k.bytes().any(|b| b.is_ascii_uppercase()) {
                    Cow::Owned(k.to_ascii_lowercase())
                } else {
                    Cow::Borrowed(static_str(k))
                };
                let id = *ids.entry(k.clone()).or_insert_with(|| {
                    words.push(k);
                    words.len() - 1
                });
                if !pairs[own..].iter().any(|&(seen, _)| seen == id) {
                    pairs.push((id, i));
                }
            }
        }
        let lens = words.iter().map(|w| w.len()).collect();
        let firsts = words
            .iter()
            .enumerate()
            .filter_map(|(id, w)| Some((usize::from(*w.as_bytes().first()?), id)));
        Prefilter {
            wakes: Groups::new(words.len(), pairs.iter().copied()),
            keywords: Groups::new(rules().len(), pairs.iter().map(|&(k, i)| (i, k))),
            first: Groups::new(256, firsts),
            words,
            automaton: OnceLock::new(),
            always,
            lens,
        }
    })
}

/// Lists of indices grouped by a key `0..n`, in one allocation: the
/// items of key `k` are `items[from[k]..from[k + 1]]`, in the order given.
struct Groups {
    from: Vec<usize>,
    items: Vec<usize>,
}

impl Groups {
    /// The `(key, item)` pairs grouped by key (a counting sort).
    fn new(n: usize, pairs: impl Iterator<Item = (usize, usize)> + Clone) -> Groups {
        let mut from = vec![0usize; n + 1];
        for (k, _) in pairs.clone() {
            from[k + 1] += 1;
        }
        for k in 0..n {
            from[k + 1] += from[k];
        }
        let mut next = from.clone();
        let mut items = vec![0usize; from[n]];
        for (k, item) in pairs {
            items[next[k]] = item;
            next[k] += 1;
        }
        Groups { from, items }
    }

    /// How many keys.
    fn len(&self) -> usize {
        self.from.len() - 1
    }
}

impl std::ops::Index<usize> for Groups {
    type Output = [usize];

    fn index(&self, k: usize) -> &[usize] {
        &self.items[self.from[k]..self.from[k + 1]]
    }
}

/// A text of the rule set as the `'static` text it is: every rule lives
/// as long as the process ([`rules`]).
fn static_str(text: &'static Text) -> &'static str {
    text.as_ref()
}

impl Prefilter {
    /// Which rules run on `text`, and where their keywords occur (each
    /// keyword's first occurrences, up to a bound that keeps this linear
    /// and small: a keyword found more often is `dense`).
    fn wanted(&self, text: &str) -> Woken {
        let mut wanted = vec![false; rules().len()];
        let has = self.classes_in(text);
        for &i in &self.always {
            wanted[i] = has.enough_for(&rules()[i]);
        }
        if self.naive(text) {
            // A short text: which keywords it holds, not where (its rules
            // search it whole).
            for id in self.naive_hits(text) {
                for &i in &self.wakes[id] {
                    wanted[i] = has.enough_for(&rules()[i]);
                }
            }
            return Woken {
                wanted,
                starts: Vec::new(),
                from: vec![0; self.wakes.len() + 1],
                dense: vec![true; self.wakes.len()],
                complete: false,
            };
        }
        let most = text.len() / 2048 + 16;
        let mut count = vec![0usize; self.wakes.len()];
        let mut hits: Vec<(usize, usize)> = Vec::new();
        let mut left = count.len();
        let mut complete = true;
        for m in self.automaton().find_overlapping_iter(text) {
            let id = m.pattern().as_usize();
            count[id] += 1;
            if count[id] == 1 {
                for &i in &self.wakes[id] {
                    wanted[i] = has.enough_for(&rules()[i]);
                }
                left -= 1;
                if left == 0 {
                    complete = false;
                    break;
                }
            }
            if count[id] <= most {
                hits.push((id, m.start()));
            }
        }
        let dense: Vec<bool> = count.iter().map(|&n| n > most).collect();
        // Grouped by keyword (a counting sort, in text order within each).
        let mut from = vec![0usize; count.len() + 1];
        for &(id, _) in &hits {
            from[id + 1] += 1;
        }
        for k in 0..count.len() {
            from[k + 1] += from[k];
        }
        let mut next = from.clone();
        let mut starts = vec![0usize; hits.len()];
        for &(id, at) in &hits {
            starts[next[id]] = at;
            next[id] += 1;
        }
        Woken {
            wanted,
            starts,
            from,
            dense,
            complete,
        }
    }

    /// For each keyword (pattern id), whether it occurs in `text`: looked
    /// up one by one in the lowercased text (`naive`) or by the automaton.
    #[cfg(test)]
    fn keywords_in(&self, text: &str, naive: bool) -> Vec<bool> {
        if naive {
            let mut seen = vec![false; self.words.len()];
            for id in self.naive_hits(text) {
                seen[id] = true;
            }
            return seen;
        }
        let mut seen = vec![false; self.words.len()];
        for m in self.automaton().find_overlapping_iter(text) {
            seen[m.pattern().as_usize()] = true;
        }
        seen
    }

    /// The keywords (pattern ids) `text` holds, ASCII-case-insensitively,
    /// each once: looked up at every byte among the keywords starting with
    /// it (a short text, for which the automaton is not worth building).
    fn naive_hits(&self, text: &str) -> Vec<usize> {
        let lower = text.as_bytes().to_ascii_lowercase();
        let mut hits = Vec::new();
        for (at, &b) in lower.iter().enumerate() {
            for &id in &self.first[usize::from(b)] {
                if lower[at..].starts_with(self.words[id].as_bytes()) && !hits.contains(&id) {
                    hits.push(id);
                }
            }
        }
        hits
    }

    /// Whether `text` is searched keyword by keyword: it is short and the
    /// automaton is not built yet, nor due.
    fn naive(&self, text: &str) -> bool {
        static SEARCHED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        if self.automaton.get().is_some() || text.len() > NAIVE_BYTES {
            return false;
        }
        let before = SEARCHED.fetch_add(text.len(), std::sync::atomic::Ordering::Relaxed);
        before + text.len() <= NAIVE_BYTES
    }

    fn automaton(&self) -> &AhoCorasick {
        self.automaton.get_or_init(|| {
            AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                .build(self.words.iter().map(|w| w.as_bytes()))
                .expect("the rules' keywords build an automaton")
        })
    }

    /// How many digits and capitals `text` holds, counted up to the most
    /// any rule asks for.
    fn classes_in(&self, text: &str) -> Classes {
        static MOST: OnceLock<Classes> = OnceLock::new();
        let most = MOST.get_or_init(|| Classes {
            digits: rules().iter().map(|r| r.min_digits).max().unwrap_or(0),
            upper: rules().iter().map(|r| r.min_upper).max().unwrap_or(0),
        });
        let mut has = Classes::default();
        if most.digits == 0 && most.upper == 0 {
            return has;
        }
        for b in text.bytes() {
            has.digits += usize::from(b.is_ascii_digit());
            has.upper += usize::from(b.is_ascii_uppercase());
            if has.digits >= most.digits && has.upper >= most.upper {
                break;
            }
        }
        has
    }

    /// The windows rule `i` is searched in on `text`, or `None` for the
    /// whole text: when its pattern does not show that every match holds a
    /// keyword within a bounded reach, when one of its keywords is dense,
    /// or when keyword hits do not see every spelling of a keyword.
    fn windows(&self, i: usize, text: &str, woken: &Woken, folds: bool) -> Option<Windows> {
        let reach = rules()[i].reach()?;
        if folds || !woken.complete {
            return None;
        }
        let mut hits = Vec::new();
        for &k in &self.keywords[i] {
            if woken.dense[k] {
                return None;
            }
            let starts = &woken.starts[woken.from[k]..woken.from[k + 1]];
            hits.extend(starts.iter().map(|&at| (at, self.lens[k])));
        }
        Some(Windows::new(text, &hits, reach))
    }
}

/// Counts of character classes in a text (see `min_digits`).
#[derive(Debug, Default)]
struct Classes {
    digits: usize,
    upper: usize,
}

impl Classes {
    /// Whether `rule` may match a text holding these.
    fn enough_for(&self, rule: &Rule) -> bool {
        self.digits >= rule.min_digits && self.upper >= rule.min_upper
    }
}

impl Rule {
    /// The rule's pattern, compiled as `regex::RegexBuilder` would
    /// (leftmost-first, UTF-8, the same size limits), but with the
    /// engine's own API: a search can be given a span of the text.
    fn regex(&self) -> Option<&meta::Regex> {
        self.compiled
            .get_or_init(|| {
                meta::Builder::new()
                    .configure(
                        meta::Config::new()
                            .match_kind(regex_automata::MatchKind::LeftmostFirst)
                            .utf8_empty(true)
                            .nfa_size_limit(Some(1 << 24))
                            .hybrid_cache_capacity(2 * (1 << 20)),
                    )
                    .syntax(regex_automata::util::syntax::Config::new().utf8(true))
                    .build(&go_classes(&self.pattern))
                    .ok()
            })
            .as_ref()
    }

    /// See [`window::reach`].
    fn reach(&self) -> Option<usize> {
        *self
            .reach
            .get_or_init(|| window::reach(&go_classes(&self.pattern), &self.keywords))
    }

    /// Every allowlist group that applies to this rule: its own, those
    /// of its `allow_from` rule and gitleaks' global one.
    /// Each with how its stopwords count.
    fn allowlists(&'static self) -> impl Iterator<Item = (&'static Allow, Words)> {
        let global = self.inherits.global.then(global_allow).flatten();
        let words = self.allow_from_stopwords;
        let from = self
            .inherits
            .from
            .into_iter()
            .flat_map(move |i| rules()[i].allow.iter().map(move |a| (a, words)));
        self.allow
            .iter()
            .chain(global)
            .map(|a| (a, Words::All))
            .chain(from)
    }
}

/// One finding: the bytes to remove and the rule (its index in
/// [`rules`]) that found them.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    rule: usize,
}

/// The lines of a text, found once and only when an allowlist looks at a
/// whole line, and what each line-wide allowlist said about each line: a
/// text of one long line full of findings costs one look at the line per
/// allowlist, not one per finding.
struct Lines<'t> {
    text: &'t str,
    starts: Option<Vec<usize>>,
    verdicts: HashMap<(usize, usize), bool>,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Self {
        Lines {
            text,
            starts: None,
            verdicts: HashMap::new(),
        }
    }

    /// The index of the line holding byte `at`.
    fn index(&mut self, at: usize) -> usize {
        let text = self.text;
        let starts = self.starts.get_or_insert_with(|| {
            std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        });
        starts.partition_point(|&s| s <= at) - 1
    }

    /// The lines holding `start..end`, as gitleaks gives an allowlist
    /// whose target is `line`.
    fn span(&mut self, start: usize, end: usize) -> (usize, &'t str) {
        let first = self.index(start);
        let last = self.index(end.saturating_sub(1).max(start));
        let starts = self.starts.as_ref().expect("indexed");
        let from = starts[first];
        let to = starts
            .get(last + 1)
            .map_or(self.text.len(), |&next| next - 1);
        (first, &self.text[from..to.max(from)])
    }
}

/// Every finding of every enabled rule in `text`, on the original text:
/// the rules run on the text as written and, when it holds an encoding
/// ([`decode`]), on the decoded copy too, whose findings are mapped back
/// to the original spans that produced them (escapes and all). A finding
/// of either reading is removed, so decoding never loses one.
fn findings(text: &str, options: Options) -> Vec<Span> {
    let mut spans = findings_in(text, options, true);
    if let Some(decoded) = decode::decode(text) {
        spans.extend(
            findings_in(&decoded.text, options, true)
                .into_iter()
                .map(|span| {
                    let at = decoded.original(span.start..span.end);
                    Span {
                        start: at.start,
                        end: at.end,
                        rule: span.rule,
                    }
                })
                .filter(|span| span.end > span.start),
        );
    }
    spans
}

/// What changes the engine's verdicts besides the rule files (the
/// decoder, the validators): cached verdicts are keyed by it as well as
/// by [`rules_digest`]. Bump it whenever a change to the code may find
/// what it did not find before.
pub fn engine_version() -> &'static str {
    "decode-1 prose-1"
}

/// [`findings`], with each rule whose pattern allows it searched only in
/// windows around its keywords (`windowed`), or every rule over the whole
/// text: the same findings either way.
fn findings_in(text: &str, options: Options, windowed: bool) -> Vec<Span> {
    let woken = prefilter().wanted(text);
    if prefilter_only() {
        std::hint::black_box(&woken);
        return Vec::new();
    }
    let mut found = Found {
        text,
        lines: Lines::new(text),
        markers: markers(text),
        spans: Vec::new(),
        covered: Vec::new(),
    };
    let folds = window::folds_to_ascii(text);
    for (i, rule) in rules().iter().enumerate() {
        if !woken.wanted[i] || !options.enabled(&rule.kind) {
            continue;
        }
        let Some(re) = rule.regex() else { continue };
        let windows = if windowed {
            prefilter().windows(i, text, &woken, folds)
        } else {
            None
        };
        found.rule(i, re, windows);
    }
    found.spans
}

/// The findings of the rules run so far on one text.
struct Found<'t> {
    text: &'t str,
    lines: Lines<'t>,
    markers: Vec<(usize, usize)>,
    spans: Vec<Span>,
    /// What earlier rules found, merged and sorted: a later rule's
    /// finding inside it changes nothing (the earlier rule names the
    /// kind), so it is not checked again.
    covered: Vec<(usize, usize)>,
}

impl Found<'_> {
    /// Add the findings of rule `i` (pattern `re`), searched in `windows`
    /// or, for `None`, over the whole text.
    fn rule(&mut self, i: usize, re: &meta::Regex, mut windows: Option<Windows>) {
        let text = self.text;
        let rule = &rules()[i];
        let first = self.spans.len();
        // The token the previous finding of this rule widened to: a
        // finding inside it widens to it again, without walking it twice.
        let mut last: Option<(usize, usize)> = None;
        let mut caps = re.create_captures();
        let mut at = 0;
        let mut cursor = 0;
        while at <= text.len() {
            if !search(re, &mut caps, text, at, windows.as_mut()) {
                break;
            }
            let Some(m) = caps.get_match() else { break };
            let whole = m.start()..m.end();
            let secret = match rule.group {
                Some(g) => caps.get_group(g),
                None => (1..caps.group_len())
                    .filter_map(|g| caps.get_group(g))
                    .find(|s| s.end > s.start),
            }
            .map_or(whole.clone(), |s| s.start..s.end);
            at = next_search(text, &whole, &secret);
            let covered = &self.covered;
            while cursor < covered.len() && covered[cursor].1 <= secret.start {
                cursor += 1;
            }
            if covered
                .get(cursor)
                .is_some_and(|&(s, e)| s <= secret.start && secret.end <= e)
            {
                continue;
            }
            if secret.is_empty()
                || overlaps(&self.markers, secret.start, secret.end)
                || rule.dismissed(&text[secret.clone()], &whole, text, &mut self.lines)
            {
                continue;
            }
            let (start, end) = match last {
                Some((s, e)) if secret.start >= s && secret.end <= e => (s, e),
                _ => widen(text, &secret, &whole),
            };
            last = Some((start, end));
            self.spans.push(Span {
                start,
                end,
                rule: i,
            });
        }
        if self.spans.len() > first {
            self.spans[first..].sort_unstable_by_key(|s| s.start);
            self.covered = cover(&self.covered, &self.spans[first..]);
        }
    }
}

/// Search `text` for the leftmost match of `re` starting at or after
/// `at` (into `caps`): over the rest of the text, or window by window.
/// Whether one was found.
fn search(
    re: &meta::Regex,
    caps: &mut Captures,
    text: &str,
    at: usize,
    windows: Option<&mut Windows>,
) -> bool {
    let Some(windows) = windows else {
        re.search_captures(&Input::new(text).span(at..text.len()), caps);
        return caps.is_match();
    };
    while let Some((from, to)) = windows.span(at) {
        re.search_captures(&Input::new(text).span(from..to), caps);
        if caps.is_match() {
            return true;
        }
        windows.exhausted();
    }
    false
}

/// `covered` (sorted, disjoint) with `more` (sorted by start) merged in.
fn cover(covered: &[(usize, usize)], more: &[Span]) -> Vec<(usize, usize)> {
    let mut all: Vec<(usize, usize)> = Vec::with_capacity(covered.len() + more.len());
    let (mut i, mut j) = (0, 0);
    while i < covered.len() || j < more.len() {
        let next = match (covered.get(i), more.get(j)) {
            (Some(&c), Some(m)) if c.0 <= m.start => {
                i += 1;
                c
            }
            (Some(&c), None) => {
                i += 1;
                c
            }
            (_, Some(m)) => {
                j += 1;
                (m.start, m.end)
            }
            (None, None) => unreachable!("one side is left"),
        };
        match all.last_mut() {
            Some(prev) if next.0 < prev.1 => prev.1 = prev.1.max(next.1),
            _ => all.push(next),
        }
    }
    all
}

/// For `bench/run`'s baseline only: with `GIT_HANDOFF_BENCH_PREFILTER`
/// set, every redaction stops after the keyword prefilter (the text is
/// read and every rule's keywords looked up; nothing is redacted), so the
/// same command measures what reading the text with the prefilter costs.
/// Costs one environment lookup per process.
fn prefilter_only() -> bool {
    static ONLY: OnceLock<bool> = OnceLock::new();
    *ONLY.get_or_init(|| std::env::var_os("GIT_HANDOFF_BENCH_PREFILTER").is_some())
}

/// Where `text` already holds `[REDACTED:<kind>]`: what was redacted
/// once is never a secret again (a marker before `@` is no password).
fn markers(text: &str) -> Vec<(usize, usize)> {
    text.match_indices("[REDACTED:")
        .map(|(i, _)| {
            let end = text[i..].find(']').map_or(text.len(), |j| i + j + 1);
            (i, end)
        })
        .collect()
}

/// Whether `start..end` overlaps one of the sorted `markers`.
fn overlaps(markers: &[(usize, usize)], start: usize, end: usize) -> bool {
    let i = markers.partition_point(|&(_, e)| e <= start);
    markers.get(i).is_some_and(|&(s, _)| s < end)
}

/// The most context after a secret that is searched again: a rule whose
/// match reaches past its secret (a Kubernetes manifest's `kind: Secret`
/// after its `data:` values) finds the next secret inside that context,
/// and the cost stays linear (each byte searched again at most this
/// many times over).
const RESEARCH: usize = 1024;

/// Where the search for the next finding of a rule starts: right after
/// the secret, so that the context a match took after it can hold the
/// next secret (every value under `data:`, not only the first); after
/// the match when that context is long or the match is empty.
fn next_search(text: &str, whole: &Range<usize>, secret: &Range<usize>) -> usize {
    let after_secret = secret.end;
    let next =
        if !secret.is_empty() && after_secret > whole.start && whole.end - after_secret <= RESEARCH
        {
            after_secret
        } else {
            whole.end
        };
    if next > whole.start {
        return next;
    }
    // An empty match: step over one character.
    text[next..]
        .chars()
        .next()
        .map_or(text.len() + 1, |c| next + c.len_utf8())
}

/// `secret` widened to the token it is part of: word characters on both
/// sides, and the joiners of tokens (`-+/.~%`) between word characters
/// where the rule's match took them (`whole`) or the secret holds that
/// joiner itself; `=` padding on the right. A base64 JWT whose rule
/// captures its header is removed whole, `sk_live_…` too when its pattern
/// stopped short of the token's end, but a token in a path leaves the
/// path (`/in/` before it, `.json` after it) as it was.
fn widen(text: &str, secret: &Range<usize>, whole: &Range<usize>) -> (usize, usize) {
    let b = text.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let held = &b[secret.clone()];
    let joins = |at: usize| {
        matches!(b[at], b'-' | b'+' | b'/' | b'.' | b'~' | b'%')
            && (whole.contains(&at) || held.contains(&b[at]))
    };
    let mut s = secret.start;
    while s > 0 && (word(b[s - 1]) || (s >= 2 && joins(s - 1) && word(b[s - 2]))) {
        s -= 1;
    }
    let mut e = secret.end;
    while e < b.len() && (word(b[e]) || (e + 1 < b.len() && joins(e) && word(b[e + 1]))) {
        e += 1;
    }
    while e < b.len() && b[e] == b'=' {
        e += 1;
    }
    (s, e)
}

/// The findings merged where they overlap, in text order; each merged
/// span takes the kind of the first rule (in rule order) among its parts.
fn merged(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_unstable_by_key(|s| (s.start, s.end));
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for span in spans {
        match out.last_mut() {
            Some(prev) if span.start < prev.end => {
                prev.end = prev.end.max(span.end);
                prev.rule = prev.rule.min(span.rule);
            }
            _ => out.push(span),
        }
    }
    out
}

impl Rule {
    /// Whether the finding is not a secret: too little entropy, allowlisted,
    /// or refused by the rule's validator.
    fn dismissed(
        &'static self,
        secret: &str,
        whole: &Range<usize>,
        text: &str,
        lines: &mut Lines,
    ) -> bool {
        if let Some(min) = self.entropy
            && min > 0.0
            && entropy(secret) <= min
        {
            return true;
        }
        if let Some(name) = &self.check
            && !check(name, secret, text, whole.start, whole.end)
        {
            return true;
        }
        self.allowlists().any(|(a, words)| {
            let by_regex = match &*a.target {
                "line" if a.has_regexes() => {
                    let (line_no, line) = lines.span(whole.start, whole.end);
                    let key = (std::ptr::from_ref(a) as usize, line_no);
                    Some(
                        *lines
                            .verdicts
                            .entry(key)
                            .or_insert_with(|| a.regex_verdict(line).unwrap_or(false)),
                    )
                }
                "line" => None,
                "match" => a.regex_verdict(&text[whole.clone()]),
                _ => a.regex_verdict(secret),
            };
            a.combine(by_regex, secret, words)
        })
    }
}

impl Allow {
    fn compiled(&self) -> &Compiled {
        self.compiled.get_or_init(|| {
            let alternation: Vec<String> = self
                .regexes
                .iter()
                .map(|r| format!("(?:{})", go_classes(r)))
                .collect();
            let regex = (!alternation.is_empty()).then(|| {
                RegexBuilder::new(&alternation.join("|"))
                    .size_limit(1 << 24)
                    .build()
                    .expect("allowlist regexes compile")
            });
            let words = (!self.stopwords.is_empty()).then(|| {
                AhoCorasick::builder()
                    .ascii_case_insensitive(true)
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(self.stopwords.iter().map(|w| w.as_bytes()))
                    .expect("stopwords build an automaton")
            });
            Compiled { regex, words }
        })
    }

    fn has_regexes(&self) -> bool {
        self.compiled().regex.is_some()
    }

    fn regex_verdict(&self, target: &str) -> Option<bool> {
        self.compiled().regex.as_ref().map(|r| r.is_match(target))
    }

    /// `by_regex` combined with the stopwords as the group's condition says.
    fn combine(&self, by_regex: Option<bool>, secret: &str, words: Words) -> bool {
        let by_word = self.compiled().words.as_ref().map(|w| match words {
            Words::All => w.is_match(secret),
            Words::Long => w
                .find_iter(secret)
                .any(|m| m.len() >= 6 || m.len() * 3 >= secret.len()),
        });
        let results = [by_regex, by_word].into_iter().flatten();
        if self.condition == "and" {
            let mut results = results.peekable();
            results.peek().is_some() && results.all(|b| b)
        } else {
            results.into_iter().any(|b| b)
        }
    }
}

/// `pattern` with the meaning its rules were written for: in Go's RE2
/// (gitleaks' engine) `\\w`, `\\d`, `\\s` and `\\b` are ASCII, here they
/// would be Unicode. Spelled out as ASCII classes they match what gitleaks
/// matches, and compile to an automaton a fraction of the size (the
/// generic rule's `[\\w.-]{0,50}` alone is tens of milliseconds in Unicode).
/// A negated shorthand inside a class (`[\\W]`) is left as written.
fn go_classes(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() * 2);
    let mut chars = pattern.chars().peekable();
    let mut depth = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(n) = chars.next() else {
                    out.push(c);
                    break;
                };
                out.push_str(match (depth, n) {
                    (0, 'w') => "[0-9A-Za-z_]",
                    (0, 'W') => "[^0-9A-Za-z_]",
                    (0, 'd') => "[0-9]",
                    (0, 'D') => "[^0-9]",
                    (0, 's') => "[\\t\\n\\f\\r ]",
                    (0, 'S') => "[^\\t\\n\\f\\r ]",
                    (0, 'b') => "(?-u:\\b)",
                    (0, 'B') => "(?-u:\\B)",
                    (_, 'w') if depth > 0 => "0-9A-Za-z_",
                    (_, 'd') if depth > 0 => "0-9",
                    (_, 's') if depth > 0 => "\\t\\n\\f\\r ",
                    _ => {
                        out.push(c);
                        out.push(n);
                        continue;
                    }
                });
            }
            '[' if depth > 0 && chars.peek() == Some(&':') => {
                // A POSIX class, `[:alnum:]`, copied whole.
                out.push(c);
                for p in chars.by_ref() {
                    out.push(p);
                    if p == ']' {
                        break;
                    }
                }
            }
            '[' => {
                depth += 1;
                out.push(c);
                // `^` and a leading `]` are literal parts of the class.
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().expect("peeked"));
                }
                if chars.peek() == Some(&']') {
                    out.push(chars.next().expect("peeked"));
                }
            }
            ']' if depth > 0 => {
                depth -= 1;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// What to redact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Redact e-mail addresses too (`handoff.redactEmails`, or
    /// `handoff.redact.email`).
    pub emails: bool,
    /// Kinds switched off with `handoff.redact.<kind> false`.
    pub off: &'static [&'static str],
}

impl Default for Options {
    fn default() -> Self {
        Options {
            emails: true,
            off: &[],
        }
    }
}

impl Options {
    /// Options from git config: `handoff.redact.<kind>` (default true, see
    /// [`config_key`]) for every kind, and the older `handoff.redactEmails`.
    pub fn from_repo(repo: &gix::Repository) -> Options {
        let config = repo.config_snapshot();
        // Most repositories switch nothing: then no `[handoff "redact"]`
        // section exists and the ~220 lookups below would all miss.
        let switched = config
            .plumbing()
            .section("handoff", Some("redact".into()))
            .is_ok();
        let off: Vec<&'static str> = if switched {
            kinds()
                .into_iter()
                .filter(|k| config.boolean(config_key(k).as_str()) == Some(false))
                .collect()
        } else {
            Vec::new()
        };
        let emails =
            config.boolean("handoff.redactEmails").unwrap_or(true) && !off.contains(&"email");
        Options {
            emails,
            off: if off.is_empty() {
                &[]
            } else {
                Box::leak(off.into_boxed_slice())
            },
        }
    }

    /// Whether findings of `kind` are redacted.
    pub fn enabled(&self, kind: &str) -> bool {
        !(self.off.contains(&kind) || (kind == "email" && !self.emails))
    }
}

/// The git config variable that switches `kind` on or off:
/// `handoff.redact.<kind>` with `_` written `-` (git's variable names
/// allow letters, digits and `-` only), e.g. `handoff.redact.ip-address`.
pub fn config_key(kind: &str) -> String {
    format!("handoff.redact.{}", kind.replace('_', "-"))
}

/// Every kind the rule set knows, sorted, without repeats.
pub fn kinds() -> Vec<&'static str> {
    let mut kinds: Vec<&'static str> = rules().iter().map(|r| r.kind.as_ref()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    kinds
}

/// How many rules the rule set holds (the gitleaks set and this project's).
pub fn rule_count() -> usize {
    rules().len()
}

/// How many secrets of each kind were found or replaced.
pub type Counts = BTreeMap<&'static str, usize>;

/// Shannon entropy in bits per character.
pub fn entropy(s: &str) -> f64 {
    if s.is_ascii() {
        let mut counts = [0u32; 128];
        let mut present: u128 = 0;
        for b in s.bytes() {
            counts[usize::from(b)] += 1;
            present |= 1 << b;
        }
        let n = s.len() as f64;
        let term = |c: u32| {
            let p = f64::from(c) / n;
            -p * p.log2()
        };
        // The characters present in byte order (the order the sum is
        // taken in), each count's term computed once: most characters of
        // a secret occur once or twice, so a few logarithms, not one per
        // character.
        let seen = std::iter::from_fn(|| {
            (present != 0).then(|| {
                let b = present.trailing_zeros() as usize;
                present &= present - 1;
                counts[b]
            })
        });
        let mut memo = [0f64; 32];
        let mut known = 0u32;
        return seen
            .map(|c| match usize::try_from(c) {
                Ok(i) if i < memo.len() => {
                    if known & (1 << i) == 0 {
                        memo[i] = term(c);
                        known |= 1 << i;
                    }
                    memo[i]
                }
                _ => term(c),
            })
            .sum();
    }
    let mut counts: BTreeMap<char, usize> = BTreeMap::new();
    let mut n = 0usize;
    for c in s.chars() {
        *counts.entry(c).or_default() += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    counts
        .values()
        .map(|&c| {
            let p = c as f64 / n as f64;
            -p * p.log2()
        })
        .sum()
}

/// A value that looks generated rather than a word or a placeholder: at
/// least 8 characters, entropy ≥ 3 bits per character, two character
/// classes, and not an obvious reference (`$VAR`, `{{x}}`, `os.environ…`).
fn high_entropy(value: &str) -> bool {
    let v = value.trim_matches(|c| c == '"' || c == '\'');
    v.len() >= 8 && !is_reference(v) && classes(v) >= 2 && entropy(v) >= 3.0
}

/// The character classes of `v` (lower, upper, digit, other).
fn classes(v: &str) -> usize {
    [
        v.chars().any(|c| c.is_ascii_lowercase()),
        v.chars().any(|c| c.is_ascii_uppercase()),
        v.chars().any(|c| c.is_ascii_digit()),
        v.chars().any(|c| !c.is_ascii_alphanumeric()),
    ]
    .iter()
    .filter(|b| **b)
    .count()
}

/// A reference to a secret rather than its value: `$VAR`, `{{x}}`,
/// `%VAR%`, `<placeholder>`, `os.environ[…]`, a call, a dotted name
/// without digits (`var.db_password`, `config.secret`), a run of one
/// repeated character (`xxxxxxxx`, `********`).
fn is_reference(v: &str) -> bool {
    let dotted_name = v.contains('.')
        && v.split('.').all(|part| {
            part.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphabetic() || c == '_')
        });
    let one_char = v.chars().all(|c| v.starts_with(c));
    v.starts_with(['$', '{', '%', '<'])
        || v.contains("REDACTED")
        || v.contains('(')
        || v.contains('[')
        || dotted_name
        || one_char
        || ["os.", "env.", "process.", "std::env"]
            .iter()
            .any(|p| v.starts_with(p))
}

/// Run the validator `name` on a finding `secret` at `start..end` of `text`.
fn check(name: &str, secret: &str, text: &str, start: usize, end: usize) -> bool {
    let before = text[..start].chars().next_back();
    let after = text[end..].chars().next();
    let digits: String = secret.chars().filter(char::is_ascii_digit).collect();
    match name {
        "high_entropy" => high_entropy(secret),
        // A password is short and human: any value of 6+ characters with
        // two character classes that is not a reference.
        "password" => {
            let v = secret.trim_matches(|c| c == '"' || c == '\'');
            v.len() >= 6 && !is_reference(v) && classes(v) >= 2
        }
        // A passport number holds digits (a word in capitals does not).
        "passport" => digits.len() >= 5 && !word_touching(before, after),
        // `git@host:path` is an scp-style remote, not mail.
        "email" => after != Some(':'),
        "ssn" => {
            let (area, group, serial) = (&digits[..3], &digits[3..5], &digits[5..]);
            area != "000"
                && area != "666"
                && !area.starts_with('9')
                && group != "00"
                && serial != "0000"
                && !matches!(before, Some(c) if c.is_ascii_alphanumeric() || c == '-' || c == '.')
                && !matches!(after, Some(c) if c.is_ascii_alphanumeric() || c == '-' || c == '.')
        }
        "luhn" => card_like(&digits) && !matches!(before, Some(c) if c == '-' || c == '.'),
        "iban" => iban_like(secret) && !word_touching(before, after),
        "uk_nino" => nino_like(secret) && !word_touching(before, after),
        // An AWS secret access key is 40 characters of base64: both cases
        // and a digit or `/`/`+` (a 40-hex commit id beside a key id is
        // not one).
        "aws_secret" => {
            secret.chars().any(|c| c.is_ascii_uppercase())
                && secret.chars().any(|c| c.is_ascii_lowercase())
                && secret
                    .chars()
                    .any(|c| c.is_ascii_digit() || c == '/' || c == '+')
                && entropy(secret) > 4.0
        }
        "key_material" => key_material(secret),
        "random_token" => !made_up(secret),
        // A password given on a command line: whatever follows the flag,
        // unless it is a reference (`$PW`, `$(cat file)`, `<password>`).
        "cli_password" => {
            let v = secret.trim_matches(|c| c == '"' || c == '\'');
            v.len() >= 4 && !is_reference(v)
        }
        "secret_looking" => secret_looking(secret),
        "ipv4" => ipv4_like(secret, text, start, before, after),
        "ipv6" => {
            let groups = secret.split(':').filter(|g| !g.is_empty()).count();
            groups >= 3
                && secret.chars().any(|c| c.is_ascii_digit())
                && !matches!(before, Some(c) if c == ':' || c.is_ascii_alphanumeric())
                && !matches!(after, Some(c) if c == ':' || c.is_ascii_alphanumeric())
        }
        "phone" => {
            (10..=15).contains(&digits.len())
                && !matches!(before, Some(c) if c.is_ascii_alphanumeric() || "-./_:".contains(c))
                && !matches!(after, Some(c) if c.is_ascii_alphanumeric() || "-/_".contains(c))
                && !digit_beyond_separator(text[..start].chars().rev())
                && !digit_beyond_separator(text[end..].chars())
        }
        _ => true,
    }
}

/// A value that reads as a secret where prose or a flag hands one over
/// (`the admin pass is …`, `redis-cli -a …`): 8 to 200 characters, not a
/// reference (`$PW`, `{{x}}`, `config.db_password`), a URL, a path in
/// Rust (`a::b`), a revision (`HEAD~3`), a flag nor a placeholder (one
/// character four times in a row: `4b1dXXXX…`); and either lower
/// case, capitals and digits together (`Xy7kQ2vP9zLm`,
/// `Tr0ub4dor-Horse-77`; not a ticket id or slug whose every piece
/// between separators is all letters or all digits, `PROJ-123-login`),
/// or 12 or more letters and digits (two of each
/// at least) with no separator and 3 bits of entropy a character (a
/// generated key in one case). A word, a name in lower case with dashes
/// (`git-handoff`, `fix-auth-42`) or a version is none.
fn secret_looking(value: &str) -> bool {
    let v = value.trim_matches(|c| matches!(c, '"' | '\'' | '`'));
    let n = v.chars().count();
    if !(8..=200).contains(&n)
        || is_reference(v)
        || v.contains("://")
        || v.contains("::")
        || v.starts_with("HEAD")
        || v.starts_with('-')
        || v.as_bytes()
            .windows(4)
            .any(|w| w.iter().all(|&b| b == w[0]))
        || path_like(v)
    {
        return false;
    }
    let count = |f: fn(&u8) -> bool| v.bytes().filter(f).count();
    let (lower, upper, digits) = (
        count(u8::is_ascii_lowercase),
        count(u8::is_ascii_uppercase),
        count(u8::is_ascii_digit),
    );
    // A ticket id or a slug (`PROJ-123-login`, `Release-2024`): every
    // piece between separators all letters or all digits.
    let slug = v.split(|c: char| !c.is_ascii_alphanumeric()).all(|piece| {
        piece.bytes().all(|b| b.is_ascii_alphabetic()) || piece.bytes().all(|b| b.is_ascii_digit())
    });
    let mixed = lower > 0 && upper > 0 && digits > 0 && !slug;
    let generated = n >= 12
        && digits >= 2
        && lower + upper >= 2
        && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && entropy(v) >= 3.0;
    mixed || generated
}

/// A path rather than a secret: segments between `/` one of which is a
/// lower-case word of three letters or more (`build/Release2024`,
/// `src/Auth2.rs`), or a name ending in a short extension after a dot.
fn path_like(v: &str) -> bool {
    let word = |s: &str| s.len() >= 3 && s.bytes().all(|b| b.is_ascii_lowercase());
    let extension = v.rsplit_once('.').is_some_and(|(_, ext)| {
        (1..=4).contains(&ext.len()) && ext.bytes().all(|b| b.is_ascii_lowercase())
    });
    (v.contains('/') && v.split('/').any(word)) || extension
}

/// A token written by hand for an example rather than generated: three
/// or more runs of four or more consecutive characters (`1234`, `mnop`,
/// `qrstuvwx`), which a random token of any length next to never holds.
fn made_up(token: &str) -> bool {
    let mut runs = 0;
    let mut len = 1;
    let bytes = token.as_bytes();
    for pair in bytes.windows(2) {
        let (a, b) = (pair[0].to_ascii_lowercase(), pair[1].to_ascii_lowercase());
        if a.is_ascii_alphanumeric() && b == a + 1 {
            len += 1;
            if len == 4 {
                runs += 1;
            }
        } else {
            len = 1;
        }
    }
    runs >= 3
}

/// Whether a letter or digit touches the finding on either side.
fn word_touching(before: Option<char>, after: Option<char>) -> bool {
    matches!(before, Some(c) if c.is_ascii_alphanumeric())
        || matches!(after, Some(c) if c.is_ascii_alphanumeric())
}

/// An IBAN: a country code, two check digits and 11–30 letters and
/// digits (spaces every four allowed), whose ISO 13616 mod-97 check
/// gives 1.
fn iban_like(text: &str) -> bool {
    let compact: Vec<u8> = text.bytes().filter(|b| *b != b' ').collect();
    if !(15..=34).contains(&compact.len()) {
        return false;
    }
    let (head, rest) = compact.split_at(4);
    let mut remainder: u32 = 0;
    for &b in rest.iter().chain(head) {
        let value = match b {
            b'0'..=b'9' => u32::from(b - b'0'),
            b'A'..=b'Z' => u32::from(b - b'A') + 10,
            _ => return false,
        };
        let width = if value >= 10 { 100 } else { 10 };
        remainder = (remainder * width + value) % 97;
    }
    remainder == 1
}

/// A UK National Insurance number: two prefix letters that HMRC issues
/// (neither D, F, I, Q, U nor V, no O second, none of BG, GB, KN, NK,
/// NT, TN, ZZ), six digits and a suffix A–D.
fn nino_like(text: &str) -> bool {
    let compact: Vec<u8> = text.bytes().filter(|b| *b != b' ').collect();
    let [a, b, ..] = compact[..] else {
        return false;
    };
    let bad_first = b"DFIQUV".contains(&a);
    let bad_second = b"DFIQUVO".contains(&b);
    let prefix = [a, b];
    !bad_first
        && !bad_second
        && ![b"BG", b"GB", b"KN", b"NK", b"NT", b"TN", b"ZZ"].contains(&&prefix)
}

/// A private key block holds key material, not a placeholder: at least
/// 16 base64 characters between its armour lines, not all alike.
fn key_material(block: &str) -> bool {
    let after_header = block
        .match_indices("-----")
        .nth(1)
        .map_or(0, |(i, _)| i + 5);
    let body = &block[after_header..];
    let body = body.find("-----").map_or(body, |i| &body[..i]);
    let chars: String = body
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '='))
        .collect();
    chars.len() >= 16 && entropy(&chars) > 3.0
}

/// Whether `chars` (walking away from a match) start with one separator
/// and then a digit: the match is part of a longer number.
fn digit_beyond_separator(mut chars: impl Iterator<Item = char>) -> bool {
    matches!(chars.next(), Some(' ' | '-' | '.'))
        && chars.next().is_some_and(|c| c.is_ascii_digit())
}

/// A payment card number: 13–19 digits, a known issuer prefix, and a valid
/// Luhn check digit.
fn card_like(digits: &str) -> bool {
    if !(13..=19).contains(&digits.len()) {
        return false;
    }
    let issuer = [
        "4", "51", "52", "53", "54", "55", "22", "23", "24", "25", "26", "27", "34", "37", "6011",
        "65", "35", "36", "30", "38", "62",
    ];
    if !issuer.iter().any(|p| digits.starts_with(p)) {
        return false;
    }
    let sum: u32 = digits
        .chars()
        .rev()
        .filter_map(|c| c.to_digit(10))
        .enumerate()
        .map(|(i, d)| match i % 2 {
            0 => d,
            _ if d * 2 > 9 => d * 2 - 9,
            _ => d * 2,
        })
        .sum();
    sum.is_multiple_of(10)
}

/// An IPv4 address that is not a version string (`v1.2.3.4`,
/// `version 1.2.3.4`, `1.2.3.4.5`), a loopback or the unspecified address.
fn ipv4_like(
    ip: &str,
    text: &str,
    start: usize,
    before: Option<char>,
    after: Option<char>,
) -> bool {
    if ip.starts_with("127.") || ip == "0.0.0.0" || ip.starts_with("255.") {
        return false;
    }
    if matches!(before, Some(c) if c.is_ascii_alphanumeric() || c == '.' || c == '-')
        || matches!(after, Some(c) if c.is_ascii_alphanumeric() || c == '-')
        || (after == Some('.')
            && text[start + ip.len()..]
                .chars()
                .nth(1)
                .is_some_and(|c| c.is_ascii_digit()))
    {
        return false;
    }
    // What stands just before (a bounded look: one long line of
    // addresses must not cost its length per address).
    let from = (start.saturating_sub(24)..=start)
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(start);
    let lead = text[from..start].trim_end().to_ascii_lowercase();
    !["version", "release", "v", "ver", "tag"]
        .iter()
        .any(|w| lead.ends_with(w))
}

/// Redact `text` with the default options (every kind on).
pub fn redact_text(text: &str) -> (String, Vec<(&'static str, usize)>) {
    let (out, counts) = redact(text, Options::default());
    (out, counts.into_iter().collect())
}

/// Replace every secret in `text` by `[REDACTED:<kind>]`; return the new
/// text and the counts per kind.
pub fn redact(text: &str, options: Options) -> (String, Counts) {
    let spans = merged(findings(text, options));
    let mut counts = Counts::new();
    if spans.is_empty() {
        return (text.to_string(), counts);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for span in spans {
        let kind = rules()[span.rule].kind.as_ref();
        out.push_str(&text[at..span.start]);
        out.push_str("[REDACTED:");
        out.push_str(kind);
        out.push(']');
        at = span.end;
        *counts.entry(kind).or_default() += 1;
    }
    out.push_str(&text[at..]);
    (out, counts)
}

/// The redaction markers `text` holds already (`[REDACTED:<kind>]`), by
/// kind: what a text redacted before it was cut had removed.
pub fn marker_counts(text: &str) -> Counts {
    let mut counts = Counts::new();
    for rule in rules() {
        let kind: &'static str = rule.kind.as_ref();
        if counts.contains_key(kind) {
            continue;
        }
        let n = text.matches(&format!("[REDACTED:{kind}]")).count();
        if n > 0 {
            counts.insert(kind, n);
        }
    }
    counts
}

/// `text` redacted whole (every kind on), then cut to at most `max`
/// characters with `…` at the cut. Redaction comes first: a secret cut
/// short (a key whose `BEGIN` line fell outside, a token one character
/// short) matches no rule any more. A cut that would end inside a
/// redaction marker or inside a token-shaped run (8 or more letters,
/// digits and `_-+/=.`) that goes on past it drops that partial run.
pub fn cut_redacted(text: &str, max: usize) -> String {
    let (text, _) = redact(text, Options::default());
    if text.chars().count() <= max {
        return text;
    }
    let end = text
        .char_indices()
        .nth(max.saturating_sub(1))
        .map_or(text.len(), |(i, _)| i);
    let kept = &text[..end];
    let kept = match kept.rfind('[') {
        Some(at) if !kept[at..].contains(']') && text[at..].starts_with("[REDACTED:") => {
            &kept[..at]
        }
        _ => drop_partial_run(kept, &text[end..]),
    };
    format!("{}…", kept.trim_end())
}

/// `kept` without the token-shaped run it ends in, when that run goes on
/// in `rest` and is 8 characters or more in all.
fn drop_partial_run<'t>(kept: &'t str, rest: &str) -> &'t str {
    let token = |c: char| c.is_ascii_alphanumeric() || "_-+/=.".contains(c);
    let tail = kept.len() - kept.trim_end_matches(token).len();
    let more = rest.len() - rest.trim_start_matches(token).len();
    if more > 0 && tail > 0 && tail + more >= 8 {
        &kept[..kept.len() - tail]
    } else {
        kept
    }
}

/// Count the secrets in `text` without changing it.
pub fn scan(text: &str, options: Options) -> Counts {
    let mut counts = Counts::new();
    for span in merged(findings(text, options)) {
        *counts.entry(rules()[span.rule].kind.as_ref()).or_default() += 1;
    }
    counts
}

/// Whether findings of `kind` are personal data (e-mail, phone, …)
/// rather than credentials.
pub fn is_personal(kind: &str) -> bool {
    rules().iter().any(|r| r.kind == kind && r.personal)
}
/// Redact every string of a JSON value in place, except object keys and
/// the brief's `key` field (a key with a secret is refused elsewhere).
pub fn redact_json(value: &mut Value, options: Options) -> Counts {
    let mut counts = Counts::new();
    walk(value, options, &mut counts, true);
    counts
}

fn walk(value: &mut Value, options: Options, counts: &mut Counts, top: bool) {
    match value {
        Value::String(s) => {
            let (new, found) = redact(s, options);
            if !found.is_empty() {
                *s = new;
                merge(counts, found);
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| walk(v, options, counts, false)),
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if top && k == "key" {
                    continue;
                }
                walk(v, options, counts, false);
            }
        }
        _ => {}
    }
}

/// Add `more` to `counts`.
pub fn merge(counts: &mut Counts, more: Counts) {
    for (k, n) in more {
        *counts.entry(k).or_default() += n;
    }
}

/// `3 secrets redacted (2 github_token, 1 email)`, or `None` for none.
pub fn summary(counts: &Counts) -> Option<String> {
    let total: usize = counts.values().sum();
    if total == 0 {
        return None;
    }
    let parts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    Some(format!(
        "{total} secret{} redacted ({})",
        if total == 1 { "" } else { "s" },
        parts.join(", ")
    ))
}

/// The kinds of secret in `text` (with their counts), for checks that
/// refuse rather than rewrite (a key, a ref name, a line that leaves or
/// arrives). Never the secret itself.
pub fn find_in_text(text: &str, options: Options) -> Counts {
    scan(text, options)
}

/// The secrets in every string of `value`: object keys and the brief's
/// `key` field included (what [`redact_json`] leaves alone), for the
/// checks on what leaves or enters the repository.
pub fn find_in_json(value: &Value, options: Options) -> Counts {
    let mut counts = Counts::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => merge(&mut counts, scan(s, options)),
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                for (k, v) in map {
                    if !is_schema_field(k) {
                        merge(&mut counts, scan(k, options));
                    }
                    stack.push(v);
                }
            }
            _ => {}
        }
    }
    counts
}

/// Whether `name` is a field name of the brief schema: a fixed word of
/// the format, which holds no secret (every one scans clean, a test
/// checks), so it is not scanned as an object key. Scanning them cost
/// more than the rest of a line: `key`, `next_acceptance_check` and
/// `rejected_paths` wake seven rules whose patterns would be compiled for
/// nothing.
fn is_schema_field(name: &str) -> bool {
    static NAMES: OnceLock<HashSet<String>> = OnceLock::new();
    NAMES
        .get_or_init(|| {
            let schema: Value = serde_json::from_str(super::SCHEMA_JSON).unwrap_or_default();
            let mut names = HashSet::new();
            let mut stack = vec![&schema];
            while let Some(v) = stack.pop() {
                match v {
                    Value::Object(map) => {
                        if let Some(Value::Object(props)) = map.get("properties") {
                            names.extend(props.keys().cloned());
                        }
                        stack.extend(map.values());
                    }
                    Value::Array(items) => stack.extend(items),
                    _ => {}
                }
            }
            names
        })
        .contains(name)
}

/// The secrets in one line of a history note: a JSON object string by
/// string ([`find_in_json`]), anything else (a JSON array, a string, any
/// text) as text, read through the decoder like every text (its `\u`
/// escapes too).
pub fn find_in_line(line: &[u8], options: Options) -> Counts {
    // A repeated field would hide all but its last value from the parsed
    // reading: such a line is read as the raw text it is.
    match serde_json::from_slice::<Value>(line) {
        Ok(value) if value.is_object() && super::duplicate_field(line).is_none() => {
            find_in_json(&value, options)
        }
        _ => scan(&String::from_utf8_lossy(line), options),
    }
}

/// The rule a key matches, if any: a key becomes a ref name and part of
/// every history line, so one with a secret is refused, never redacted.
///
/// Remembered for the process: a push or fetch asks it of every key of a
/// remote, and a push that fetches asks it twice.
pub fn key_rule(key: &str, options: Options) -> Option<&'static str> {
    type Seen = HashMap<String, (Options, Option<&'static str>)>;
    static SEEN: OnceLock<std::sync::Mutex<Seen>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    if let Ok(seen) = seen.lock()
        && let Some((asked, rule)) = seen.get(key)
        && *asked == options
    {
        return *rule;
    }
    let rule = scan(key, options).into_keys().next();
    if let Ok(mut seen) = seen.lock() {
        seen.insert(key.to_string(), (options, rule));
    }
    rule
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_schema_field_names_hold_no_secret() {
        use super::{Options, is_schema_field, scan};
        let names = [
            "key",
            "next_acceptance_check",
            "rejected_paths",
            "head_sha",
            "state",
        ];
        assert!(names.iter().all(|n| is_schema_field(n)));
        assert!(!is_schema_field("ghp_x") && !is_schema_field("lineage"));
        let schema: serde_json::Value = serde_json::from_str(super::super::SCHEMA_JSON).unwrap();
        let text = schema.to_string();
        // Every word of the schema that names a field scans clean, so
        // not scanning them as object keys finds exactly what it found.
        let words = text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| is_schema_field(w))
            .collect::<std::collections::BTreeSet<_>>();
        assert!(words.len() > 20, "{words:?}");
        for word in words {
            assert!(scan(word, Options::default()).is_empty(), "{word}");
        }
    }

    #[test]
    fn a_cut_never_leaves_part_of_a_secret() {
        use super::cut_redacted;
        let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
        // Cut one character short, the token matches no rule any more:
        // redacted first, it never shows.
        let text = format!("pushed with {token} and more words after it");
        let cut = cut_redacted(&text, 12 + token.len() - 1);
        assert!(!cut.contains("ghp_a1B2"), "{cut}");
        // A cut inside the marker drops the marker, not into it.
        let cut = cut_redacted(&text, 20);
        assert_eq!(cut, "pushed with…");
        // A cut inside a long token-shaped run drops the run.
        let text = "id 0123456789abcdefXYZ rest";
        assert_eq!(cut_redacted(text, 10), "id…");
        // Words are cut as before.
        assert_eq!(cut_redacted("abcdef ghij", 8), "abcdef…");
        // A private key whose BEGIN line is far above the cut.
        let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7vQ0vH3xK2mL9pN8qR5sT1uV6wX4yZ0aB3cD7eF9gH2iJ5kL8mN\n-----END RSA PRIVATE KEY-----";
        let cut = cut_redacted(&format!("error: {key}"), 60);
        assert!(!cut.contains("MIIEow"), "{cut}");
    }

    use super::*;

    /// What `build.rs` compiles in is what serde reads from the rule
    /// files, field by field, defaults included.
    #[test]
    fn the_compiled_in_rules_are_the_rule_files() {
        let gitleaks: GitleaksFile =
            serde_json::from_str(GITLEAKS).expect("the gitleaks rules parse");
        let handoff: HandoffFile = serde_json::from_str(HANDOFF).expect("the project rules parse");
        let parsed = ordered(handoff.before, gitleaks.rules, handoff.after);
        let compiled = lend(builtin_rules());
        assert_eq!(compiled.len(), parsed.len());
        for (c, p) in compiled.iter().zip(&parsed) {
            assert_eq!(format!("{c:#?}"), format!("{p:#?}"));
        }
        let order = |rules: &[Rule]| -> Vec<String> {
            rules
                .iter()
                .map(|r| format!("{} {:?}", r.id, r.inherits))
                .collect()
        };
        assert_eq!(order(rules()), order(&parsed));
    }

    /// The digest that keys the gate's cached verdicts is the digest of
    /// exactly the rule files compiled in (FNV-1a 128 of each, NUL after
    /// each), so that a changed rule set never reuses a verdict.
    #[test]
    fn the_rules_digest_is_that_of_the_rule_files() {
        let mut hash: u128 = 0x6c62272e07bb014262b821756295c58d;
        for byte in [GITLEAKS, "\0", HANDOFF, "\0"]
            .iter()
            .flat_map(|p| p.bytes())
        {
            hash ^= u128::from(byte);
            hash = hash.wrapping_mul(0x0000000001000000000000000000013b);
        }
        assert_eq!(rules_digest(), format!("{hash:032x}"));
    }

    /// The keyword-by-keyword search of short texts finds exactly the
    /// keywords the automaton finds, whatever their case.
    #[test]
    fn short_texts_wake_the_rules_the_automaton_wakes() {
        let p = prefilter();
        let mut texts: Vec<String> = p.words.iter().map(|k| format!("a {k} b")).collect();
        texts.extend(p.words.iter().map(|k| k.to_ascii_uppercase()));
        texts.extend(
            [
                "",
                "commit 20000",
                "fix: the AWS Secret key in ~/.Config (see ghp_ and xoxb-)",
                "Authorization: Bearer eyJhbGciOi.x; PASSWORD=hunter2 mysql -p",
                "überall passé — ключ token? Pwd",
            ]
            .map(String::from),
        );
        for text in &texts {
            assert_eq!(
                p.keywords_in(text, true),
                p.keywords_in(text, false),
                "keywords found in {text:?}"
            );
        }
    }

    /// A rule with `min_digits` does not run on a text with fewer digits,
    /// and finds what it finds on one with just enough.
    #[test]
    fn rules_without_keywords_run_only_where_digits_allow() {
        let p = prefilter();
        let id = |rule: &str| rules().iter().position(|r| r.id == rule).expect(rule);
        let (ssn, card) = (id("us-ssn"), id("payment-card"));
        assert!(!p.wanted("commit 20000").wanted[ssn]);
        assert!(!p.wanted("123-45-678").wanted[ssn]);
        assert!(p.wanted("123-45-6789").wanted[ssn]);
        assert!(!p.wanted("4111 1111 1111").wanted[card]);
        assert_eq!(
            redact_text("card 4222 2222 2222 2").1,
            vec![("payment_card", 1)]
        );
        assert_eq!(redact_text("ssn 123-45-6789").1, vec![("ssn", 1)]);
    }

    /// Each kind with true positives; the secret must be gone and counted.
    #[test]
    fn every_kind_is_caught() {
        let ghp = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
        let corpus: Vec<(&str, String, &str)> = vec![
            ("private_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----".into(), "MIIEpAIBAAKCAQEA7"),
            ("private_key", "key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA".into(), "b3BlbnNzaC1rZXktdjEAAAAA"),
            ("aws_access_key_id", "AKIAR7WBZKD3UQ5NXM6L is the id".into(), "AKIAR7WBZKD3UQ5NXM6L"),
            ("aws_secret_key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(), "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            ("github_token", format!("push with {ghp} please"), ghp.as_str()),
            ("github_token", "github_pat_11ABCDEFG0123456789_Zq8xW2vN5mKp3Lr7Ty1Uw4".into(), "github_pat_11ABCDEFG"),
            ("gitlab_token", "glpat-xxxxXXXX1234567890ab".into(), "glpat-xxxxXXXX1234567890ab"),
            ("slack_token", "xoxb-1234567890-abcdefghij".into(), "xoxb-1234567890-abcdefghij"),
            ("stripe_key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc".into(), "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
            ("google_api_key", "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI".into(), "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI"),
            ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U".into(), "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
            ("bearer_token", "curl -H 'Authorization: Bearer abc123DEF456ghi789'".into(), "abc123DEF456ghi789"),
            ("url_credentials", "git clone https://alice:s3cr3tP4ss@example.com/repo.git".into(), "s3cr3tP4ss"),
            ("secret_assignment", "password=Tr0ub4dor&3xyz".into(), "Tr0ub4dor&3xyz"),
            ("secret_assignment", "api_key: \"9f8e7d6c5b4aQWERTY\"".into(), "9f8e7d6c5b4aQWERTY"),
            ("secret_assignment", "export TOKEN=Zx81_kqP0mnB72vT".into(), "Zx81_kqP0mnB72vT"),
            ("email", "ask jane.doe@corp.example.com about it".into(), "jane.doe@corp.example.com"),
        ];
        for (kind, text, secret) in corpus {
            let (out, counts) = redact(&text, Options::default());
            assert!(!out.contains(secret), "{kind}: {secret} survived in {out}");
            assert!(out.contains(&format!("[REDACTED:{kind}]")), "{kind}: {out}");
            assert_eq!(counts.get(kind), Some(&1), "{kind}: {counts:?} for {text}");
        }
    }

    /// What briefs normally hold stays as it is.
    #[test]
    fn near_misses_are_kept() {
        let keep = [
            "head at 3f9a2b1c4d5e6f708192a3b4c5d6e7f801234567",
            "id 123e4567-e89b-12d3-a456-426614174000",
            "src/auth/token.rs:10-40",
            "cargo test auth::token::expiry",
            "token: string",
            "the password field must be hashed",
            "password=${DB_PASSWORD}",
            "api_key = os.environ['API_KEY']",
            "secret: <redacted>",
            "token=aaaaaaaaaaaa",
            "SGVsbG8gd29ybGQsIHRoaXMgaXMgYmFzZTY0",
            "git@github.com:org/repo.git",
            "npm i react@18.2.0 @types/node",
            "ghp_short",
            "AKIA lowercase akiaiosfodnn7example",
            "AKIAIOSFODNN7EXAMPLE, the key id of AWS's documentation",
            "https://example.com/path?a=b",
            "Bearer of bad news",
            "eyJ is how base64 JSON starts",
            "-----BEGIN PUBLIC KEY-----\nMIIBIjANBg\n-----END PUBLIC KEY-----",
        ];
        for text in keep {
            let (out, counts) = redact(text, Options::default());
            assert_eq!(out, text, "changed: {counts:?}");
            assert!(counts.is_empty(), "{text}: {counts:?}");
        }
    }

    /// The rule files are well formed and every pattern and allowlist
    /// compiles with the `regex` crate.
    #[test]
    fn shorthand_classes_mean_what_they_mean_in_go() {
        assert_eq!(
            go_classes(r"(?i)[\w.-]{0,5}\s\d\b\\w[^\s\]][[:alnum:]\W]\x60"),
            r"(?i)[0-9A-Za-z_.-]{0,5}[\t\n\f\r ][0-9](?-u:\b)\\w[^\t\n\f\r \]][[:alnum:]\W]\x60"
        );
        assert_eq!(go_classes(r"[]a\w]"), r"[]a0-9A-Za-z_]");
        // ASCII, as in gitleaks: a letter outside ASCII is not a word
        // character, so it ends a token instead of extending it.
        let word = Regex::new(&go_classes(r"^\w+")).unwrap();
        assert_eq!(word.find("abcé").map(|m| m.as_str()), Some("abc"));
    }

    #[test]
    fn every_rule_compiles() {
        let bad: Vec<&str> = rules()
            .iter()
            .filter(|r| r.regex().is_none())
            .map(|r| r.id.as_ref())
            .collect();
        assert!(bad.is_empty(), "rules that do not compile: {bad:?}");
        for rule in rules() {
            for allow in &rule.allow {
                for r in allow.regexes.iter() {
                    assert!(
                        Regex::new(&go_classes(r)).is_ok(),
                        "{}: allowlist {r}",
                        rule.id
                    );
                }
            }
        }
        assert!(rule_count() > 200, "the gitleaks set is loaded");
        assert!(kinds().contains(&"payment_card"));
    }

    /// The worst shape for a redactor: one line made only of findings
    /// (`api_key=<generated value>` pairs), each waking the generic rules
    /// and a line-wide allowlist. Deterministic values from a small LCG,
    /// each with a digit (a value of letters only is no secret to
    /// gitleaks' generic rule, nor to ours).
    pub(crate) fn worst_shape(bytes: usize) -> String {
        const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut out = String::with_capacity(bytes + 64);
        while out.len() < bytes {
            out.push_str("api_key=");
            for _ in 0..23 {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                out.push(ALNUM[(seed >> 33) as usize % ALNUM.len()] as char);
            }
            out.push(char::from(b'0' + (seed >> 40) as u8 % 10));
            out.push(' ');
        }
        out
    }

    /// Issue 30, item 3: redaction is linear in the length of a line. Each
    /// finding used to re-scan its whole line (allowlists, lowercasing):
    /// 1 MiB of findings on one line is ~32,000 findings times 1 MiB, a
    /// minute or more in this build; linear, it is a few seconds.
    #[test]
    fn one_long_line_of_findings_is_linear() {
        let text = worst_shape(1 << 20);
        let pairs = text.matches("api_key=").count();
        let (out, counts) = redact(&text, Options::default());
        let found: usize = counts.values().sum();
        // A generated value may hold an allowlisted word (one in tens of
        // thousands); every other pair is one finding, removed whole.
        assert!(
            found <= pairs && found * 1000 >= pairs * 999,
            "{counts:?} of {pairs}"
        );
        assert_eq!(out.matches("[REDACTED:").count(), found);
        assert!(!out.contains(&text[8..32]), "the first value is gone");
    }

    /// Findings as `(start, end, rule)`.
    type Found = Vec<(usize, usize, usize)>;

    /// The findings with every rule that allows it run only near its
    /// keywords, and with every rule run over the whole text.
    fn both_ways(text: &str) -> (Found, Found) {
        let key = |spans: Vec<Span>| -> Found {
            spans
                .into_iter()
                .map(|s| (s.start, s.end, s.rule))
                .collect()
        };
        (
            key(findings_in(text, Options::default(), true)),
            key(findings_in(text, Options::default(), false)),
        )
    }

    /// The texts of gitleaks' own cases (every rule's true and false
    /// positives).
    fn gitleaks_cases() -> Vec<String> {
        let corpus: Value =
            serde_json::from_str(include_str!("../../tests/fixtures/gitleaks-corpus.json"))
                .expect("the corpus parses");
        ["true_positives", "false_positives"]
            .iter()
            .flat_map(|k| corpus[*k].as_array().expect("a list").clone())
            .map(|case| case["text"].as_str().expect("a text").to_string())
            .collect()
    }

    /// Issue 30, item 3: searching a rule only in windows around its
    /// keywords finds exactly what searching the whole text finds, on
    /// gitleaks' own cases and on long mixes of them (cases glued
    /// together, cut at random places, with the keyword far from where
    /// it woke the rule).
    #[test]
    fn windows_find_what_the_whole_text_finds() {
        let cases = gitleaks_cases();
        assert!(cases.len() > 1000, "the corpus is loaded");
        let windowed = rules().iter().filter(|r| r.reach().is_some()).count();
        assert!(windowed > 100, "only {windowed} rules run in windows");
        for text in &cases {
            let (near, whole) = both_ways(text);
            assert_eq!(near, whole, "in {text:?}");
        }
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as usize % n
        };
        for round in 0..40 {
            let mut text = String::new();
            for _ in 0..30 {
                let case = &cases[next(cases.len())];
                // A piece of a case: from a character boundary on.
                let cut = (next(case.len() + 1)..=case.len())
                    .find(|&i| case.is_char_boundary(i))
                    .unwrap_or(case.len());
                let piece = if next(3) == 0 {
                    &case[cut..]
                } else {
                    case.as_str()
                };
                text.push_str(piece);
                text.push_str(["", " ", "\n", "\n\n", "=", "\"", "x"][next(7)]);
                if next(4) == 0 {
                    text.push_str(&worst_shape(next(600)));
                }
            }
            let text = if round % 2 == 0 {
                text.replace('\n', " ")
            } else {
                text
            };
            let (near, whole) = both_ways(&text);
            assert_eq!(near, whole, "round {round}: {text:?}");
            assert!(!whole.is_empty(), "round {round} finds something");
        }
        // A text with a letter that folds to ASCII is searched whole.
        let (near, whole) = both_ways("api_\u{212A}ey=Zx81kqP0mnB72vTq9 okta");
        assert_eq!(near, whole);
    }

    /// The entropy as it was first written (every byte value looked at,
    /// one logarithm per character present), to pin the faster one to.
    fn entropy_reference(s: &str) -> f64 {
        let mut counts = [0u32; 128];
        for b in s.bytes() {
            counts[usize::from(b)] += 1;
        }
        let n = s.len() as f64;
        counts
            .iter()
            .filter(|&&c| c > 0)
            .map(|&c| {
                let p = f64::from(c) / n;
                -p * p.log2()
            })
            .sum()
    }

    /// The entropy is the same number, to the bit, as the plain sum (a
    /// threshold compares it with `<=`: a last-bit difference would
    /// change a finding).
    #[test]
    fn entropy_is_the_plain_sum_to_the_bit() {
        let mut seed: u64 = 7;
        let mut texts: Vec<String> = vec![String::new(), "a".into(), "a".repeat(40)];
        for len in 0..300 {
            for alphabet in [2u64, 5, 16, 62, 95] {
                let text: String = (0..len)
                    .map(|_| {
                        seed = seed
                            .wrapping_mul(6_364_136_223_846_793_005)
                            .wrapping_add(1_442_695_040_888_963_407);
                        char::from(b' ' + ((seed >> 33) % alphabet) as u8)
                    })
                    .collect();
                texts.push(text);
            }
        }
        for text in &texts {
            assert_eq!(
                entropy(text).to_bits(),
                entropy_reference(text).to_bits(),
                "{text:?}"
            );
        }
        assert_eq!(entropy("abcdefgh"), 3.0);
    }

    /// A remembered answer is given only to the same question: the same
    /// key under other options is asked again.
    #[test]
    fn a_key_rule_is_remembered_per_options() {
        let key = "notes-a.person@example.com";
        let kept = Options {
            emails: false,
            ..Options::default()
        };
        for _ in 0..2 {
            assert_eq!(key_rule(key, Options::default()), Some("email"));
            assert_eq!(key_rule(key, kept), None);
        }
        assert_eq!(key_rule("feat-jwt", Options::default()), None);
    }

    #[test]
    fn emails_can_be_kept_by_config() {
        let (out, counts) = redact(
            "mail a@b.example",
            Options {
                emails: false,
                ..Options::default()
            },
        );
        assert_eq!(out, "mail a@b.example");
        assert!(counts.is_empty());
    }

    #[test]
    fn json_strings_are_redacted_and_the_key_field_is_left_alone() {
        let mut v = serde_json::json!({"key": "k", "state": {"decisions": ["use sk_live_4eC39HqLyjWDarjtT1zdp7dc", "ok"]}});
        let counts = redact_json(&mut v, Options::default());
        assert_eq!(v["state"]["decisions"][0], "use [REDACTED:stripe_key]");
        assert_eq!(
            summary(&counts).unwrap(),
            "1 secret redacted (1 stripe_key)"
        );
        assert_eq!(summary(&Counts::new()), None);
    }

    /// Issue 56, items 3–5: a secret behind an encoding (escaped JSON in
    /// a shell command, `\u` escapes, percent-encoding, invisible
    /// characters inside a token, an escape inside an escape) is found on
    /// the decoded reading and removed where it is written, escapes and
    /// all; what is around it stays as written, and a second pass finds
    /// nothing more.
    #[test]
    fn secrets_behind_encodings_are_removed_where_they_are_written() {
        let body = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
        let cases: Vec<(String, &str)> = vec![
            (
                r#"curl -d "{\"password\":\"Tr0ub4dor3xyzq\"}" https://api"#.into(),
                r#"curl -d "{\"password\":\"[REDACTED:secret_assignment]\"}" https://api"#,
            ),
            (
                r#"curl -d "{\"api_key\":\"9f8e7d6c5b4aQWERTY12\"}""#.into(),
                r#"curl -d "{\"api_key\":\"[REDACTED:secret_assignment]\"}""#,
            ),
            (
                r#"curl -d "{\"token\":\"Zx81_kqP0mnB72vTq9\"}""#.into(),
                r#"curl -d "{\"token\":\"[REDACTED:secret_assignment]\"}""#,
            ),
            (
                r#"curl -d "{\"client_secret\":\"Zx81_kqP0mnB72vTq9\"}""#.into(),
                r#"curl -d "{\"client_secret\":\"[REDACTED:secret_assignment]\"}""#,
            ),
            (
                format!(r#"["deploy with \u0067hp_{body}"]"#),
                r#"["deploy with [REDACTED:github_token]"]"#,
            ),
            (
                format!(r#"["deploy with \\u0067hp_{body}"]"#),
                r#"["deploy with [REDACTED:github_token]"]"#,
            ),
            (
                format!("use ghp_{}\u{200B}{} now", &body[..18], &body[18..]),
                "use [REDACTED:github_token] now",
            ),
            (
                format!("use ghp_{}\u{00AD}{} now", &body[..18], &body[18..]),
                "use [REDACTED:github_token] now",
            ),
            (
                format!(
                    "use \u{FEFF}gh\u{202E}p_{}\u{2060}{}",
                    &body[..9],
                    &body[9..]
                ),
                "use \u{FEFF}[REDACTED:github_token]",
            ),
            (
                format!(r"printf $'\x67hp_{body}'"),
                "printf $'[REDACTED:github_token]'",
            ),
            (
                format!("deploy%20with%20%67hp_{body}&x=1"),
                "deploy%20with%20[REDACTED:github_token]&x=1",
            ),
        ];
        for (text, want) in &cases {
            let (out, counts) = redact(text, Options::default());
            assert_eq!(&out, want, "{text:?}: {counts:?}");
            assert_eq!(counts.values().sum::<usize>(), 1, "{text:?}: {counts:?}");
            assert_eq!(redact(&out, Options::default()).0, out, "twice: {text:?}");
            assert_eq!(scan(text, Options::default()), counts, "{text:?}");
        }
        // The same in a history line that is not a JSON object.
        let line = format!(r#"["deploy with \u0067hp_{body}"]"#);
        assert_eq!(
            find_in_line(line.as_bytes(), Options::default()).get("github_token"),
            Some(&1)
        );
    }

    /// Issue 56, item 6: secrets handed over in prose or on a command
    /// line are caught by what the value looks like, not one pattern per
    /// sentence.
    #[test]
    fn secrets_in_prose_are_caught_by_example() {
        for (text, secret) in [
            ("the admin pass is Xy7kQ2vP9zLm", "Xy7kQ2vP9zLm"),
            ("the deploy key is 9fK2mQ7xLp4Wz8Rt", "9fK2mQ7xLp4Wz8Rt"),
            ("redis-cli -a Xy7kQ2vP9zLm ping", "Xy7kQ2vP9zLm"),
            (
                "az login -u ops@example.com -p Xy7kQ2vP9zLm",
                "Xy7kQ2vP9zLm",
            ),
            (
                "the password for the staging db is Tr0ub4dor-Horse-77",
                "Tr0ub4dor-Horse-77",
            ),
            ("mysql -uroot -pXy7kQ2vP9zLm", "Xy7kQ2vP9zLm"),
            ("psql -h db -p Xy7kQ2vP9zLm", "Xy7kQ2vP9zLm"),
            (
                "the signing key was 7f3a9c2e1b8d4f6a0c5e",
                "7f3a9c2e1b8d4f6a0c5e",
            ),
            ("curl -u alice:Xy7kQ2vP9zLm https://x", "Xy7kQ2vP9zLm"),
            ("the admin pass is Xy7kQ2vP9zLm.", "Xy7kQ2vP9zLm"),
        ] {
            let (out, counts) = redact(text, Options::default());
            assert!(!out.contains(secret), "{text:?} became {out:?}");
            assert!(!counts.is_empty(), "{text:?}");
        }
        // What stands after the value stays.
        assert_eq!(
            redact_text("the admin pass is Xy7kQ2vP9zLm.").0,
            "the admin pass is [REDACTED:secret_assignment]."
        );
    }

    /// Issue 56, item 6: the words of those rules in ordinary text, and
    /// values that are names, versions, revisions or placeholders, pass
    /// untouched.
    #[test]
    fn ordinary_text_with_the_same_words_passes() {
        for text in [
            "cargo test -p git-handoff",
            "git log -p HEAD~3",
            r#"{"key":"fix-auth-42","mode":"AUTO"}"#,
            r#"{\"key\":\"fix-auth-42\"}"#,
            "handoff.briefMaxLines",
            "the password is kept in the vault",
            "rotate the deploy key monthly",
            "sort by key",
            "pass the test suite",
            "the key is fix-auth-42",
            "the token is read from $GH_TOKEN",
            "the password is ${DB_PASSWORD}",
            "key = 4b1dXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
            "git push -u origin main",
            "docker run -u 1000:1000 app",
            "ssh -p 2222 deploy@host",
            "mkdir -p build/Release2024",
            "the key is in src/Auth2Flow.rs",
            "the config key is Settings2.json",
            "the brief's key is 'PROJ-123-login'",
            "the token is Release-2024",
            "ls -a ~/projects",
            "the key is config.signingKey",
            "50% done, C:\\Users\\dev\\new, \\d+ matched",
        ] {
            let (out, counts) = redact(text, Options::default());
            assert_eq!(out, text, "{counts:?}");
        }
    }
}
