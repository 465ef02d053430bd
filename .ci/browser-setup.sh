#!/usr/bin/env bash
# Install Debian's chromium for the end-to-end test (tests/test_explorer_browser.py), if it is missing.
# Idempotent: does nothing when `chromium` is already on PATH. Playwright drives this binary through
# `executable_path`; it never downloads a browser of its own (do not run `playwright install`).
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  echo "== chromium present: $(command -v chromium)"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "chromium is missing and installing it needs root (apt-get install chromium); run this script as root." >&2
  exit 1
fi

echo "== installing chromium with apt-get"
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
command -v chromium >/dev/null 2>&1 || { echo "apt-get installed chromium but it is not on PATH" >&2; exit 1; }
echo "== chromium installed: $(command -v chromium)"
