#!/usr/bin/env bash
# The crash-state checker (docs/RELIABILITY.md, "Power cuts"): records each scenario's
# file-system calls under strace, builds every state a power cut may leave and checks each
# through the library. Exits non-zero, describing the state, when one fails.
#
#   bash tests/crashstate/run.sh [SCENARIO...]
#     (fs-none fs-flush fs-each-write control append zip zip-append icechunk; default: all)
#
# ZARR_LIB_DIR=DIR checks the libzarr.so in DIR (e.g. another checkout's target/release)
# instead of building this checkout; otherwise the library is built with cargo
# (CRASHSTATE_FEATURES, default "icechunk"; the Icechunk scenario runs only with it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

command -v strace >/dev/null || { echo "strace is missing (scripts/setup-test-env.sh)" >&2; exit 1; }
scenarios=("$@")
if [ -n "${ZARR_LIB_DIR:-}" ]; then
  lib_dir=$(cd "$ZARR_LIB_DIR" && pwd)
else
  features=${CRASHSTATE_FEATURES-icechunk}
  (cd "$root" && cargo build --quiet --lib ${features:+--features "$features"})
  lib_dir=$(cd "$root" && cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/debug
  if [ ${#scenarios[@]} -eq 0 ]; then
    scenarios=(fs-none fs-flush fs-each-write control append zip zip-append)
    case ",$features," in
      *,icechunk,*) scenarios+=(icechunk) ;;
      *) echo "crash states: built without the icechunk feature, Icechunk scenario skipped" ;;
    esac
  fi
fi
[ -f "$lib_dir/libzarr.so" ] || { echo "no libzarr.so in $lib_dir" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The library under both names the driver may look for (a build dir need not hold the
# soname link).
mkdir "$work/lib"
ln -s "$lib_dir/libzarr.so" "$work/lib/libzarr.so"
ln -s "$lib_dir/libzarr.so" "$work/lib/libzarr.so.0"
cc -std=c11 -Wall -Wextra -Werror -O1 -I"$root/include" "$here/driver.c" -o "$work/driver" \
  -L"$work/lib" -lzarr -Wl,-rpath,"$work/lib"
echo "crash states: library $lib_dir/libzarr.so"
python3 "$here/crashstate.py" --driver "$work/driver" --scratch "$work/scratch" "${scenarios[@]}"
