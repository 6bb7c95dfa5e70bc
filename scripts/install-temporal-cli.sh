#!/usr/bin/env bash
# Builds the Temporal CLI (dev server included) into Go's bin folder unless the same build is already there.
# v1.5.1 is the newest tag whose go.mod has no replace directive, so it builds from the module proxy. It is built
# with a newer modernc.org/sqlite than it pins (v1.34.1): in that one, a query interrupted by a cancelled request
# leaves SQLite's connection answering "interrupted (9)" to everything after it, and the dev server stops working
# for good (seen in a test run; Temporal's own upgrade to v1.44.3 fixed it upstream).
set -euo pipefail
VERSION=v1.5.1
SQLITE_VERSION=v1.44.3

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
target="$bin_dir/temporal"
# A Go binary lists the modules it was built from: this build is there when both versions are.
if [ -x "$target" ] && modules=$(go version -m "$target" 2>/dev/null) &&
  grep -Eq "^[[:space:]]+(mod|dep)[[:space:]]+github.com/temporalio/cli[[:space:]]+$VERSION[[:space:]]" <<<"$modules" &&
  grep -Eq "^[[:space:]]+dep[[:space:]]+modernc.org/sqlite[[:space:]]+$SQLITE_VERSION[[:space:]]" <<<"$modules"; then
  echo "install-temporal-cli: $target already present (temporal $VERSION with modernc.org/sqlite $SQLITE_VERSION)"
  exit 0
fi
[ -e "$target" ] && echo "install-temporal-cli: replacing $target, which is another build"
echo "install-temporal-cli: building temporal $VERSION with modernc.org/sqlite $SQLITE_VERSION into $bin_dir (a few minutes the first time)"
# A module of our own that requires both: Go's minimal version selection then builds the CLI with the newer SQLite.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
go mod init temporal-cli-build >/dev/null 2>&1
go get "github.com/temporalio/cli/cmd/temporal@$VERSION" "modernc.org/sqlite@$SQLITE_VERSION"
mkdir -p "$bin_dir"
go build -o "$work/temporal" github.com/temporalio/cli/cmd/temporal
mv -f "$work/temporal" "$target"
echo "install-temporal-cli: installed $target"
