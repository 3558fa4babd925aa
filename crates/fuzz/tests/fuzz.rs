//! Fuzz targets for every parser of outside input (issue 10: keep its findings fixed).
//!
//! Under `cargo test` each target runs its checked-in corpus (`crates/fuzz/corpus/<target>/`,
//! which holds every hostile input of issue 10), then random inputs for one second
//! (`BAUXITE_FUZZ_SECONDS` for longer runs), each also as edits to a corpus entry (see
//! `bauxite_fuzz::run`). A target fails on a panic or a broken invariant, naming the input
//! and how to replay it.

use std::path::{Path, PathBuf};

use bauxite_core::ConfigError;
use bauxite_core::wire::{WireError, probe, video};
use bauxite_ebpf::craft::{TCP, UDP};
use bauxite_ebpf::maps::{RULE_DSCP, RULE_PORT, SIDE_DST, SIDE_SRC};
use bauxite_ebpf::{Control, Datapath, LanePolicy, LaneStats, Rule, RuleSet, TC_ACT_SHOT, TC_ACT_UNSPEC};
use bauxite_fuzz::{Budget, Mutation, corpus, run};
use bauxite_sys::{monotonic_ns, root_or_skip};

/// What the mutator inserts into configs: the numbers of issue 10's findings and their
/// neighbours, and YAML's punctuation.
const CONFIG_TOKENS: &[&[u8]] = &[
    b"1e-300",
    b"1e300",
    b"4294967295",
    b"18446744073709551616",
    b"-1",
    b"0",
    b"1bit",
    b"1ns",
    b"0s",
    b"233",
    b".nan",
    b".inf",
    b"-.inf",
    b"~",
    b"[]",
    b"{}",
    b"\n",
    b"  ",
    b": ",
    b"- ",
    b"&a ",
    b"*a",
    b"\"",
    b"#",
];

/// Every error about `config` names the file and the line or key, and says something.
fn assert_clear(e: &ConfigError, file: &Path, config: &str) {
    let text = e.to_string();
    assert!(text.starts_with(&file.display().to_string()), "the error names the file: {text}\n{config:?}");
    assert!(e.line.is_some() || e.key.is_some(), "the error names a line or a key: {text}\n{config:?}");
    assert!(!e.message.trim().is_empty(), "the error says what is wrong: {text}\n{config:?}");
}

/// A profile is refused with a clear error, or accepted within every bound (issue 10 #3:
/// no 4294967295-packet queue, no `rate: 1bit`, no `share: 1e-300`).
fn check_profile(bytes: &[u8]) {
    use bauxite_core::validate::{MAX_LINK_RATE, MAX_QUEUE_LIMIT, MIN_LINK_RATE, MIN_SHARE};
    let file = Path::new("fuzz-profile.yaml");
    let text = String::from_utf8_lossy(bytes);
    let profile = match bauxite_core::parse_profile(&text, file) {
        Ok(profile) => profile,
        Err(e) => return assert_clear(&e, file, &text),
    };
    for lane in &profile.lanes {
        assert!((MIN_SHARE..=1.0).contains(&lane.share), "accepted share {}", lane.share);
        assert!((1..=MAX_QUEUE_LIMIT).contains(&lane.queue_limit), "accepted queue_limit {}", lane.queue_limit);
    }
    if let bauxite_core::RateSetting::Fixed(rate) = profile.rate {
        assert!((MIN_LINK_RATE..=MAX_LINK_RATE).contains(&rate), "accepted rate {rate:?}");
    }
}

#[test]
fn profile() {
    run("profile", CONFIG_TOKENS, Budget::from_env(), |input, _| check_profile(input));
}

/// A bridge config is refused with a clear error, or accepted with rates and durations a
/// thread can run on (issue 10 #2: `probe_rate_hz: 1e-300` panicked a thread, `1e300` and
/// `tick: 1ns` spun) and RTPS ports that do not wrap (#7: `domain_id: 233`).
fn check_bridge_config(bytes: &[u8]) {
    let file = Path::new("fuzz-bridge.yaml");
    let text = String::from_utf8_lossy(bytes);
    let config = match bauxite_bridge::config::parse(&text, file) {
        Ok(config) => config,
        Err(e) => return assert_clear(&e, file, &text),
    };
    let rate = config.classifier.probe_rate_hz;
    assert!((0.1..=100.0).contains(&rate), "accepted probe_rate_hz {rate}");
    assert!(std::time::Duration::try_from_secs_f64(1.0 / rate).is_ok());
    let tick = config.supervisor.tick;
    assert!(tick >= std::time::Duration::from_millis(10), "accepted tick {tick:?}");
    assert!(config.dds.domain_id <= 232, "accepted domain_id {}", config.dds.domain_id);
}

