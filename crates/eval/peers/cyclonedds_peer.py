#!/usr/bin/env python3
"""An independent DDS peer: Eclipse Cyclone DDS (PyPI `cyclonedds`), for seed 004's evaluation and
the bridge's tests and benchmark.

It publishes or subscribes ROS 2 `sensor_msgs/msg/LaserScan` on a DDS topic exactly as a ROS 2 node
would put it on the wire (`rt/<name>`, type `sensor_msgs::msg::dds_::LaserScan_`), so a test can show
the bridge forwarding another implementation's samples to another implementation's readers.

The evaluation's peer protocol (crates/eval/peers/README.md), chosen by `--duration`:
  pub --topic rt/scan --hz 30 --duration S [--ranges 1081] [--best-effort]
      [--history keep_all|keep_last] [--depth N] [--max-samples N] [--domain D] [--interface ADDR]
  sub --topic rt/scan/critical --duration S [--best-effort] [--depth N] [--domain D] [--interface ADDR]
      {"ev": ...} JSON lines; see the README.

The bridge tests' form (without `--duration`):
  pub  --topic rt/scan --hz 30 --count 300 [--ranges 1081] [--best-effort]
       waits for a matched reader, publishes `count` scans; header.frame_id carries the sequence
       number and header.stamp the wall-clock send time; prints one JSON line when done.
  sub  --topic rt/scan/critical [--best-effort] [--timeout 30] [--idle 3] [--expect N]
       prints `ready` once created, then one JSON line per sample
       {"seq": n, "recv_ns": t, "latency_ns": d}, and stops after `--expect` samples, after `--idle`
       seconds without one (once something arrived), or at `--timeout`.
  diag --topic rt/diagnostics [--timeout 30]
       reads `diagnostic_msgs/msg/DiagnosticArray` and prints one JSON line per status
       {"recv_ns": t, "level": l, "name": n, "message": m, "values": {k: v}} until `--timeout`.

Where Cyclone talks: `--interface ADDR` confines it to that interface with multicast discovery (the
evaluation's namespaces); without it CYCLONEDDS_URI decides, and if that is unset too, Cyclone is
confined to the loopback interface with unicast discovery to 127.0.0.1, so nothing leaves the machine.
Cyclone's only transport here is UDP (no shared memory: its Iceoryx transport is not configured).
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
import time
from dataclasses import dataclass

from cyclonedds.core import DDSException, InstanceState, Policy, Qos, ReadCondition, SampleState, ViewState, WaitSet
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl._support import Endianness
from cyclonedds.idl.types import float32, int32, sequence, uint8, uint32
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration

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


LOOPBACK = (
    "<CycloneDDS><Domain id='any'><General><Interfaces><NetworkInterface name='lo'/></Interfaces>"
    "<AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto</ParticipantIndex>"
    "<MaxAutoParticipantIndex>60</MaxAutoParticipantIndex><Peers><Peer address='127.0.0.1'/></Peers>"
    "</Discovery></Domain></CycloneDDS>"
)

# One interface, default multicast SPDP on it: how every peer discovers the others in the evaluation.
ON_INTERFACE = (
    "<CycloneDDS><Domain id='any'><General><Interfaces><NetworkInterface address='{address}'/></Interfaces>"
    "</General></Domain></CycloneDDS>"
)


@dataclass
class Time_(IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
    sec: int32
    nanosec: uint32


@dataclass
class Header_(IdlStruct, typename="std_msgs::msg::dds_::Header_"):
    stamp: Time_
    frame_id: str


@dataclass
class LaserScan_(IdlStruct, typename="sensor_msgs::msg::dds_::LaserScan_"):
    header: Header_
    angle_min: float32
    angle_max: float32
    angle_increment: float32
    time_increment: float32
    scan_time: float32
    range_min: float32
    range_max: float32
    ranges: sequence[float32]
    intensities: sequence[float32]

    def serialize(self, buffer=None, endianness=None, use_version_2=None) -> bytes:
        """The sample as the writer sends it: [`encode_laser_scan`] for plain little-endian CDR
        (what `DataWriter.write` asks for here), Cyclone's generic serializer otherwise."""
        if buffer is None and endianness in (None, Endianness.Little) and not use_version_2 and LITTLE_ENDIAN:
            return encode_laser_scan(self)
        return super().serialize(buffer=buffer, endianness=endianness, use_version_2=use_version_2)

    @classmethod
    def deserialize(cls, data, has_header=True, use_version_2=None):
        """A received sample: [`decode_laser_scan`] for plain little-endian CDR (every writer
        here sends that), Cyclone's generic deserializer otherwise."""
        if has_header and use_version_2 is None and isinstance(data, bytes) and data[:2] == CDR_LE[:2]:
            return decode_laser_scan(data)
        return super().deserialize(data, has_header=has_header, use_version_2=use_version_2)


