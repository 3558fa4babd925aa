#!/usr/bin/env python3
"""Runs `bauxite sim robot` on the step drop (TBF), the recovery and every trace in a
directory, and prints `rate: auto` against the references, issue 27's way:
excess p95/p99 over the clairvoyant's, video as a share of the clairvoyant's, critical
loss beside the never-dropped run's, and on the steps the seed demo's targets.

Usage: [PROFILE=FILE] [DIRECTION=down] [VIDEO_RATE=RATE] score.py BAUXITE TRACEDIR OUTDIR [SEEDS] [DURATION_S]

DIRECTION=down scores the downlink (`sim robot --direction down`: the shaper at the
robot's ingress, after the link's FIFO). VIDEO_RATE=50mbit makes the video an upload
that takes all it is given (`sim robot --video-rate`), as iperf3 does.
"""
import json
import os
import subprocess
import sys

bauxite, traces, out = sys.argv[1], sys.argv[2], sys.argv[3]
seeds = sys.argv[4] if len(sys.argv) > 4 else "5"
duration = sys.argv[5] if len(sys.argv) > 5 else "60"
here = os.path.dirname(os.path.abspath(__file__))
examples = os.path.join(here, "..", "..", "examples")


def run(name, link, extra, n=None):
    d = os.path.join(out, name)
    profile = ["--profile", os.environ["PROFILE"]] if os.environ.get("PROFILE") else []
    profile += ["--direction", os.environ["DIRECTION"]] if os.environ.get("DIRECTION") else []
    profile += ["--video-rate", os.environ["VIDEO_RATE"]] if os.environ.get("VIDEO_RATE") else []
    subprocess.run([bauxite, "sim", "robot", "--link", link, "--seeds", n or seeds, "--out", d] + profile + extra,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(d, "summary.json")) as f:
        return json.load(f)


def figures(p):
    link = p
    return (link["critical_excess_ms"]["p95"], link["critical_excess_ms"]["p99"], p["bulk_throughput_mbps"],
            p["critical_loss_pct"])


rows, fails = [], 0
tbf = "rate=50mbit,burst=7570b"
s = run("step", tbf, ["--timeline", os.path.join(examples, "step-drop.yaml")], "20")
p = s["phases"]["protected"]
runs = [r["summary"] for r in s["runs"] if r["phase"] == 2]
passed = sum(1 for r in runs if r["critical_latency_ms"]["p99"] <= 2.0)
ttp = p["time_to_protect_ms"]
ok = passed >= 0.9 * len(runs) and ttp <= 200 and p["critical_latency_from_drop_ms"]["p99"] <= 100 and p["bulk_throughput_mbps"] >= 1.26
fails += not ok
print(f"step (TBF): settled p99 <= 2 ms in {passed}/{len(runs)}, p99 {p['critical_latency_ms']['p99']:.2f} ms, "
      f"ttp {ttp:.0f} ms, p99 from drop {p['critical_latency_from_drop_ms']['p99']:.1f} ms, "
      f"video {p['bulk_throughput_mbps']:.3f} (clairvoyant {s['oracle']['clairvoyant']['bulk_throughput_mbps']:.3f}) "
      f"{'ok' if ok else 'MISS'}")
for name, link in [("recover", "rate=50mbit"), ("recover-tbf", tbf)]:
    s = run(name, link, ["--timeline", os.path.join(examples, "step-recover.yaml"), "--duration", "25"])
    follow = s["phases"]["protected"]["time_to_follow_rises_ms"]
    ok = max(follow) <= 2000
    fails += not ok and name == "recover"
    print(f"{name}: time to follow {', '.join(f'{v:.0f}' for v in follow)} ms {'ok' if ok else 'MISS'}")
for name, link in [("lossy-1pct", "rate=3mbit,loss=1%"), ("lossy-ge", "rate=3mbit,ge=1%/25%/80%/0")]:
    s = run(name, link, ["--duration", duration])
    a, c = (figures(x) for x in (s["phases"]["protected"], s["oracle"]["clairvoyant"]))
    print(f"{name}: excess p95 {a[0]:.1f} / {c[0]:.1f} ms, video {a[2]:.3f} / {c[2]:.3f} ({100 * a[2] / c[2]:.0f} %)")
print(f"{'trace':<28} {'p95 a/c':>14} {'p99 a/c':>16} {'video a/c':>16} {'loss a/n':>12} verdict")
for name in sorted(os.listdir(traces)):
    if not name.endswith(".up"):
        continue
    s = run(name[:-3], f"trace={os.path.join(traces, name)},queue=100kb", ["--duration", duration])
    a, c, n = (figures(x) for x in (s["phases"]["protected"], s["oracle"]["clairvoyant"], s["oracle"]["never_dropped"]))
    std = figures(s["phases"]["standard"])
    share = a[2] / c[2] if c[2] > 0 else 1.0
    ok = a[0] <= c[0] + 25 and a[1] <= c[1] + 100 and share >= 0.85 and (a[3] <= n[3] + 0.01) and a[0] <= std[0]
    fails += not ok
    print(f"{name[:-3]:<28} {a[0]:6.1f}/{c[0]:6.1f} {a[1]:7.1f}/{c[1]:7.1f} {a[2]:7.3f}/{c[2]:7.3f} "
          f"{a[3]:5.2f}/{n[3]:5.2f} {'ok' if ok else 'MISS'} ({100*share:.0f} %)")
print(f"misses: {fails}")
