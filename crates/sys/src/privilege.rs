//! Root checks, for commands and for tests that need namespaces or eBPF.

/// Whether this process runs as root (effective uid 0).
pub fn is_root() -> bool {
    #[allow(unsafe_code)]
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe {
        libc::geteuid() == 0
    }
}

/// For tests that need root: true when they can run. Without root they are skipped
/// with a message, except under `CI=true`, where a skip would hide a failure, so the
/// test fails instead.
pub fn root_or_skip(test: &str) -> bool {
    if is_root() {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{test} needs root, and CI=true: CI runs as root, so this is a broken CI setup, not a skip");
    }
    eprintln!("skipping {test}: it needs root (network namespaces, eBPF); run the tests as root to include it");
    false
}
