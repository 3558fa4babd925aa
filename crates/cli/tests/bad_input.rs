//! Hostile and mistaken input (issue 10 #3, #9, #10): refused early, clearly, with
//! nothing left behind and nothing hanging.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

use bauxite_sys::{Netns, root_or_skip, unique_name};
use common::output_within;

/// How long a refusal may take. The checks are a `stat` and a parse; what they
/// guard against (a FIFO with no writer, `/dev/zero`) blocks or grows forever, so a
/// bound ten times any plausible delay on a loaded 2-core machine tells the two apart
/// without ever failing on a slow run.
const REFUSAL_BOUND: Duration = Duration::from_secs(10);

fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("bauxite-bad-input-{name}-{}", std::process::id()))
}

/// Runs bauxite; kills it and fails the test if it does not end within [`REFUSAL_BOUND`].
fn bauxite(args: &[&str]) -> Output {
    output_within(Command::new(env!("CARGO_BIN_EXE_bauxite")).args(args), REFUSAL_BOUND)
}

/// The stderr of a run that must fail.
fn failed(args: &[&str], out: Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "bauxite {args:?} succeeded: {stderr}");
    stderr
}

fn refused(args: &[&str]) -> String {
    failed(args, bauxite(args))
}

/// A network namespace of the test's own (deleted when dropped), so that `up --iface lo`
/// could only ever shape that namespace's loopback, never the host's, should validation
/// regress. `None` (test skipped) without root.
fn scratch_netns(test: &str) -> Option<Netns> {
    root_or_skip(test).then(|| Netns::create(&unique_name("bad-input")).expect("create a network namespace"))
}

/// [`refused`] for `bauxite up --iface lo ARGS` inside `ns`.
fn up_refused(ns: &Netns, args: &[&str]) -> String {
    let args = [&["up", "--iface", "lo"], args].concat();
    failed(&args, output_within(&mut ns.command(env!("CARGO_BIN_EXE_bauxite"), &args), REFUSAL_BOUND))
}

/// Review B13: a child writing more than a pipe holds is read while it runs, not
/// mistaken for a hang.
#[test]
fn a_child_writing_more_than_a_pipe_holds_is_not_a_hang() {
    let out = output_within(Command::new("sh").args(["-c", "head -c 200000 /dev/zero >&2; echo done"]), REFUSAL_BOUND);
    assert!(out.status.success());
    assert_eq!((out.stderr.len(), out.stdout.as_slice()), (200_000, &b"done\n"[..]));
}

/// Removes a path when dropped, so a failed assertion leaves nothing behind.
struct Remove(PathBuf);

