#!/usr/bin/env bash
# Installs Debian's chromium for the browser tests of the web view (internal/ui) when it is missing and
# this machine allows it: with apt-get, as root or with passwordless sudo. Otherwise it says why, and the
# browser tests skip with the same reason. CAPSTAN_CHROMIUM names another Chromium executable.
set -euo pipefail
if [[ -n "${CAPSTAN_CHROMIUM:-}" ]] || command -v chromium >/dev/null 2>&1; then
  exit 0
fi
skip() { echo "chromium: $*; the browser tests of internal/ui will skip (install it with: apt-get install -y chromium)" >&2; exit 0; }
command -v apt-get >/dev/null 2>&1 || skip "not installed, and this machine has no apt-get"
if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo=(sudo -n)
else
  skip "not installed, and installing it needs root or passwordless sudo"
fi
echo "Installing Debian's chromium for the browser tests (apt-get install -y chromium)"
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq || skip "apt-get update failed"
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null || skip "apt-get install chromium failed"
