#!/usr/bin/env python3
"""Generates uplink traces (mahimahi format) of the kinds `rate: auto` must hold on,
seeded, so every controller change is checked on links nobody tuned it for:

  lte-K       a drive: rate a log-space random walk 0.5-20 Mbit/s, short fades, outages of 0.2-2 s
  evdo-K      a slow drive: 0.1-2.5 Mbit/s, capacity granted in slots every ~27 ms
  sat-K       a satellite: 8-60 Mbit/s, a handover every 15 s (100-400 ms outage, a new rate)
  tunnel-K    a road with tunnels: 2-10 Mbit/s, a 5 s outage every 25-40 s
  flat-K      a steady link at one rate, 0.6-6 Mbit/s, with small jitter

Usage: gen_traces.py OUTDIR [SEEDS] [SECONDS]   (writes FAMILY-K.up for K < SEEDS)
"""
import math
import os
import random
import sys

OPP_BITS = 1504 * 8


def write(path, rates_bps_per_ms, slot_ms=1):
    """rates per millisecond -> opportunity timestamps; with slot_ms > 1 the credit of
    a slot is delivered at its last millisecond (a scheduler's grant)."""
    lines, credit = [], 0.0
    n = len(rates_bps_per_ms)
    for ms, bps in enumerate(rates_bps_per_ms):
        credit += bps / 1000.0 / OPP_BITS
        if (ms + 1) % slot_ms == 0 or ms == n - 1:
            k = int(credit)
            credit -= k
            lines.extend([ms + 1] * k)
    if not lines or lines[-1] != n:
        lines.append(n)  # the period is the last timestamp
    with open(path, "w") as f:
        f.write("\n".join(map(str, lines)) + "\n")


def walk(rng, seconds, lo, hi, step_ms, sigma):
    out, level = [], math.log(rng.uniform(lo, hi))
    for _ in range(seconds * 1000 // step_ms):
        level += rng.gauss(0, sigma)
        level = min(max(level, math.log(lo)), math.log(hi))
        out.extend([math.exp(level)] * step_ms)
    return out


def lte(rng, seconds):
    r = walk(rng, seconds, 0.5e6, 20e6, 100, 0.25)
    t = 0
    while t < len(r):
        t += int(rng.expovariate(1 / 20000))
        length = int(rng.uniform(200, 2000))
        for i in range(t, min(t + length, len(r))):
            r[i] = 0.0
        t += length
    return r, 1


def evdo(rng, seconds):
    return walk(rng, seconds, 0.1e6, 2.5e6, 200, 0.2), 27


def sat(rng, seconds):
    r, t = [], 0
    while t < seconds * 1000:
        rate = rng.uniform(8e6, 60e6)
        gap = int(rng.uniform(100, 400))
        r.extend([0.0] * gap + [rate * rng.uniform(0.8, 1.2) for _ in range(15000 - gap)])
        t += 15000
    return r[: seconds * 1000], 1


def tunnel(rng, seconds):
    r = walk(rng, seconds, 2e6, 10e6, 100, 0.15)
    t = int(rng.uniform(5000, 20000))
    while t < len(r):
        for i in range(t, min(t + 5000, len(r))):
            r[i] = 0.0
        t += 5000 + int(rng.uniform(20000, 35000))
    return r, 1


def flat(rng, seconds):
    rate = math.exp(rng.uniform(math.log(0.6e6), math.log(6e6)))
    return [rate * rng.uniform(0.9, 1.1) for _ in range(seconds * 1000)], 1


def main():
    out = sys.argv[1]
    seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    seconds = int(sys.argv[3]) if len(sys.argv) > 3 else 120
    os.makedirs(out, exist_ok=True)
    for name, family in [("lte", lte), ("evdo", evdo), ("sat", sat), ("tunnel", tunnel), ("flat", flat)]:
        for k in range(seeds):
            rng = random.Random(f"{name}-{k}")
            rates, slot = family(rng, seconds)
            write(os.path.join(out, f"{name}-{k}.up"), rates, slot)


if __name__ == "__main__":
    main()