#[test]
fn bridge_config() {
    run("bridge_config", CONFIG_TOKENS, Budget::from_env(), |input, _| check_bridge_config(input));
}

/// Audits `bytes` as `bauxite audit` would: never a panic; a pass only without damage;
/// and with `must_fail`, no pass at all.
fn check_recording(file: &Path, bytes: &[u8], must_fail: bool) {
    std::fs::write(file, bytes).expect("write the recording");
    if let Ok(report) = bauxite_demo::audit(file) {
        assert!(!report.pass || report.damage.is_none(), "a damaged recording passed: {report}");
        assert!(!(must_fail && report.pass), "a one-bit flip of a passing recording passed: {report}");
    }
}

#[test]
fn mcap_reader() {
    let seeds = corpus("mcap_reader");
    let file = std::env::temp_dir().join(format!("bauxite-fuzz-{}.mcap", std::process::id()));
    let intact: Vec<bool> = seeds
        .iter()
        .map(|s| {
            std::fs::write(&file, s).unwrap();
            bauxite_demo::audit(&file).is_ok_and(|r| r.pass)
        })
        .collect();
    assert!(intact.iter().any(|&pass| pass), "the corpus holds a passing recording to mutate");
    // Every byte of an MCAP file is under a CRC, a magic or a length: one flipped bit in a
    // recording that passed must make it fail.
    let one_flip_of_intact = |m: Option<&Mutation>| m.is_some_and(|m| intact[m.seed] && m.is_one_bit_flip());
    run("mcap_reader", &[], Budget::from_env(), |input, edits| {
        check_recording(&file, input, one_flip_of_intact(edits));
    });
    std::fs::remove_file(file).ok();
}

/// The classifier's lanes (by priority): 0 critical, 1 telemetry (the default), 2 bulk
/// (droppable), 3 a DSCP lane.
const PRIORITIES: [u32; 4] = [0x1_0010, 0x1_0011, 0x1_0012, 0x1_0013];

/// The robot profile's rules, congested, the bulk lane shedding half its packets, with a
/// live lease: every path of the program is reachable.
fn congested_datapath() -> Datapath {
    let mut dp = Datapath::load().expect("load the programs");
    let port = |lane, proto, first, last| Rule {
        port_first: first,
        port_last: last,
        kind: RULE_PORT,
        ip_proto: proto,
        side: SIDE_DST | SIDE_SRC,
        dscp: 0,
        lane,
    };
    let mut set = RuleSet { count: 4, default_lane: 1, ..Default::default() };
    set.rules[0] = port(0, UDP, 7400, 7401);
    set.rules[1] = port(1, UDP, 7410, 7410);
    set.rules[2] = port(2, TCP, 8080, 8080);
    set.rules[3] = Rule { kind: RULE_DSCP, dscp: 36, lane: 3, ..Default::default() };
    dp.maps.set_rules(&set).unwrap();
    for (i, priority) in PRIORITIES.into_iter().enumerate() {
        let droppable = u8::from(i == 2);
        let drop_prob = if i == 2 { u32::MAX / 2 } else { 0 };
        dp.maps.set_lane(i, &LanePolicy { priority, droppable, drop_prob, ..Default::default() }).unwrap();
    }
    let control = Control { heartbeat_ns: monotonic_ns(), lease_ns: 3_600_000_000_000, congested: 1, l2_header: 1 };
    dp.maps.set_control(&control).unwrap();
    dp
}

fn counters(dp: &Datapath) -> Vec<LaneStats> {
    dp.maps.stats().unwrap()
}

/// The kernel's test harness refuses a frame shorter than an Ethernet header, or than the
/// fixed IP header its EtherType announces, before the program runs.
fn kernel_refuses(frame: &[u8]) -> bool {
    match frame.get(12..14) {
        None => true,
        Some([0x08, 0x00]) => frame.len() < 14 + 20,
        Some([0x86, 0xdd]) => frame.len() < 14 + 40,
        Some(_) => false,
    }
}

