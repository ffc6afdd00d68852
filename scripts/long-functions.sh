#!/usr/bin/env bash
# Lists every function over the line limit of clippy.toml (too-many-lines-threshold), per package:
#   scripts/long-functions.sh [cargo clippy package args, e.g. -p idemsim-models]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo clippy --all-targets "${@:---workspace}" --message-format=short -- -A clippy::all -W clippy::too_many_lines 2>&1 \
  | grep 'too_many_lines\|this function has too many lines' | sort -u
