//! Hostile and mistaken input (issue 10 #3, #9, #10): refused early, clearly, with
//! nothing left behind and nothing hanging.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

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
    let mut child = Command::new(env!("CARGO_BIN_EXE_bauxite"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bauxite");
    let began = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if began.elapsed() > REFUSAL_BOUND {
            child.kill().expect("kill");
            child.wait().expect("reap");
            panic!("bauxite {args:?} still ran after {REFUSAL_BOUND:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    child.stdout.take().unwrap().read_to_end(&mut stdout).unwrap();
    child.stderr.take().unwrap().read_to_end(&mut stderr).unwrap();
    Output { status, stdout, stderr }
}

fn refused(args: &[&str]) -> String {
    let out = bauxite(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "bauxite {args:?} succeeded: {stderr}");
    stderr
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
    let stderr = refused(&["up", "--iface", "lo", "--config", "/dev/zero"]);
    assert!(stderr.contains("/dev/zero: is a device, not a regular file"), "{stderr}");
}

/// Issue 10 #9: `up --config FIFO` blocked forever in `open`, waiting for a writer.
#[test]
fn up_refuses_a_fifo_as_config() {
    let fifo = scratch("fifo");
    let _cleanup = Remove(fifo.clone());
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let stderr = refused(&["up", "--iface", "lo", "--config", fifo.to_str().unwrap()]);
    assert!(stderr.contains("is a FIFO, not a regular file"), "{stderr}");
}

/// Issue 10 #3: `rate: 1bit` passed validation and failed inside `tc -batch` with no
/// file, line or key.
#[test]
fn up_names_the_file_line_and_key_of_an_out_of_range_number() {
    let config = scratch("profile.yaml");
    let _cleanup = Remove(config.clone());
    let text = "name: t\nrate: 2mbit\nlanes:\n  - {name: a, share: 0.3}\n  - {name: b, share: 0.5, queue_limit: 4294967295}\nrules: []\ndefault_lane: a\n";
    std::fs::write(&config, text).unwrap();
    let stderr = refused(&["up", "--iface", "lo", "--config", config.to_str().unwrap()]);
    let expected = format!("{}:5: `lanes[1].queue_limit`: 4294967295 is not between 1 and 10240", config.display());
    assert!(stderr.contains(&expected), "{stderr}");

    std::fs::write(&config, text.replace("rate: 2mbit", "rate: 1bit").replace("4294967295", "64")).unwrap();
    let stderr = refused(&["up", "--iface", "lo", "--config", config.to_str().unwrap()]);
    assert!(stderr.contains(&format!("{}:2: `rate`: 1bit is not between", config.display())), "{stderr}");

    let stderr = refused(&["up", "--iface", "lo", "--rate", "1bit"]);
    assert!(stderr.contains("--rate: rate: 1bit is not between 64kbit and 100gbit"), "{stderr}");
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

/// Issue 10 #3/#10: a demo `--rate` the shaper cannot take is refused before phase 1
/// runs, not by `bauxite up` when phase 2 starts.
#[test]
fn demo_checks_its_rate_before_anything_runs() {
    let out = scratch("demo");
    let _cleanup = Remove(out.clone());
    let stderr = refused(&["demo", "--trials", "1", "--rate", "1bit", "--out", out.to_str().unwrap()]);
    assert!(stderr.contains("--rate: rate: 1bit is not between 64kbit and 100gbit"), "{stderr}");
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
