//! The words a user reads after a typed error from a lower layer: the fact
//! the error states, then what to run next (`git handoff …`). Lower layers
//! never name a command; this is where their errors learn to.

use crate::store::history::VersionError;

/// A version argument's error with the command that shows the versions,
/// the keys or the remote's briefs.
pub fn version(err: VersionError) -> anyhow::Error {
    let next = match &err {
        VersionError::NotANumber { .. }
        | VersionError::NoSuchRemote { .. }
        | VersionError::Ambiguous { .. } => return anyhow::Error::new(err),
        VersionError::Unreadable { key, .. } => format!(
            "; use @{{N}} (0 is the newest), a version id from `git handoff log {key}`, or @REMOTE"
        ),
        VersionError::NoCurrent { key } => {
            format!("; `git handoff log {key}` lists its earlier versions")
        }
        VersionError::NoHistory { .. } => "; `git handoff list` shows the keys".to_string(),
        VersionError::OutOfRange { key, count } => format!(
            " (@{{0}} to @{{{}}}); `git handoff log {key}` lists them",
            count - 1
        ),
        VersionError::NoSuchId { key, .. } => {
            format!("; `git handoff log {key}` lists the version ids")
        }
        VersionError::NotFetched { remote, .. } => {
            format!("; run `git handoff fetch {remote}` first")
        }
    };
    anyhow::anyhow!("{err}{next}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_errors_read_as_before() {
        let key = "k".to_string();
        let cases = [
            (
                VersionError::OutOfRange {
                    key: key.clone(),
                    count: 2,
                },
                "'k' has 2 versions (@{0} to @{1}); `git handoff log k` lists them",
            ),
            (
                VersionError::Unreadable {
                    arg: "zz".into(),
                    key: key.clone(),
                },
                "'zz' names no version; use @{N} (0 is the newest), a version id from `git handoff log k`, or @REMOTE",
            ),
            (
                VersionError::NotFetched {
                    key: key.clone(),
                    remote: "origin".into(),
                },
                "no brief 'k' from remote 'origin'; run `git handoff fetch origin` first",
            ),
            (
                VersionError::NotANumber { arg: "@{x}".into() },
                "'@{x}': in @{N}, N is a number (0 is the newest version)",
            ),
        ];
        for (err, want) in cases {
            assert_eq!(version(err).to_string(), want);
        }
    }
}
