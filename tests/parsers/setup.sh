#!/usr/bin/env bash
# Installs the real parsers tests/render_parsers.rs checks every diagram with:
# Graphviz `dot` (Debian package graphviz) and the `mermaid` npm package under
# Node (with jsdom, which mermaid's parser needs for its DOM), pinned by the
# package-lock.json beside this script, into DIR (default target/tmp/parsers).
# Idempotent: a second run installs nothing. Exits non-zero with a reason when
# something cannot be installed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:-$here/../../target/tmp/parsers}"
mkdir -p "$dir"

apt_install() {
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup.sh: $1 is missing and there is no apt-get to install it" >&2
    return 1
  fi
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
      echo "setup.sh: $1 is missing; install it as root (apt-get install -y $2)" >&2
      return 1
    fi
  fi
  if [ ! -e "$dir/.apt-updated" ]; then
    $sudo apt-get update -qq >&2 && touch "$dir/.apt-updated"
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$2" >&2
}

command -v dot >/dev/null 2>&1 || apt_install "Graphviz dot" graphviz
command -v dot >/dev/null 2>&1 || { echo "setup.sh: dot is still missing" >&2; exit 1; }
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  apt_install "Node.js and npm" "nodejs npm"
fi
major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 18 ]; then
  echo "setup.sh: mermaid needs Node 18 or later, found $(node --version)" >&2
  exit 1
fi

# npm ci only when the lock changed since the last install.
stamp="$dir/.installed-lock"
if [ ! -d "$dir/node_modules/mermaid" ] || ! cmp -s "$here/package-lock.json" "$stamp"; then
  cp "$here/package.json" "$here/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
  cp "$here/package-lock.json" "$stamp"
fi
cp "$here/check.mjs" "$dir/check.mjs"
echo "$dir"
