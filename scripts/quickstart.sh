#!/usr/bin/env bash
# Builds libzarr (release) and the quickstart example, then runs it: it writes a real
# array to quickstart.zarr/ in the current directory, reads it back and prints a summary.
# The build has the default features, Icechunk repositories when the Rust toolchain can
# build them (1.95 or newer) and zarrtool's netCDF import when netCDF's nc-config is
# installed (Debian's libnetcdf-dev), as CMake chooses.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
features=()
if rustc --version | awk '{ split($2, v, "."); exit !(v[1] > 1 || v[2] >= 95) }'; then
  features+=(icechunk)
fi
if command -v nc-config >/dev/null 2>&1; then
  features+=(netcdf)
fi
feature_list=$(IFS=,; echo "${features[*]-}")
cargo build --release ${feature_list:+--features "$feature_list"} --manifest-path "$root/Cargo.toml"
out="$root/target/examples-c"
mkdir -p "$out"
cc -std=c11 -O2 -Wall -Wextra -Werror -I "$root/include" "$root/examples-c/quickstart.c" \
  -L "$root/target/release" -lzarr -lm -Wl,-rpath,"$root/target/release" -o "$out/quickstart"
"$out/quickstart" "${1:-quickstart.zarr}"
