#!/usr/bin/env bash
# Creates (or reuses) one virtualenv per requirements file of the Python SDK acceptance suite and
# prints their paths, one a line, in the order of the arguments.
#
#   scripts/sdk/python/setup.sh                       every requirements*.txt beside this script
#   scripts/sdk/python/setup.sh requirements-4.9.txt  just these (paths relative to this folder or absolute)
#
# Each venv lives in ${COSMOQL_CACHE:-$HOME/.cache/cosmoql}/sdk-python/<name>-<hash>, where <name> is
# the file's name without .txt and <hash> a short hash of its content, so editing a pin makes a new
# venv. A stamp file in the venv records the requirements hash and the interpreter: when it matches,
# pip is not run at all. Nothing is installed outside the venvs. Progress goes to standard error.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${COSMOQL_CACHE:-$HOME/.cache/cosmoql}/sdk-python

if ! command -v python3 >/dev/null 2>&1; then
  echo "setup.sh: python3 is not installed (Debian/Ubuntu: apt-get install python3 python3-venv)" >&2
  exit 2
fi
# Debian and Ubuntu ship the venv module without ensurepip unless python3-venv is installed.
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  version=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  echo "setup.sh: 'python3 -m venv' cannot create a virtualenv here: install the python3-venv package" \
    "(Debian/Ubuntu: apt-get install python3-venv, or python${version}-venv)" >&2
  exit 2
fi

python=$(python3 -c 'import sys; print(sys.version.split()[0])')
if [ $# -eq 0 ]; then
  set -- "$here"/requirements*.txt
fi

for file in "$@"; do
  case $file in
    /*) ;;
    *) [ -f "$file" ] || file=$here/$file ;;
  esac
  if [ ! -f "$file" ]; then
    echo "setup.sh: no requirements file $file" >&2
    exit 2
  fi
  hash=$(sha256sum "$file" | cut -c1-12)
  name=$(basename "$file" .txt)
  venv=$cache/$name-$hash
  stamp="$hash $python"
  if [ -f "$venv/.cosmoql-stamp" ] && [ "$(cat "$venv/.cosmoql-stamp")" = "$stamp" ] && [ -x "$venv/bin/python" ]; then
    echo "$venv"
    continue
  fi
  echo "setup.sh: installing $(basename "$file") into $venv" >&2
  # A venv left broken by an interrupted run (or by another interpreter) is made anew.
  if [ ! -x "$venv/bin/python" ] || [ -f "$venv/.cosmoql-stamp" ]; then
    rm -rf "$venv"
  fi
  mkdir -p "$cache"
  python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$file" >&2
  echo "$stamp" > "$venv/.cosmoql-stamp"
  echo "$venv"
done
