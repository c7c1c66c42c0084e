//! Refusals: the errors that are the check's answer "no" (exit 1) rather
//! than a failure (exit 128). Lower layers raise them with [`crate::refuse!`]
//! or [`crate::refusal!`]; `cli::exit` maps errors to exit codes.

/// An error that is the check's answer "no" rather than a failure: the
/// input is invalid, a key has no brief, strict lint refused, a policy
/// (secrets, paths that would escape) said no.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

/// A [`Refused`] error with this message.
pub fn refused(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Refused(message.into()))
}

/// Return early with a [`Refused`] error, formatted as `format!` does (the
/// refusal's `bail!`).
#[macro_export]
macro_rules! refuse {
    ($($arg:tt)*) => {
        return Err($crate::refused(format!($($arg)*)))
    };
}

/// A [`Refused`] error, formatted as `format!` does (the refusal's
/// `anyhow!`).
#[macro_export]
macro_rules! refusal {
    ($($arg:tt)*) => {
        $crate::refused(format!($($arg)*))
    };
}
