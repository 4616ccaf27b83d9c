#!/usr/bin/env bash
# The crash-state checker (docs/RELIABILITY.md, "Power cuts"): records each scenario's
# file-system calls under strace, builds every state a power cut may leave and checks each
# through the library. Exits non-zero, describing the state, when one fails.
#
#   bash tests/crashstate/run.sh [SCENARIO...]
#     (fs-none fs-flush fs-each-write control append zip zip-append icechunk; default: all,
#      icechunk only when the library has it)
#
# ZARR_LIB_DIR=DIR checks the libzarr.so in DIR (e.g. another checkout's target/release)
# instead of building this checkout with cargo (features: CRASHSTATE_FEATURES, default
# "icechunk"). CRASHSTATE_KEEP=1 keeps the temporary directory: the recording (trace) and
# the states (states/N, as numbered in the messages) of each failing scenario.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

if ! command -v strace >/dev/null; then
  echo "strace is missing (scripts/setup-test-env.sh installs it)" >&2
  exit 1
fi
if [ -n "${ZARR_LIB_DIR:-}" ]; then
  lib_dir=$(cd "$ZARR_LIB_DIR" && pwd)
else
  features=${CRASHSTATE_FEATURES-icechunk}
  (cd "$root" && cargo build --quiet --lib ${features:+--features "$features"})
  lib_dir=$(cd "$root" && cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/debug
fi
[ -f "$lib_dir/libzarr.so" ] || { echo "no libzarr.so in $lib_dir" >&2; exit 1; }

work=$(mktemp -d)
if [ -n "${CRASHSTATE_KEEP:-}" ]; then
  echo "crash states: keeping the recordings and failing states in $work"
else
  trap 'rm -rf "$work"' EXIT
fi
# The library under both names the driver may look for (a build dir need not hold the
# soname link).
mkdir "$work/lib"
ln -s "$lib_dir/libzarr.so" "$work/lib/libzarr.so"
ln -s "$lib_dir/libzarr.so" "$work/lib/libzarr.so.0"
cc -std=c11 -Wall -Wextra -Wpedantic -Werror -O1 -I"$root/include" "$here/driver.c" -o "$work/driver" \
  -L"$work/lib" -lzarr -Wl,-rpath,"$work/lib"
echo "crash states: library $lib_dir/libzarr.so"

scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then
  scenarios=(fs-none fs-flush fs-each-write control append zip zip-append)
  if "$work/driver" icechunk supported .; then
    scenarios+=(icechunk)
  else
    echo "crash states: the library has no Icechunk support: Icechunk scenario skipped"
  fi
fi
python3 "$here/crashstate.py" --driver "$work/driver" --scratch "$work/scratch" "${scenarios[@]}"
