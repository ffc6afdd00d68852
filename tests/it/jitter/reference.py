#!/usr/bin/env python3
"""Runs AWS's backoff simulator (aws-samples/aws-arch-backoff-simulator,
src/backoff_simulator.py, commit 66cb169) unchanged for the N of
docs/backoff-and-jitter.md, and prints its means with intervals.

Usage: reference.py PATH/TO/backoff_simulator.py [SEEDS]

The simulator's own classes are used as they are (Net with |N(10, 2)| ms,
the five backoff classes, OccServer, OccClient, run_sim, setup_sim); only
Python 2's `xrange` is provided and its `run()` (which sweeps 10..190 and
writes CSV files) is not called. Each seed runs 100 simulations per cell, as
the post's `run()` does; the interval is where a 100-run mean of the same
model falls 95% of the time, given this mean over SEEDS x 100 runs:
mean +- 1.96 sd sqrt(1/100 + 1/(100 SEEDS)), sd the per-run deviation.
"""
import io
import math
import random
import sys

CLIENTS = (10, 25, 50, 100)
RUNS = 100


def load(path):
    src = open(path).read()
    src = src.replace("\nrun()", "\n")  # the module-level call sweeps 10..190
    env = {"xrange": range, "__name__": "reference"}
    exec(compile(src, path, "exec"), env)
    return env


def cell(env, clients, cls, seeds):
    times, calls = [], []
    for seed in range(1, seeds + 1):
        random.seed(seed * 1000 + clients)
        for _ in range(RUNS):
            stats = env["Stats"]()
            queue, stats = env["setup_sim"](clients, cls, io.StringIO(), stats)
            times.append(env["run_sim"](queue))
            calls.append(stats.calls)
    return summary(calls, seeds), summary(times, seeds)


def summary(xs, seeds):
    n = len(xs)
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    half = 1.96 * sd * math.sqrt(1 / RUNS + 1 / (RUNS * seeds))
    return mean, half


def main():
    env = load(sys.argv[1])
    seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    names = (("ExpoBackoff", "no jitter"), ("ExpoBackoffFullJitter", "full"),
             ("ExpoBackoffEqualJitter", "equal"), ("ExpoBackoffDecorr", "decorrelated"),
             ("NoBackoff", "no backoff"))
    print("| clients | strategy | calls (95%) | time (95%) |")
    print("|---:|---|---:|---:|")
    for clients in CLIENTS:
        for cls, name in names:
            (c, ch), (t, th) = cell(env, clients, env[cls], seeds)
            print(f"| {clients} | {name} | {c:.0f} ({c - ch:.0f}–{c + ch:.0f}) "
                  f"| {fmt(t)} ({fmt(t - th)}–{fmt(t + th)}) |")


def fmt(ms):
    return f"{ms / 1000:.1f} s" if ms >= 1000 else f"{ms:.0f} ms"


if __name__ == "__main__":
    main()