# The LaserScan's encoding by hand, as the RustDDS peer does: the same bytes as Cyclone's
# generic serializer (plain CDR, little-endian; `tests/eval_peers.rs` compares them), and the
# same fields back. The generic one walks a Python object per field and packs the 2 162 floats
# one argument at a time, and on this VM, after the 33 ms between samples, everything runs
# cold: it took 0.20 ms a scan at the publisher (this: 0.05) and its reader 0.21-0.28 ms at the
# subscriber (this: 0.07), both inside the measured latency. Cyclone to Cyclone on loopback,
# p50 0.91-0.98 -> 0.64-0.65 ms, p95 1.11 -> 0.73. rclpy does this work in C and holds a
# `float32[]` as `array.array('f')`, as these do.
CDR_LE = b"\x00\x01\x00\x00"
LITTLE_ENDIAN = sys.byteorder == "little"
STAMP_AND_LENGTH = struct.Struct("<iII")
FIELDS_AND_LENGTH = struct.Struct("<7fI")
LENGTH = struct.Struct("<I")


def encode_laser_scan(scan: "LaserScan_") -> bytes:
    """`scan` in plain CDR, little-endian, with its encapsulation header."""
    frame_id = scan.header.frame_id.encode() + b"\x00"
    padding = b"\x00" * (-len(frame_id) % 4)
    ranges, intensities = array.array("f", scan.ranges).tobytes(), array.array("f", scan.intensities).tobytes()
    stamp = scan.header.stamp
    fields = (scan.angle_min, scan.angle_max, scan.angle_increment, scan.time_increment, scan.scan_time)
    head = STAMP_AND_LENGTH.pack(stamp.sec, stamp.nanosec, len(frame_id))
    scalars = FIELDS_AND_LENGTH.pack(*fields, scan.range_min, scan.range_max, len(scan.ranges))
    tail = LENGTH.pack(len(scan.intensities))
    return b"".join((CDR_LE, head, frame_id, padding, scalars, ranges, tail, intensities))


def decode_laser_scan(data: bytes) -> "LaserScan_":
    """The LaserScan in `data` (plain CDR, little-endian, after its encapsulation header)."""
    sec, nanosec, length = STAMP_AND_LENGTH.unpack_from(data, 4)
    at = 16 + length
    frame_id = data[16 : at - 1].decode()
    at += -at % 4
    *fields, count = FIELDS_AND_LENGTH.unpack_from(data, at)
    at += FIELDS_AND_LENGTH.size
    ranges = array.array("f", data[at : at + 4 * count])
    at += 4 * count
    (count,) = LENGTH.unpack_from(data, at)
    intensities = array.array("f", data[at + 4 : at + 4 + 4 * count])
    header = Header_(stamp=Time_(sec=sec, nanosec=nanosec), frame_id=frame_id)
    return LaserScan_(header, *fields, ranges=ranges, intensities=intensities)


