#!/usr/bin/env bash
# Runs every test of libzarr on a fresh Debian machine with Rust, installing what it needs:
#   1. system packages and the pinned Python environments (scripts/setup-test-env.sh)
#   2. Rust: format, clippy, unit/integration tests (incl. the zarr.h freshness check)
#   3. C: the c-tests suite under ctest (-Wall -Wextra -Wpedantic -Werror)
#   4. packaging: install, then build examples-c against the installed prefix
#   5. interop: zarr-python 2.18, zarr-python 3.x and tensorstore, both directions
#   6. MPI: examples-c/mpi_write.c on 4 OpenMPI ranks, checked by libzarr and zarr-python
#   7. the quickstart example
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
stage() { printf '\n=== %s ===\n' "$*"; }

stage "setup"
bash scripts/setup-test-env.sh

stage "rust: fmt, clippy, tests"
if cargo fmt --version >/dev/null 2>&1; then
  cargo fmt --all -- --check
else
  echo "rustfmt is not installed: format check skipped"
fi
if cargo clippy --version >/dev/null 2>&1; then
  cargo clippy --all-targets -- -D warnings
else
  echo "clippy is not installed: lint skipped"
fi
cargo test
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet

stage "c tests (ctest)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DZARR_TEST_COPY_MEMORY=ON >/dev/null
cmake --build build -j2
ctest --test-dir build --output-on-failure

stage "packaging: examples against the installed prefix"
bash scripts/check-install.sh build

stage "interop: zarr-python 2.18, zarr-python 3.x, tensorstore"
bash tests/interop/run.sh

stage "mpi: 4 ranks writing one array"
bash tests/mpi/run.sh

stage "quickstart"
qs_dir=$(mktemp -d)
bash scripts/quickstart.sh "$qs_dir/quickstart.zarr"
rm -rf "$qs_dir"

stage "all stages passed"
