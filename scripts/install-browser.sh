#!/usr/bin/env bash
# Installs what the dashboard's browser tests need, idempotently: Debian's chromium (driven through
# its own binary, never a browser build downloaded by `playwright install`) and the Python
# playwright package into .venv. Safe to run on every test run: each step is skipped when done.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
if ! .venv/bin/python -c "import playwright" >/dev/null 2>&1; then
  .venv/bin/python -m pip install -q "playwright>=1.45"
fi
