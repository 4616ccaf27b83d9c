#!/usr/bin/env bash
# Runs every test of libzarr on a fresh Debian machine with Rust, installing what it needs:
#   1. system packages and the pinned Python environments (scripts/setup-test-env.sh)
#   2. Rust: format, clippy, unit/integration tests (incl. the zarr.h freshness check; zarrtool
#      with its netCDF import, checked against ncdump)
#   3. bindings: the generated Fortran C layer and Julia LibZarr.jl match zarr.h (regenerated
#      and compared; Julia wrappers' types checked against the C types), zarr.hpp calls every
#      C function (Julia itself is not installed: its binding is checked, not run)
#   4. C, C++ and Fortran under ctest: c-tests (-Wall -Wextra -Wpedantic -Werror, including the
#      C++ binding zarr.hpp) and bindings/fortran/tests (gfortran -fcheck=all -Wall, with the
#      zarr-python 2.18 interop check)
#   5. packaging: install, then build the C, C++ and Fortran examples against the prefix;
#      the release tarball built and installed with no network, examples against it, and
#      its Spack and conda recipes checked (scripts/check-dist.sh); and docs: the user
#      guide's snippets compiled and run (tests/docs/check_guide.py), the API reference
#      built by Doxygen with warnings as errors (docs/api/build.sh)
#   6. interop: zarr-python 2.18, zarr-python 3.x and tensorstore, both directions; zarr-python
#      3.4 from a Debian 13 chroot (Python 3.13) likewise
#   7. MPI: examples-c/mpi_write.c (shared filesystem) and mpi_write_s3.c (moto S3, owned
#      and shared shards) on 4 OpenMPI ranks, checked by libzarr and zarr-python
#   8. the quickstart example (run right after stage 2, with the default features, so that
#      every later stage shares one release build of the library)
#   9. fuzz (bounded): every cargo-fuzz target in fuzz/ for FUZZ_SECONDS (default 12) each,
#      after its corpus (the seeds and every input a past failure left) is replayed
#  10. sanitizers: the C tests under ASan+UBSan (leaks detected) and valgrind memcheck
#  11. crash safety: a writer SIGKILLed ZARR_CRASH_KILLS (500) times; every chunk old or new
#  12. crash states: the file-system calls of directory, zip and Icechunk writes recorded under
#      strace and every state a power cut may leave checked (tests/crashstate/run.sh)
# (docs/RELIABILITY.md describes the last four.)
#
# `scripts/test.sh --fast` is for iterating: it skips the installs and runs stages 2-4 only
# (format, lint, Rust tests, bindings, ctest), on what the machine already has.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# Each stage's heading gives the minutes and seconds since the suite began.
stage() { printf '\n=== %s === [%dm%02ds]\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }
fast=false
case "${1:-}" in
  --fast) fast=true ;;
  "") ;;
  *) echo "usage: $0 [--fast]" >&2; exit 2 ;;
esac

# The suite builds the library in several configurations (two feature sets, release,
# sanitizers, fuzzing, the offline tarball): without incremental caches and without debug
# information in debug builds (a failing test still names its file and line), its ~40 test
# programs take a third of the disk and link faster.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-0}"
free_kib=$(df -Pk . | awk 'NR == 2 { print $4 }')
if [ "$free_kib" -lt $((8 * 1024 * 1024)) ]; then
  echo "warning: $((free_kib / 1024)) MiB free here; the whole suite needs about 8 GiB" >&2
fi

if ! $fast; then
  stage "setup"
  bash scripts/setup-test-env.sh
fi

stage "rust: fmt, clippy, tests"
# zarrtool's netCDF import (cargo feature netcdf) links the system netCDF library: the setup
# installs it (libnetcdf-dev); --fast runs without it when the machine lacks it. Icechunk
# repositories (cargo feature icechunk, off by default: Rust 1.95 and aws-lc-sys's C build)
# are tested whenever the toolchain is new enough. Every stage builds with these features
# (ZARR_TEST_FEATURES for the stages' own scripts, NC_CONFIG as CMake passes it), so that
# cargo builds the library once per profile instead of once per stage.
feature_list=""
icechunk=OFF
if rustc --version | awk '{ split($2, v, "."); exit !(v[1] > 1 || v[2] >= 95) }'; then
  feature_list=icechunk
  icechunk=ON
fi
if command -v nc-config >/dev/null 2>&1; then
  feature_list="${feature_list:+$feature_list,}netcdf"
  export ZARR_TEST_NETCDF=1
  NC_CONFIG="$(command -v nc-config)"
  export NC_CONFIG
