//! Test-only crash injection points.

/// Test-only crash injection: when `GIT_HANDOFF_FAILPOINT` names this
/// point, say so on stderr and stop here (sleep), so that a test can kill
/// the process at exactly this stage. Costs one environment lookup.
pub fn reach(name: &str) {
    if std::env::var_os("GIT_HANDOFF_FAILPOINT").is_some_and(|v| v == name) {
        eprintln!("failpoint: {name}");
        std::thread::sleep(std::time::Duration::from_secs(120));
    }
}

/// Test-only crash injection: when `GIT_HANDOFF_FAILPOINT` names this
/// point, panic here (for code that must survive its own crash).
pub fn crash(name: &str) {
    if std::env::var_os("GIT_HANDOFF_FAILPOINT").is_some_and(|v| v == name) {
        panic!("failpoint: {name}");
    }
}
