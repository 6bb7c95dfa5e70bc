#!/usr/bin/env bash
# Installs Debian's Chromium, which the browser tests drive with playwright-core, when it is missing.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  echo "install-chromium: $(command -v chromium) already present"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-chromium: no apt-get here; install Chromium yourself and set CHROMIUM_PATH" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
echo "install-chromium: installed $(command -v chromium)"
