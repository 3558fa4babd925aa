//! The clock every timestamp of Bauxite is taken on, and the CPU-time clock its
//! benchmarks report.

/// Reads `clock`; every clock id passed here exists on every Linux.
fn read(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    #[allow(unsafe_code)]
    // SAFETY: `ts` is a valid, writable timespec, and `clock` is one of the ids below.
    unsafe {
        libc::clock_gettime(clock, &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The current `CLOCK_MONOTONIC` time in nanoseconds: the clock `bpf_ktime_get_ns`
/// reads in the kernel programs, and one clock shared by every network namespace of
/// a host, so a sender's and a receiver's stamps compare directly.
pub fn monotonic_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}

/// The current `CLOCK_REALTIME` time in nanoseconds: only for converting stamps the
/// kernel takes on it (see `rx_time`) or that the wire says in wall-clock time (ICMP
/// timestamps); Bauxite's own timestamps are monotonic.
pub fn realtime_ns() -> u64 {
    read(libc::CLOCK_REALTIME)
}

/// CPU time used so far by every thread of this process, in nanoseconds
/// (`CLOCK_PROCESS_CPUTIME_ID`). Benchmarks report it beside wall time because it
/// holds on a loaded machine, where other processes stretch the wall clock but not
/// the work done.
pub fn process_cpu_ns() -> u64 {
    read(libc::CLOCK_PROCESS_CPUTIME_ID)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_never_goes_back() {
        let a = monotonic_ns();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = monotonic_ns();
        assert!(b >= a + 2_000_000, "{a} then {b}");
    }

    #[test]
    fn process_cpu_time_counts_work_and_not_sleep() {
        let a = process_cpu_ns();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let slept = process_cpu_ns() - a;
        // Sleeping costs microseconds of CPU; 50 ms of sleep must not show as 25 ms.
        assert!(slept < 25_000_000, "sleeping 50 ms used {slept} ns of CPU");
        // Spinning does count: any CPU at all while spinning for 20 ms of wall
        // time (however loaded the machine, the spin runs for some of it).
        let (b, start) = (process_cpu_ns(), monotonic_ns());
        while monotonic_ns() - start < 20_000_000 {
            std::hint::spin_loop();
        }
        assert!(process_cpu_ns() > b, "20 ms of spinning used no CPU time");
    }
}