elif ! $fast; then
  echo "nc-config is missing after the setup (libnetcdf-dev)" >&2
  exit 1
else
  echo "nc-config is not installed: zarrtool is tested without netCDF import"
fi
features=()
[ -z "$feature_list" ] || features=(--features "$feature_list")
export ZARR_TEST_FEATURES="$feature_list"
if cargo fmt --version >/dev/null 2>&1; then
  cargo fmt --all -- --check
else
  echo "rustfmt is not installed: format check skipped"
fi
if cargo clippy --version >/dev/null 2>&1; then
  # The suite's features add to the default ones; code compiled only without them is
  # linted by the build without object stores below (with the command line, without netCDF).
  cargo clippy --all-targets "${features[@]}" -- -D warnings
else
  echo "clippy is not installed: lint skipped"
fi
cargo test "${features[@]}"
# The build without object stores (CMake -DZARR_CLOUD=OFF): lint, and the tests of the core.
if cargo clippy --version >/dev/null 2>&1; then
  cargo clippy --no-default-features --features cli --all-targets -- -D warnings
fi
# (regions and hierarchy: the slow sharding and concurrency tests run in the default build)
cargo test --no-default-features --test suite -- regions:: hierarchy::
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet

stage "bindings: generated code matches zarr.h"
python3 bindings/fortran/generate.py --check
python3 bindings/julia/check.py
python3 bindings/check_cxx.py

if ! $fast; then
  stage "quickstart"
  qs_dir=$(mktemp -d)
  bash scripts/quickstart.sh "$qs_dir/quickstart.zarr"
  rm -rf "$qs_dir"
fi

stage "c, c++ and fortran tests (ctest)"
# The tests are built only when asked for; cargo's output goes where the Rust stages put it
# (not into build/target), so that every configuration shares one cargo target directory.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DZARR_BUILD_TESTS=ON -DZARR_TEST_COPY_MEMORY=ON \
  -DZARR_ICECHUNK=$icechunk -DZARR_CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}" \
  >/dev/null
cmake --build build -j2
ctest --test-dir build --output-on-failure

if $fast; then
  stage "fast stages passed (quickstart, interop, MPI, packaging, fuzz, sanitizers and crash safety skipped)"
  exit 0
fi

stage "packaging: examples against the installed prefix; TLS build options"
bash scripts/check-install.sh build
# The default TLS stack builds with old compilers: aws-lc-sys (whose C build refuses some
# GCC versions) must not be in it, and the system-OpenSSL option must compile.
if cargo tree -e normal -i aws-lc-sys >/dev/null 2>&1; then
  echo "aws-lc-sys is in the default build: it must stay out (see Cargo.toml)" >&2
  exit 1
fi
cargo check --quiet --lib --no-default-features --features cloud,system-tls

stage "docs: the user guide's snippets, the API reference (Doxygen, warnings as errors)"
python3 tests/docs/check_guide.py --build build
bash docs/api/build.sh build/api

stage "release tarball: built and installed offline, examples against it; Spack and conda recipes"
# The tarball's build is checked for being offline and complete, not for speed: unoptimised,
# it builds in half the time.
CARGO_PROFILE_RELEASE_OPT_LEVEL=0 bash scripts/check-dist.sh

stage "interop: zarr-python 2.18, zarr-python 3.x, tensorstore"
bash tests/interop/run.sh

stage "mpi: 4 ranks writing one array, on disk and in S3"
bash tests/mpi/run.sh

stage "fuzz (bounded)"
# The C codecs without debug information in the suite (cargo-fuzz keeps line tables for
# the Rust code; cc would compile the C code with full debug information): 1.3 GB of
# instrumented programs instead of 2.2 GB.
CFLAGS=-g0 CXXFLAGS=-g0 FUZZ_SECONDS=${FUZZ_SECONDS:-12} bash scripts/fuzz.sh
# A CI machine keeps nothing between runs: the instrumented programs (1.3 GB) go before the
# sanitizer builds, which keeps a fresh run's disk near 6 GB. Elsewhere they stay for the
# next run.
if [ "${CI:-}" = true ]; then rm -rf fuzz/target; fi

stage "sanitizers: ASan+UBSan, valgrind"
bash scripts/sanitize.sh

stage "crash safety"
# With the features of the Rust stage, so the library built there is reused.
ZARR_CRASH_KILLS=${ZARR_CRASH_KILLS:-500} cargo test "${features[@]}" --test crash_safety

stage "crash states: power cuts replayed from recorded file-system calls"
CRASHSTATE_FEATURES="$feature_list" bash tests/crashstate/run.sh

stage "all stages passed"
