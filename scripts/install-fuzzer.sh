#!/usr/bin/env bash
# Installs schemathesis (the fuzzer of test/fuzz) into .venv-fuzz from PyPI, when it is not there yet.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -x .venv-fuzz/bin/schemathesis ] && .venv-fuzz/bin/pip freeze 2>/dev/null | grep -qxF "$(grep -v '^#' test/fuzz/requirements.txt)"; then
  echo "install-fuzzer: $(.venv-fuzz/bin/schemathesis --version) already present"
  exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "install-fuzzer: Python 3 is not installed" >&2
  exit 1
fi
python3 -m venv .venv-fuzz
.venv-fuzz/bin/pip install --quiet --disable-pip-version-check -r test/fuzz/requirements.txt
echo "install-fuzzer: installed $(.venv-fuzz/bin/schemathesis --version)"
