#!/usr/bin/env bash
# Installs the coding agents the agent tests drive (tests/agents), idempotently: Claude Code and
# Codex CLI from npm into build/agents (git-ignored), pinned, with Node.js from Debian when there
# is no npm. Safe to run on every test run: skipped when the pinned versions are already there.
set -euo pipefail
cd "$(dirname "$0")/.."

CLAUDE_CODE="@anthropic-ai/claude-code@2.1.197"
CODEX="@openai/codex@0.171.0"
DEST=build/agents

if ! command -v npm >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends nodejs npm
fi

installed() {  # name version
  [ -f "$DEST/node_modules/$1/package.json" ] && grep -q "\"version\": \"$2\"" "$DEST/node_modules/$1/package.json"
}
if installed "@anthropic-ai/claude-code" "${CLAUDE_CODE##*@}" && installed "@openai/codex" "${CODEX##*@}"; then
  exit 0
fi
mkdir -p "$DEST"
[ -f "$DEST/package.json" ] || echo '{"private": true}' > "$DEST/package.json"
npm install --prefix "$DEST" --no-audit --no-fund --silent "$CLAUDE_CODE" "$CODEX"
