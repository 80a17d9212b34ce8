#!/usr/bin/env bash
# Validates every shipped collector config, and each overlay combination they are meant to be run
# in, with the collector's own `validate` sub-command (parses every component's config, every
# OTTL statement and regex; connects to nothing, reads no certificate). Exits non-zero if any
# fails. Builds the binary first if needed (instant when it is cached).
#
#   bash collector-config/validate.sh [path/to/otelcol-ccotel]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
binary=${1:-$(bash "$here/build.sh" | tail -n 1)}

# Validate against the defaults written in the configs, not whatever this shell has set...
for name in $(compgen -e | grep '^CCOTEL_' || true); do
  unset "$name"
done
# ...plus placeholders for the variables that have no default on purpose.
export CCOTEL_GATEWAY_TOKEN=validate-placeholder-token
export CCOTEL_GATEWAY_ENDPOINT=https://gateway.invalid:4318
export CCOTEL_GATEWAY_TLS_CERT=/validate/placeholder/cert.pem
export CCOTEL_GATEWAY_TLS_KEY=/validate/placeholder/key.pem
export CCOTEL_FILE_EXPORT_PATH=/validate/placeholder/export.jsonl

combinations=(
  "agent.yaml"
  "gateway.yaml"
  "gateway.yaml gateway-tls.yaml"
  "gateway.yaml test-overlay-file.yaml"
  "scale-out.yaml"
  "scale-out.yaml gateway-tls.yaml"
)

failed=0
for combination in "${combinations[@]}"; do
  args=()
  for file in $combination; do
    args+=(--config "$here/$file")
  done
  if output=$("$binary" validate "${args[@]}" 2>&1); then
    echo "ok    $combination"
  else
    echo "FAIL  $combination"
    echo "$output" | sed 's/^/      /'
    failed=1
  fi
done
exit "$failed"
