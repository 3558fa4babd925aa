//! One reader of `/proc/PID/stat` (proc(5)), for the daemon's liveness checks, the
//! bridge's CPU figures and the evaluation's scheduling check.

use std::time::Duration;

/// The fields of one process's `/proc/PID/stat`, read at one instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcStat {
    /// The fields after the parenthesised command name, from proc(5)'s 3rd (`state`) on:
    /// the command may hold spaces and parentheses, so it is cut at the last `)`.
    fields: Vec<String>,
}

/// Clock ticks per second of `/proc`'s times (`USER_HZ`): 100 on every architecture
/// Linux runs Bauxite on.
const USER_HZ: u64 = 100;

impl ProcStat {
    /// Reads process `pid`'s fields; `None` once it has gone (or never was).
    pub fn read(pid: u32) -> Option<Self> {
        Self::parse(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }

    fn parse(stat: &str) -> Option<Self> {
        let fields = stat.rsplit_once(')')?.1.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        // Field 41 (policy) is the last one read: a line short of it is not a stat line.
        (fields.len() > Self::index(41)).then_some(Self { fields })
    }

    /// The position in `fields` of proc(5)'s field number `n` (1-based, `pid` first).
    const fn index(n: usize) -> usize {
        n - 3
    }

    fn number(&self, n: usize) -> u64 {
        // `parse` checked the length; every field from the 4th on is a number.
        self.fields[Self::index(n)].parse().unwrap_or(0)
    }

    /// The state letter: `R` running, `S` sleeping, `T` stopped, `t` traced, `Z` zombie, …
    pub fn state(&self) -> char {
        self.fields[0].chars().next().unwrap_or('?')
    }

    /// Whether the process has exited (a zombie not yet reaped by its parent, or dead).
    pub fn exited(&self) -> bool {
        matches!(self.state(), 'Z' | 'X')
    }

    /// Whether the process is stopped (SIGSTOP) or stopped by a tracer.
    pub fn stopped(&self) -> bool {
        matches!(self.state(), 'T' | 't')
    }

    /// User plus system CPU time so far (`utime` + `stime`, fields 14 and 15).
    pub fn cpu_time(&self) -> Duration {
        Duration::from_millis((self.number(14) + self.number(15)) * 1000 / USER_HZ)
    }

    /// When the process started, in clock ticks after boot (`starttime`, field 22): with
    /// the pid, it names one process even after the pid is reused.
    pub fn start_ticks(&self) -> u64 {
        self.number(22)
    }

    /// The scheduling policy (`policy`, field 41): 0 `SCHED_OTHER`, 1 `SCHED_FIFO`, 2
    /// `SCHED_RR`, …
    pub fn policy(&self) -> u32 {
        self.number(41) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stat line of a process named `a) b` (the kernel does not escape the name).
    fn line(state: char, utime: u64, stime: u64, start: u64, policy: u32) -> String {
        let mut fields: Vec<String> = (3..=52).map(|n| (n * 1000).to_string()).collect();
        fields[0] = state.to_string();
        fields[ProcStat::index(14)] = utime.to_string();
        fields[ProcStat::index(15)] = stime.to_string();
        fields[ProcStat::index(22)] = start.to_string();
        fields[ProcStat::index(41)] = policy.to_string();
        format!("4242 (a) b) {}\n", fields.join(" "))
    }

    #[test]
    fn fields_are_counted_after_the_last_parenthesis() {
        let stat = ProcStat::parse(&line('S', 150, 50, 987_654, 1)).unwrap();
        assert_eq!(stat.state(), 'S');
        assert_eq!(stat.cpu_time(), Duration::from_secs(2));
        assert_eq!(stat.start_ticks(), 987_654);
        assert_eq!(stat.policy(), 1);
        assert!(!stat.exited() && !stat.stopped());
        assert!(ProcStat::parse(&line('Z', 0, 0, 1, 0)).unwrap().exited());
        assert!(ProcStat::parse(&line('t', 0, 0, 1, 0)).unwrap().stopped());
    }

    #[test]
    fn a_truncated_line_is_refused() {
        let full = line('R', 1, 1, 1, 2);
        // The pid, the command's two words, then fields 3 to 40: the policy (41) is missing.
        let up_to = |n: usize| full.split(' ').take(3 + n - 2).collect::<Vec<_>>().join(" ");
        assert_eq!(ProcStat::parse(&up_to(40)), None);
        assert_eq!(ProcStat::parse(&up_to(41)).unwrap().policy(), 2);
        assert_eq!(ProcStat::parse("4242 no parenthesis R 1 2 3"), None);
    }

    #[test]
    fn a_spinning_child_is_read_running_and_using_cpu() {
        // A child, so that its CPU does not count in this process's (other tests time it).
        let child = std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap();
        let guard = crate::ChildGuard::new(child, Duration::from_secs(5));
        let first = ProcStat::read(guard.id()).unwrap();
        assert!(!first.exited() && !first.stopped(), "{}", first.state());
        assert_eq!(first.policy(), 0, "spawned under SCHED_OTHER");
        // 100 ms of CPU (ticks of 10 ms) within a minute: a loaded 2-core machine gives a
        // spinning process far more than that.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let mut now = first.clone();
        while now.cpu_time() < Duration::from_millis(100) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            now = ProcStat::read(guard.id()).unwrap();
        }
        assert!(now.cpu_time() >= Duration::from_millis(100), "{now:?}");
        assert_eq!(now.start_ticks(), first.start_ticks(), "the same process");
        assert_eq!(ProcStat::read(u32::MAX), None, "no such process");
    }
}
