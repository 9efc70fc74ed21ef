#!/usr/bin/env python3
"""Profiles for the analysis tests without tracing.

gen-calls.py raw PLAN RAW SEED SLOW
    writes a plan and a raw stream (the format of tapsets/perun.stp, as
    bench/gen-raw.c writes it): main calls work and helper 200 times each on
    one thread; work takes about 1000 ns x SLOW, helper about 500 ns,
    Gaussian jitter from a seeded generator.  perun __parse turns them into
    a profile.
gen-calls.py header PROFILE CMD WORKLOAD
    sets what perun add and the pairing of perun check need in the header.
"""
import json
import random
import sys


def raw(plan, out, seed, slow):
    names = ["main", "work", "helper"]
    with open(plan, "w") as f:
        f.write("perun-plan 1\t%d\n" % len(names))
        for i, n in enumerate(names):
            f.write("%d\tfunc\t1\t%x\t0\t/t/app\t%s\t\t\t\n" % (i, 0x1000 + 16 * i, n))
    rng = random.Random(seed)
    t = 1000
    lines = ["s 3e8 0 %x" % t, "r"]

    def ev(probe, exit_):
        lines.append("%x %x %x" % (probe * 2 + exit_, 1, t))

    ev(0, 0)
    for _ in range(200):
        t += 50
        ev(1, 0)
        t += int(rng.gauss(1000, 60) * slow)
        ev(1, 1)
        t += 50
        ev(2, 0)
        t += int(rng.gauss(500, 30))
        ev(2, 1)
    t += 50
    ev(0, 1)
    lines.append("q")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


def header(path, cmd, workload):
    with open(path) as f:
        p = json.load(f)
    h = p["header"]
    h["cmd"] = cmd
    h["args"] = ""
    h["workload"] = workload
    h.setdefault("units", {"mixed(time delta)": "ns"})
    with open(path, "w") as f:
        json.dump(p, f)


if __name__ == "__main__":
    if sys.argv[1] == "raw":
        raw(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]))
    elif sys.argv[1] == "header":
        header(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit("usage: gen-calls.py raw PLAN RAW SEED SLOW | header PROFILE CMD WORKLOAD")