@dataclass
class KeyValue_(IdlStruct, typename="diagnostic_msgs::msg::dds_::KeyValue_"):
    key: str
    value: str


@dataclass
class DiagnosticStatus_(IdlStruct, typename="diagnostic_msgs::msg::dds_::DiagnosticStatus_"):
    level: uint8
    name: str
    message: str
    hardware_id: str
    values: sequence[KeyValue_]


@dataclass
class DiagnosticArray_(IdlStruct, typename="diagnostic_msgs::msg::dds_::DiagnosticArray_"):
    header: Header_
    status: sequence[DiagnosticStatus_]


def qos(best_effort: bool) -> Qos:
    """The bridge tests' QoS: RELIABLE (writes block up to 1 s) or BEST_EFFORT, KEEP_LAST 10."""
    reliability = Policy.Reliability.BestEffort if best_effort else Policy.Reliability.Reliable(duration(seconds=1))
    return Qos(reliability, Policy.History.KeepLast(10), Policy.Durability.Volatile)


def protocol_qos(args) -> Qos:
    """The evaluation's QoS from the protocol's flags. A RELIABLE writer keeps Cyclone's own
    max_blocking_time (100 ms): how long a write waits for room before it fails is part of the
    backpressure being measured, so it is the implementation's, not ours."""
    blocking = duration(milliseconds=100)
    reliability = Policy.Reliability.BestEffort if args.best_effort else Policy.Reliability.Reliable(blocking)
    keep_all = getattr(args, "history", "keep_last") == "keep_all"
    history = Policy.History.KeepAll if keep_all else Policy.History.KeepLast(args.depth)
    policies = [reliability, history, Policy.Durability.Volatile]
    if getattr(args, "max_samples", 0):
        n = args.max_samples
        policies.append(Policy.ResourceLimits(max_samples=n, max_instances=1, max_samples_per_instance=n))
    return Qos(*policies)


