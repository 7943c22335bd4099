#!/usr/bin/env bash
# The Python SDK acceptance run of `cosmoql serve`:
#
#   scripts/sdk/python/run.sh [COSMOQL_BIN]     (default: ${CARGO_TARGET_DIR:-target}/debug/cosmoql)
#
# Installs the SDK venvs (setup.sh), starts `COSMOQL_BIN serve --port 0` in memory, measures its
# start-up (`start-up: N ms`, up to the first account read through the SDK), then runs
# sdk_acceptance.py with the current SDK (requirements.txt) and with 4.9.0 (requirements-4.9.txt),
# and conformance.py with the current SDK; then https_check.py against a second server started
# with --tls, trusting the certificate it writes (--cert-out), and the split check against a third
# started with --retired-ranges gone (the SDK repairs its requests after the split itself). Ends with their summary lines; exits 1 if any of them
# failed (2 if the run could not start), and stops the server on every exit.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
bin=${1:-${CARGO_TARGET_DIR:-$repo/target}/debug/cosmoql}
if [ ! -x "$bin" ]; then
  echo "run.sh: no cosmoql binary at $bin (build it with cargo build, or pass its path)" >&2
  exit 2
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

venvs=$("$here/setup.sh" requirements.txt requirements-4.9.txt) || exit 2
current=$(sed -n 1p <<<"$venvs")/bin/python
older=$(sed -n 2p <<<"$venvs")/bin/python

work=$(mktemp -d "${TMPDIR:-/tmp}/cosmoql-sdk-python.XXXXXX")
probe_pid=
# start_server and stop_server.
source "$here/../serve.sh"
cleanup() {
  [ -n "$probe_pid" ] && kill "$probe_pid" 2>/dev/null
  stop_server
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The probe imports the SDK before the server starts, so only the server's start-up is timed.
coproc PROBE { "$current" "$here/startup_probe.py"; }
probe_pid=$PROBE_PID
read -r -t 60 -u "${PROBE[0]}" ready || { echo "run.sh: the start-up probe did not start" >&2; exit 2; }

started=$(date +%s%N)
start_server main || exit 2

status=0
echo "$endpoint $key $started" >&"${PROBE[1]}"
if ! read -r -t 30 -u "${PROBE[0]}" startup; then
  startup="start-up: failed (the probe read no account within 30 s)"
  status=1
fi
wait "$probe_pid" 2>/dev/null
probe_pid=
echo "$startup"

run() {  # run LOG PROGRAM ARGS...: runs one suite, its output also kept in LOG for the summary
  local log=$1
  shift
  "$@" 2>&1 | tee "$work/$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
}
run current.log "$current" "$here/sdk_acceptance.py" --endpoint "$endpoint" --key "$key" --bin "$bin"
run older.log "$older" "$here/sdk_acceptance.py" --endpoint "$endpoint" --key "$key" --bin "$bin"
run conformance.log "$current" "$here/conformance.py" --endpoint "$endpoint" --key "$key"

if ! kill -0 "$server" 2>/dev/null; then
  echo "run.sh: the server exited during the run" >&2
  status=1
fi
if [ -s "$work/main.serve.err" ] && [ $status -ne 0 ]; then
  echo "--- server standard error (last 40 lines)"
  tail -n 40 "$work/main.serve.err"
fi
stop_server

# https: a server with a certificate made at start, trusted from the file it writes.
start_server https --tls --cert-out "$work/cert.pem" || exit 2
run https.log "$current" "$here/https_check.py" --endpoint "$endpoint" --key "$key" --cert "$work/cert.pem"
stop_server

# A split where the retired range answers 410/1002 as on the service: the SDK repairs itself.
start_server gone --retired-ranges gone || exit 2
run gone.log "$current" "$here/sdk_acceptance.py" --endpoint "$endpoint" --key "$key" --bin "$bin" --split-only

echo "--- summary"
echo "$startup"
for log in current older; do
  sed -n '1p' "$work/$log.log"
  grep '^python sdk acceptance: [0-9]' "$work/$log.log" || echo "python sdk acceptance: no summary (crashed)"
done
grep '^python conformance: ' "$work/conformance.log" || echo "python conformance: no summary (crashed)"
grep '^python https: ' "$work/https.log" || echo "python https: no summary (crashed)"
grep '^python sdk acceptance: [0-9]' "$work/gone.log" | sed 's/^/(split, --retired-ranges gone) /' \
  || echo "python split with --retired-ranges gone: no summary (crashed)"
exit $status
