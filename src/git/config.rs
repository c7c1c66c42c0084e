//! One-shot configuration from the command line: `git -c name=value
//! handoff …` hands its settings down in `GIT_CONFIG_PARAMETERS`, which gix
//! does not read (it reads `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_<n>`, the
//! other half of git's `--config-env`). They are applied over every other
//! source, as git applies them.

use anyhow::{Result, anyhow};

/// The variable git passes `-c` settings in.
const PARAMETERS: &str = "GIT_CONFIG_PARAMETERS";

/// Apply `GIT_CONFIG_PARAMETERS` to `repo`'s configuration. A value git
/// would refuse is refused with git's words.
pub fn apply_overrides(repo: &mut gix::Repository) -> Result<()> {
    let Ok(raw) = std::env::var(PARAMETERS) else {
        return Ok(());
    };
    let pairs = parse(&raw).ok_or_else(|| {
        anyhow!("bogus format in {PARAMETERS}; unset it or pass settings with `git -c name=value`")
    })?;
    if pairs.is_empty() {
        return Ok(());
    }
    let values: Vec<String> = pairs
        .into_iter()
        .map(|(key, value)| match value {
            Some(value) => format!("{key}={value}"),
            None => key,
        })
        .collect();
    let mut config = repo.config_snapshot_mut();
    config
        .append_config(values.iter().map(String::as_str), gix::config::Source::Cli)
        .map_err(|e| anyhow!("bogus config parameter in {PARAMETERS}: {e}"))?;
    config
        .commit()
        .map_err(|e| anyhow!("bogus config parameter in {PARAMETERS}: {e}"))?;
    Ok(())
}

/// The settings in a `GIT_CONFIG_PARAMETERS` value, in order: git's new
/// form `'name'='value'` (`'name'=` for a name without a value, a boolean
/// true) and its old form `'name=value'`, each single-quoted as git's
/// `sq_quote` writes (a quote inside as `'\''`), separated by spaces.
/// `None` when the value is not in that form.
pub fn parse(raw: &str) -> Option<Vec<(String, Option<String>)>> {
    let mut out = Vec::new();
    let mut rest = raw.trim_start();
    while !rest.is_empty() {
        let (first, after) = dequote(rest)?;
        rest = after;
        if let Some(after_eq) = rest.strip_prefix('=') {
            if after_eq.is_empty() || after_eq.starts_with(char::is_whitespace) {
                out.push((first, None));
                rest = after_eq;
            } else {
                let (value, after) = dequote(after_eq)?;
                out.push((first, Some(value)));
                rest = after;
            }
        } else {
            match first.split_once('=') {
                Some((key, value)) => out.push((key.to_string(), Some(value.to_string()))),
                None => out.push((first, None)),
            }
        }
        if !rest.is_empty() && !rest.starts_with(char::is_whitespace) && !rest.starts_with('=') {
            return None;
        }
        rest = rest.trim_start();
    }
    Some(out)
}

/// One single-quoted word at the start of `s` (git's `sq_dequote_step`):
/// its text and what follows it.
fn dequote(s: &str) -> Option<(String, &str)> {
    let mut chars = s.char_indices();
    if chars.next()?.1 != '\'' {
        return None;
    }
    let mut out = String::new();
    let bytes = s.as_bytes();
    let mut i = 1;
    loop {
        let end = s[i..].find('\'')? + i;
        out.push_str(&s[i..end]);
        // `'\''` and `'\!'`: a quote or a bang, then the quoting goes on.
        match bytes.get(end + 1..end + 4) {
            Some([b'\\', c @ (b'\'' | b'!'), b'\'']) => {
                out.push(*c as char);
                i = end + 4;
            }
            _ => return Some((out, &s[end + 1..])),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn some(k: &str, v: &str) -> (String, Option<String>) {
        (k.to_string(), Some(v.to_string()))
    }

    #[test]
    fn reads_what_git_writes() {
        // What `git -c handoff.strict=true -c 'a.b=x y' -c "c.d=it's"
        // -c e.f= -c g.h -c Sub.Sect.Name=v` hands down (git 2.47).
        let raw = r#"'handoff.strict'='true' 'a.b'='x y' 'c.d'='it'\''s' 'e.f'='' 'g.h'= 'Sub.Sect.Name'='v'"#;
        assert_eq!(
            parse(raw).unwrap(),
            vec![
                some("handoff.strict", "true"),
                some("a.b", "x y"),
                some("c.d", "it's"),
                some("e.f", ""),
                ("g.h".to_string(), None),
                some("Sub.Sect.Name", "v"),
            ]
        );
        // The old form, as git before 2.31 wrote it.
        assert_eq!(
            parse("'handoff.strict=true' 'x.y'").unwrap(),
            vec![some("handoff.strict", "true"), ("x.y".to_string(), None)]
        );
        assert_eq!(parse("").unwrap(), vec![]);
        assert!(parse("handoff.strict=true").is_none());
        assert!(parse("'unterminated").is_none());
    }
}
