//! `bauxite link` through the binary (needs root). Each test plays "the host" in a
//! namespace of its own, so the link's veth, route, NAT table and forwarding switch are
//! made (and must be removed) there, never on the machine's own network.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bauxite_sys::{ChildGuard, Netns, root_or_skip, unique_name};

const BIN: &str = env!("CARGO_BIN_EXE_bauxite");
/// One link at a time: a test reads every `bxl-` namespace of the machine as its own.
static SERIAL: Mutex<()> = Mutex::new(());

/// A server address on the host namespace's loopback: the command reaches it through the link.
const SERVER: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 1);

/// The test's host namespace and its IPv4 forwarding switch as it was made (a new
/// namespace may inherit the machine's).
fn host() -> (Netns, String) {
    let ns = Netns::create(&unique_name("host")).expect("create the host namespace");
    ns.ip(&["link", "set", "lo", "up"]).unwrap();
    ns.ip(&["addr", "add", &format!("{SERVER}/32"), "dev", "lo"]).unwrap();
    let forward = forwarding(&ns);
    (ns, forward)
}

fn forwarding(ns: &Netns) -> String {
    ns.run(|| std::fs::read_to_string("/proc/sys/net/ipv4/ip_forward").unwrap().trim().to_string())
}

/// What `bauxite link` made in `host` and has not removed: its interfaces, its NAT
/// tables, forwarding left on, and its namespaces (all of this machine's).
fn leftovers((host, forward): &(Netns, String)) -> Vec<String> {
    let mut found: Vec<String> =
        host.ip(&["-o", "link", "show"]).unwrap().lines().filter(|l| l.contains("bxl-")).map(str::to_string).collect();
    let tables = host.exec("nft", &["list", "tables"]).unwrap_or_default();
    found.extend(tables.lines().filter(|l| l.contains("bauxite_link")).map(str::to_string));
    if forwarding(host) != *forward {
        found.push(format!("ip_forward {} (was {forward})", forwarding(host)));
    }
    let names = Netns::current().ip(&["netns", "list"]).unwrap();
    found.extend(names.lines().filter(|l| l.starts_with("bxl-")).map(str::to_string));
    found
}

/// Waits up to 10 s for `host` to hold no leftovers (a namespace is destroyed by the
/// kernel after its last user is gone, a moment after `ip netns del`).
fn wait_clean(host: &(Netns, String)) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = leftovers(host);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A TCP server on `addr`:9000 in `ns` that counts what one client sends until it shuts
/// its side, answers the count, and returns the throughput (bit/s) from the first byte.
fn tcp_sink(ns: &Netns, addr: Ipv4Addr) -> std::thread::JoinHandle<f64> {
    let listener = ns.run(move || TcpListener::bind((addr, 9000)).expect("bind the server"));
    std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().expect("the client connects");
        let (mut buf, mut bytes, mut first, mut last) = (vec![0u8; 65536], 0usize, None, Instant::now());
        loop {
            let n = conn.read(&mut buf).expect("read");
            if n == 0 {
                break;
            }
            first.get_or_insert_with(Instant::now);
            (bytes, last) = (bytes + n, Instant::now());
        }
        conn.write_all(format!("{bytes}\n").as_bytes()).unwrap();
        bytes as f64 * 8.0 / last.duration_since(first.expect("bytes came")).as_secs_f64()
    })
}

