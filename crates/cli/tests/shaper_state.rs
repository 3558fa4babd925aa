//! The shaper's state and ownership under misuse (issue 10, findings 4–6 and the
//! lease), through the `bauxite` binary on veth interfaces in throwaway network
//! namespaces (needs root: namespaces and eBPF).

use std::process::{Child, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bauxite_core::DaemonState;
use bauxite_shaper::StatusReader;
use bauxite_shaper::rtnl::Rtnl;
use bauxite_shaper::state::{Owner, StateDir, StateFile};
use bauxite_sys::{Netns, root_or_skip, unique_name};

/// Each test starts daemons: one at a time, so they do not load each other.
static SERIAL: Mutex<()> = Mutex::new(());

const BIN: &str = env!("CARGO_BIN_EXE_bauxite");
const IFACE: &str = "bx0";

/// Generous bounds for a loaded 2-core machine: a daemon starts in well under a
/// second and notices a link event within one poll (a few ms); these only stop a
/// broken test from hanging.
const START: Duration = Duration::from_secs(20);
const REACT: Duration = Duration::from_secs(10);

fn bauxite(ns: &Netns, args: &[&str]) -> Output {
    ns.command(BIN, args).output().expect("run bauxite")
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn signal(child: &Child, sig: i32) {
    #[allow(unsafe_code)]
    // SAFETY: kill(2) on our own child's pid (`ip netns exec` execs the daemon).
    unsafe {
        libc::kill(child.id() as i32, sig);
    }
}

/// A running `bauxite up`, stopped if the test ends before it does.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            signal(&self.0, libc::SIGCONT);
            signal(&self.0, libc::SIGTERM);
            let _ = self.0.wait();
        }
    }
}

/// A namespace with an interface called [`IFACE`].
fn namespace(role: &str) -> Netns {
    let ns = Netns::create(&unique_name(role)).expect("namespace");
    add_dummy(&ns);
    ns
}

/// [`IFACE`] and its veth peer (this kernel has no dummy driver), both up.
fn add_dummy(ns: &Netns) {
    ns.ip(&["link", "add", IFACE, "type", "veth", "peer", "name", "bx0peer"]).expect("veth pair");
    ns.ip(&["link", "set", IFACE, "up"]).expect("interface up");
    ns.ip(&["link", "set", "bx0peer", "up"]).expect("peer up");
}

fn status(ns: &Netns) -> String {
    text(&bauxite(ns, &["status", "--iface", IFACE]))
}

fn gso(ns: &Netns) -> String {
    let out = ns.ip(&["-d", "link", "show", IFACE]).unwrap();
    out.split_whitespace().skip_while(|w| *w != "gso_max_size").nth(1).unwrap_or("?").to_string()
}

/// Starts `bauxite up` on [`IFACE`] in `ns`, its stderr piped, and waits until it runs.
fn spawn_up(ns: &Netns) -> Daemon {
    spawn_up_with(ns, &["--rate", "10mbit"])
}

/// [`spawn_up`] with these arguments after `--iface`.
fn spawn_up_with(ns: &Netns, args: &[&str]) -> Daemon {
    let daemon = Daemon(
        ns.command(BIN, &[&["up", "--iface", IFACE][..], args].concat())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start bauxite up"),
    );
    let mut daemon = daemon;
    let deadline = Instant::now() + START;
    while !status(ns).contains("daemon running") {
        if let Ok(Some(code)) = daemon.0.try_wait() {
            let mut log = String::new();
            std::io::Read::read_to_string(&mut daemon.0.stderr.take().unwrap(), &mut log).unwrap();
            panic!("bauxite up exited ({code}): {log}");
        }
        assert!(Instant::now() < deadline, "bauxite up did not come up: {}", status(ns));
        std::thread::sleep(Duration::from_millis(50));
    }
    daemon
}

/// The state directory of `ns`, as the shaper names it.
fn state_dir(ns: &Netns) -> StateDir {
    ns.run(|| StateDir::of(&Rtnl::new().expect("netlink")))
}

/// Finding 4: a state file that is not about this interface (here: written for
/// another index, as a deleted namespace's or interface's would be) is neither
/// shown as a dead daemon nor used to "restore" settings, and leaves no directory.
#[test]
fn a_state_about_another_interface_is_not_acted_on() {
    if !root_or_skip("a_state_about_another_interface_is_not_acted_on") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ns = namespace("stale");
    assert_eq!(gso(&ns), "65536");
    let dir = state_dir(&ns);
    let mut stale = StateFile {
        owner: Owner { ifindex: 999_999, pid: 1, pid_start: 0, original_gso_max_size: 16_000, ..Default::default() },
        ..Default::default()
    };
    stale.snapshot.iface = IFACE.into();
    stale.snapshot.pid = 1;
    dir.save(IFACE, &stale).unwrap();

    let s = status(&ns);
    assert!(s.contains("daemon down"), "an interface never shaped: {s}");
    let out = bauxite(&ns, &["down", "--iface", IFACE]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("stale state"), "{}", text(&out));
    assert_eq!(gso(&ns), "65536", "nothing restored from another interface's state");
    assert!(!dir.path(IFACE).exists());
    assert!(!dir.path(IFACE).parent().unwrap().exists(), "no empty state directory left behind");
}

