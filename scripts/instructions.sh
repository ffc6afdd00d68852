#!/usr/bin/env bash
# Instructions per event of a sweep's run against the bare loop, counted by
# valgrind's callgrind: the same figures on every run of the same binary, where
# time ratios on a shared 2-core machine move by a fifth from run to run.
#
#   scripts/instructions.sh [--max-ratio R] [--budget FILE] [--runs N] [SCENARIO...]
#
# Without scenarios it takes the reference scenario of every model (what
# `idemsim bench --all` runs). It prints one line per scenario and, with
# --max-ratio, exits 1 if any ratio is above R. With --budget, each scenario
# the file names (lines `SCENARIO MAX_RATIO`, `#` comments) must stay at or
# below its own ratio, and a scenario the file does not name is an error:
# CI runs it with scripts/instruction-budget.txt, so a change that makes a
# run dearer fails until its commit raises the budget and says why. Needs
# valgrind (apt-get install valgrind) and builds the release binary first.
set -euo pipefail
cd "$(dirname "$0")/.."

max_ratio=""
budget=""
runs=20000
scenarios=()
while [ $# -gt 0 ]; do
    case "$1" in
        --max-ratio) max_ratio="$2"; shift 2 ;;
        --budget) budget="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        -*) echo "error: unknown option $1 (try --help)" >&2; exit 2 ;;
        *) scenarios+=("$1"); shift ;;
    esac
done
case "$runs" in ''|*[!0-9]*) echo "error: --runs takes a whole number, not '$runs'" >&2; exit 2 ;; esac
if [ -n "$max_ratio" ] && ! [[ "$max_ratio" =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
    echo "error: --max-ratio takes a number such as 2.5, not '$max_ratio'" >&2
    exit 2
fi
if [ -n "$budget" ] && [ ! -f "$budget" ]; then
    echo "error: --budget $budget: no such file" >&2
    exit 2
fi
# The budget of scenario $1 from the budget file, or nothing.
budget_of() {
    awk -v s="$1" '!/^[[:space:]]*(#|$)/ && $1 == s { print $2; exit }' "$budget"
}
command -v valgrind >/dev/null || { echo "error: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }

cargo build --release --quiet
bin="${CARGO_TARGET_DIR:-target}/release/idemsim"
if [ ${#scenarios[@]} -eq 0 ]; then
    mapfile -t scenarios < <("$bin" bench --all --runs 1 --rounds 1 --alloc-runs 0 --jobs 1 --json \
        | sed -n 's/.*"scenario":"\([^"]*\)".*/\1/p')
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
worst=0
over=()
printf '%-34s %12s %12s %8s\n' scenario 'engine Ir/ev' 'bare Ir/ev' ratio
for s in "${scenarios[@]}"; do
    # One thread, one round, no allocation runs: every run_seed call is one of
    # the events the JSON line counts.
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" \
        "$bin" bench "$s" --runs "$runs" --jobs 1 --rounds 1 --alloc-runs 0 --json \
        >"$tmp/json" 2>"$tmp/err" || { grep -v '^==[0-9]*==' "$tmp/err" >&2; exit 2; }
    events=$(sed -n 's/.*"events":\([0-9]*\).*/\1/p' "$tmp/json")
    bare_events=$(sed -n 's/.*"baseline_events":\([0-9]*\).*/\1/p' "$tmp/json")
    callgrind_annotate --inclusive=yes "$tmp/cg" >"$tmp/ann" 2>/dev/null
    engine_ir=$(grep -E 'sim::engine::Sim<M>::run_seed( |$)' "$tmp/ann" | head -1 | awk '{gsub(",","",$1); print $1}')
    bare_ir=$(grep -E 'sim::bench::bare_loop( |$)' "$tmp/ann" | head -1 | awk '{gsub(",","",$1); print $1}')
    if [ -z "$engine_ir" ] || [ -z "$bare_ir" ] || [ -z "$events" ] || [ -z "$bare_events" ]; then
        echo "error: $s: no counts for run_seed or bare_loop in callgrind's output" >&2
        exit 2
    fi
    line=$(awk -v e="$engine_ir" -v n="$events" -v b="$bare_ir" -v m="$bare_events" \
        'BEGIN { pe = e / n; pb = b / m; printf "%.0f %.0f %.2f", pe, pb, pe / pb }')
    read -r per_event per_bare ratio <<<"$line"
    printf '%-34s %12s %12s %7sx\n' "$s" "$per_event" "$per_bare" "$ratio"
    worst=$(awk -v a="$worst" -v b="$ratio" 'BEGIN { print (b > a) ? b : a }')
    if [ -n "$budget" ]; then
        allowed=$(budget_of "$s")
        if ! [[ "$allowed" =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
            echo "error: $budget names no ratio for $s (add a line: $s ${ratio})" >&2
            exit 2
        fi
        if awk -v r="$ratio" -v a="$allowed" 'BEGIN { exit !(r > a) }'; then
            over+=("$s: ${ratio}x, its budget ${allowed}x")
        fi
    fi
done
if [ -n "$max_ratio" ] && awk -v w="$worst" -v m="$max_ratio" 'BEGIN { exit !(w > m) }'; then
    echo "over budget: the largest ratio is ${worst}x, the budget ${max_ratio}x" >&2
    exit 1
fi
if [ ${#over[@]} -gt 0 ]; then
    printf 'over budget (%s): %s\n' "$budget" "${over[@]}" >&2
    echo "a run got dearer: make it cheaper, or raise its line in $budget in the same commit and say why" >&2
    exit 1
fi
