#!/usr/bin/env bash
# Installs Debian's Java runtime and Maven, which the workflow tests (test/workflows) need for the Temporal
# test server (resolved from Maven Central by test/helpers/temporal-test-server.ts), when either is missing.
set -euo pipefail
if command -v java >/dev/null 2>&1 && command -v mvn >/dev/null 2>&1; then
  echo "install-java: $(command -v java) and $(command -v mvn) already present"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-java: no apt-get here; install Java 8 or later and Maven yourself" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends default-jre-headless maven >/dev/null
echo "install-java: installed $(command -v java) and $(command -v mvn)"
