#!/bin/sh
# Installs the real agent hosts named on the command line (codex, gemini), each
# exact-pinned by test/support/<host>/cli/package-lock.json, for backchannel's tests of
# that host only (test/<host>-*.test.ts): into a cache folder outside the project's
# node_modules, so that `npm ci && npm start` never fetches them (Codex alone is 424 MB).
# Run as `npm run hosts:install`; the tests find them there (test/support/host-install.ts).
# The folder of each: $BACKCHANNEL_HOSTS_DIR/<host>, default ${XDG_CACHE_HOME:-~/.cache}/backchannel/<host>.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
root="${BACKCHANNEL_HOSTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/backchannel}"
[ $# -gt 0 ] || { echo "usage: $0 codex|gemini ..." >&2; exit 1; }
for host in "$@"; do
  pins="$here/$host/cli"
  [ -f "$pins/package-lock.json" ] || { echo "$0: no pinned host named $host (no $pins/package-lock.json)" >&2; exit 1; }
  dir="$root/$host"
  # The marker is written last, so that an install cut short is done again.
  if cmp -s "$pins/package-lock.json" "$dir/package-lock.json" && [ -f "$dir/.installed" ]; then
    echo "$host is installed in $dir"
    continue
  fi
  mkdir -p "$dir"
  rm -f "$dir/.installed"
  cp "$pins/package.json" "$pins/package-lock.json" "$dir/"
  echo "installing $host into $dir"
  # --ignore-scripts: the tests run each host's own entry (Codex's native binary from its
  # platform package, Gemini CLI's bundled gemini.js); no install script is needed.
  npm ci --prefix "$dir" --ignore-scripts --no-audit --no-fund --loglevel=error
  touch "$dir/.installed"
  echo "$host installed in $dir"
done