impl Drop for Remove {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Issue 10 #9: `up --config /dev/zero` grew to 3.9 GB of memory.
#[test]
fn up_refuses_a_device_as_config() {
    let Some(ns) = scratch_netns("up_refuses_a_device_as_config") else { return };
    let stderr = up_refused(&ns, &["--config", "/dev/zero"]);
    assert!(stderr.contains("/dev/zero: is a device, not a regular file"), "{stderr}");
}

/// Issue 10 #9: `up --config FIFO` blocked forever in `open`, waiting for a writer.
#[test]
fn up_refuses_a_fifo_as_config() {
    let Some(ns) = scratch_netns("up_refuses_a_fifo_as_config") else { return };
    let fifo = scratch("fifo");
    let _cleanup = Remove(fifo.clone());
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let stderr = up_refused(&ns, &["--config", fifo.to_str().unwrap()]);
    assert!(stderr.contains("is a FIFO, not a regular file"), "{stderr}");
}

/// Issue 10 #3: `rate: 1bit` passed validation and failed inside `tc -batch` with no
/// file, line or key.
#[test]
fn up_names_the_file_line_and_key_of_an_out_of_range_number() {
    let Some(ns) = scratch_netns("up_names_the_file_line_and_key_of_an_out_of_range_number") else { return };
    let config = scratch("profile.yaml");
    let _cleanup = Remove(config.clone());
    let text = "name: t\nrate: 2mbit\nlanes:\n  - {name: a, share: 0.3}\n  - {name: b, share: 0.5, queue_limit: 4294967295}\nrules: []\ndefault_lane: a\n";
    std::fs::write(&config, text).unwrap();
    let stderr = up_refused(&ns, &["--config", config.to_str().unwrap()]);
    let expected = format!("{}:5: `lanes[1].queue_limit`: 4294967295 is not between 1 and 10240", config.display());
    assert!(stderr.contains(&expected), "{stderr}");

    std::fs::write(&config, text.replace("rate: 2mbit", "rate: 1bit").replace("4294967295", "64")).unwrap();
    let stderr = up_refused(&ns, &["--config", config.to_str().unwrap()]);
    assert!(stderr.contains(&format!("{}:2: `rate`: 1bit is not between", config.display())), "{stderr}");

    let stderr = up_refused(&ns, &["--rate", "1bit"]);
    assert!(stderr.contains("--rate: rate: 1bit is not between 64kbit and 100gbit"), "{stderr}");
    let stderr = up_refused(&ns, &["--ingress", "auto"]);
    assert!(stderr.contains("--ingress: auto_rate.reflector: `--ingress auto` needs a reflector"), "{stderr}");
    let stderr = up_refused(&ns, &["--ingress", "1bit"]);
    assert!(stderr.contains("--ingress: ingress.rate: 1bit is not between 64kbit and 100gbit"), "{stderr}");
}

/// Issue 10 #10: `--out /sys/kernel` failed only after the whole study had run, and
/// printed its OS error twice.
#[test]
fn sim_checks_out_before_running_and_prints_the_cause_once() {
    for command in [
        &["sim", "study", "--family", "compare", "--out", "/sys/kernel"][..],
        &["sim", "run", "--scheduler", "fifo", "--out", "/sys/kernel"][..],
    ] {
        let stderr = refused(command);
        assert!(stderr.contains("--out: cannot write results to /sys/kernel: "), "{stderr}");
        assert_eq!(stderr.matches("os error").count(), 1, "{stderr}");
        assert!(!stderr.contains("runs"), "nothing ran: {stderr}");
    }
}

/// Review B12: a refused (non-root) demo left an empty `--out` behind, having created
/// it before the root check.
#[test]
fn a_demo_refused_for_want_of_root_creates_no_out_directory() {
    use std::os::unix::process::CommandExt;
    if !root_or_skip("a_demo_refused_for_want_of_root_creates_no_out_directory") {
        return;
    }
    let out = Remove(scratch("demo-non-root"));
    let args = ["demo", "--trials", "1", "--duration", "8", "--out", out.0.to_str().unwrap()];
    // As `nobody`, who may create directories in the temporary directory.
    let mut command = Command::new(env!("CARGO_BIN_EXE_bauxite"));
    command.args(args).uid(65534).gid(65534);
    let stderr = failed(&args, output_within(&mut command, REFUSAL_BOUND));
    assert!(stderr.contains("run it as root"), "{stderr}");
    assert!(!out.0.exists(), "a refused demo creates no --out");
}

#[test]
fn demo_checks_out_before_anything_else() {
    let stderr = refused(&["demo", "--trials", "1", "--duration", "8", "--out", "/sys/kernel"]);
    assert!(stderr.contains("--out: cannot write results to /sys/kernel: "), "{stderr}");
    assert_eq!(stderr.matches("os error").count(), 1, "{stderr}");
}

/// Issue 10 #9: `--jobs 100000` started over 3 500 threads; `--seeds 1000000` grew to
/// 2.1 GB in 5 s. Both are refused before anything runs or is written.
#[test]
fn sim_study_bounds_jobs_and_seeds() {
    let out = scratch("study");
    let _cleanup = Remove(out.clone());
    let out_arg = out.to_str().unwrap();
    let stderr = refused(&["sim", "study", "--family", "compare", "--jobs", "100000", "--out", out_arg]);
    assert!(stderr.contains("--jobs: 100000 is more than") && stderr.contains("per core"), "{stderr}");
    let stderr = refused(&["sim", "study", "--family", "compare", "--seeds", "1000000", "--out", out_arg]);
    assert!(stderr.contains("--seeds: 1000000 is more than 1000"), "{stderr}");
    let stderr = refused(&["sim", "study", "--seeds", "1000", "--out", out_arg]);
    assert!(stderr.contains("flow records"), "{stderr}");
    assert!(!out.exists(), "a refused study writes nothing");
}

/// The seed's future work's options: a bad value names its flag and writes nothing.
#[test]
fn sim_run_refuses_bad_future_work_options() {
    let out = scratch("future-work");
    let _cleanup = Remove(out.clone());
    let out_arg = out.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["sim", "run", "--scheduler", "fifo", "--duration", "2", "--out", out_arg];
        args.extend_from_slice(extra);
        refused(&args)
    };
    let stderr = run(&["--bg-burst-pareto", "1.5"]);
    assert!(stderr.contains("--bg-burst-pareto: needs --bg-burst"), "{stderr}");
    let stderr = run(&["--bg-burst", "10", "--bg-burst-pareto", "0.9"]);
    assert!(stderr.contains("--bg-burst-pareto: a Pareto shape of more than 1"), "{stderr}");
    let stderr = run(&["--link", "rate=10mbit,los=1%"]);
    assert!(stderr.contains("--link") && stderr.contains("unknown key `los`"), "{stderr}");
    let stderr = run(&["--link", "trace=/nonexistent/trace.up"]);
    assert!(stderr.contains("--link") && stderr.contains("/nonexistent/trace.up"), "{stderr}");
    let stderr = run(&["--deadline", "background=5"]);
    assert!(stderr.contains("--deadline") && stderr.contains("background has no deadline"), "{stderr}");
    let stderr = run(&["--tcp-flows", "9000"]);
    assert!(stderr.contains("--tcp-flows: at most 8000"), "{stderr}");
    assert!(!out.exists(), "a refused run writes nothing");
}

