# Shared by the SDK runs (sourced, not run): starting and stopping `cosmoql serve`. The sourcing
# script sets `bin` (the cosmoql binary) and `work` (a scratch directory) first.

server=

# start_server NAME ARGS...: starts `$bin serve --port 0 ARGS...` in memory and sets `server` (its
# pid), `endpoint` (http or https, as it says) and `key` from the lines it prints once it listens; its standard error goes to
# $work/NAME.serve.err. Its standard output goes through a FIFO, so its first lines are read the
# moment they are written; the rest is drained, so the server never blocks on a full pipe.
start_server() {
  local name=$1 listening connection port scheme
  shift
  mkfifo "$work/$name.serve.out"
  "$bin" serve --port 0 "$@" >"$work/$name.serve.out" 2>"$work/$name.serve.err" &
  server=$!
  exec 4<"$work/$name.serve.out"
  if ! read -r -t 10 -u 4 listening || ! read -r -t 10 -u 4 connection; then
    echo "run.sh: the server ($name) did not say where it listens within 10 s" >&2
    cat "$work/$name.serve.err" >&2
    return 1
  fi
  cat <&4 >/dev/null &
  port=$(sed -n 's#^cosmoql serve: listening on https\{0,1\}://127\.0\.0\.1:\([0-9]*\)/$#\1#p' <<<"$listening")
  scheme=$(sed -n 's#^cosmoql serve: listening on \(https\{0,1\}\)://.*$#\1#p' <<<"$listening")
  key=$(sed -n 's#^connection string: .*AccountKey=\([^;]*\);.*$#\1#p' <<<"$connection")
  if [ -z "$port" ] || [ -z "$key" ]; then
    printf 'run.sh: unexpected first lines from the server (%s):\n%s\n%s\n' "$name" "$listening" "$connection" >&2
    return 1
  fi
  endpoint=$scheme://127.0.0.1:$port/
}

# stop_server: stops the server started last (SIGTERM: it finishes the requests in flight).
stop_server() {
  if [ -n "$server" ]; then
    kill -TERM "$server" 2>/dev/null
    wait "$server" 2>/dev/null
    server=
  fi
  exec 4<&-
}
