#!/bin/sh
# Installs the real Claude Code CLI, exact-pinned by this folder's package-lock.json, for
# backchannel's Claude Code tests only (test/claude-code-*.test.ts): into a cache folder
# outside the project's node_modules, so that `npm ci && npm start` never fetches its
# ~370 MB native binary. Run as `npm run claude-code:install`; the tests find it there.
# The folder: $BACKCHANNEL_CLAUDE_CODE_DIR, default ${XDG_CACHE_HOME:-~/.cache}/backchannel/claude-code.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
dir="${BACKCHANNEL_CLAUDE_CODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/backchannel/claude-code}"
mkdir -p "$dir"
if cmp -s "$here/package-lock.json" "$dir/package-lock.json" && [ -x "$dir/node_modules/@anthropic-ai/claude-code-linux-x64/claude" ]; then
  echo "Claude Code is installed in $dir"
  exit 0
fi
cp "$here/package.json" "$here/package-lock.json" "$dir/"
# --ignore-scripts: the tests run the platform package's native `claude` directly, so the
# launcher's install script (which npm's policy would not run anyway) is not needed.
npm ci --prefix "$dir" --ignore-scripts --no-audit --no-fund --loglevel=error
echo "Claude Code installed in $dir"
