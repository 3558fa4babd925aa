#!/usr/bin/env python3
"""How far a link's dips come back: for each mahimahi trace, at every 50 ms (after the
first 10 s) where the last 100 ms carried under 70 % of the median 100 ms of the 10 s
before (a dip), the share `alpha` of the way from the dip back to that median that the
next 300 ms carried (0: the dip lasts, 1: the link is back where it was), and the next
300 ms against the dip's own rate. A forecast that resumes a rate between the dip's and
the link's usual is worth what these shares say.

Usage: reversion.py TRACE.up...
"""
import bisect
import statistics
import sys


def quantile(values, q):
    values = sorted(values)
    return values[int(q * (len(values) - 1))]


for path in sys.argv[1:]:
    with open(path) as f:
        stamps = [int(line) for line in f if line.strip()]
    period = stamps[-1]
    # The trace repeats (as mahimahi replays it): two periods cover every window.
    opportunities = stamps + [t + period for t in stamps]

    def carried(a, b):
        """bit/s the link carried over [a, b) ms: 1500-byte opportunities."""
        n = bisect.bisect_left(opportunities, b) - bisect.bisect_left(opportunities, a)
        return n * 1500 * 8 / ((b - a) / 1000)

    alphas, ratios = [], []
    for t in range(10_000, period + 5_000, 50):
        dip = carried(t - 100, t)
        usual = statistics.median(carried(s, s + 100) for s in range(t - 10_000, t, 100))
        if usual <= 0 or dip >= 0.7 * usual:
            continue
        following = carried(t, t + 300)
        ratios.append(following / max(dip, 1e5))
        alphas.append((following - dip) / (usual - dip))
    name = path.rsplit("/", 1)[-1]
    if not alphas:
        print(f"{name:28} no dips")
        continue
    print(f"{name:28} dips {len(alphas):5d}  alpha p25 {quantile(alphas, .25):5.2f} p50 {quantile(alphas, .5):5.2f} "
          f"p75 {quantile(alphas, .75):5.2f}  next/dip p25 {quantile(ratios, .25):5.2f} p50 {quantile(ratios, .5):5.2f}")