/// Issue 10 #3/#10: a demo `--rate` the shaper cannot take is refused before phase 1
/// runs, not by `bauxite up` when phase 2 starts.
#[test]
fn demo_checks_its_rate_before_anything_runs() {
    let out = scratch("demo");
    let _cleanup = Remove(out.clone());
    let stderr = refused(&["demo", "--trials", "1", "--rate", "1bit", "--out", out.to_str().unwrap()]);
    assert!(stderr.contains("--rate: rate: 1bit is not between 64kbit and 100gbit"), "{stderr}");
    assert!(!out.exists(), "nothing written");
    let stderr = refused(&["demo", "--direction", "sideways", "--out", out.to_str().unwrap()]);
    assert!(stderr.contains("`sideways` is not a direction: up, down or both"), "{stderr}");
    assert!(!out.exists(), "nothing written");
}

#[test]
fn reflect_refuses_a_bad_key_file_or_peer_network_before_listening() {
    let short = Remove(scratch("short-key"));
    std::fs::write(&short.0, "too short\n").unwrap();
    let err = refused(&["reflect", "--port", "0", "--key-file", short.0.to_str().unwrap()]);
    assert!(err.contains(short.0.to_str().unwrap()) && err.contains("at least 16"), "{err}");
    let err = refused(&["reflect", "--port", "0", "--key-file", "/dev/zero"]);
    assert!(err.contains("/dev/zero") && err.contains("not a regular file"), "{err}");
    let err = refused(&["reflect", "--port", "0", "--allow", "10.0.0.0/40"]);
    assert!(err.contains("10.0.0.0/40") && err.contains("0 to 32"), "{err}");
}

#[test]
fn up_names_the_attach_modes_it_takes() {
    let err = refused(&["up", "--iface", "lo", "--attach", "ingress"]);
    assert!(err.contains("`ingress` is not an attach mode: use auto, tcx or clsact"), "{err}");
}
