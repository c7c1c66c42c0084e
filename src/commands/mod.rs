//! One module per subcommand, each with its `Args` and its `run`.

pub mod drop;
pub mod list;
pub mod schema;
pub mod show;
pub mod validate;
pub mod write;

use std::io::Read;

use anyhow::{Context, Result, anyhow};

use crate::brief::MAX_BRIEF_BYTES;
use crate::keys;

/// Read a brief's bytes from FILE, or from stdin for `-`, refusing more
/// than [`MAX_BRIEF_BYTES`] without reading it all.
pub fn read_input(source: &str) -> Result<Vec<u8>> {
    let mut data = Vec::new();
    let limit = MAX_BRIEF_BYTES as u64 + 1;
    if source == "-" {
        std::io::stdin()
            .lock()
            .take(limit)
            .read_to_end(&mut data)
            .context("cannot read the brief from stdin")?;
    } else {
        let file =
            std::fs::File::open(source).with_context(|| format!("cannot read '{source}'"))?;
        if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
            return Err(anyhow!(
                "'{source}' is a directory; give a brief file or - for stdin"
            ));
        }
        file.take(limit)
            .read_to_end(&mut data)
            .with_context(|| format!("cannot read '{source}'"))?;
    }
    Ok(data)
}

/// Validate a key given on the command line, with a hint.
pub fn checked_key(key: &str) -> Result<String> {
    keys::validate(key)
        .map_err(|e| anyhow!("{e}; keys are single ref components like 'feat-jwt'"))?;
    Ok(key.to_string())
}

/// The error for a key with no brief.
pub fn no_brief(key: &str) -> anyhow::Error {
    anyhow!("no brief for key '{key}'; `git handoff list` shows the keys")
}
