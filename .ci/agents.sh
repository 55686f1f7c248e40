#!/usr/bin/env bash
# The real agent clients for the real-client suite (crates/mem-cli/tests/real_clients.rs):
# Claude Code and Codex CLI from npm, at the versions docs/INTEGRATION.md is written against.
#
#   .ci/agents.sh            installs them when missing (npm, into $MEM_AGENTS_DIR, default
#                            ~/.cache/mewmem-agents/<versions>) and prints the folder holding the
#                            `claude` and `codex` commands as the last line (export it as
#                            MEM_AGENTS_BIN)
#
# Needs node and npm (>= 18) and the npm registry; nothing else is downloaded at test time (the
# suite points both clients at its own server on loopback, also as their HTTPS proxy).
# Exits 1 with a message when npm is missing or the install fails.
set -euo pipefail
CLAUDE_CODE_VERSION=2.1.328
CODEX_VERSION=0.169.0
DIR=${MEM_AGENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mewmem-agents/claude-$CLAUDE_CODE_VERSION-codex-$CODEX_VERSION}
BIN=$DIR/node_modules/.bin

if ! command -v npm >/dev/null 2>&1; then
  echo "agents: npm not found; install node and npm to run the real-client suite" >&2
  exit 1
fi
if [ -x "$BIN/claude" ] && [ -x "$BIN/codex" ] \
  && "$BIN/claude" --version 2>/dev/null | grep -q "^$CLAUDE_CODE_VERSION " \
  && "$BIN/codex" --version 2>/dev/null | grep -q " $CODEX_VERSION$"; then
  echo "agents: Claude Code $CLAUDE_CODE_VERSION and Codex CLI $CODEX_VERSION already in $DIR" >&2
else
  t0=$(date +%s)
  mkdir -p "$DIR"
  npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@openai/codex@$CODEX_VERSION" >&2
  "$BIN/claude" --version >&2
  "$BIN/codex" --version >&2
  echo "agents: installed in $(( $(date +%s) - t0 )) s into $DIR" >&2
fi
echo "$BIN"
