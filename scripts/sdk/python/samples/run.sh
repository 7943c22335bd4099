#!/usr/bin/env bash
# Microsoft's own Python samples of azure-cosmos, run unchanged against `cosmoql serve`:
#
#   scripts/sdk/python/samples/run.sh [COSMOQL_BIN]    (default: ${CARGO_TARGET_DIR:-target}/debug/cosmoql)
#
# The samples beside this script are copies of sdk/cosmos/azure-cosmos/samples/ of azure-cosmos
# 4.17.1 (README.md: provenance, checksums, why these); only config.py, their connection settings, is
# ours. Installs the current SDK's venv (../setup.sh requirements.txt), starts `COSMOQL_BIN serve
# --port 0` in memory, runs each sample with that venv's python in a scratch directory, with its own
# database id, and checks it: exit status 0, no traceback, no error line that the sample prints when
# it catches a failure (unless a real account prints it too: see EXPECTED below), and the line that
# shows it reached its last step. Prints each sample's verdict (with the tail of its output when it
# failed), then `python samples: N ran, M failed`; exits 1 if any failed (2 if the run could not
# start), and stops the server on every exit.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
bin=${1:-${CARGO_TARGET_DIR:-$repo/target}/debug/cosmoql}
if [ ! -x "$bin" ]; then
  echo "run.sh: no cosmoql binary at $bin (build it with cargo build, or pass its path)" >&2
  exit 2
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

venv=$("$here/../setup.sh" requirements.txt) || exit 2
python=$venv/bin/python

# The samples, in the order they run. Two of the copies beside this script are not run:
#  - document_management cannot finish on any account: step 1.11's batch replaces an item and then
#    replaces it again `if_match` the etag from before (412, as transactional_batch.py says of the
#    same batch), its CosmosBatchOperationError escapes run_sample's handler, and the step after it
#    opens `file_name.txt`, which the sample does not ship. Its steps before 1.11 (items, queries,
#    paging, etags, patch with move and conditions) pass here.
#  - change_feed_management's last step reads the all-versions-and-deletes change feed of a
#    container created without a `changeFeedPolicy`: the service keeps versions for the account's
#    continuous backup retention, cosmoql only for a container's own policy (400 without one).
samples=(
  database_management
  container_management
  index_management
  transactional_batch
  read_items_sample
  feed_range_management
  cosmos_responses_management
  autoscale_throughput_management
  throughput_bucket_management
  compact_utf8_item_writes
  user_agent_management
)

# Lines a sample prints when it has caught a failure (or Python prints when it has not).
errors='Traceback|run_sample has caught an error|An HTTP error occurred|An unexpected error occurred|Bad Request exception occurred|The following error occurred|Document doesn.t exist|Entity doesn.t exist|Error (creating|changing|updating|during)|throughput error|^Error: '

# EXPECTED: what each sample prints against a real account. `reached` is a line its last step prints;
# `allowed` the error lines a real account causes too, because of the sample itself:
#  - document_management: step 1.11 builds one batch whose replace (index 4) changes the item's etag
#    before the next operation (index 5) replaces it `if_match` the old etag, so the service answers
#    412 and the sample ends in `run_sample has caught an error` (its own transactional_batch.py
#    comments the same batch as failing with 412); the steps after 1.11 never run anywhere.
#  - index_management: step 11's first two queries have an unbalanced `)` (`FullTextScore(...)))`),
#    a syntax error (SC1001) for any Cosmos DB query parser; the sample catches the 400 and goes on.
#  - transactional_batch: its batch fails with 412 at the `if_match` replace by design.
reached() {
  case $1 in
    database_management) echo "^Database with id '.*' was deleted" ;;
    container_management) echo "^Container with id '.*' was deleted" ;;
    document_management) echo 'There was an error in the transactional batch on index 5\.' ;;
    index_management) echo '^11\. Container created with full text policy and full text indexes' ;;
    change_feed_management) echo '^Reading Change Feed with AllVersionsAndDeletes mode from the partition key' ;;
    transactional_batch) echo "error operation response: \\{'statusCode': 412" ;;
    read_items_sample) echo "^Database '.*' cleaned up\\." ;;
    feed_range_management) echo "^Sample database '.*' deleted" ;;
    cosmos_responses_management) echo '^Container throughput changed to 600 RU/s' ;;
    autoscale_throughput_management | user_agent_management) echo '^Sample completed!' ;;
    throughput_bucket_management) echo '^run_sample done' ;;  # its steps print nothing
    compact_utf8_item_writes) echo '^Round trip preserved content: True' ;;
    *) echo "run.sh: no EXPECTED entry for $1" >&2; return 1 ;;
  esac
}
allowed() {
  case $1 in
    document_management) echo '^run_sample has caught an error\. Status code: 412' ;;
    index_management) echo '^Bad Request exception occurred: .*"code":"SC1001"' ;;
    *) echo '^$' ;;
  esac
}

work=$(mktemp -d "${TMPDIR:-/tmp}/cosmoql-sdk-python-samples.XXXXXX")
# start_server and stop_server.
source "$here/../../serve.sh"
cleanup() {
  stop_server
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_server samples || exit 2

# The samples run in a scratch directory (document_management reads a file_name.txt from the
# current directory), and write no __pycache__ beside themselves.
mkdir "$work/cwd"
ran=0
failed=0
failures=()
for sample in "${samples[@]}"; do
  log=$work/$sample.log
  started=$(date +%s)
  (
    cd "$work/cwd" &&
      ACCOUNT_HOST=$endpoint ACCOUNT_KEY=$key \
      COSMOS_DATABASE=$sample COSMOS_CONTAINER=$sample-container COSMOS_CONTAINER_MH=$sample-container-mh \
      PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
      timeout 600 "$python" "$here/$sample.py"
  ) >"$log" 2>&1 </dev/null
  rc=$?
  seconds=$(($(date +%s) - started))
  ran=$((ran + 1))

  problems=()
  [ $rc -eq 0 ] || problems+=("exit status $rc")
  unexpected=$(grep -E -- "$errors" "$log" | grep -v -E -- "$(allowed "$sample")")
  [ -z "$unexpected" ] || problems+=("error lines:"$'\n'"$(head -n 3 <<<"$unexpected" | cut -c1-300 | sed 's/^/      /')")
  grep -q -E -- "$(reached "$sample")" "$log" || problems+=("never printed /$(reached "$sample")/")

  if [ ${#problems[@]} -eq 0 ]; then
    echo "ok     $sample (${seconds} s)"
  else
    failed=$((failed + 1))
    failures+=("$sample")
    echo "FAILED $sample (${seconds} s)"
    for problem in "${problems[@]}"; do
      echo "  - $problem"
    done
    echo "  --- last 15 lines of its output"
    tail -n 15 "$log" | cut -c1-300 | sed 's/^/  | /'
  fi
  if ! kill -0 "$server" 2>/dev/null; then
    echo "run.sh: the server exited during $sample" >&2
    tail -n 40 "$work/samples.serve.err" >&2
    break
  fi
done

echo "--- summary"
[ $failed -eq 0 ] || echo "failed: ${failures[*]}"
echo "python samples: $ran ran, $failed failed"
[ $failed -eq 0 ] && [ $ran -eq ${#samples[@]} ]