/// Finding 4 as reported: `up` SIGKILLed, its namespace deleted, a new namespace
/// (whose inode the kernel may reuse) with an interface of the same name.
#[test]
fn a_new_namespace_does_not_inherit_a_killed_daemons_state() {
    if !root_or_skip("a_new_namespace_does_not_inherit_a_killed_daemons_state") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let old = namespace("killed");
    let old_dir = state_dir(&old);
    let mut daemon = spawn_up(&old);
    assert!(old_dir.path(IFACE).exists());
    daemon.0.kill().unwrap();
    daemon.0.wait().unwrap();
    drop(old);

    let new = namespace("reused");
    assert_ne!(state_dir(&new), old_dir, "namespaces are keyed by their cookie, never reused");
    let s = status(&new);
    assert!(s.contains("daemon down"), "{s}");
    let out = bauxite(&new, &["down", "--iface", IFACE]);
    assert!(out.status.success() && text(&out).contains("nothing"), "{}", text(&out));
    assert_eq!(gso(&new), "65536");
    // The dead namespace's file is the killed daemon's; remove it by hand.
    old_dir.remove(IFACE).unwrap();
}

/// Finding 6: an operator's own `htb ba:` root is refused by `up` and `down`,
/// with an error that says so, and left exactly as it was.
#[test]
fn an_operators_own_ba_root_is_left_alone() {
    if !root_or_skip("an_operators_own_ba_root_is_left_alone") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ns = namespace("foreignba");
    ns.tc(&["qdisc", "add", "dev", IFACE, "root", "handle", "ba:", "htb", "default", "1"]).unwrap();
    ns.tc(&["class", "add", "dev", IFACE, "parent", "ba:", "classid", "ba:1", "htb", "rate", "5mbit"]).unwrap();
    let before = ns.tc(&["class", "show", "dev", IFACE]).unwrap();
    for args in [&["down", "--iface", IFACE][..], &["up", "--iface", IFACE, "--rate", "1mbit"][..]] {
        let out = bauxite(&ns, args);
        assert!(!out.status.success(), "{args:?} must refuse: {}", text(&out));
        assert!(text(&out).contains("Bauxite did not install"), "{args:?}: {}", text(&out));
        assert_eq!(ns.tc(&["class", "show", "dev", IFACE]).unwrap(), before, "{args:?} changed the tree");
    }
    assert!(status(&ns).contains("daemon down"), "{}", status(&ns));
}

