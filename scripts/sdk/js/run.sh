#!/usr/bin/env bash
# The JavaScript SDK acceptance run of `cosmoql serve`:
#
#   scripts/sdk/js/run.sh [COSMOQL_BIN]     (default: ${CARGO_TARGET_DIR:-target}/debug/cosmoql)
#
# Installs @azure/cosmos (setup.sh, into a cache directory), starts `COSMOQL_BIN serve --port 0` in
# memory and runs sdk_acceptance.mjs --ranges physical against it (containers list one range per
# physical partition), stops it, then does the same with `serve --ranges single` and
# sdk_acceptance.mjs --ranges single (one range per container, every query shape across
# partitions); then https_check.mjs against a server started with --tls, trusting the certificate
# it writes (--cert-out). Ends with their summary lines; exits 1 if either failed (2 if a run could not
# start), and stops the server on every exit. With COSMOQL_SDK_HTTP_LOG=DIR, every request and
# response the SDK makes is written to DIR/physical.http.log and DIR/single.http.log.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
bin=${1:-${CARGO_TARGET_DIR:-$repo/target}/debug/cosmoql}
if [ ! -x "$bin" ]; then
  echo "run.sh: no cosmoql binary at $bin (build it with cargo build, or pass its path)" >&2
  exit 2
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

modules=$("$here/setup.sh") || exit 2

work=$(mktemp -d "${TMPDIR:-/tmp}/cosmoql-sdk-js.XXXXXX")
suite=
# start_server and stop_server.
source "$here/../serve.sh"
cleanup() {
  if [ -n "$suite" ]; then
    kill -TERM "$suite" 2>/dev/null
    wait "$suite" 2>/dev/null
  fi
  stop_server
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

status=0
# run_mode MODE SERVE_ARGS...: one server, one run of the suite against it, its output also kept
# in $work/MODE.log for the summary.
run_mode() {
  local mode=$1 failed=0
  shift
  start_server "$mode" "$@" || exit 2
  local log_args=()
  if [ -n "${COSMOQL_SDK_HTTP_LOG:-}" ]; then
    mkdir -p "$COSMOQL_SDK_HTTP_LOG"
    log_args=(--http-log "$COSMOQL_SDK_HTTP_LOG/$mode.http.log")
  fi
  # In the background, so that a signal to this script is handled at once (bash runs a trap only
  # once the foreground command has ended), not after the whole suite; its output is followed from
  # its log until it exits.
  node "$here/sdk_acceptance.mjs" --endpoint "$endpoint" --key "$key" --bin "$bin" --ranges "$mode" \
    --modules "$modules" "${log_args[@]}" >"$work/$mode.log" 2>&1 &
  suite=$!
  tail -n +1 -s 0.2 --pid="$suite" -f "$work/$mode.log" &
  local follower=$!
  wait "$suite" || failed=1
  suite=
  wait "$follower"
  if ! kill -0 "$server" 2>/dev/null; then
    echo "run.sh: the server ($mode) exited during the run" >&2
    failed=1
  fi
  if [ -s "$work/$mode.serve.err" ] && [ $failed -ne 0 ]; then
    echo "--- server standard error ($mode, last 40 lines)"
    tail -n 40 "$work/$mode.serve.err"
  fi
  stop_server
  [ $failed -eq 0 ] || status=1
}

run_mode physical
run_mode single --ranges single

# https: a server with a certificate made at start, trusted from the file it writes.
start_server https --tls --cert-out "$work/cert.pem" || exit 2
node "$here/https_check.mjs" --endpoint "$endpoint" --key "$key" --cert "$work/cert.pem" --modules "$modules" \
  2>&1 | tee "$work/https.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
stop_server

echo "--- summary"
for mode in physical single; do
  sed -n '1p' "$work/$mode.log"
  grep '^js sdk acceptance: [0-9]' "$work/$mode.log" || echo "js sdk acceptance: no summary (crashed)"
done
grep '^js https: ' "$work/https.log" || echo "js https: no summary (crashed)"
exit $status
