#!/usr/bin/env python3
"""An independent DDS peer for the bridge's tests and benchmark: Eclipse Cyclone DDS (PyPI `cyclonedds`).

It publishes or subscribes ROS 2 `sensor_msgs/msg/LaserScan` on a DDS topic exactly as a ROS 2 node
would put it on the wire (`rt/<name>`, type `sensor_msgs::msg::dds_::LaserScan_`), so a test can show
the bridge forwarding another implementation's samples to another implementation's readers.

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

Unless CYCLONEDDS_URI is set, Cyclone is confined to the loopback interface with unicast discovery
to 127.0.0.1, so nothing leaves the machine.
"""

import argparse
import json
import os
import sys
import time

LOOPBACK = (
    "<CycloneDDS><Domain id='any'><General><Interfaces><NetworkInterface name='lo'/></Interfaces>"
    "<AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto</ParticipantIndex>"
    "<MaxAutoParticipantIndex>60</MaxAutoParticipantIndex><Peers><Peer address='127.0.0.1'/></Peers>"
    "</Discovery></Domain></CycloneDDS>"
)
os.environ.setdefault("CYCLONEDDS_URI", LOOPBACK)

from dataclasses import dataclass  # noqa: E402

from cyclonedds.core import Policy, Qos  # noqa: E402
from cyclonedds.domain import DomainParticipant  # noqa: E402
from cyclonedds.idl import IdlStruct  # noqa: E402
from cyclonedds.idl.types import float32, int32, sequence, uint8, uint32  # noqa: E402
from cyclonedds.pub import DataWriter  # noqa: E402
from cyclonedds.sub import DataReader  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402
from cyclonedds.util import duration  # noqa: E402


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
    reliability = Policy.Reliability.BestEffort if best_effort else Policy.Reliability.Reliable(duration(seconds=1))
    return Qos(reliability, Policy.History.KeepLast(10), Policy.Durability.Volatile)


def publish(args) -> None:
    dp = DomainParticipant(args.domain)
    topic = Topic(dp, args.topic, LaserScan_)
    writer = DataWriter(dp, topic, qos(args.best_effort))
    deadline = time.monotonic() + args.timeout
    while not writer.get_matched_subscriptions():
        if time.monotonic() > deadline:
            sys.exit(f"cyclone_peer pub: no reader matched {args.topic} within {args.timeout} s")
        time.sleep(0.05)
    time.sleep(args.settle)
    ranges = [1.5] * args.ranges
    period = 1.0 / args.hz
    start = time.monotonic()
    for seq in range(args.count):
        target = start + seq * period
        delay = target - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        now = time.time_ns()
        scan = LaserScan_(
            header=Header_(stamp=Time_(sec=now // 1_000_000_000, nanosec=now % 1_000_000_000), frame_id=str(seq)),
            angle_min=-2.35,
            angle_max=2.35,
            angle_increment=4.7 / max(args.ranges, 1),
            time_increment=0.0,
            scan_time=period,
            range_min=0.02,
            range_max=30.0,
            ranges=ranges,
            intensities=ranges,
        )
        writer.write(scan)
    elapsed = time.monotonic() - start
    print(json.dumps({"published": args.count, "seconds": elapsed}), flush=True)
    # Give RELIABLE readers time to repair the tail before the writer disappears.
    writer.wait_for_acks(duration(seconds=2))
    time.sleep(0.5)


def subscribe(args) -> None:
    dp = DomainParticipant(args.domain)
    topic = Topic(dp, args.topic, LaserScan_)
    reader = DataReader(dp, topic, qos(args.best_effort))
    print("ready", flush=True)
    deadline = time.monotonic() + args.timeout
    last = None
    got = 0
    while time.monotonic() < deadline:
        if last is not None and time.monotonic() - last > args.idle:
            break
        if args.expect and got >= args.expect:
            break
        for scan in reader.take(N=64):
            recv = time.time_ns()
            if not isinstance(scan, LaserScan_):
                continue  # a writer went away: Cyclone hands out an InvalidSample for that
            stamp = scan.header.stamp.sec * 1_000_000_000 + scan.header.stamp.nanosec
            print(json.dumps({"seq": int(scan.header.frame_id), "recv_ns": recv, "latency_ns": recv - stamp}), flush=True)
            last = time.monotonic()
            got += 1
        time.sleep(0.001)


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["pub", "sub", "diag"])
    parser.add_argument("--topic", required=True)
    parser.add_argument("--domain", type=int, default=0)
    parser.add_argument("--best-effort", action="store_true")
    parser.add_argument("--hz", type=float, default=30.0)
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--ranges", type=int, default=1081)
    parser.add_argument("--settle", type=float, default=0.5, help="seconds to wait after the first match")
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--idle", type=float, default=3.0)
    parser.add_argument("--expect", type=int, default=0)
    args = parser.parse_args()
    {"pub": publish, "sub": subscribe, "diag": diagnostics}[args.mode](args)


if __name__ == "__main__":
    main()
