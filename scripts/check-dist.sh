#!/usr/bin/env bash
# Builds and installs the release tarball with no network access, the way Spack and conda
# build it, then builds and runs the examples against the installed prefix.
#
# Usage: scripts/check-dist.sh
#
#   1. scripts/dist.sh makes libzarr-<version>.tar.gz (in a work directory), and
#      packaging/check.py checks the Spack package and the conda recipe;
#   2. the tarball is extracted; from here on everything runs in a network namespace with no
#      network (unshare -n: a loopback interface only), with CARGO_HOME an empty directory
#      (no registry cache of this machine can be used) and CARGO_TARGET_DIR in the work
#      directory. A crates.io fetch from there is shown to fail;
#   3. the conda recipe's build.sh configures, builds (CMake runs cargo build --release
#      --locked --offline) and installs into a prefix, with the CARGO_BUILD_TARGET that
#      conda's Rust activation sets; the recipe's test commands then run on that prefix;
#   4. CMake configures the extracted tree with the Spack package's cmake_args() (each must
#      be used and land in the cache; Spack's build and install steps are the `cmake --build`
#      and `cmake --install` of step 3), and with no arguments (ZARR_OFFLINE must default
#      to ON in a tree with vendored crates). Configure only: the release build runs once;
#   5. scripts/check-install.sh from the tarball checks the build of step 3: installs it in a
#      fresh prefix and builds and runs the C, C++ and Fortran examples against it (CMake
#      find_package(zarr CONFIG) and pkg-config, shared and static); the command line's
#      tests, which need a debug build of every crate, run on the repository's build only;
#   6. the empty CARGO_HOME is checked to have received no crate.
# Costs one release build of the library. Needs root (unshare -n), or unprivileged user
# namespaces (unshare -r -n), and what scripts/check-install.sh needs plus PyYAML.
# Prints "check-dist: PASS" or "check-dist: FAIL: <reason>"; exits nonzero on failure.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"

work=""
finished=0
failed=0
fail() {
  echo "check-dist: FAIL: $*${work:+ (logs kept in $work)}" >&2
  failed=1
  exit 1
}
on_exit() {
  local status=$?
  if [ "$finished" -ne 1 ]; then
    [ "$status" -ne 0 ] || status=1
    [ "$failed" -eq 1 ] || echo "check-dist: FAIL (exit status $status; logs kept in ${work:-none})" >&2
    # The logs stay; the build output (gigabytes) does not.
    [ -z "$work" ] || rm -rf "$work/target"
    exit "$status"
  fi
  [ -z "$work" ] || rm -rf "$work"
}
trap on_exit EXIT

step() { echo "check-dist: $*"; }

for tool in git cargo rustc tar unshare python3 cmake pkg-config; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool is not installed"
done
if [ "$(id -u)" -eq 0 ]; then netns=(unshare -n); else netns=(unshare -r -n); fi
"${netns[@]}" true 2>/dev/null ||
  fail "cannot make a network namespace with '${netns[*]}' (run as root, or allow unprivileged user namespaces)"

version="$(sed -n 's/^version *= *"\([0-9][0-9.]*\)".*/\1/p' "$here/Cargo.toml" | head -n 1)"
[ -n "$version" ] || fail "cannot read the version from Cargo.toml"
name="libzarr-$version"

work="$(mktemp -d "${TMPDIR:-/tmp}/zarr-check-dist.XXXXXX")"
src="$work/src/$name"
prefix="$work/prefix"
cargo_home="$work/cargo-home"
mkdir -p "$work/src" "$cargo_home"

# --- 1. the tarball and the recipes ---------------------------------------------------

step "making the tarball"
bash "$here/scripts/dist.sh" "$work/dist" >"$work/dist.log" 2>&1 || { cat "$work/dist.log" >&2; fail "dist.sh failed"; }
tarball="$work/dist/$name.tar.gz"
[ -f "$tarball" ] || fail "dist.sh made no $name.tar.gz"
step "$name.tar.gz: $(du -h "$tarball" | cut -f1)"

python3 "$here/packaging/check.py" --spack-args "$work/spack-args.txt" --conda-tests "$work/conda-tests.txt" ||
  fail "the Spack package or the conda recipe is wrong"

tar -xzf "$tarball" -C "$work/src"
[ -d "$src/vendor" ] && [ -f "$src/.cargo/config.toml" ] || fail "the tarball has no vendor/ or .cargo/config.toml"
step "extracted: $(du -sh "$src" | cut -f1), $(find "$src/vendor" -mindepth 1 -maxdepth 1 -type d | wc -l) vendored crates"

# --- 2. no network --------------------------------------------------------------------

# Runs a command with no network (the loopback interface up, for the tests' own servers),
# an empty cargo home and the target directory in $work.
offline() {
  "${netns[@]}" sh -c 'ip link set lo up 2>/dev/null || true; exec "$@"' offline \
    env CARGO_HOME="$cargo_home" CARGO_TARGET_DIR="$work/target" CARGO_NET_RETRY=0 "$@" </dev/null
}

