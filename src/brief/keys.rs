//! Brief keys: validation as a single ref component and derivation from a branch.

/// The key used on a detached HEAD.
pub const DETACHED_KEY: &str = "HANDOFF";

/// The longest key, in characters. Branch names are cut to this length.
pub const MAX_KEY_CHARS: usize = 80;

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

/// Derive the key of a branch: `/` becomes `-`, cut to 80 characters, and
/// trailing characters a ref component may not end with are dropped.
/// Returns `None` when nothing valid remains.
pub fn from_branch(branch: &str) -> Option<String> {
    let mut key: String = branch
        .chars()
        .map(|c| if c == '/' { '-' } else { c })
        .take(MAX_KEY_CHARS)
        .collect();
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
