#!/usr/bin/env bash
# Bounded-memory copy test: compiles c-tests/test_copy_memory.c against the release build of
# libzarr (as the interop suite links its C tools) and runs it. It writes a 1 GiB array and
# two copies of it (about 2 GiB of disk in $TMPDIR, removed afterwards) and takes a minute
# or so. tests/interop/run.sh runs it only when ZARR_TEST_COPY_MEMORY=1.
# ZARR_INTEROP_NO_BUILD=1 skips `cargo build --release`. Extra arguments go to the program
# (a directory to work in). Exits with the program's status (77: skipped).
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ -z "${ZARR_INTEROP_NO_BUILD:-}" ]; then
  echo "copy-memory: cargo build --release"
  cargo build --release
fi
lib="$PWD/target/release/libzarr.so"
if [ ! -f "$lib" ]; then
  echo "copy-memory: $lib is missing (run cargo build --release)" >&2
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/zarr-copy-memory-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
# A private snapshot of the library, with its soname, so a concurrent build cannot swap it.
mkdir "$work/lib"
cp "$lib" "$work/lib/libzarr.so"
ln -s libzarr.so "$work/lib/libzarr.so.0"
"${CC:-cc}" -std=c11 -O2 -Wall -Wextra -Wpedantic -Werror -I include \
  c-tests/test_copy_memory.c -L "$work/lib" -lzarr -Wl,-rpath,"$work/lib" \
  -o "$work/test_copy_memory"
echo "copy-memory: running test_copy_memory"
set +e
"$work/test_copy_memory" "$@"
rc=$?
set -e
echo "copy-memory: exit $rc"
exit $rc