def laser_scan(seq: int, now_ns: int, ranges: list, period: float) -> LaserScan_:
    """A scan whose header carries `seq` (frame_id) and `now_ns` (stamp)."""
    return LaserScan_(
        header=Header_(stamp=Time_(sec=now_ns // 1_000_000_000, nanosec=now_ns % 1_000_000_000), frame_id=str(seq)),
        angle_min=-2.35,
        angle_max=2.35,
        angle_increment=4.7 / max(len(ranges), 1),
        time_increment=0.0,
        scan_time=period,
        range_min=0.02,
        range_max=30.0,
        ranges=ranges,
        intensities=ranges,
    )


def publish(args) -> None:
    """The bridge tests' publisher: waits for a reader, then `count` scans on absolute times."""
    dp = DomainParticipant(args.domain)
    topic = Topic(dp, args.topic, LaserScan_)
    writer = DataWriter(dp, topic, qos(args.best_effort))
    deadline = time.monotonic() + args.timeout
    while not writer.get_matched_subscriptions():
        if time.monotonic() > deadline:
            sys.exit(f"cyclone_peer pub: no reader matched {args.topic} within {args.timeout} s")
        time.sleep(0.05)
    time.sleep(args.settle)
    ranges = array.array("f", [1.5] * args.ranges)
    period = 1.0 / args.hz
    start = time.monotonic()
    for seq in range(args.count):
        target = start + seq * period
        delay = target - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        writer.write(laser_scan(seq, time.time_ns(), ranges, period))
    elapsed = time.monotonic() - start
    print(json.dumps({"published": args.count, "seconds": elapsed}), flush=True)
    # Give RELIABLE readers time to repair the tail before the writer disappears. A reader
    # that died unannounced (a SIGKILLed bridge, still matched until its lease ends) never
    # acknowledges: that is a timeout, not a failure. cyclonedds 11.0.1 raises AttributeError
    # on a timeout here (it compares with `Exception.DDS_RETCODE_TIMEOUT`).
    try:
        writer.wait_for_acks(duration(seconds=2))
    except (DDSException, AttributeError) as e:
        print(f"not every reader acknowledged within 2 s ({type(e).__name__})", file=sys.stderr, flush=True)
    time.sleep(0.5)


def next_tick(due: float, period: float, now: float) -> float:
    """The tick after the one due at `due`, skipping the ones already missed at `now`: an rclpy
    (rcl) timer's rule, so a write that blocked delays one attempt and the grid resumes."""
    due += period
    if due < now:
        due += period * (int((now - due) / period) + 1)
    return due


def publish_protocol(args) -> None:
    """The evaluation's publisher: a fixed-period timer, no waiting for readers, one line per attempt."""
    dp = DomainParticipant(args.domain)
    writer = DataWriter(dp, Topic(dp, args.topic, LaserScan_), protocol_qos(args))
    ranges = array.array("f", [1.5] * args.ranges)
    period = 1.0 / args.hz
    stop = Stop(args.duration)  # before `ready`: a SIGTERM from then on ends the run cleanly
    emit({"ev": "ready"})
    due = time.monotonic()
    seq = 0
    while not stop.due():
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(min(delay, 0.05))
            continue
        due = next_tick(due, period, time.monotonic())
        now = time.time_ns()
        scan = laser_scan(seq, now, ranges, period)
        began = time.monotonic_ns()
        try:
            writer.write(scan)
            ok = True
        except DDSException:  # DDS_RETCODE_TIMEOUT: no room within max_blocking_time
            ok = False
        emit({"ev": "pub", "seq": seq, "t_ns": now, "ok": ok, "call_ns": time.monotonic_ns() - began})
        seq += 1
    if not stop.requested:
        try:  # let RELIABLE readers repair the tail; bounded, since a frozen reader never acknowledges
            writer.wait_for_acks(duration(seconds=1))
        except DDSException:
            pass


def scans(dp, reader, until):
    """Yields (scan, recv_ns) for each LaserScan as it arrives, until `until()` says stop.
    A waitset wakes on arrival, so no polling interval adds to the measured latency."""
    waitset = WaitSet(dp)
    waitset.attach(ReadCondition(reader, SampleState.Any | ViewState.Any | InstanceState.Any))
    while not until():
        waitset.wait(duration(milliseconds=50))
        for scan in reader.take(N=64):
            recv = time.time_ns()
            if isinstance(scan, LaserScan_):  # a writer that went away is an InvalidSample
                yield scan, recv


def stamp_ns(scan: LaserScan_) -> int:
    return scan.header.stamp.sec * 1_000_000_000 + scan.header.stamp.nanosec


def subscribe(args) -> None:
    """The bridge tests' subscriber: stops by itself (`--expect`, `--idle`, `--timeout`)."""
    dp = DomainParticipant(args.domain)
    reader = DataReader(dp, Topic(dp, args.topic, LaserScan_), qos(args.best_effort))
    print("ready", flush=True)
    deadline = time.monotonic() + args.timeout
    last = None
    got = 0

    def until() -> bool:
        idle = last is not None and time.monotonic() - last > args.idle
        return time.monotonic() >= deadline or idle or bool(args.expect and got >= args.expect)

    for scan, recv in scans(dp, reader, until):
        line = {"seq": int(scan.header.frame_id), "recv_ns": recv, "latency_ns": recv - stamp_ns(scan)}
        print(json.dumps(line), flush=True)
        last = time.monotonic()
        got += 1


def subscribe_protocol(args) -> None:
    """The evaluation's subscriber: one line per sample until --duration or a signal."""
    dp = DomainParticipant(args.domain)
    reader = DataReader(dp, Topic(dp, args.topic, LaserScan_), protocol_qos(args))
    stop = Stop(args.duration)  # before `ready`: a SIGTERM from then on ends the run cleanly
    emit({"ev": "ready"})
    for scan, recv in scans(dp, reader, stop.due):
        emit({"ev": "recv", "seq": int(scan.header.frame_id), "stamp_ns": stamp_ns(scan), "recv_ns": recv})


def diagnostics(args) -> None:
    dp = DomainParticipant(args.domain)
    topic = Topic(dp, args.topic, DiagnosticArray_)
    reader = DataReader(dp, topic, qos(args.best_effort))
    print("ready", flush=True)
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        for array in reader.take(N=16):
            if not isinstance(array, DiagnosticArray_):
                continue
            for st in array.status:
                values = {kv.key: kv.value for kv in st.values}
                line = {"recv_ns": time.time_ns(), "level": st.level, "name": st.name, "message": st.message}
                print(json.dumps({**line, "values": values}), flush=True)
        time.sleep(0.01)


# Flags of one form only; giving one to the other form is an error, not silently ignored.
LEGACY_ONLY = ("count", "settle", "timeout", "idle", "expect")
PROTOCOL_ONLY = ("depth", "history", "max_samples")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["pub", "sub", "diag"])
    parser.add_argument("--topic", required=True)
    parser.add_argument("--domain", type=int, default=0)
    parser.add_argument("--interface", help="the only interface (address) Cyclone uses, with multicast discovery")
    parser.add_argument("--best-effort", action="store_true")
    parser.add_argument("--hz", type=float, default=30.0)
    parser.add_argument("--ranges", type=int, default=1081)
    parser.add_argument("--duration", type=float, help="seconds to run: the evaluation's protocol")
    parser.add_argument("--depth", type=int, help="protocol: KEEP_LAST depth (default 10)")
    parser.add_argument("--history", choices=["keep_all", "keep_last"], help="protocol: writer history")
    parser.add_argument("--max-samples", type=int, help="protocol: the writer's resource limit")
    parser.add_argument("--count", type=int, help="bridge tests: scans to publish (default 300)")
    parser.add_argument("--settle", type=float, help="bridge tests: seconds to wait after the first match (0.5)")
    parser.add_argument("--timeout", type=float, help="bridge tests: seconds to run at most (30)")
    parser.add_argument("--idle", type=float, help="bridge tests: seconds without a sample to stop after (3)")
    parser.add_argument("--expect", type=int, help="bridge tests: samples to stop after")
    args = parser.parse_args(argv)
    protocol = args.duration is not None
    if protocol and args.mode == "diag":
        parser.error("diag has no --duration; it runs until --timeout")
    wrong = PROTOCOL_ONLY if not protocol else LEGACY_ONLY
    given = [f"--{n.replace('_', '-')}" for n in wrong if getattr(args, n) is not None]
    if given:
        form = "the bridge tests' form (no --duration)" if not protocol else "the protocol's form (--duration)"
        parser.error(f"{', '.join(given)}: not a flag of {form}")
    defaults = {"depth": 10, "history": "keep_last", "max_samples": 0} if protocol else {
        "count": 300, "settle": 0.5, "timeout": 30.0, "idle": 3.0, "expect": 0}
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    for name in ("hz", "depth", "ranges", "max_samples", "count"):
        value = getattr(args, name, None)
        if value is not None and (value < 0 or (name in ("hz", "depth") and value == 0)):
            parser.error(f"--{name.replace('_', '-')} {value}: must be positive")
    return args


def main() -> None:
    args = parse_args()
    if args.interface:
        wait_for_interface("cyclonedds_peer", args.interface)
        os.environ["CYCLONEDDS_URI"] = ON_INTERFACE.format(address=args.interface)
    else:
        os.environ.setdefault("CYCLONEDDS_URI", LOOPBACK)
    protocol = args.duration is not None
    run = {
        ("pub", True): publish_protocol,
        ("sub", True): subscribe_protocol,
        ("pub", False): publish,
        ("sub", False): subscribe,
        ("diag", False): diagnostics,
    }[(args.mode, protocol)]
    run(args)


if __name__ == "__main__":
    main()
