#!/usr/bin/env bash
# Installs (or reuses) the JavaScript SDK of the acceptance suite and prints its node_modules
# directory.
#
#   scripts/sdk/js/setup.sh
#
# package.json pins @azure/cosmos exactly and package-lock.json (made by npm) pins the rest. Both
# are copied to ${COSMOQL_CACHE:-$HOME/.cache/cosmoql}/sdk-js/<hash>, where <hash> is a short hash
# of package-lock.json, and `npm ci` installs there, so editing a pin makes a new directory. A stamp
# file records the lock's hash and node's version: when it matches, npm is not run at all. Nothing
# is installed here or globally. Progress goes to standard error.
#
# @azure/cosmos 4.10.1 declares `engines: node >=22`; it runs on Node.js 20 (npm only warns about the
# engine, and --silent keeps that warning out of the output), so 20 is the minimum checked here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${COSMOQL_CACHE:-$HOME/.cache/cosmoql}/sdk-js

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "setup.sh: $tool is not installed (Node.js 20 or later with npm; Debian/Ubuntu: apt-get install nodejs npm)" >&2
    exit 2
  fi
done
node_version=$(node --version)
major=${node_version#v}
major=${major%%.*}
if [ "$major" -lt 20 ] 2>/dev/null; then
  echo "setup.sh: node $node_version is too old for @azure/cosmos (Node.js 20 or later)" >&2
  exit 2
fi

hash=$(sha256sum "$here/package-lock.json" | cut -c1-12)
dir=$cache/$hash
stamp="$hash $node_version"
if [ -f "$dir/.cosmoql-stamp" ] && [ "$(cat "$dir/.cosmoql-stamp")" = "$stamp" ] \
  && [ -f "$dir/node_modules/@azure/cosmos/package.json" ]; then
  echo "$dir/node_modules"
  exit 0
fi

echo "setup.sh: installing $(sed -n 's/.*"@azure\/cosmos": "\(.*\)".*/@azure\/cosmos \1/p' "$here/package.json" | head -1) into $dir" >&2
# A directory left half-installed by an interrupted run (or by another node) is made anew.
rm -rf "$dir"
mkdir -p "$dir"
cp "$here/package.json" "$here/package-lock.json" "$dir/"
(cd "$dir" && npm ci --silent --no-audit --no-fund) >&2
echo "$stamp" > "$dir/.cosmoql-stamp"
echo "$dir/node_modules"
