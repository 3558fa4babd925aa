//! A child process that does not outlive its owner.

use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// A child process stopped when dropped, however its owner ends (an early return, a
/// panic): SIGTERM first, so a daemon removes what it attached; one that has not
/// exited after the grace period is killed (SIGKILL).
#[derive(Debug)]
pub struct ChildGuard {
    child: Child,
    grace: Duration,
}

impl ChildGuard {
    /// Guards `child`, giving it `grace` to exit after SIGTERM.
    pub fn new(child: Child, grace: Duration) -> Self {
        Self { child, grace }
    }

    /// The child's pid.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The child's exit status if it has exited, without waiting.
    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// Stops the child now, as dropping the guard would (SIGTERM, then SIGKILL once
    /// the grace is over), and returns how it exited.
    pub fn stop(&mut self) -> std::io::Result<ExitStatus> {
        // Exited (and reaped) already: its pid may belong to someone else now.
        if let Some(status) = self.child.try_wait()? {
            return Ok(status);
        }
        #[allow(unsafe_code)]
        // SAFETY: kill(2) on our own child, which has not been reaped, so the pid is still its.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let deadline = Instant::now() + self.grace;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        tracing::warn!(pid = self.child.id(), "a child process ignored SIGTERM for {:?}; killing it", self.grace);
        self.child.kill()?;
        self.child.wait()
    }

    /// Kills the child at once (SIGKILL), as a crash would: it cleans nothing up.
    pub fn kill(&mut self) -> std::io::Result<()> {
        self.child.kill()
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            tracing::warn!(pid = self.child.id(), "stopping a child process: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn a_child_that_obeys_sigterm_is_stopped_within_the_grace() {
        let guard = ChildGuard::new(Command::new("sleep").arg("30").spawn().unwrap(), Duration::from_secs(30));
        let pid = guard.id();
        let started = Instant::now();
        drop(guard);
        // sleep dies on SIGTERM at once; 30 s is the grace, so anything under it means SIGTERM did it.
        assert!(started.elapsed() < Duration::from_secs(30));
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "pid {pid} still exists");
    }

    #[test]
    fn a_child_that_ignores_sigterm_is_killed_after_the_grace() {
        // An ignored signal stays ignored across exec: the child itself is `sleep`.
        let child = Command::new("sh")
            .args(["-c", "trap '' TERM; echo ready; exec sleep 30"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut guard = ChildGuard::new(child, Duration::from_millis(200));
        // Wait until the trap is set, so SIGTERM is really ignored.
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(guard.child.stdout.take().unwrap()), &mut line)
            .unwrap();
        let pid = guard.id();
        let started = Instant::now();
        drop(guard);
        assert!(started.elapsed() >= Duration::from_millis(200), "killed before the grace ran out");
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "pid {pid} still exists");
    }
}
