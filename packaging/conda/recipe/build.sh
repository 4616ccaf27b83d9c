#!/usr/bin/env bash
# conda-build's build script for libzarr (meta.yaml), run in the extracted release tarball.
# The crates are vendored: cargo is kept offline.
set -euo pipefail

export CARGO_NET_OFFLINE=true

# The licenses of the vendored crates, for about/license_file (cargo-bundle-licenses is a
# build requirement of the recipe; without it, e.g. when this script is tried outside
# conda-build, the file is not written).
if command -v cargo-bundle-licenses >/dev/null 2>&1; then
  cargo-bundle-licenses --format yaml --output THIRDPARTY.yml
else
  echo "build.sh: cargo-bundle-licenses not found: THIRDPARTY.yml not written" >&2
fi

# CMAKE_ARGS (from conda-build) sets the toolchain and the install prefix; the explicit
# settings after it repeat what matters here. CARGO_BUILD_TARGET (from conda's Rust
# activation) becomes cargo's --target (ZARR_CARGO_TARGET).
# shellcheck disable=SC2086
cmake -S "${SRC_DIR:-.}" -B build ${CMAKE_ARGS:-} \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$PREFIX" \
  -DCMAKE_INSTALL_LIBDIR=lib \
  -DZARR_OFFLINE=ON \
  -DZARR_BUILD_TESTS=OFF
cmake --build build --parallel "${CPU_COUNT:-1}"
cmake --install build
