#!/usr/bin/env python3
"""A real ROS 2 node for seed 004's evaluation: rclpy on rmw_fastrtps_cpp (Fast DDS 2.14).

Run it with the Python of the venv `scripts/install-deps` makes (BAUXITE_ROS2_VENV, by default
/opt/bauxite/ros2-venv). It speaks the evaluation's peer protocol (crates/eval/peers/README.md):

  pub --topic rt/scan --hz 30 --duration S [--ranges 1081] [--best-effort]
      [--history keep_all|keep_last] [--depth N] [--max-samples N] [--domain D] [--interface ADDR]
  sub --topic rt/scan/critical [--best-effort] [--depth N] [--duration S] [--domain D] [--interface ADDR]

Topics are given as DDS names (`rt/scan`) and used as the ROS 2 names they map to (`/scan`).
Everything ROS 2's QoS can say (reliability, history, depth) is said through rclpy; what it
cannot, the writer's resource limits and the transports, goes into a Fast DDS XML profile this
script writes and hands to rmw_fastrtps (FASTRTPS_DEFAULT_PROFILES_FILE with
RMW_FASTRTPS_USE_QOS_FROM_XML=1), before rclpy loads it:
  - UDPv4 only: no shared memory, so a link emulator between namespaces sees every byte;
  - only the interface at `--interface` (default 127.0.0.1: nothing leaves the machine unless asked);
  - Fast DDS's own log on stderr (by default it prints errors on stdout, among the protocol's lines);
  - ROS 2's own publication defaults kept (synchronous, preallocated-with-realloc), since
    RMW_FASTRTPS_USE_QOS_FROM_XML=1 leaves the writer's QoS to this profile. Jazzy's rmw_fastrtps
    publishes synchronously unless RMW_FASTRTPS_PUBLICATION_MODE says otherwise (its library
    warns "Using default SYNCHRONOUS publishing mode"); Humble's default was asynchronous;
  - `--max-samples N`: resource limits of N samples on the topic's writer, which with KEEP_ALL is
    the seed's collapsing writer: once N samples wait for a reader's acknowledgement, publish()
    blocks for the reliability's max_blocking_time (Fast DDS's 100 ms) and then fails.
"""

import argparse
import array
import fcntl
import json
import os
import signal
import socket
import struct
import sys
import tempfile
import time

# --- The protocol's shared part: the same in every peer script (each is self-contained: ---
# --- `bauxite eval bridge` embeds the scripts one by one). Change it in all of them. ---

SIOCGIFFLAGS = 0x8913
SIOCGIFADDR = 0x8915
IFF_UP = 0x1
IFF_RUNNING = 0x40


def emit(line: dict) -> None:
    """One protocol line on stdout, flushed at once: the evaluation reads them as they come."""
    print(json.dumps(line, separators=(",", ":")), flush=True)


class Stop:
    """When a run ends: at `seconds` (None: never) or on SIGTERM/SIGINT, which only set a flag
    so the run ends between samples and its last lines are still printed."""

    def __init__(self, seconds):
        self.requested = False
        self.deadline = None if seconds is None else time.monotonic() + seconds
        signal.signal(signal.SIGTERM, self.request)
        signal.signal(signal.SIGINT, self.request)

    def request(self, *_):
        self.requested = True

    def due(self) -> bool:
        return self.requested or (self.deadline is not None and time.monotonic() >= self.deadline)