/// One frame through the classifier: a defined verdict, and counters that add up: one
/// packet and its bytes in exactly one lane, whose priority the frame got, or, when it was
/// shed, the droppable lane's early drops.
fn check_frame(dp: &mut Datapath, frame: &[u8]) {
    // At most a full Ethernet frame: the test harness takes up to about a page.
    let frame = &frame[..frame.len().min(1514)];
    let before = counters(dp);
    let outcome = dp.run_classifier(frame, 1);
    let after = counters(dp);
    let out = match outcome {
        Ok(out) => out,
        Err(e) => {
            assert!(kernel_refuses(frame), "{} bytes {frame:02x?}: {e}", frame.len());
            assert_eq!(after, before, "a refused frame counts nothing");
            return;
        }
    };
    let shed = out.verdict == TC_ACT_SHOT;
    assert!(shed || out.verdict == TC_ACT_UNSPEC, "verdict {} for {frame:02x?}", out.verdict);
    let counted: Vec<usize> = (0..after.len()).filter(|&i| after[i] != before[i]).collect();
    let [lane] = counted[..] else { panic!("lanes {counted:?} counted {frame:02x?}") };
    let (b, a) = (before[lane], after[lane]);
    assert_eq!((a.packets - b.packets, a.bytes - b.bytes), (1, frame.len() as u64), "{frame:02x?}");
    assert_eq!(a.early_drops - b.early_drops, u64::from(shed), "{frame:02x?}");
    if shed {
        assert_eq!(lane, 2, "only the droppable lane is shed: {frame:02x?}");
    } else {
        assert_eq!(PRIORITIES.get(lane), Some(&out.priority), "lane {lane}: {frame:02x?}");
    }
}

/// Frames: the corpus's, random ones, and edits of the corpus's, through
/// `BPF_PROG_TEST_RUN` (root only; under CI=true a missing root fails).
#[test]
fn classifier() {
    if !root_or_skip("classifier") {
        return;
    }
    let mut dp = congested_datapath();
    let tokens: &[&[u8]] = &[&[0x08, 0x00], &[0x86, 0xdd], &[0x81, 0x00], &[0x88, 0xa8], &[0x45], &[0x1f, 0x90]];
    run("classifier", tokens, Budget::from_env(), |frame, _| check_frame(&mut dp, frame));
}

