//! Exit codes, one meaning each: 0 success, [`NO`] the check's answer is
//! no, 2 a usage error (clap's), [`FATAL`] a fatal error as git's `die()`.

use crate::agent::fork::ForkError;
use crate::brief::keys::InvalidKey;
use crate::store::StoreError;
use crate::store::history::VersionError;
use crate::support::refusal::Refused;
use crate::sync::ResolveError;

/// The check's answer is no: invalid brief or input, compare-and-swap
/// conflict, diverged, refused resume, missing key, strict lint.
pub const NO: u8 = 1;
/// A fatal error, as git's own `die()`: not a repository, I/O (a file that
/// cannot be read, a held lock), corrupt data, network, anything unexpected.
pub const FATAL: u8 = 128;

/// The exit code of an error: [`NO`] when anything in its chain is a
/// refusal — a [`Refused`], a write path's refusal (an invalid brief,
/// invalid threads, strict lint), an invalid key, a version argument that names
/// nothing, an unusable fork file, a resolve with nothing to resolve, a lost
/// compare-and-swap or a key holding a secret — else [`FATAL`].
pub fn code_of(err: &anyhow::Error) -> u8 {
    let no = err.chain().any(|e| {
        e.is::<Refused>()
            || e.is::<InvalidKey>()
            || e.is::<VersionError>()
            || e.is::<ResolveError>()
            || e.is::<crate::write::Refusal>()
            || matches!(
                e.downcast_ref::<ForkError>(),
                Some(f) if !matches!(f, ForkError::TooMany { .. })
            )
            || matches!(
                e.downcast_ref::<StoreError>(),
                Some(StoreError::Conflict(_) | StoreError::SecretKey { .. })
            )
    });
    if no { NO } else { FATAL }
}
