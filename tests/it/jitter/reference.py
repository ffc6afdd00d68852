#!/usr/bin/env python3
"""Runs AWS's backoff simulator (aws-samples/aws-arch-backoff-simulator,
src/backoff_simulator.py, commit 66cb169) unchanged for the N of
docs/backoff-and-jitter.md, and prints its means with intervals.

Usage: reference.py PATH/TO/backoff_simulator.py [SEEDS] [--csv]

With --csv it prints the same cells as the file `sweep --plot-reference`
reads (docs/backoff-and-jitter.reference.csv): one row per cell and metric,
the series named by the catalog scenario of its strategy, calls as
attempts_per_run and time as completion_us, in microseconds.

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


SCENARIOS = {"no jitter": "contention-no-jitter", "full": "contention-full-jitter",
             "equal": "contention-equal-jitter", "decorrelated": "contention-decorrelated-jitter",
             "no backoff": "contention-no-backoff"}


def main():
    env = load(sys.argv[1])
    csv = "--csv" in sys.argv
    args = [a for a in sys.argv[2:] if a != "--csv"]
    seeds = int(args[0]) if args else 5
    names = (("ExpoBackoff", "no jitter"), ("ExpoBackoffFullJitter", "full"),
             ("ExpoBackoffEqualJitter", "equal"), ("ExpoBackoffDecorr", "decorrelated"),
             ("NoBackoff", "no backoff"))
    if csv:
        print("# AWS's simulator (66cb169), 95% interval")
        print("x,series,metric,value,low,high")
        for clients in CLIENTS:
            for cls, name in names:
                (c, ch), (t, th) = cell(env, clients, env[cls], seeds)
                series = SCENARIOS[name]
                print(f"{clients},{series},attempts_per_run,{c:.1f},{c - ch:.1f},{c + ch:.1f}")
                print(f"{clients},{series},completion_us,{t * 1000:.0f},"
                      f"{(t - th) * 1000:.0f},{(t + th) * 1000:.0f}")
        return
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
