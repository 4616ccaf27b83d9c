#!/usr/bin/env bash
# Builds libzarr (release) and the quickstart example, then runs it: it writes a real
# array to quickstart.zarr/ in the current directory, reads it back and prints a summary.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cargo build --release --manifest-path "$root/Cargo.toml"
out="$root/target/examples-c"
mkdir -p "$out"
cc -std=c11 -O2 -Wall -Wextra -Werror -I "$root/include" "$root/examples-c/quickstart.c" \
  -L "$root/target/release" -lzarr -lm -Wl,-rpath,"$root/target/release" -o "$out/quickstart"
"$out/quickstart" "${1:-quickstart.zarr}"