/// Where a target's corpus files are (for the corpus writer below).
fn corpus_file(target: &str, name: &str) -> PathBuf {
    let dir = bauxite_fuzz::corpus_dir(target);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Every hostile input of issue 10 is in the corpus that CI runs (the corpus is checked
/// in; this keeps it from losing them).
#[test]
fn the_corpus_holds_the_hostile_inputs_of_issue_10() {
    let holds =
        |target: &str, needle: &[u8]| corpus(target).iter().any(|f| f.windows(needle.len()).any(|w| w == needle));
    for needle in [&b"queue_limit: 4294967295"[..], b"rate: 1bit", b"share: 1e-300"] {
        assert!(holds("profile", needle), "profile corpus: {}", String::from_utf8_lossy(needle));
    }
    for (name, key) in [
        ("issue10-huge-queue-limit.yaml", "lanes[0].queue_limit"),
        ("issue10-rate-1bit.yaml", "rate"),
        ("issue10-share-1e-300.yaml", "lanes[1].share"),
    ] {
        let file = bauxite_fuzz::corpus_dir("profile").join(name);
        let e = bauxite_core::load_profile(&file).expect_err(name);
        assert_eq!(e.key.as_deref(), Some(key), "{e}");
        assert!(e.line.is_some(), "{e}");
    }
    for needle in [&b"probe_rate_hz: 1e-300"[..], b"probe_rate_hz: 1e300", b"tick: 1ns", b"domain_id: 233"] {
        assert!(holds("bridge_config", needle), "bridge corpus: {}", String::from_utf8_lossy(needle));
    }
    for (name, key) in [
        ("issue10-probe-rate-1e-300.yaml", "classifier.probe_rate_hz"),
        ("issue10-probe-rate-1e300.yaml", "classifier.probe_rate_hz"),
        ("issue10-tick-1ns.yaml", "supervisor.tick"),
        ("issue10-domain-233.yaml", "dds.domain_id"),
    ] {
        let file = bauxite_fuzz::corpus_dir("bridge_config").join(name);
        let e = bauxite_bridge::config::load(&file).expect_err(name);
        assert_eq!(e.key.as_deref(), Some(key), "{e}");
        assert!(e.line.is_some(), "{e}");
    }
    // The valid entries are valid, so that their edits explore near what is accepted.
    for name in ["full.yaml", "block-style.yaml"] {
        bauxite_core::load_profile(&bauxite_fuzz::corpus_dir("profile").join(name)).expect(name);
    }
    for name in ["full.yaml", "minimal.yaml", "issue10-interfaces-loopback.yaml"] {
        bauxite_bridge::config::load(&bauxite_fuzz::corpus_dir("bridge_config").join(name)).expect(name);
    }
    for (target, names) in [
        ("probe_header", &["truncated-header.bin", "tag-cut-short.bin", "garbage.bin", "bad-magic.bin"][..]),
        ("video_header", &["truncated-header.bin", "length-below-header.bin", "garbage.bin", "key-byte-2.bin"][..]),
    ] {
        for name in names {
            assert!(bauxite_fuzz::corpus_dir(target).join(name).is_file(), "{target} corpus: {name}");
        }
    }
    let names: Vec<String> = std::fs::read_dir(bauxite_fuzz::corpus_dir("mcap_reader"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for name in ["intact.mcap", "chunk-bit-flip.mcap", "duplicated-data-section.mcap", "duplicated-chunk.mcap"] {
        assert!(names.iter().any(|n| n == name), "mcap corpus: {name} in {names:?}");
    }
}

/// Writes the MCAP corpus (a passing demo recording and its damaged copies). Run once by
/// hand: `cargo test -p bauxite-fuzz --test fuzz -- --ignored write_mcap_corpus`.
#[test]
#[ignore = "writes the checked-in corpus"]
fn write_mcap_corpus() {
    use bauxite_telemetry::Recorder;
    use bauxite_telemetry::messages::{LatencySample, RunInfo, StreamRate, UpdateDelay, topic};
    const MS: u64 = 1_000_000;
    let start = 1_000 * MS;
    let intact = corpus_file("mcap_reader", "intact.mcap");
    let mut rec = Recorder::create(&intact).unwrap();
    let run = rec.channel::<RunInfo>(&topic("demo", "run")).unwrap();
    let samples = rec.channel::<LatencySample>(&topic("lanes", "critical/latency")).unwrap();
    let updates = rec.channel::<UpdateDelay>(&topic("control", "update_delay")).unwrap();
    let info = RunInfo {
        trial: 1,
        phase: 2,
        protected: true,
        duration_ns: 3_000 * MS,
        drop_at_ns: 500 * MS,
        link_before_bps: 50_000_000,
        link_after_bps: 1_500_000,
        critical_streams: vec![StreamRate { port: 7401, rate_hz: 50.0 }],
        shaper_rate: Some("1.5mbit".into()),
        target_critical_latency_mean_ms: 1.5,
        target_critical_latency_p99_ms: 2.0,
        target_update_delay_mean_ms: 10.0,
        target_critical_loss_pct: 0.0,
        link: None,
    };
    rec.write(run, start, &info).unwrap();
    for i in 0..150u64 {
        let sent = start + i * 20 * MS;
        let sample = LatencySample {
            lane: "critical".into(),
            stream: 7401,
            seq: i as u32,
            sent_ns: sent,
            latency_ms: 1.0,
            floor_ns: None,
            head_of_line_ns: None,
        };
        rec.write(samples, sent + MS, &sample).unwrap();
        rec.write(updates, sent + 5 * MS, &UpdateDelay { seq: i as u32, sent_ns: sent, delay_ms: 5.0 }).unwrap();
    }
    rec.finish().unwrap();
    let bytes = std::fs::read(&intact).unwrap();
    let report = bauxite_demo::audit(&intact).unwrap();
    assert!(report.pass, "{report}");
    // The data section's top-level records, up to the data end record.
    let mut records = Vec::new();
    let mut at = 8;
    loop {
        let len = u64::from_le_bytes(bytes[at + 1..at + 9].try_into().unwrap()) as usize;
        records.push((bytes[at], at, at + 9 + len));
        if bytes[at] == 0x0F {
            break;
        }
        at += 9 + len;
    }
    let chunks: Vec<_> = records.iter().filter(|r| r.0 == 0x06).collect();
    let (_, data_end, _) = *records.last().unwrap();
    let (_, c0, c1) = *chunks[chunks.len() / 2];
    let mut flipped = bytes.clone();
    flipped[(c0 + c1) / 2] ^= 0x10;
    let files = [
        ("chunk-bit-flip.mcap", flipped),
        ("duplicated-data-section.mcap", [&bytes[..data_end], &bytes[8..data_end], &bytes[data_end..]].concat()),
        ("duplicated-chunk.mcap", [&bytes[..c1], &bytes[c0..c1], &bytes[c1..]].concat()),
        ("truncated.mcap", bytes[..bytes.len() / 2].to_vec()),
    ];
    for (name, content) in files {
        std::fs::write(corpus_file("mcap_reader", name), content).unwrap();
    }
}

/// Writes the classifier's corpus: a frame of every shape the classifier parses, and cut
/// ones. Run once by hand: `cargo test -p bauxite-fuzz --test fuzz -- --ignored write_classifier_corpus`.
#[test]
#[ignore = "writes the checked-in corpus"]
fn write_classifier_corpus() {
    use bauxite_ebpf::craft::{FrameSpec, V6_DEST_OPTS, V6_HOP_BY_HOP, V6_ROUTING};
    let udp = |dport| FrameSpec { protocol: UDP, sport: 40000, dport, payload: 32, ..Default::default() };
    let tcp = |flags| FrameSpec {
        protocol: TCP,
        sport: 40000,
        dport: 8080,
        tcp_flags: flags,
        payload: 200,
        ..Default::default()
    };
    let mut frames = vec![
        ("udp4-critical", udp(7400).build()),
        ("udp6-critical", FrameSpec { ipv6: true, ..udp(7401) }.build()),
        ("tcp4-bulk", tcp(0x10).build()),
        ("tcp6-bulk-syn", FrameSpec { ipv6: true, ..tcp(0x02) }.build()),
        ("qinq-udp4", FrameSpec { vlans: vec![100, 200], ..udp(7410) }.build()),
        (
            "udp6-extensions",
            FrameSpec { ipv6: true, v6_extensions: vec![V6_HOP_BY_HOP, V6_ROUTING, V6_DEST_OPTS], ..udp(7400) }.build(),
        ),
        ("udp4-fragment-later", FrameSpec { fragment_offset: Some(185), ..udp(7400) }.build()),
        (
            "udp6-fragment-first",
            FrameSpec { ipv6: true, fragment_offset: Some(0), more_fragments: true, ..udp(7400) }.build(),
        ),
        ("dscp36", FrameSpec { dscp: 36, ..udp(5000) }.build()),
        ("icmp4", FrameSpec { protocol: 1, payload: 56, ..Default::default() }.build()),
    ];
    let mut arp = vec![0xff; 12];
    arp.extend_from_slice(&[0x08, 0x06]);
    arp.extend_from_slice(&[0; 28]);
    frames.push(("arp", arp));
    let full = tcp(0x10).build();
    frames.push(("tcp4-cut-in-transport-header", full[..14 + 20 + 7].to_vec()));
    let mut long_ihl = full.clone();
    long_ihl[14] = 0x4f;
    frames.push(("ihl-beyond-frame", long_ihl[..14 + 40].to_vec()));
    for (name, frame) in frames {
        std::fs::write(corpus_file("classifier", &format!("{name}.bin")), frame).unwrap();
    }
}

/// A header parser's verdict on `bytes` holds up: a header that parses is emitted again
/// byte for byte and parses the same; a truncated one really is too short; anything else
/// refused had the bytes to be judged.
fn check_header<R: PartialEq + std::fmt::Debug>(
    bytes: &[u8],
    header_len: usize,
    parsed: Result<R, WireError>,
    emit: impl Fn(&R) -> Vec<u8>,
    parse: impl Fn(&[u8]) -> Result<R, WireError>,
) {
    match parsed {
        Ok(repr) => {
            let emitted = emit(&repr);
            assert_eq!(emitted[..header_len], bytes[..header_len], "{repr:?} is emitted as it was read");
            assert_eq!(parse(&emitted).as_ref(), Ok(&repr), "{repr:?} parses again");
        }
        Err(WireError::Truncated { len, need, .. }) => {
            assert!(len == bytes.len() && len < need, "truncated at {len} < {need}, {} bytes", bytes.len())
        }
        Err(e) => assert!(bytes.len() >= header_len, "{e} on {} bytes", bytes.len()),
    }
}

/// Probe headers (the demo's messages, `rate: auto`'s probes, what `bauxite reflect`
/// answers): no panic, in the view's accessors either, and a verdict that holds up.
fn check_probe_header(bytes: &[u8]) {
    if let Ok(p) = probe::Packet::new_checked(bytes) {
        let _ = (p.magic(), p.version(), p.kind_byte(), p.flags(), p.stream(), p.seq(), p.sent_ns());
        assert_eq!(p.tag().map(<[u8]>::len), p.tagged().then_some(probe::TAG_LEN));
        let [head, rest] = p.authenticated_parts();
        assert!(head.len() + rest.len() <= bytes.len());
    }
    check_header(bytes, probe::HEADER_LEN, probe::Repr::parse_bytes(bytes), |r| r.to_vec(0), probe::Repr::parse_bytes);
}

#[test]
fn probe_header() {
    run("probe_header", WIRE_TOKENS, Budget::from_env(), |input, _| check_probe_header(input));
}

/// Video frame headers (the demo's video stream): as [`check_probe_header`].
fn check_video_header(bytes: &[u8]) {
    if let Ok(p) = video::Packet::new_checked(bytes) {
        let _ = (p.magic(), p.version(), p.frame(), p.sent_ns(), p.frame_len(), p.key_byte());
    }
    let emit = |r: &video::Repr| {
        let mut header = vec![0; video::HEADER_LEN];
        r.emit(&mut video::Packet::new_unchecked(&mut header[..]));
        header
    };
    check_header(bytes, video::HEADER_LEN, video::Repr::parse_bytes(bytes), emit, video::Repr::parse_bytes);
}

#[test]
fn video_header() {
    run("video_header", WIRE_TOKENS, Budget::from_env(), |input, _| check_video_header(input));
}

/// What the mutator inserts into headers: magics, versions, kinds, flags.
const WIRE_TOKENS: &[&[u8]] = &[b"BXP2", b"BXP1", b"BXV1", &[0], &[1], &[2], &[0xff], &[0x01, 0x00]];

/// Writes the header corpora: every kind of valid header, and truncated and garbage ones.
/// Run once by hand: `cargo test -p bauxite-fuzz --test fuzz -- --ignored write_header_corpora`.
#[test]
#[ignore = "writes the checked-in corpus"]
fn write_header_corpora() {
    let probe_repr = |kind, tagged| probe::Repr {
        kind,
        tagged,
        stream: 7401,
        seq: 42,
        sent_ns: 123_456_789_012,
        receive_time_ns: None,
    };
    let data = probe_repr(probe::Kind::Data, false).to_vec(64);
    let request = probe_repr(probe::Kind::EchoRequest, false).to_vec(0);
    let tagged = probe_repr(probe::Kind::EchoRequest, true).to_vec(0);
    let reply = probe_repr(probe::Kind::EchoReply, false).to_vec(100);
    let with = |bytes: &[u8], at: usize, value: u8| {
        let mut b = bytes.to_vec();
        b[at] = value;
        b
    };
    let probes: Vec<(&str, Vec<u8>)> = vec![
        ("data-64.bin", data.clone()),
        ("echo-request.bin", request.clone()),
        ("echo-request-tagged.bin", tagged.clone()),
        ("echo-reply-100.bin", reply),
        ("truncated-header.bin", request[..10].to_vec()),
        ("tag-cut-short.bin", tagged[..probe::HEADER_LEN + 5].to_vec()),
        ("old-version-bxp1.bin", with(&request, 3, b'1')),
        ("bad-magic.bin", with(&request, 0, b'Z')),
        ("undefined-kind.bin", with(&request, 4, 9)),
        ("undefined-flags.bin", with(&request, 5, 0x80)),
        ("garbage.bin", (0..40u8).map(|i| i.wrapping_mul(37)).collect()),
        ("empty.bin", Vec::new()),
    ];
    let frame = video::Repr { frame: 30, sent_ns: 9_876_543_210, frame_len: 1200, key: true };
    let key = frame.to_frame(0xab);
    let delta = video::Repr { key: false, frame_len: 40, ..frame }.to_frame(0);
    let videos: Vec<(&str, Vec<u8>)> = vec![
        ("key-frame.bin", key.clone()),
        ("delta-frame.bin", delta),
        ("header-only.bin", key[..video::HEADER_LEN].to_vec()),
        ("truncated-header.bin", key[..12].to_vec()),
        ("length-below-header.bin", {
            let mut b = key[..video::HEADER_LEN].to_vec();
            b[16..20].copy_from_slice(&3u32.to_be_bytes());
            b
        }),
        ("key-byte-2.bin", with(&key[..video::HEADER_LEN], 20, 2)),
        ("bad-magic.bin", with(&key[..video::HEADER_LEN], 1, b'Q')),
        ("garbage.bin", (0..30u8).map(|i| i.wrapping_mul(91)).collect()),
    ];
    for (target, files) in [("probe_header", probes), ("video_header", videos)] {
        for (name, bytes) in files {
            std::fs::write(corpus_file(target, name), bytes).unwrap();
        }
    }
}