def interface_with(address: str):
    """(name, running) of the interface holding IPv4 `address`, or None if none does."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _, name in socket.if_nameindex():
            request = struct.pack("256s", name.encode()[:15])
            try:
                local = socket.inet_ntoa(fcntl.ioctl(s.fileno(), SIOCGIFADDR, request)[20:24])
            except OSError:
                continue  # no IPv4 address
            if local != address:
                continue
            flags = struct.unpack("H", fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, request)[16:18])[0]
            return name, flags & IFF_UP != 0 and flags & IFF_RUNNING != 0
    return None


def wait_for_interface(program: str, address: str, timeout: float = 10.0) -> None:
    """Waits until the interface holding `address` runs (has a carrier), or exits naming it.

    A veth is up a moment before its carrier is (up to a second, measured here), and Fast DDS
    drops an allow-listed interface that is not running when the participant starts, leaving a
    peer that is `ready` but deaf; so every peer waits rather than starting half-configured."""
    deadline = time.monotonic() + timeout
    while True:
        found = interface_with(address)
        if found is not None and found[1]:
            return
        if time.monotonic() >= deadline:
            why = "no interface has this address" if found is None else f"{found[0]} is not running (no carrier)"
            sys.exit(f"{program}: --interface {address}: {why} after {timeout:.0f} s")
        time.sleep(0.05)

# --- End of the protocol's shared part. ---


# The profile only applies to the topic's writer: rmw_fastrtps looks a publisher's profile up
# by its ROS 2 topic name (before mangling) and falls back to the default one.
PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns="http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles">
  <log>
    <use_default>FALSE</use_default>
    <consumer>
      <class>StdoutErrConsumer</class>
      <property><name>stderr_threshold</name><value>Log::Kind::Info</value></property>
    </consumer>
  </log>
  <profiles>
    <transport_descriptors>
      <transport_descriptor>
        <transport_id>bauxite_udpv4</transport_id>
        <type>UDPv4</type>
        <interfaces><allowlist><interface name="{interface}"/></allowlist></interfaces>
        <maxInitialPeersRange>60</maxInitialPeersRange>
      </transport_descriptor>
    </transport_descriptors>
    <participant profile_name="bauxite_participant" is_default_profile="true">
      <rtps>
        <userTransports><transport_id>bauxite_udpv4</transport_id></userTransports>
        <useBuiltinTransports>false</useBuiltinTransports>
        <builtin><initialPeersList>{peers}</initialPeersList></builtin>
      </rtps>
    </participant>
    <publisher profile_name="bauxite_default_publisher" is_default_profile="true">
      <qos><publishMode><kind>SYNCHRONOUS</kind></publishMode></qos>
      <historyMemoryPolicy>PREALLOCATED_WITH_REALLOC</historyMemoryPolicy>
    </publisher>
    <subscriber profile_name="bauxite_default_subscriber" is_default_profile="true">
      <historyMemoryPolicy>PREALLOCATED_WITH_REALLOC</historyMemoryPolicy>
    </subscriber>
{writer}  </profiles>
</dds>
"""

WRITER = """    <publisher profile_name="{topic}">
      <topic><resourceLimitsQos>
        <max_samples>{n}</max_samples><max_instances>1</max_instances>
        <max_samples_per_instance>{n}</max_samples_per_instance><allocated_samples>{n}</allocated_samples>
      </resourceLimitsQos></topic>
      <qos><publishMode><kind>SYNCHRONOUS</kind></publishMode></qos>
      <historyMemoryPolicy>PREALLOCATED_WITH_REALLOC</historyMemoryPolicy>
    </publisher>
"""


def ros_topic(dds_topic: str) -> str:
    """The ROS 2 name of a DDS topic name: `rt/scan` is `/scan`."""
    return "/" + dds_topic[3:]


def initial_peers(args) -> str:
    """Where the participant announces itself: DDS's default multicast group for the domain
    and, on loopback, 127.0.0.1 too. A peer confined to loopback (Cyclone's default here, or
    the bridge) cannot hear multicast there, and only hears a participant that announces to
    its unicast port (participant indices up to maxInitialPeersRange)."""
    spdp_port = 7400 + 250 * args.domain
    peers = [f"<locator><udpv4><address>239.255.0.1</address><port>{spdp_port}</port></udpv4></locator>"]
    if args.interface.startswith("127."):
        peers.append(f"<locator><udpv4><address>{args.interface}</address></udpv4></locator>")
    return "".join(peers)


def configure_fastdds(args) -> None:
    """Writes the Fast DDS profile and points rmw_fastrtps at it; must run before rclpy loads."""
    writer = ""
    if args.mode == "pub" and args.max_samples:
        writer = WRITER.format(topic=ros_topic(args.topic), n=args.max_samples)
    fd, path = tempfile.mkstemp(prefix="bauxite-fastdds-", suffix=".xml")
    with os.fdopen(fd, "w") as f:
        f.write(PROFILE.format(interface=args.interface, peers=initial_peers(args), writer=writer))
    os.environ["FASTRTPS_DEFAULT_PROFILES_FILE"] = path
    os.environ["RMW_FASTRTPS_USE_QOS_FROM_XML"] = "1"
    os.environ["RMW_IMPLEMENTATION"] = "rmw_fastrtps_cpp"
    # The XML decides the transports; the environment's shortcuts must not override it.
    for var in ("FASTDDS_BUILTIN_TRANSPORTS", "ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_STATIC_PEERS"):
        os.environ.pop(var, None)
    args.profile_path = path


def qos(args):
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

    keep_all = getattr(args, "history", "keep_last") == "keep_all"
    return QoSProfile(
        history=HistoryPolicy.KEEP_ALL if keep_all else HistoryPolicy.KEEP_LAST,
        depth=args.depth,
        reliability=ReliabilityPolicy.BEST_EFFORT if args.best_effort else ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )


def spin_until(node, stop: Stop) -> None:
    import rclpy

    executor = rclpy.executors.SingleThreadedExecutor()
    executor.add_node(node)
    while not stop.due():
        executor.spin_once(timeout_sec=0.05)


def publish(args) -> None:
    import rclpy
    from builtin_interfaces.msg import Time
    from sensor_msgs.msg import LaserScan

    node = rclpy.create_node("bauxite_eval_pub", enable_rosout=False, start_parameter_services=False)
    publisher = node.create_publisher(LaserScan, ros_topic(args.topic), qos(args))
    ranges = array.array("f", [1.5] * args.ranges)
    period = 1.0 / args.hz
    seq = 0

    def tick():
        nonlocal seq
        now = time.time_ns()
        scan = LaserScan()
        scan.header.stamp = Time(sec=now // 1_000_000_000, nanosec=now % 1_000_000_000)
        scan.header.frame_id = str(seq)
        scan.angle_min, scan.angle_max = -2.35, 2.35
        scan.angle_increment = 4.7 / max(args.ranges, 1)
        scan.scan_time = period
        scan.range_min, scan.range_max = 0.02, 30.0
        scan.ranges = ranges
        scan.intensities = ranges
        began = time.monotonic_ns()
        try:
            publisher.publish(scan)
            ok = True
        except Exception:  # rclpy raises RCLError when rmw_publish fails (e.g. a full KEEP_ALL history)
            ok = False
        emit({"ev": "pub", "seq": seq, "t_ns": now, "ok": ok, "call_ns": time.monotonic_ns() - began})
        seq += 1

    stop = Stop(args.duration)  # before `ready`: a SIGTERM from then on ends the run cleanly
    emit({"ev": "ready"})
    # An rclpy timer: after a publish that blocked past a period it fires once at once, then
    # returns to its grid, skipping the periods it missed (rcl_timer_call), as a ROS 2 node does.
    node.create_timer(period, tick)
    spin_until(node, stop)
    # Let RELIABLE readers repair the tail; bounded, since a frozen reader never acknowledges.
    if not stop.requested:
        publisher.wait_for_all_acked(rclpy.duration.Duration(seconds=1))
    node.destroy_node()


def subscribe(args) -> None:
    import rclpy
    from sensor_msgs.msg import LaserScan

    node = rclpy.create_node("bauxite_eval_sub", enable_rosout=False, start_parameter_services=False)

    def on_scan(scan):
        recv = time.time_ns()
        stamp = scan.header.stamp.sec * 1_000_000_000 + scan.header.stamp.nanosec
        emit({"ev": "recv", "seq": int(scan.header.frame_id), "stamp_ns": stamp, "recv_ns": recv})

    node.create_subscription(LaserScan, ros_topic(args.topic), on_scan, qos(args))
    stop = Stop(args.duration)  # before `ready`: a SIGTERM from then on ends the run cleanly
    emit({"ev": "ready"})
    spin_until(node, stop)
    node.destroy_node()


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["pub", "sub"])
    parser.add_argument("--topic", required=True, help="DDS topic name, rt/<ROS 2 name>")
    parser.add_argument("--domain", type=int, default=0)
    parser.add_argument("--interface", default="127.0.0.1", help="the only interface (address) DDS uses")
    parser.add_argument("--best-effort", action="store_true")
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--duration", type=float, help="seconds to run (pub: required)")
    parser.add_argument("--hz", type=float, default=30.0)
    parser.add_argument("--ranges", type=int, default=1081)
    parser.add_argument("--history", choices=["keep_all", "keep_last"], default="keep_last")
    parser.add_argument("--max-samples", type=int, default=0, help="the writer's resource limit (Fast DDS XML)")
    args = parser.parse_args()
    if not args.topic.startswith("rt/") or len(args.topic) == 3:
        parser.error(f"--topic {args.topic}: a ROS 2 topic's DDS name starts with 'rt/' (rt/scan is /scan)")
    if args.mode == "pub" and args.duration is None:
        parser.error("pub needs --duration")
    for name in ("depth", "hz", "max_samples", "ranges"):
        if getattr(args, name) < 0 or (name in ("depth", "hz") and getattr(args, name) == 0):
            parser.error(f"--{name.replace('_', '-')} {getattr(args, name)}: must be positive")
    return args


def main() -> None:
    args = parse_args()
    wait_for_interface("ros2_peer", args.interface)
    configure_fastdds(args)
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    try:
        rclpy.init(domain_id=args.domain, signal_handler_options=SignalHandlerOptions.NO)
        {"pub": publish, "sub": subscribe}[args.mode](args)
        rclpy.shutdown()
    finally:
        os.unlink(args.profile_path)


if __name__ == "__main__":
    main()
