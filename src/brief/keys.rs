//! Brief keys: validation as a single ref component and derivation from a branch.

/// The key used on a detached HEAD.
pub const DETACHED_KEY: &str = "HANDOFF";

/// The longest key, in characters. Branch names are cut to this length.
pub const MAX_KEY_CHARS: usize = 80;

/// The longest key, in bytes of UTF-8. A key is one path component of
/// every file git and git-handoff make for it (`refs/handoffs/<key>`,
/// its `<key>.lock`, its reflog, `export`'s `<key>.json`), and file
/// systems cap a name at 255 bytes: 80 characters of four bytes each
/// would not fit.
pub const MAX_KEY_BYTES: usize = 250;

/// The longest suffix git or git-handoff adds to a key to name a file
/// (`.lock`, `.json`).
const LONGEST_SUFFIX: &str = ".lock";

/// The longest file name most file systems accept, in bytes (NAME_MAX).
const NAME_MAX: usize = 255;

const _: () = assert!(MAX_KEY_BYTES + LONGEST_SUFFIX.len() <= NAME_MAX);

/// Why a string cannot be a key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid key '{key}': {reason}")]
pub struct InvalidKey {
    /// The refused key, with control characters escaped.
    pub key: String,
    /// The rule it breaks.
    pub reason: &'static str,
}

/// Check that `key` is a valid single ref component (the rules of
/// `git check-ref-format`, plus a length cap), so that `refs/handoffs/<key>`
/// is a valid reference name.
pub fn validate(key: &str) -> Result<(), InvalidKey> {
    let fail = |reason| {
        Err(InvalidKey {
            key: key.escape_debug().to_string(),
            reason,
        })
    };
    if key.is_empty() {
        return fail("a key cannot be empty");
    }
    if key.chars().count() > MAX_KEY_CHARS {
        return fail("a key is at most 80 characters");
    }
    if key.len() > MAX_KEY_BYTES {
        return fail(
            "a key is at most 250 bytes (80 characters, fewer when they take several bytes each)",
        );
    }
    if key.contains('/') {
        return fail("a key is one ref component and cannot contain '/'");
    }
    if key.contains("..") {
        return fail("a key cannot contain '..'");
    }
    if key.contains("@{") {
        return fail("a key cannot contain '@{'");
    }
    if key == "@" {
        return fail("a key cannot be '@'");
    }
    if key.chars().any(|c| c.is_control()) {
        return fail("a key cannot contain control characters");
    }
    if key
        .chars()
        .any(|c| matches!(c, ' ' | '~' | '^' | ':' | '?' | '*' | '[' | '\\'))
    {
        return fail("a key cannot contain spaces or any of ~ ^ : ? * [ \\");
    }
    if key.starts_with('-') || key.starts_with('.') {
        return fail("a key cannot start with '-' or '.'");
    }
    if key.ends_with('.') {
        return fail("a key cannot end with '.'");
    }
    if key.ends_with(".lock") {
        return fail("a key cannot end with '.lock'");
    }
    Ok(())
}

/// Derive the key of a branch: `/` becomes `-`, cut to 80 characters (and
/// 250 bytes, at a character's end), and
/// trailing characters a ref component may not end with are dropped.
/// Returns `None` when nothing valid remains.
pub fn from_branch(branch: &str) -> Option<String> {
    let mut key = String::new();
    for c in branch
        .chars()
        .map(|c| if c == '/' { '-' } else { c })
        .take(MAX_KEY_CHARS)
    {
        if key.len() + c.len_utf8() > MAX_KEY_BYTES {
            break;
        }
        key.push(c);
    }
    loop {
        if let Some(stripped) = key.strip_suffix(".lock") {
            key = stripped.to_string();
        } else if key.ends_with('.') {
            key.pop();
        } else {
            break;
        }
    }
    validate(&key).ok().map(|()| key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_slashes_become_dashes_and_long_names_are_cut() {
        assert_eq!(
            from_branch("feat/jwt/expiry").as_deref(),
            Some("feat-jwt-expiry")
        );
        let long = "a".repeat(100);
        assert_eq!(from_branch(&long).unwrap().len(), 80);
        let dotted = format!("{}.lock", "b".repeat(75));
        assert_eq!(
            from_branch(&dotted).as_deref(),
            Some("b".repeat(75).as_str())
        );
        assert_eq!(
            from_branch(&format!("{}.x", "c".repeat(79))).unwrap(),
            "c".repeat(79)
        );
    }

    /// Issue 30, item 4: 70 emoji are 70 characters but 280 bytes, a file
    /// name no file system takes (with `.lock` after it).
    #[test]
    fn keys_are_measured_in_bytes_too() {
        let emoji = "\u{1F600}".repeat(70);
        let err = validate(&emoji).unwrap_err();
        assert!(err.reason.contains("250 bytes"), "{err}");
        assert!(validate(&"\u{1F600}".repeat(62)).is_ok());
        assert!(validate(&"é".repeat(80)).is_ok(), "160 bytes");
        let key = from_branch(&format!("feat/{}", "\u{1F600}".repeat(70))).unwrap();
        assert!(
            key.len() <= MAX_KEY_BYTES && validate(&key).is_ok(),
            "{key}"
        );
        assert_eq!(key.chars().count(), 5 + 61);
    }

    #[test]
    fn ref_format_rules_are_enforced() {
        for bad in [
            "", "..", "a..b", "a/b", "-x", ".x", "x.lock", "x.", "@", "a@{b", "a~1", "a^", "a:b",
            "a?", "a*", "a[", "a\\b", "a b", "a\tb", "a\u{7f}",
        ] {
            assert!(validate(bad).is_err(), "{bad:?} should be refused");
        }
        assert!(validate(&"k".repeat(81)).is_err());
        for good in [
            "feat-jwt",
            "HANDOFF",
            "v1.2",
            "a@b",
            "über",
            "x_y",
            &"k".repeat(80),
        ] {
            assert!(validate(good).is_ok(), "{good:?} should be accepted");
        }
    }
}
