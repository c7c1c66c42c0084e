//! Test-only crash injection points.

/// Test-only crash injection: when `GIT_HANDOFF_FAILPOINT` names this
/// point, say so on stderr and stop here (sleep), so that a test can kill
/// the process at exactly this stage. Costs one environment lookup.
///
/// With `GIT_HANDOFF_FAILPOINT_RESUME` naming a file, it waits there until
/// that file exists instead, and goes on: a test can act while the
/// command stands at this stage (another clone pushing between this
/// one's fetch and its push).
pub fn reach(name: &str) {
    if std::env::var_os("GIT_HANDOFF_FAILPOINT").is_some_and(|v| v == name) {
        eprintln!("failpoint: {name}");
        let resume = std::env::var_os("GIT_HANDOFF_FAILPOINT_RESUME");
        for _ in 0..12_000 {
            if resume
                .as_ref()
                .is_some_and(|file| std::path::Path::new(file).exists())
            {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Test-only crash injection: when `GIT_HANDOFF_FAILPOINT` names this
/// point, panic here (for code that must survive its own crash).
pub fn crash(name: &str) {
    if std::env::var_os("GIT_HANDOFF_FAILPOINT").is_some_and(|v| v == name) {
        panic!("failpoint: {name}");
    }
}