/// A Python client that sends TCP to `$TARGET`:9000 (an environment variable) for
/// 3 s, then prints the server's count.
fn tcp_client(target: &str) -> String {
    format!(
        "import os, socket, time\n\
         s = socket.create_connection((os.environ['{target}'], 9000)); t = time.time()\n\
         while time.time() - t < 3: s.sendall(b'x' * 16384)\n\
         s.shutdown(socket.SHUT_WR); print('server got', s.makefile().readline().strip())\n"
    )
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The command sends TCP for 3 s through a 4 Mbit/s uplink to a server on the host
/// side, then waits for the server's count: the throughput is the link's, the
/// record says so, and nothing is left behind.
#[test]
fn a_command_reaches_the_host_through_a_constant_rate_link_and_nothing_is_left() {
    if !root_or_skip("a_command_reaches_the_host_through_a_constant_rate_link_and_nothing_is_left") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let host = host();
    let server = tcp_sink(&host.0, SERVER);
    let client = format!(
        "import socket, time\n\
         s = socket.create_connection(('{SERVER}', 9000)); t = time.time()\n\
         while time.time() - t < 3: s.sendall(b'x' * 16384)\n\
         s.shutdown(socket.SHUT_WR); print('server got', s.makefile().readline().strip())\n"
    );
    let record = std::env::temp_dir().join(unique_name("link-record"));
    let out = host
        .0
        .command(
            BIN,
            &[
                "link",
                "--up",
                "rate=4mbit",
                "--as-root",
                "--record",
                record.to_str().unwrap(),
                "--",
                "python3",
                "-c",
                &client,
            ],
        )
        .output()
        .expect("run bauxite link");
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("server got"), "{}", text(&out));
    let bps = server.join().unwrap();
    // TCP's payload is 1448 of every 1504 bytes the link counts (IPv4 length + 4): 3.85
    // Mbit/s at most; the emulator's own thread runs at a real-time priority.
    assert!(bps > 0.85 * 4e6 && bps < 1.0 * 4e6, "{bps} bit/s through a 4 Mbit/s link\n{}", text(&out));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(record.join("summary.json")).unwrap()).unwrap();
    let up = &summary["uplink"];
    assert_eq!(up["capacity_mbps"], 4.0, "{summary}");
    let delivered = up["delivered_mbps"].as_f64().unwrap();
    assert!(delivered > 0.5 * 4.0 && delivered <= 4.0 * 1.01, "{summary}");
    let fates = std::fs::read_to_string(record.join("fates.csv")).unwrap();
    let rows = fates.lines().skip(1).filter(|l| l.starts_with("up,")).count() as u64;
    assert_eq!(rows, up["arrived"].as_u64().unwrap(), "one fate per packet that reached the uplink");
    // link.mcap: a message per 100 ms per direction, whose counts add up to the summary's,
    // the capacity the link's, the busy seconds' throughput near it; the layout plots
    // only fields the recording has.
    let recording = bauxite_telemetry::read(&record.join("link.mcap")).expect("link.mcap reads");
    assert_eq!(recording.damage, None);
    let intervals: Vec<&serde_json::Value> = recording.on("/bauxite/link/uplink/interval").map(|m| &m.value).collect();
    assert!(intervals.len() >= 30, "{} uplink intervals in a run of over 3 s", intervals.len());
    let sum = |field: &str| intervals.iter().map(|i| i[field].as_u64().unwrap()).sum::<u64>();
    // (Whole bins only: the last tenth of a second may hold a few packets more.)
    let arrived = up["arrived"].as_u64().unwrap();
    assert!(sum("arrived") <= arrived && sum("arrived") + 60 >= arrived, "{} of {summary}", sum("arrived"));
    assert!(sum("queue_full") + sum("lost") <= up["queue_full"].as_u64().unwrap() + up["lost"].as_u64().unwrap());
    let capacities: Vec<f64> = intervals.iter().map(|i| i["capacity_mbps"].as_f64().unwrap()).collect();
    assert!(capacities.iter().all(|c| (c - 4.0).abs() < 1e-9), "a constant 4 Mbit/s: {capacities:?}");
    let busy = intervals.iter().filter(|i| i["delivered_mbps"].as_f64().unwrap() > 3.6).count();
    assert!(busy >= 20, "only {busy} intervals near 4 Mbit/s of {}", intervals.len());
    assert!(recording.on("/bauxite/link/downlink/interval").all(|m| m.value["capacity_mbps"].is_null()));
    let layout = std::fs::read_to_string(record.join("foxglove_layout.json")).unwrap();
    for path in layout.split('"').filter(|p| p.starts_with("/bauxite/")) {
        let (topic, field) = path.rsplit_once('.').expect("topic.field");
        assert!(recording.on(topic).next().is_some_and(|m| m.value.get(field).is_some()), "{path} is not recorded");
    }
    std::fs::remove_dir_all(&record).ok();
    assert_eq!(wait_clean(&host), Vec::<String>::new(), "left behind after the command ended");
}

