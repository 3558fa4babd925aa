//! Helpers shared by the CLI's integration tests.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Runs `command` (stdin closed) and returns its output; kills it and fails the test if it
/// does not exit within `limit`.
///
/// Both pipes are read on threads while the child runs: a child that writes more than a
/// pipe holds (64 KiB) would otherwise block on the write and be reported as a hang.
pub fn output_within(command: &mut Command, limit: Duration) -> Output {
    let mut child =
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start the command");
    let stdout = drain(child.stdout.take().expect("piped stdout"));
    let stderr = drain(child.stderr.take().expect("piped stderr"));
    let began = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if began.elapsed() > limit {
            child.kill().expect("kill");
            child.wait().expect("reap");
            let stderr = String::from_utf8_lossy(&stderr.join().expect("stderr reader")).into_owned();
            panic!("{command:?} still ran after {limit:?}; stderr:\n{stderr}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (stdout, stderr) = (stdout.join().expect("stdout reader"), stderr.join().expect("stderr reader"));
    Output { status, stdout, stderr }
}

/// Reads `pipe` to its end on a thread.
fn drain(mut pipe: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        pipe.read_to_end(&mut bytes).expect("read the child's output");
        bytes
    })
}
