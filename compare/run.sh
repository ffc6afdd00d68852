#!/usr/bin/env bash
# The at-least-once sender/receiver (4 ids) in stateright 0.31 and in idemsim,
# side by side on this machine: random-walk steps/s against events/s (the
# median of REPEAT runs, dedup on), and the time and work to the first
# violation with dedup off. See compare/README.md for what is the same and
# what differs.
#
#   compare/run.sh              # 5,000,000 steps per stateright run, 3 repeats
#   STEPS=1000000 REPEAT=5 compare/run.sh
set -euo pipefail
cd "$(dirname "$0")"

N=${N:-4}
STEPS=${STEPS:-5000000}
REPEAT=${REPEAT:-3}
# idemsim runs about 15 events per schedule of this model.
RUNS=${RUNS:-$((STEPS / 15))}

# Its own target directory even when CARGO_TARGET_DIR is set: this crate's
# `idemsim` binary must not land beside (and replace) the root crate's.
cargo build --release --quiet --target-dir target
SR=./target/release/stateright
IS=./target/release/idemsim

field() { # field KEY LINE
  tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"
}

median() {
  sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}

speed() { # speed TOOL THREADS -> median of the rate field
  local tool=$1 threads=$2 key line
  for _ in $(seq "$REPEAT"); do
    if [ "$tool" = stateright ]; then
      line=$($SR sim "$N" "$threads" dedup "$STEPS")
      key=steps_per_sec
    else
      line=$($IS speed "$N" "$threads" dedup "$RUNS")
      key=events_per_sec
    fi
    field "$key" "$line"
  done | median
}

echo "machine: $(nproc) cores, $(uname -m); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| tool | checker | threads | steps or events per second (median of $REPEAT) |"
echo "|---|---|---:|---:|"
for t in 1 2; do
  printf '| stateright 0.31 | simulation (UniformChooser, depth 500) | %s | %.2f M steps/s |\n' \
    "$t" "$(echo "$(speed stateright "$t") / 1000000" | bc -l)"
done
for t in 1 2; do
  printf '| idemsim | seed sweep (swarm loss and duplication 0-50%%) | %s | %.2f M events/s |\n' \
    "$t" "$(echo "$(speed idemsim "$t") / 1000000" | bc -l)"
done

echo
echo "First violation of exactly-once with dedup off (one thread):"
echo
echo "| tool | work until found | seconds |"
echo "|---|---:|---:|"
line=$($SR sim "$N" 1 nodedup "$STEPS")
printf '| stateright 0.31 (simulation, seed 0) | %s steps | %s |\n' "$(field steps "$line")" "$(field seconds "$line")"
line=$($IS find "$N" 1 nodedup 1000000)
printf '| idemsim (seeds 0, 1, ...) | %s events in %s schedules | %s |\n' \
  "$(field events_to_first "$line")" "$(field schedules_to_first "$line")" "$(field seconds "$line")"
line=$($SR bfs "$N" 1 nodedup)
printf '| stateright 0.31 (BFS, for reference) | %s states | %s |\n' "$(field steps "$line")" "$(field seconds "$line")"
