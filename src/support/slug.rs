//! Slugs for file names: lowercase kebab case, letters and digits only,
//! bounded length — never a path separator, never `.` or `..`.

/// The longest slug, in characters.
pub const MAX_SLUG_CHARS: usize = 48;

/// Turn free text into a slug: letters and digits (any script) lowercased,
/// every run of anything else one `-`, no leading or trailing `-`, cut to
/// [`MAX_SLUG_CHARS`] (at a `-` when one is near). Empty when the text has
/// no letter or digit.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let mut cut: String = out.chars().take(MAX_SLUG_CHARS).collect();
    if out.chars().count() > MAX_SLUG_CHARS
        && let Some(i) = cut.rfind('-')
        && cut[..i].chars().count() >= MAX_SLUG_CHARS / 2
    {
        cut.truncate(i);
    }
    cut.trim_matches('-').to_string()
}

/// Whether `s` could be a slug: non-empty, letters, digits and single `-`
/// between them.
pub fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && !s.ends_with('-')
        && !s.contains("--")
        && s.chars().all(|c| c == '-' || c.is_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_kebab_and_safe() {
        assert_eq!(slug("Fix the flaky test!"), "fix-the-flaky-test");
        assert_eq!(slug("../../etc/passwd"), "etc-passwd");
        assert_eq!(slug("a\\b/c\0d"), "a-b-c-d");
        assert_eq!(slug("  Ünïcode Straße "), "ünïcode-straße");
        assert_eq!(slug("..."), "");
        assert_eq!(slug(""), "");
        let long = slug(&"word ".repeat(40));
        assert!(long.chars().count() <= MAX_SLUG_CHARS, "{long}");
        assert!(is_slug(&long));
        assert!(!is_slug("a/b") && !is_slug("..") && !is_slug("-a") && !is_slug(""));
    }
}
