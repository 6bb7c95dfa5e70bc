#!/usr/bin/env bash
# Builds the Temporal CLI (dev server included) into Go's bin folder when it is not already there.
# v1.5.1 is the newest tag that `go install` accepts (later go.mod files carry replace directives).
set -euo pipefail
VERSION=v1.5.1

if ! command -v go >/dev/null 2>&1; then
  echo "install-temporal-cli: Go is not installed (need Go >= 1.25)" >&2
  exit 1
fi
go_version=$(go env GOVERSION | sed 's/^go//')
major=${go_version%%.*}; rest=${go_version#*.}; minor=${rest%%.*}
if [ "$major" -lt 1 ] || { [ "$major" -eq 1 ] && [ "$minor" -lt 25 ]; }; then
  echo "install-temporal-cli: Go $go_version is too old (need >= 1.25)" >&2
  exit 1
fi
bin_dir=$(go env GOBIN); [ -n "$bin_dir" ] || bin_dir="$(go env GOPATH | cut -d: -f1)/bin"
if [ -x "$bin_dir/temporal" ]; then
  echo "install-temporal-cli: $bin_dir/temporal already present"
  exit 0
fi
echo "install-temporal-cli: building temporal $VERSION into $bin_dir (a few minutes the first time)"
go install "github.com/temporalio/cli/cmd/temporal@$VERSION"
echo "install-temporal-cli: installed $bin_dir/temporal"
