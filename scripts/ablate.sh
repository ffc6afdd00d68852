#!/usr/bin/env bash
# What the engine would cost against the bare loop without two of its parts:
# applies scripts/ablation.patch (the ledger's observe returns at once, so no
# invariant is judged; ChaCha8's blocks are replaced by SplitMix64, so a
# stream's values cost a few instructions) to a copy of HEAD in a temporary
# worktree, and runs scripts/instructions.sh there with the same arguments.
#
#   scripts/ablate.sh [--runs N] [SCENARIO...]
#
# The runs it measures are not the runs of any seed (other random values,
# no verdicts): only the instructions per event mean anything. The point is
# the floor the rest of the engine and the models set; docs/performance.md
# ("What 2.5x would take") gives the figures. Builds in target-ablation/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tmp=$(mktemp -d)
git worktree add -q --detach "$tmp/wt" HEAD
cleanup() { git -C "$root" worktree remove --force "$tmp/wt"; rm -rf "$tmp"; }
trap cleanup EXIT
git -C "$tmp/wt" apply "$root/scripts/ablation.patch" || {
    echo "error: scripts/ablation.patch no longer applies to HEAD; redo its two edits by hand" >&2
    exit 2
}
cd "$tmp/wt"
CARGO_TARGET_DIR="$root/target-ablation" scripts/instructions.sh "$@"
