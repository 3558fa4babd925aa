//! The example profiles in `examples/profiles/` (explained in the guide's "Example profiles"):
//! each is valid, and each puts the traffic its comments name in the lane they say. A profile
//! edited so that, say, MAVLink falls to the default lane fails here, not on a drone.

use std::path::{Path, PathBuf};

use bauxite_core::{PacketKey, RateSetting, ValidatedProfile};

fn example(name: &str) -> ValidatedProfile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/profiles").join(name);
    bauxite_core::load_profile(&path).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The lane's name of `packet` under `profile`.
fn lane(profile: &ValidatedProfile, packet: PacketKey) -> &str {
    &profile.lanes[profile.lane_of(&packet)].name
}

const fn marked(dscp: u8) -> PacketKey {
    PacketKey { dscp, ..PacketKey::udp(40000, 40001) }
}

/// DSCP EF (46), CS6 (48), AF11 (10).
const EF: u8 = 46;
const CS6: u8 = 48;
const AF11: u8 = 10;

#[test]
fn every_example_is_listed_here() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/profiles");
    let mut names: Vec<PathBuf> =
        std::fs::read_dir(&dir).unwrap().map(|e| PathBuf::from(e.unwrap().file_name())).collect();
    names.sort();
    let expected = ["drone-5g.yaml", "forwarding-box.yaml", "ground-robot-lte.yaml", "ros2-dds.yaml"];
    assert_eq!(names, expected.map(PathBuf::from), "a new example needs its test (and its guide paragraph)");
}

#[test]
fn the_lte_ground_robot_measures_its_rate_and_drops_video_and_uploads_first() {
    let p = example("ground-robot-lte.yaml");
    assert_eq!(p.rate, RateSetting::Auto);
    assert_eq!(p.reflectors().len(), 1);
    assert!(p.auto_rate.key_file.as_ref().is_some_and(|k| k.ends_with("examples/profiles/probe.key")));
    assert_eq!(lane(&p, PacketKey::udp(50000, 7401)), "critical", "teleop commands");
    assert_eq!(lane(&p, PacketKey::udp(7400, 50000)), "critical", "their acks");
    assert_eq!(lane(&p, marked(EF)), "critical");
    assert_eq!(lane(&p, PacketKey::udp(50000, 5604)), "video");
    assert_eq!(lane(&p, PacketKey::tcp(50000, 443)), "bulk", "an upload");
    assert_eq!(lane(&p, PacketKey::tcp(443, 50000)), "telemetry", "a download's acks are not bulk");
    assert_eq!(lane(&p, PacketKey::udp(50000, 9000)), "telemetry");
    let droppable: Vec<&str> = p.lanes.iter().filter(|l| l.drop_when_congested).map(|l| l.name.as_str()).collect();
    assert_eq!(droppable, ["video", "bulk"]);
}

#[test]
fn the_drone_keeps_mavlink_first_and_has_a_standby_reflector() {
    let p = example("drone-5g.yaml");
    assert_eq!(p.rate, RateSetting::Auto);
    assert_eq!(p.reflectors().len(), 2, "the reflector and ping as its standby");
    assert_eq!(lane(&p, PacketKey::udp(14555, 14550)), "critical", "MAVLink to the GCS");
    assert_eq!(lane(&p, PacketKey::udp(14550, 14555)), "critical", "MAVLink answers");
    assert_eq!(lane(&p, PacketKey::udp(40000, 5600)), "video");
    assert_eq!(lane(&p, PacketKey::tcp(40000, 14550)), "telemetry", "MAVLink is UDP only");
    assert!(p.lanes[2].drop_when_congested && !p.lanes[0].drop_when_congested);
}

#[test]
fn the_ros2_robot_puts_each_dds_domain_in_its_lane() {
    let p = example("ros2-dds.yaml");
    // RTPS 2.2's port mapping: 7400 + 250·domain + offset, user unicast 11 + 2·participant.
    let user_unicast = |domain: u16, participant: u16| 7400 + 250 * domain + 11 + 2 * participant;
    for participant in [0, 5, 119] {
        assert_eq!(lane(&p, PacketKey::udp(45000, user_unicast(1, participant))), "critical");
        assert_eq!(lane(&p, PacketKey::udp(45000, user_unicast(0, participant))), "telemetry");
        assert_eq!(lane(&p, PacketKey::udp(45000, user_unicast(2, participant))), "bulk");
    }
    assert_eq!(lane(&p, PacketKey::udp(45000, 7650)), "critical", "domain 1's discovery multicast");
    assert_eq!(lane(&p, PacketKey::tcp(50000, 22)), "bulk", "a bag pulled over scp");
    assert_eq!(p.rate, RateSetting::Fixed(bauxite_core::BitRate::from_bps(20_000_000)));
    assert_eq!(p.diagnostics.as_ref().map(|d| d.domain_id), Some(0));
}

#[test]
fn the_forwarding_box_classifies_by_what_the_devices_mark() {
    let p = example("forwarding-box.yaml");
    assert_eq!(lane(&p, marked(EF)), "critical");
    assert_eq!(lane(&p, marked(CS6)), "critical");
    assert_eq!(lane(&p, PacketKey::tcp(50000, 502)), "critical", "Modbus/TCP");
    assert_eq!(lane(&p, marked(AF11)), "bulk");
    assert_eq!(lane(&p, PacketKey::tcp(50000, 873)), "bulk", "rsync");
    assert_eq!(lane(&p, marked(0)), "telemetry");
    assert_eq!(p.reflectors().len(), 1);
}