/// SIGKILL to `bauxite link` itself: its reaper removes the namespaces, the host's
/// interface, the NAT table, and switches forwarding back off; the record's fates up
/// to its last flush (a tenth of a second) are on disk, whole lines.
#[test]
fn a_sigkilled_link_leaves_nothing_behind_but_its_record() {
    if !root_or_skip("a_sigkilled_link_leaves_nothing_behind_but_its_record") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let host = host();
    let record = std::env::temp_dir().join(unique_name("killed-record"));
    // 100 datagrams a second for 3 s (the command outlives the kill by that much at most).
    let sender = "import os, socket, time\n\
         s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
         for _ in range(300): s.sendto(b'x' * 100, (os.environ['BAUXITE_LINK_HOST'], 9)); time.sleep(0.01)\n";
    let args = ["link", "--up", "rate=1mbit", "--as-root", "--record", record.to_str().unwrap(), "--", "python3", "-c"];
    let child = host.0.command(BIN, &args).arg(sender).spawn().unwrap();
    let mut link = ChildGuard::new(child, Duration::from_secs(5));
    let deadline = Instant::now() + Duration::from_secs(20);
    while leftovers(&host).iter().all(|l| !l.contains("bauxite_link")) {
        assert!(Instant::now() < deadline, "bauxite link never set up its NAT");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!leftovers(&host).is_empty());
    // Killed once 20 fates are on disk (python's start takes from 0.1 s on an idle machine
    // to about a second on a loaded one; the command sends for 3 s).
    let on_disk =
        || std::fs::read_to_string(record.join("fates.csv")).map_or(0, |t| t.lines().count().saturating_sub(1));
    let deadline = Instant::now() + Duration::from_secs(20);
    while on_disk() < 20 {
        assert!(Instant::now() < deadline, "fewer than 20 fates on disk after 20 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    let before_kill = on_disk();
    link.kill().unwrap();
    assert_eq!(wait_clean(&host), Vec::<String>::new(), "left behind by a SIGKILLed bauxite link");
    let fates = std::fs::read_to_string(record.join("fates.csv")).expect("fates.csv survives the kill");
    std::fs::remove_dir_all(&record).ok();
    let mut lines = fates.lines();
    assert_eq!(lines.next(), Some("direction,arrived_ns,len,fate,departed_ns,delivered_ns,sent_ns"));
    let rows: Vec<&str> = lines.collect();
    // Nothing on disk before the kill is lost with it, and every line is whole.
    assert!(rows.len() >= before_kill, "{} fates on disk after the kill, {before_kill} before", rows.len());
    assert!(fates.ends_with('\n') && rows.iter().all(|r| r.split(',').count() == 7), "{fates}");
}

/// A bad SPEC or trace is refused, naming the key or the file and line, before
/// anything is made.
#[test]
fn a_bad_spec_or_trace_is_named_and_nothing_is_made() {
    if !root_or_skip("a_bad_spec_or_trace_is_named_and_nothing_is_made") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let host = host();
    let trace = std::env::temp_dir().join(format!("{}.up", unique_name("bad-trace")));
    std::fs::write(&trace, "1\n2\nx\n").unwrap();
    let bad_trace = format!("trace={}", trace.display());
    for (spec, says) in [("rate=fast", "--up"), ("rate=1mbit,colour=red", "colour"), (bad_trace.as_str(), ":3:")] {
        let out = host.0.command(BIN, &["link", "--up", spec, "--", "true"]).output().unwrap();
        assert!(!out.status.success(), "{spec}: {}", text(&out));
        assert!(text(&out).contains(says), "{spec}: {}", text(&out));
    }
    let out =
        host.0.command(BIN, &["link", "--up", "rate=1mbit", "--down", "rate=oops", "--", "true"]).output().unwrap();
    assert!(!out.status.success() && text(&out).contains("--down"), "{}", text(&out));
    std::fs::remove_file(&trace).ok();
    assert_eq!(leftovers(&host), Vec::<String>::new());
    assert!(!Path::new("/var/run/netns").join(format!("bxl-{}-app", std::process::id())).exists());
}

/// `--between A B`: the link between two namespaces that exist (a test bed's robot
/// and base). A TCP sender in A reaches a server in B at the uplink's rate, the
/// downlink is the other direction, and afterwards A and B hold nothing of the link
/// (no interface, address or route) while what was theirs stays. A namespace that
/// does not exist is named, and nothing is made.
#[test]
fn a_link_between_two_namespaces_carries_their_traffic_and_leaves_them_as_they_were() {
    if !root_or_skip("a_link_between_two_namespaces_carries_their_traffic_and_leaves_them_as_they_were") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (a, b) = (Netns::create(&unique_name("robot")).unwrap(), Netns::create(&unique_name("base")).unwrap());
    let (a_name, b_name) = (a.name().unwrap().to_string(), b.name().unwrap().to_string());
    // Something of B's own that must survive the link.
    b.ip(&["addr", "add", "10.78.0.1/32", "dev", "lo"]).unwrap();
    let state = |ns: &Netns| (ns.ip(&["-o", "addr", "show"]).unwrap(), ns.ip(&["route", "show"]).unwrap());
    let before = (state(&a), state(&b));
    let server = tcp_sink(&b, Ipv4Addr::UNSPECIFIED);
    let client = tcp_client("BAUXITE_LINK_B");
    let record = std::env::temp_dir().join(unique_name("between-record"));
    let args = ["link", "--between", &a_name, &b_name, "--up", "rate=4mbit", "--down", "rate=20mbit", "--as-root"];
    let out = Command::new(BIN)
        .args(args)
        .args(["--record", record.to_str().unwrap(), "--", "ip", "netns", "exec", &a_name, "python3", "-c", &client])
        .output()
        .expect("run bauxite link --between");
    assert!(out.status.success() && text(&out).contains("server got"), "{}", text(&out));
    let bps = server.join().unwrap();
    // As through the shell: at most TCP's 1448 of every 1504 bytes the link counts.
    assert!(bps > 0.85 * 4e6 && bps < 1.0 * 4e6, "{bps} bit/s through a 4 Mbit/s link\n{}", text(&out));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(record.join("summary.json")).unwrap()).unwrap();
    assert!(summary["uplink"]["delivered_mbps"].as_f64().unwrap() > 2.0, "{summary}");
    // B's ACKs went the other way, over the downlink.
    assert!(summary["downlink"]["delivered"].as_u64().unwrap() > 100, "{summary}");
    std::fs::remove_dir_all(&record).ok();
    let deadline = Instant::now() + Duration::from_secs(10);
    while (state(&a), state(&b)) != before && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!((state(&a), state(&b)), before, "A and B after the link");
    let names = Netns::current().ip(&["netns", "list"]).unwrap();
    assert!(!names.lines().any(|l| l.starts_with("bxl-")), "a link namespace left: {names}");
    let out = Command::new(BIN).args(["link", "--between", &a_name, "bx-no-such-ns", "--up", "rate=1mbit"]).output();
    let out = out.unwrap();
    assert!(!out.status.success() && text(&out).contains("no network namespace bx-no-such-ns"), "{}", text(&out));
    assert!(!Netns::current().ip(&["netns", "list"]).unwrap().lines().any(|l| l.starts_with("bxl-")));
}

/// `--record`'s fates are the model's: a UDP flood at 6 Mbit/s into a lossy 4 Mbit/s
/// link with a small buffer (so every kind of fate occurs), and the recorded arrivals
/// replayed offline through a fresh model of the same SPEC give every packet the same
/// fate, departure and delivery, to the nanosecond.
#[test]
fn the_record_is_what_the_model_gives_the_same_arrivals_offline() {
    use bauxite_core::link::{Admission, LinkModel, load_link};
    if !root_or_skip("the_record_is_what_the_model_gives_the_same_arrivals_offline") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let host = host();
    let spec = "rate=4mbit,queue=20kb,loss=3%,seed=11,delay=5ms,jitter=2ms";
    let flood = "import os, socket, time\n\
         s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); t = time.time(); n = 0\n\
         while time.time() - t < 2:\n\
         \x20   s.sendto(b'x' * 1200, (os.environ['BAUXITE_LINK_HOST'], 9)); n += 1\n\
         \x20   time.sleep(max(0, t + n * 1228 * 8 / 6e6 - time.time()))\n";
    let record = std::env::temp_dir().join(unique_name("link-replay"));
    let out = host
        .0
        .command(BIN, &["link", "--up", spec, "--as-root", "--record", record.to_str().unwrap(), "--", "python3", "-c"])
        .arg(flood)
        .output()
        .expect("run bauxite link");
    assert!(out.status.success(), "{}", text(&out));
    let fates = std::fs::read_to_string(record.join("fates.csv")).unwrap();
    std::fs::remove_dir_all(&record).ok();
    // direction,arrived_ns,len,fate,departed_ns,delivered_ns,sent_ns
    // (In the order their fates became known: the model takes them in the order they came.)
    let mut rows: Vec<Vec<&str>> =
        fates.lines().skip(1).map(|l| l.split(',').collect()).filter(|r: &Vec<&str>| r[0] == "up").collect();
    rows.sort_by_key(|r| r[1].parse::<u64>().unwrap());
    let count = |fate: &str| rows.iter().filter(|r| r[3] == fate).count();
    assert!(count("queue_full") > 20 && count("lost") > 5 && count("delivered") > 500, "{fates:.300}");
    let (_, config, _) = load_link(spec, None).unwrap();
    let mut model = LinkModel::new(&config, 0);
    let num = |s: &str| s.parse::<u64>().unwrap();
    let mut expected = Vec::new();
    for (token, row) in rows.iter().enumerate() {
        let admitted = model.enqueue(num(row[1]), token as u64, num(row[2]) as u32);
        assert_eq!(admitted == Admission::QueueFull, row[3] == "queue_full", "packet {token}: {row:?}");
        model.poll(num(row[1]), &mut expected);
    }
    model.poll(u64::MAX / 2, &mut expected);
    let mut compared = 0;
    for outcome in expected {
        let row = &rows[outcome.token as usize];
        match (row[3], outcome.delivered_ns) {
            ("in_flight", _) => continue, // the link stopped before the model's outcome for it
            ("lost", None) => assert_eq!(num(row[4]), outcome.departed_ns, "packet {}: {row:?}", outcome.token),
            ("delivered", Some(delivered)) => {
                assert_eq!((num(row[4]), num(row[5])), (outcome.departed_ns, delivered), "packet {}", outcome.token)
            }
            (fate, model) => panic!("packet {}: recorded {fate}, the model says delivered at {model:?}", outcome.token),
        }
        compared += 1;
    }
    assert!(compared > 500, "{compared} fates compared");
    assert_eq!(wait_clean(&host), Vec::<String>::new());
}

/// `--between IF_A IF_B`, two interfaces of the namespace it runs in (a box on the wire
/// between robot and base): every frame is bridged through the link, ARP included, so
/// A and B on one subnet reach each other at the uplink's rate; an interface that holds
/// an address is refused, naming it, and the interfaces are left as they were.
#[test]
fn a_link_between_two_interfaces_bridges_them() {
    if !root_or_skip("a_link_between_two_interfaces_bridges_them") {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (a, b, middle) = (
        Netns::create(&unique_name("wire-a")).unwrap(),
        Netns::create(&unique_name("wire-b")).unwrap(),
        Netns::create(&unique_name("wire-box")).unwrap(),
    );
    for (ns, iface, port, addr) in [(&a, "eth0", "port-a", "10.79.0.1/24"), (&b, "eth0", "port-b", "10.79.0.2/24")] {
        Netns::current()
            .ip(&[
                "link",
                "add",
                iface,
                "netns",
                ns.name().unwrap(),
                "type",
                "veth",
                "peer",
                "name",
                port,
                "netns",
                middle.name().unwrap(),
            ])
            .unwrap();
        ns.ip(&["addr", "add", addr, "dev", iface]).unwrap();
        ns.ip(&["link", "set", iface, "up"]).unwrap();
    }
    let server = tcp_sink(&b, Ipv4Addr::new(10, 79, 0, 2));
    let client = "import socket, time\n\
         s = socket.create_connection(('10.79.0.2', 9000)); t = time.time()\n\
         while time.time() - t < 3: s.sendall(b'x' * 16384)\n\
         s.shutdown(socket.SHUT_WR); print('server got', s.makefile().readline().strip())\n";
    let a_name = a.name().unwrap();
    let out = middle
        .command(BIN, &["link", "--between", "port-a", "port-b", "--up", "rate=4mbit", "--as-root", "--"])
        .args(["ip", "netns", "exec", a_name, "python3", "-c", client])
        .output()
        .expect("run bauxite link --between two interfaces");
    assert!(out.status.success() && text(&out).contains("server got"), "{}", text(&out));
    let bps = server.join().unwrap();
    // A bridged frame counts its Ethernet length: 1514 of every 1448 payload bytes.
    assert!(bps > 0.85 * 4e6 && bps < 1.0 * 4e6, "{bps} bit/s through a 4 Mbit/s link\n{}", text(&out));
    let ports = middle.ip(&["-o", "link", "show"]).unwrap();
    assert!(ports.contains("port-a") && ports.contains("port-b"), "the interfaces stay: {ports}");
    middle.ip(&["addr", "add", "10.79.0.9/24", "dev", "port-b"]).unwrap();
    let out = middle.command(BIN, &["link", "--between", "port-a", "port-b", "--up", "rate=1mbit"]).output().unwrap();
    assert!(!out.status.success() && text(&out).contains("port-b holds an address"), "{}", text(&out));
}