# /proc/net/dev lists the interfaces of the reader's namespace (/sys/class/net would show
# those of the namespace sysfs was mounted in).
interfaces="$(offline sed -n 's/^ *\([^:]*\):.*/\1/p' /proc/net/dev | tr '\n' ' ')"
[ "$interfaces" = "lo " ] || fail "the namespace has network interfaces: $interfaces"
probe="$work/probe"
mkdir -p "$probe/src" "$probe/cargo-home"
printf '[package]\nname = "probe"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\nitoa = "1"\n' \
  >"$probe/Cargo.toml"
: >"$probe/src/lib.rs"
if offline env CARGO_HOME="$probe/cargo-home" cargo generate-lockfile --manifest-path "$probe/Cargo.toml" \
  >"$probe/fetch.log" 2>&1; then
  fail "cargo reached crates.io from the namespace: it has network access"
fi
step "no network: interfaces '${interfaces% }'; fetching from crates.io fails:" \
  "$(grep -v '^ *$' "$probe/fetch.log" | tail -n 1 | sed 's/^ *//')"

# --- 3. the conda recipe's build ------------------------------------------------------

host="$(rustc -vV | sed -n 's/^host: //p')"
[ -n "$host" ] || fail "cannot read rustc's host triple"
step "building and installing with packaging/conda/recipe/build.sh (offline; CARGO_BUILD_TARGET=$host)"
# What conda-build gives build.sh (CMAKE_ARGS aside), and its Rust activation's target.
build_env=(PREFIX="$prefix" SRC_DIR="$src" RECIPE_DIR="$src/packaging/conda/recipe" CPU_COUNT="$(nproc)"
           CARGO_BUILD_TARGET="$host")
start=$SECONDS
(cd "$src" && offline env "${build_env[@]}" bash packaging/conda/recipe/build.sh) >"$work/build.log" 2>&1 ||
  { tail -n 60 "$work/build.log" >&2; fail "build.sh failed (log: $work/build.log)"; }
build_time=$((SECONDS - start))
step "built and installed in $build_time s"
grep -rq -- '--locked --offline' "$src/build/CMakeFiles/zarr_cargo.dir" ||
  fail "the build does not run cargo --locked --offline"
[ -x "$work/target/$host/release/zarrtool" ] || fail "cargo's output is not in target/$host/release"

mapfile -t tests <"$work/conda-tests.txt"
for command in "${tests[@]}"; do
  [ -n "$command" ] || continue
  offline env PREFIX="$prefix" PATH="$prefix/bin:$PATH" PKG_CONFIG_PATH="$prefix/lib/pkgconfig" \
    bash -euo pipefail -c "$command" || fail "the conda recipe's test command failed: $command"
done
step "the conda recipe's ${#tests[@]} test commands pass on the prefix"

# --- 4. CMake with the Spack package's arguments, and with none ----------------------

mapfile -t spack_args <"$work/spack-args.txt"
offline cmake -S "$src" -B "$work/spack-build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$work/spack-prefix" "${spack_args[@]}" >"$work/spack-configure.log" 2>&1 ||
  { cat "$work/spack-configure.log" >&2; fail "CMake refuses the Spack package's arguments"; }
! grep -q 'Manually-specified variables were not used' "$work/spack-configure.log" ||
  { cat "$work/spack-configure.log" >&2; fail "CMake does not use some of the Spack package's arguments"; }
for arg in "${spack_args[@]}"; do
  setting="${arg#-D}"
  grep -qxF "$setting" "$work/spack-build/CMakeCache.txt" || fail "the CMake cache has no $setting"
done
step "CMake configures with the Spack package's arguments: ${spack_args[*]}"
offline cmake -S "$src" -B "$work/plain-build" >"$work/plain-configure.log" 2>&1 ||
  { cat "$work/plain-configure.log" >&2; fail "CMake does not configure the extracted tarball"; }
grep -q '^ZARR_OFFLINE:BOOL=ON$' "$work/plain-build/CMakeCache.txt" ||
  fail "ZARR_OFFLINE is not on by default in a tree with vendored crates"
step "ZARR_OFFLINE is on by default in the extracted tarball"

# --- 5. the examples against an installed prefix -------------------------------------

step "scripts/check-install.sh (from the tarball) on the build, without the command line's tests"
# In the build's environment, so that cargo finds its output up to date. The command line's
# tests (tests/cli.rs) ran on the repository's installed build of the same sources; here they
# would cost a debug build of every crate in this empty target directory.
offline env "${build_env[@]}" ZARR_CHECK_INSTALL_CLI_TESTS=0 bash "$src/scripts/check-install.sh" "$src/build" ||
  fail "check-install.sh failed on the tarball's build"

# --- 6. nothing came from a registry --------------------------------------------------

crates="$(find "$cargo_home" -name '*.crate' | wc -l)"
[ "$crates" -eq 0 ] || fail "cargo put $crates crates in the empty CARGO_HOME"

finished=1
echo "check-dist: PASS ($name.tar.gz, $(du -h "$tarball" | cut -f1): built offline in $build_time s" \
  "with the conda recipe's steps, installed, examples built and run against the prefix)"
