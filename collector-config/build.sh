#!/usr/bin/env bash
# Builds the ccotel collector distribution from builder-config.yaml with the OpenTelemetry
# Collector builder (ocb) and prints the binary's path as the last line on stdout.
#
# The binary is cached under $CCOTEL_COLLECTOR_CACHE (default <repo>/.cache/otelcol-ccotel,
# gitignored) in a folder named by a hash of the manifest: a second call with the same manifest
# returns at once; any edit of the manifest builds anew. Everything else goes to stderr.
# Go's own module and build caches stay where Go keeps them (GOMODCACHE / GOCACHE), so a fresh
# clone on a machine that built before recompiles only the generated main package.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
manifest="$here/builder-config.yaml"
# The builder's release must match the core collector release the manifest pins.
builder_version=v0.161.0
cache="${CCOTEL_COLLECTOR_CACHE:-$repo/.cache/otelcol-ccotel}"
key=$(sha256sum "$manifest" | cut -c1-16)
binary="$cache/$key/otelcol-ccotel"

if [[ -x $binary ]]; then
  echo "$binary"
  exit 0
fi

mkdir -p "$cache"
# One build at a time per cache (CI and a developer's test run may call this together).
exec 9>"$cache/.build.lock"
flock 9
if [[ -x $binary ]]; then
  echo "$binary"
  exit 0
fi

export PATH="/usr/local/go/bin:$PATH"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
if ! command -v go >/dev/null; then
  echo "build.sh: Go not found on PATH or in /usr/local/go/bin" >&2
  exit 1
fi

start=$SECONDS
builder="$cache/tools/builder-$builder_version"
if [[ ! -x $builder ]]; then
  echo "build.sh: installing the collector builder $builder_version" >&2
  GOBIN="$cache/tools/bin" go install "go.opentelemetry.io/collector/cmd/builder@$builder_version" >&2
  mv "$cache/tools/bin/builder" "$builder"
fi

work="$cache/work-$key"
rm -rf "$work"
mkdir -p "$work"
echo "build.sh: building the collector from $manifest (several minutes on 2 cores)" >&2
(cd "$work" && "$builder" --config "$manifest") >&2
mkdir -p "$cache/$key"
mv "$work/dist/otelcol-ccotel" "$binary.partial"
mv "$binary.partial" "$binary"
rm -rf "$work"
echo "build.sh: built $binary in $((SECONDS - start))s" >&2
echo "$binary"