/// Finding 5: the interface deleted and recreated under a running `up`. The daemon
/// says so once and exits non-zero (so systemd restarts it); `status` does not call
/// the new, unshaped interface running; a new `up` works.
#[test]
fn an_interface_recreated_under_up_ends_it_and_a_new_up_works() {
    if !root_or_skip("an_interface_recreated_under_up_ends_it_and_a_new_up_works") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ns = namespace("recreate");
    let mut daemon = spawn_up(&ns);
    ns.ip(&["link", "del", IFACE]).unwrap();
    add_dummy(&ns);
    let deadline = Instant::now() + REACT;
    let code = loop {
        if let Some(code) = daemon.0.try_wait().unwrap() {
            break code;
        }
        assert!(Instant::now() < deadline, "bauxite up did not notice the interface went away");
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut log = String::new();
    std::io::Read::read_to_string(&mut daemon.0.stderr.take().unwrap(), &mut log).unwrap();
    assert!(!code.success(), "exits non-zero: {log}");
    assert_eq!(log.matches("was deleted or replaced").count(), 2, "logged once, then the exit error: {log}");
    assert!(!log.contains("classes are missing"), "{log}");

    let s = status(&ns);
    assert!(s.contains("daemon down"), "the new interface is not shaped: {s}");
    let qdisc = ns.tc(&["qdisc", "show", "dev", IFACE]).unwrap();
    assert!(!qdisc.contains("htb"), "{qdisc}");
    let again = spawn_up(&ns);
    drop(again);
    assert!(status(&ns).contains("daemon down"), "{}", status(&ns));
}

/// Also: a SIGSTOPped daemon's lease expires; `status` says the interface is not
/// protected. The in-process reader, opened by a thread placed in the namespace
/// and read from this one, sees the same.
#[test]
fn status_reports_the_lease_of_a_stopped_daemon() {
    if !root_or_skip("status_reports_the_lease_of_a_stopped_daemon") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ns = namespace("lease");
    let daemon = spawn_up(&ns);
    let mut reader = ns.run(|| StatusReader::new(IFACE)).expect("a status reader in the namespace");
    let running = reader.read().expect("read in-process");
    assert_eq!(running.daemon, DaemonState::Running);
    assert!(running.htb_installed && running.lease_ms == 1000, "{running:?}");
    assert_eq!(running.lanes.len(), 3);

    signal(&daemon.0, libc::SIGSTOP);
    // Past the 1 s lease, with margin for a loaded machine's scheduling.
    std::thread::sleep(Duration::from_millis(1500));
    let s = status(&ns);
    assert!(s.contains("daemon stalled") && s.contains("NOT protected"), "{s}");
    let json = text(&bauxite(&ns, &["status", "--iface", IFACE, "--json"]));
    assert!(json.contains("\"daemon\": \"stalled\""), "{json}");
    let stalled = reader.read().unwrap();
    assert_eq!(stalled.daemon, DaemonState::Stalled);
    assert!(stalled.lease_renewed_ms_ago > stalled.lease_ms, "{stalled:?}");

    signal(&daemon.0, libc::SIGCONT);
    let deadline = Instant::now() + REACT;
    while reader.read().unwrap().daemon != DaemonState::Running {
        assert!(Instant::now() < deadline, "the daemon renews its lease again after SIGCONT");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Issue 27: `rate: auto` towards a reflector that never answers (here an address on
/// the link that nothing holds) is not silent: within `FIRST_ANSWER` (1 s, the
/// controller's unit tests hold it to the millisecond) of the first probe the log
/// warns, `status` (text and JSON) and the state say "NOT PROTECTED: no answers from
/// ...", the droppable lanes fall back to `min_rate`, and every lane but the critical
/// one is held (the link may be out).
#[test]
fn a_reflector_that_never_answers_is_reported_and_the_rate_falls_back() {
    if !root_or_skip("a_reflector_that_never_answers_is_reported_and_the_rate_falls_back") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ns = namespace("silentrefl");
    ns.ip(&["addr", "add", "10.57.0.1/24", "dev", IFACE]).expect("an address");
    let mut profile = bauxite_core::Profile::robot();
    profile.rate = bauxite_core::RateSetting::Auto;
    profile.auto_rate.reflector = vec!["10.57.0.9:7399".into()];
    let min_rate = profile.auto_rate.min_rate;
    let config = std::env::temp_dir().join(format!("{}.yaml", unique_name("silent-profile")));
    std::fs::write(&config, serde_json::to_string(&profile).unwrap()).unwrap();
    let mut daemon = spawn_up_with(&ns, &["--config", config.to_str().unwrap()]);
    let mut reader = ns.run(|| StatusReader::new(IFACE)).expect("a status reader in the namespace");
    let deadline = Instant::now() + REACT;
    let failing = loop {
        let s = reader.read().expect("read the state");
        if s.link_estimate_failing {
            break s;
        }
        assert!(Instant::now() < deadline, "no silence reported: {s:?}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(failing.reflector.as_deref(), Some("10.57.0.9:7399"));
    assert!(failing.unanswered_ms >= 500, "said only after the silence: {failing:?}");
    let s = status(&ns);
    assert!(s.contains("NOT PROTECTED: no answers from 10.57.0.9:7399"), "{s}");
    let json = text(&bauxite(&ns, &["status", "--iface", IFACE, "--json"]));
    assert!(json.contains("\"link_estimate_failing\": true"), "{json}");
    // The fallback reaches HTB one poll and a `tc` later.
    let deadline = Instant::now() + REACT;
    while reader.read().unwrap().link_rate_bps != min_rate.bps() {
        assert!(Instant::now() < deadline, "the link rate falls back to min_rate: {:?}", reader.read().unwrap());
        std::thread::sleep(Duration::from_millis(20));
    }
    // The link may be out: every lane but the critical one is held at HTB's least
    // guarantee, borrowing nothing (its ceiling), while the critical lane may use the
    // rest of min_rate (0.95 × 200 kbit/s, less the two held lanes' 8 kbit/s).
    let class = |minor: &str| {
        let classes = ns.tc(&["class", "show", "dev", IFACE]).unwrap();
        classes.lines().find(|l| l.contains(&format!("ba:{minor} "))).map(str::to_owned).unwrap_or_default()
    };
    // One `tc -batch` changes the classes in lane order: wait for the last of them.
    let deadline = Instant::now() + REACT;
    while !class("12").contains("rate 8Kbit ceil 8Kbit") {
        assert!(Instant::now() < deadline, "video held: {}", class("12"));
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(class("11").contains("rate 8Kbit ceil 8Kbit"), "telemetry held: {}", class("11"));
    assert!(class("10").contains("rate 174Kbit ceil 190Kbit"), "critical borrows the rest: {}", class("10"));
    let deadline = Instant::now() + REACT;
    while !reader.read().unwrap().lanes_held {
        assert!(Instant::now() < deadline, "the state says the lanes are held");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(status(&ns).contains("lanes held: every lane but the first"), "{}", status(&ns));
    signal(&daemon.0, libc::SIGTERM);
    let code = daemon.0.wait().unwrap();
    let mut log = String::new();
    std::io::Read::read_to_string(&mut daemon.0.stderr.take().unwrap(), &mut log).unwrap();
    assert!(code.success(), "{log}");
    assert_eq!(log.matches("NOT PROTECTED").count(), 1, "warned once per silence: {log}");
    assert!(log.contains("every lane but critical held while the link is silent"), "{log}");
    std::fs::remove_file(config).ok();
}
