#!/usr/bin/env bash
# Builds the Temporal server (the one the CLI's dev server embeds, here run on its own with PostgreSQL persistence)
# and its SQL schema tool, with the PostgreSQL schema files they go with, unless the same build is already there.
# For the benchmark's production ceiling (docs/benchmarks.md); no root needed: Go's bin folder, as for the CLI.
#
# v1.29.1 is the server the CLI v1.5.1 of scripts/install-temporal-cli.sh embeds: the two servers differ only in
# persistence and configuration. Into a folder of its own, <Go bin>/temporal-server-v1.29.1/ (TEMPORAL_SERVER_DIR
# overrides it), as temporal-server and temporal-sql-tool, the names of Temporal's release archives: `go install`
# would put them in Go's bin folder itself as `server` and `sql`. The schema files come from the module's source:
# schema/postgresql/v12/{temporal,visibility}. Built with CGO_ENABLED=0, as Temporal builds its releases.
set -euo pipefail
VERSION=v1.29.1

if ! command -v go >/dev/null 2>&1; then
  echo "install-temporal-server: Go is not installed (need Go >= 1.25)" >&2
  exit 1
fi
go_version=$(go env GOVERSION | sed 's/^go//')
major=${go_version%%.*}; rest=${go_version#*.}; minor=${rest%%.*}
if [ "$major" -lt 1 ] || { [ "$major" -eq 1 ] && [ "$minor" -lt 25 ]; }; then
  echo "install-temporal-server: Go $go_version is too old (need >= 1.25)" >&2
  exit 1
fi
bin_dir=$(go env GOBIN); [ -n "$bin_dir" ] || bin_dir="$(go env GOPATH | cut -d: -f1)/bin"
target=${TEMPORAL_SERVER_DIR:-"$bin_dir/temporal-server-$VERSION"}
schema=schema/postgresql/v12

# A Go binary lists the modules it was built from: this build is there when both binaries name the version and
# the schema files are beside them.
built_from_version() {
  local modules
  [ -x "$1" ] && modules=$(go version -m "$1" 2>/dev/null) &&
    grep -Eq "^[[:space:]]+(mod|dep)[[:space:]]+go.temporal.io/server[[:space:]]+$VERSION[[:space:]]" <<<"$modules"
}
if built_from_version "$target/temporal-server" && built_from_version "$target/temporal-sql-tool" &&
  [ -d "$target/$schema/temporal/versioned" ] && [ -d "$target/$schema/visibility/versioned" ]; then
  echo "install-temporal-server: $target already present (temporal-server and temporal-sql-tool $VERSION, PostgreSQL schema)"
  exit 0
fi
[ -e "$target" ] && echo "install-temporal-server: replacing $target, which is another build or incomplete"
echo "install-temporal-server: building temporal-server and temporal-sql-tool $VERSION into $target (a few minutes the first time)"
mkdir -p "$(dirname "$target")"
# Staged beside the target, then renamed: a folder under the final name is whole.
stage=$(mktemp -d "$(dirname "$target")/.temporal-server-$VERSION.XXXXXX")
trap 'rm -rf "$stage"' EXIT
# `go install` builds with the server module's own go.mod, as its releases are; renamed after.
GOBIN="$stage" CGO_ENABLED=0 go install "go.temporal.io/server/cmd/server@$VERSION" "go.temporal.io/server/cmd/tools/sql@$VERSION"
mv "$stage/server" "$stage/temporal-server"
mv "$stage/sql" "$stage/temporal-sql-tool"
source_dir="$(go env GOMODCACHE)/go.temporal.io/server@$VERSION"
mkdir -p "$stage/$(dirname "$schema")"
cp -R "$source_dir/$schema" "$stage/$schema"
# The module cache is read-only; the copy should not be.
chmod -R u+w,a+rX "$stage"
rm -rf "$target"
mv "$stage" "$target"
echo "install-temporal-server: installed $target (temporal-server, temporal-sql-tool, $schema)"
