#!/usr/bin/env bash
# Keeps tests/conformance (the real-service conformance corpus the tests replay) in sync with the
# shared corpus it is copied from, ../shared/conformance (its docs/, engine/ and README.md; the
# EPK vectors are copied to catalog/tests/data/epk).
#
#   scripts/sync-conformance.sh          copy the shared corpus over the repository's copy
#   scripts/sync-conformance.sh --check  exit 1 (and list the differences) if they differ
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${COSMOQL_SHARED_CONFORMANCE:-../shared/conformance}
if [ ! -d "$shared" ]; then
  echo "sync-conformance: no shared corpus at $shared" >&2
  exit 2
fi
if [ "${1:-}" = "--check" ]; then
  status=0
  for part in README.md docs engine; do
    diff -rq "$shared/$part" "tests/conformance/$part" || status=1
  done
  if [ $status -ne 0 ]; then
    echo "sync-conformance: tests/conformance differs from $shared (run scripts/sync-conformance.sh)" >&2
  fi
  exit $status
fi
rm -rf tests/conformance/docs tests/conformance/engine
cp -r "$shared/README.md" "$shared/docs" "$shared/engine" tests/conformance/
echo "sync-conformance: copied $(find tests/conformance -name '*.json' | wc -l) files from $shared"
