#!/usr/bin/env bash
# Checks an installation of libzarr the way consumers use it.
#
# Usage: scripts/check-install.sh [build-dir]      (default: build)
#
# Installs the configured build into a fresh prefix (cmake --install --prefix), checks the
# installed files and the soname, then builds every example against that prefix: the C
# examples (examples-c/*.c), the C++ ones (*.cpp, with zarr.hpp) and, when the build has the
# Fortran binding (a Fortran compiler was found, ZARR_FORTRAN=ON), the Fortran ones (*.f90):
#   (a) CMake find_package(zarr) via CMAKE_PREFIX_PATH, linked to zarr::zarr (shared) or
#       zarr::fortran;
#   (b) the same project's <target>_static executables, linked to zarr::zarr_static;
#   (c) plain `cc` / `c++` with `pkg-config --cflags --libs zarr` (PKG_CONFIG_PATH into the
#       prefix; run with LD_LIBRARY_PATH, and linked with an rpath and run without), and
#       with `pkg-config --static` for a static link; Fortran with
#       `pkg-config --cflags --libs zarr-fortran` (the module directory
#       include/zarr/<compiler>-<version>, -lzarr_fortran -lzarr) and an rpath;
#   (d) plain `cc` against cargo's own output (-L target/release -lzarr, with an rpath).
#   (e) make with two-line Makefiles for the C and Fortran quickstarts: once with only
#       `pkg-config` (zarr.pc, zarr-fortran.pc), once with only `zarr-config`.
# With zarrtool, its command-line tests (tests/cli.rs and the netCDF ones) run on the installed
# command, unless ZARR_CHECK_INSTALL_CLI_TESTS=0.
# Every binary is run (examples get a scratch directory as their working directory) and
# must exit 0. Also checks the package version rules and that the prefix can be moved.
# Prints "check-install: PASS" or "check-install: FAIL: <reason>"; exits nonzero on failure.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-build}"
cc="${CC:-cc}"
cxx="${CXX:-c++}"
shopt -s nullglob

work=""
finished=0
failed=0
fail() {
  echo "check-install: FAIL: $*${work:+ (work directory kept: $work)}" >&2
  failed=1
  exit 1
}
on_exit() {
  local status=$?
  if [ "$finished" -ne 1 ]; then
    [ "$status" -ne 0 ] || status=1
    [ "$failed" -eq 1 ] ||
      echo "check-install: FAIL (exit status $status; work directory kept: ${work:-none})" >&2
    exit "$status"
  fi
  [ -z "$work" ] || rm -rf "$work"
}
trap on_exit EXIT

step() { echo "check-install: $*"; }

[ -f "$build/CMakeCache.txt" ] || fail "$build is not a configured CMake build directory"
for tool in cmake readelf pkg-config "$cc" "$cxx"; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool is not installed"
done

version="$(sed -n 's/^version *= *"\([0-9][0-9.]*\)".*/\1/p' "$here/Cargo.toml" | head -n 1)"
[ -n "$version" ] || fail "cannot read the version from Cargo.toml"
major="${version%%.*}"
minor="${version#*.}"; minor="${minor%%.*}"

work="$(mktemp -d "${TMPDIR:-/tmp}/zarr-check-install.XXXXXX")"
prefix="$work/prefix"

step "building $build"
cmake --build "$build" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; fail "build failed"; }

step "installing into a fresh prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log" >&2; fail "cmake --install failed"; }

# --- installed files -------------------------------------------------------------------

pc_file="$(find "$prefix" -name zarr.pc -path '*/pkgconfig/*' | head -n 1)"
[ -n "$pc_file" ] || fail "zarr.pc was not installed"
libdir="$(dirname "$(dirname "$pc_file")")"
includedir="$prefix/include"
step "libdir is ${libdir#"$prefix"/}"

for f in "$libdir/libzarr.so.$version" "$libdir/libzarr.a" "$includedir/zarr.h" "$includedir/zarr.hpp" \
         "$libdir/cmake/zarr/zarrConfig.cmake" "$libdir/cmake/zarr/zarrConfigVersion.cmake" \
         "$libdir/cmake/zarr/zarrTargets.cmake"; do
  [ -f "$f" ] || fail "missing installed file ${f#"$prefix"/}"
done

# The command line, when the build has it (ZARR_TOOL, on by default).
if grep -q '^ZARR_TOOL:BOOL=ON' "$build/CMakeCache.txt"; then
  [ -x "$prefix/bin/zarrtool" ] || fail "bin/zarrtool was not installed"
  tool_version="$("$prefix/bin/zarrtool" version)" || fail "the installed zarrtool version failed"
  [ "$tool_version" = "zarrtool $version" ] ||
    fail "the installed zarrtool says '$tool_version', expected 'zarrtool $version'"
  step "bin/zarrtool runs ($tool_version)"
  for f in share/man/man1/zarrtool.1 share/bash-completion/completions/zarrtool \
           share/zsh/site-functions/_zarrtool share/fish/vendor_completions.d/zarrtool.fish; do
    [ -s "$prefix/$f" ] || fail "missing installed file $f"
  done
  cmp -s "$prefix/share/man/man1/zarrtool.1" <("$prefix/bin/zarrtool" man) ||
    fail "the installed man page differs from zarrtool man"
  # One page per command, each as `zarrtool man --dir` writes it, and no other.
  pages="$(mktemp -d)"
  "$prefix/bin/zarrtool" man --dir "$pages" || fail "zarrtool man --dir failed"
  for page in "$pages"/*.1; do
    cmp -s "$page" "$prefix/share/man/man1/${page##*/}" ||
      fail "the installed man page ${page##*/} is missing or differs from zarrtool man --dir"
  done
  for page in "$prefix"/share/man/man1/zarrtool*.1; do
    [ -f "$pages/${page##*/}" ] || fail "the installed man page ${page##*/} is no command's"
  done
  step "share/man/man1 has the $(ls "$pages" | wc -l) pages of zarrtool man --dir"
  rm -rf "$pages"
  # The command line's tests, run on the installed command with the features the CMake
  # build chose (netCDF, Icechunk, zfp): its netCDF tests must run when the build has netCDF
  # support, and its feature and codec tests expect what the binary reports.
  netcdf=0
  grep -q '^ZARR_NETCDF:BOOL=ON' "$build/CMakeCache.txt" && netcdf=1
  features=""
  [ $netcdf = 1 ] && features=netcdf
  grep -q '^ZARR_ICECHUNK:BOOL=ON' "$build/CMakeCache.txt" && features="${features:+$features,}icechunk"
  grep -q '^ZARR_ZFP:BOOL=ON' "$build/CMakeCache.txt" && features="${features:+$features,}zfp"
  if [ "${ZARR_CHECK_INSTALL_CLI_TESTS:-1}" = 0 ]; then
    step "tests/cli.rs on the installed bin/zarrtool: skipped (ZARR_CHECK_INSTALL_CLI_TESTS=0)"
  else
    step "tests/cli.rs, netcdf_hostile.rs and netcdf_export.rs on the installed bin/zarrtool (netCDF: $netcdf; features: ${features:-default})"
    (cd "$here" && ZARRTOOL_BIN="$prefix/bin/zarrtool" ZARR_TEST_NETCDF=$netcdf \
       cargo test --quiet ${features:+--features "$features"} --test suite \
         -- cli:: netcdf_hostile:: netcdf_export::) \
      >"$work/cli-tests.log" 2>&1 ||
      { cat "$work/cli-tests.log" >&2; fail "the CLI tests failed on the installed zarrtool"; }
  fi
fi
[ -L "$libdir/libzarr.so.$major" ] || fail "libzarr.so.$major is not a symlink"
[ "$(readlink "$libdir/libzarr.so.$major")" = "libzarr.so.$version" ] ||
  fail "libzarr.so.$major points to $(readlink "$libdir/libzarr.so.$major")"
[ -L "$libdir/libzarr.so" ] || fail "libzarr.so is not a symlink"
[ "$(readlink "$libdir/libzarr.so")" = "libzarr.so.$major" ] ||
  fail "libzarr.so points to $(readlink "$libdir/libzarr.so")"
cmp -s "$includedir/zarr.h" "$here/include/zarr.h" || fail "installed zarr.h differs from include/zarr.h"
cmp -s "$includedir/zarr.hpp" "$here/include/zarr.hpp" || fail "installed zarr.hpp differs from include/zarr.hpp"

# The Fortran binding: expected when the build has it (ZARR_FORTRAN=ON, which a Fortran
# compiler makes the default). Its module files and sources are in one compiler's directory.
fc=""
moddir=""
if grep -q '^ZARR_FORTRAN:BOOL=ON$' "$build/CMakeCache.txt"; then
  fc="$(sed -n 's/^CMAKE_Fortran_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")"
  [ -x "$fc" ] || fail "the build's Fortran compiler '$fc' is missing"
  mods=("$includedir"/zarr/*/zarr.mod)
  [ "${#mods[@]}" -eq 1 ] || fail "expected one include/zarr/<compiler>/zarr.mod, found ${#mods[@]}"
  moddir="$(dirname "${mods[0]}")"
  for f in "$libdir/libzarr_fortran.a" "$libdir/cmake/zarr/zarrFortranTargets.cmake" \
           "$moddir/zarr_c.mod" "$moddir/zarr.f90" "$moddir/zarr_c.f90" "$moddir/zarr_constants.inc"; do
    [ -f "$f" ] || fail "missing installed file ${f#"$prefix"/}"
  done
  step "Fortran binding in ${moddir#"$prefix"/}"
elif command -v gfortran >/dev/null 2>&1; then
  step "gfortran is installed but $build has ZARR_FORTRAN=OFF: Fortran examples not built"
fi

# The MPI layer: expected when the build has it (ZARR_MPI=ON, which finding MPI makes the
# default); its library, header and CMake target file, and it must not bring MPI into
# libzarr.so itself.
if grep -q '^ZARR_MPI:BOOL=ON$' "$build/CMakeCache.txt"; then
  for f in "$libdir/libzarr_mpi.so.$version" "$includedir/zarr_mpi.h" \
           "$libdir/cmake/zarr/zarrMpiTargets.cmake"; do
    [ -f "$f" ] || fail "missing installed file ${f#"$prefix"/}"
  done
  [ -L "$libdir/libzarr_mpi.so.$major" ] || fail "libzarr_mpi.so.$major is not a symlink"
  cmp -s "$includedir/zarr_mpi.h" "$here/include/zarr_mpi.h" ||
    fail "installed zarr_mpi.h differs from include/zarr_mpi.h"
  readelf -d "$libdir/libzarr_mpi.so.$version" | grep -q "NEEDED.*\[libzarr.so.$major\]" ||
    fail "libzarr_mpi.so does not need libzarr.so.$major"
  ! readelf -d "$libdir/libzarr.so.$version" | grep -q 'NEEDED.*mpi' ||
    fail "libzarr.so links MPI"
  step "MPI layer: libzarr_mpi.so.$version (zarr::mpi)"
  # Its Fortran module, when the build made it (MPI's Fortran has mpi_f08).
  if [ -f "$build/bindings/fortran/libzarr_mpi_fortran.a" ]; then
    for f in "$libdir/libzarr_mpi_fortran.a" "$libdir/cmake/zarr/zarrMpiFortranTargets.cmake" \
             "$moddir/zarr_mpi.mod" "$moddir/zarr_mpi.f90"; do
      [ -f "$f" ] || fail "missing installed file ${f#"$prefix"/}"
    done
    step "MPI layer's Fortran module zarr_mpi (zarr::mpi_fortran)"
  fi
fi

soname="$(readelf -d "$libdir/libzarr.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')"
[ "$soname" = "libzarr.so.$major" ] || fail "SONAME is '$soname', expected libzarr.so.$major"
step "SONAME $soname"
if grep -rqF "$here" "$libdir/cmake/zarr" "$pc_file"; then
  fail "installed package files mention the source directory"
fi

# Runs a binary in a scratch directory; extra arguments go before it (e.g. env settings).
run() {
  local bin="$1"; shift
  local dir
  dir="$(mktemp -d "$work/run.XXXXXX")"
  step "running $(basename "$bin")"
  if ! (cd "$dir" && env "$@" timeout 300 "$bin" >"$dir/output.txt" 2>&1); then
    cat "$dir/output.txt" >&2
    fail "$(basename "$bin") failed"
  fi
}

# Whether an executable records libzarr as a shared library dependency.
needs_libzarr() { readelf -d "$1" | grep -q 'NEEDED.*\[libzarr\.so'; }

# Examples that include <mpi.h> (in Fortran, `use mpi`) are built (when MPI is available)
# but run only under mpirun, which is tests/mpi/run.sh's job; the others are built and run
# every way.
examples=()
mpi_examples=()
for src in "$here"/examples-c/*.c; do
  if grep -q '^#include <mpi\.h>' "$src"; then mpi_examples+=("$src"); else examples+=("$src"); fi
done
[ "${#examples[@]}" -gt 0 ] || fail "no examples-c/*.c"
cxx_examples=("$here"/examples-c/*.cpp)
[ "${#cxx_examples[@]}" -gt 0 ] || fail "no examples-c/*.cpp"
f90_examples=()
mpi_f90_examples=()
if [ -n "$fc" ]; then
  for src in "$here"/examples-c/*.f90; do
    if grep -q '^ *use mpi *$' "$src"; then mpi_f90_examples+=("$src"); else f90_examples+=("$src"); fi
  done
fi

# --- (a) and (b): CMake find_package ----------------------------------------------------

step "(a)+(b) CMake: find_package(zarr) with CMAKE_PREFIX_PATH"
cmake -S "$here/examples-c" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$work/cmake-configure.log" 2>&1 ||
  { cat "$work/cmake-configure.log" >&2; fail "configuring examples-c failed"; }
grep -q "Found zarr $version" "$work/cmake-configure.log" || fail "examples-c did not find zarr $version"
cmake --build "$work/cmake-build" >"$work/cmake-build.log" 2>&1 ||
  { cat "$work/cmake-build.log" >&2; fail "building examples-c failed"; }

nstatic=0
for src in "${examples[@]}"; do
  name="$(basename "$src" .c)"
  bin="$work/cmake-build/$name"
  [ -x "$bin" ] || fail "examples-c did not build $name"
  needs_libzarr "$bin" || fail "$name does not link libzarr.so"
  readelf -d "$bin" | grep -q "NEEDED.*\[libzarr.so.$major\]" || fail "$name does not need libzarr.so.$major"
  run "$bin"                        # (a) found through the build tree's rpath
  if [ -x "$work/cmake-build/${name}_static" ]; then
    ! needs_libzarr "$work/cmake-build/${name}_static" || fail "${name}_static needs libzarr.so"
    run "$work/cmake-build/${name}_static"   # (b)
    nstatic=$((nstatic + 1))
  fi
done
for src in "${cxx_examples[@]}"; do
  name="$(basename "$src" .cpp)_cxx"
  bin="$work/cmake-build/$name"
  [ -x "$bin" ] || fail "examples-c did not build $name"
  readelf -d "$bin" | grep -q "NEEDED.*\[libzarr.so.$major\]" || fail "$name does not need libzarr.so.$major"
  run "$bin"
  if [ -x "$work/cmake-build/${name}_static" ]; then
    ! needs_libzarr "$work/cmake-build/${name}_static" || fail "${name}_static needs libzarr.so"
    run "$work/cmake-build/${name}_static"
    nstatic=$((nstatic + 1))
  fi
done
for src in "${f90_examples[@]}"; do
  name="$(basename "$src" .f90)_fortran"
  bin="$work/cmake-build/$name"
  [ -x "$bin" ] || fail "examples-c did not build $name (zarr::fortran)"
  needs_libzarr "$bin" || fail "$name does not link libzarr.so"
  run "$bin"
done
[ "$nstatic" -ge 1 ] || fail "no example was linked to zarr::zarr_static"
for src in "${mpi_examples[@]}"; do
  name="$(basename "$src" .c)"
  if grep -q "Skipping example $name" "$work/cmake-configure.log"; then
    step "$name: MPI not found, not built"
  else
    [ -x "$work/cmake-build/$name" ] || fail "examples-c did not build $name"
    step "$name: built (MPI programs run under mpirun in tests/mpi)"
  fi
done
for src in "${mpi_f90_examples[@]}"; do
  name="$(basename "$src" .f90)_fortran"
  if grep -q "Skipping example $name" "$work/cmake-configure.log"; then
    step "$name: MPI (Fortran) not found, not built"
  else
    [ -x "$work/cmake-build/$name" ] || fail "examples-c did not build $name"
    step "$name: built (MPI programs run under mpirun in tests/mpi)"
  fi
done

# --- (c) pkg-config ---------------------------------------------------------------------

step "(c) pkg-config"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
pkg-config --exists zarr || fail "pkg-config does not find zarr"
[ "$(pkg-config --modversion zarr)" = "$version" ] || fail "pkg-config version is $(pkg-config --modversion zarr)"
pc_prefix="$(cd "$(pkg-config --variable=prefix zarr)" && pwd -P)"
[ "$pc_prefix" = "$(cd "$prefix" && pwd -P)" ] || fail "pkg-config prefix is $pc_prefix"
pkg-config --static --libs zarr | grep -q -- '-lpthread' || fail "Libs.private lacks the static dependencies"

read -r -a pc_cflags <<<"$(pkg-config --cflags zarr)"
read -r -a pc_libs <<<"$(pkg-config --libs zarr)"
# -l:libzarr.a makes the linker take the archive although libzarr.so sits next to it.
read -r -a pc_static_libs <<<"$(pkg-config --static --libs zarr | sed 's/-lzarr\b/-l:libzarr.a/')"
for src in "${examples[@]}"; do
  name="$(basename "$src" .c)"
  "$cc" -std=c11 -Wall -Wextra -Werror -o "$work/pc-$name" "$src" "${pc_cflags[@]}" "${pc_libs[@]}" -lm ||
    fail "cc with pkg-config failed for $name"
  needs_libzarr "$work/pc-$name" || fail "pc-$name does not link libzarr.so"
  run "$work/pc-$name" "LD_LIBRARY_PATH=$libdir"
  # As docs/guide/linking.md says: with the prefix's libdir recorded, no LD_LIBRARY_PATH.
  "$cc" -std=c11 -Wall -Wextra -Werror -o "$work/pc-rpath-$name" "$src" "${pc_cflags[@]}" \
    "${pc_libs[@]}" -Wl,-rpath,"$(pkg-config --variable=libdir zarr)" -lm ||
    fail "cc with pkg-config and an rpath failed for $name"
  run "$work/pc-rpath-$name" -u LD_LIBRARY_PATH
  "$cc" -std=c11 -Wall -Wextra -Werror -o "$work/pc-static-$name" "$src" "${pc_cflags[@]}" \
    "${pc_static_libs[@]}" -lm || fail "static cc with pkg-config --static failed for $name"
  ! needs_libzarr "$work/pc-static-$name" || fail "pc-static-$name needs libzarr.so"
  run "$work/pc-static-$name"
done
for src in "${cxx_examples[@]}"; do
  name="$(basename "$src" .cpp)_cxx"
  "$cxx" -std=c++17 -Wall -Wextra -Werror -o "$work/pc-$name" "$src" "${pc_cflags[@]}" "${pc_libs[@]}" ||
    fail "c++ with pkg-config failed for $name"
  needs_libzarr "$work/pc-$name" || fail "pc-$name does not link libzarr.so"
  run "$work/pc-$name" "LD_LIBRARY_PATH=$libdir"
  "$cxx" -std=c++17 -Wall -Wextra -Werror -o "$work/pc-static-$name" "$src" "${pc_cflags[@]}" \
    "${pc_static_libs[@]}" || fail "static c++ with pkg-config --static failed for $name"
  ! needs_libzarr "$work/pc-static-$name" || fail "pc-static-$name needs libzarr.so"
  run "$work/pc-static-$name"
done
if [ -n "$fc" ]; then
  pkg-config --exists zarr-fortran || fail "pkg-config does not find zarr-fortran"
  read -r -a pc_fortran <<<"$(pkg-config --cflags --libs zarr-fortran)"
fi
for src in "${f90_examples[@]}"; do
  name="$(basename "$src" .f90)_fortran"
  "$fc" -o "$work/fc-$name" "$src" "${pc_fortran[@]}" -Wl,-rpath,"$(pkg-config --variable=libdir zarr)" ||
    fail "$fc with pkg-config zarr-fortran failed for $name"
  run "$work/fc-$name" -u LD_LIBRARY_PATH
done
if command -v mpicc >/dev/null 2>&1; then
  for src in "${mpi_examples[@]}"; do
    name="$(basename "$src" .c)"
    # Examples of the MPI layer link its library (beside libzarr) when the build has it.
    mpi_layer=()
    if grep -q '^#include <zarr_mpi\.h>' "$src"; then
      if ! grep -q '^ZARR_MPI:BOOL=ON$' "$build/CMakeCache.txt"; then
        step "$name: the build has no MPI layer (ZARR_MPI=OFF), not built"
        continue
      fi
      mpi_layer=(-lzarr_mpi)
    fi
    mpicc -std=c11 -Wall -Wextra -Werror -o "$work/pc-$name" "$src" "${pc_cflags[@]}" \
      ${mpi_layer[@]+"${mpi_layer[@]}"} "${pc_libs[@]}" -lm ||
      fail "mpicc with pkg-config failed for $name"
    step "$name: built with mpicc and pkg-config"
  done
fi

# --- (d) the cargo build tree -----------------------------------------------------------

# A program linked against cargo's own output (-L target/release -lzarr) records the soname
# libzarr.so.MAJOR; the build leaves that name beside libzarr.so, so it runs with no
# manual step.
step "(d) linked against the cargo build tree"
cargo_triple="$(sed -n 's/^ZARR_CARGO_TARGET:[A-Z]*=//p' "$build/CMakeCache.txt")"
cargo_dir="$(sed -n 's/^ZARR_CARGO_TARGET_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")/${cargo_triple:+$cargo_triple/}release"
[ -f "$cargo_dir/libzarr.so" ] || fail "$cargo_dir/libzarr.so is missing"
[ -e "$cargo_dir/libzarr.so.$major" ] || fail "the cargo build has no libzarr.so.$major beside libzarr.so"
for src in "${examples[@]}"; do
  name="$(basename "$src" .c)"
  "$cc" -std=c11 -Wall -Wextra -Werror -o "$work/tree-$name" "$src" -I"$here/include" \
    -L"$cargo_dir" -lzarr -lm -Wl,-rpath,"$cargo_dir" || fail "cc against the cargo build tree failed for $name"
  readelf -d "$work/tree-$name" | grep -q "NEEDED.*\[libzarr.so.$major\]" ||
    fail "tree-$name does not need libzarr.so.$major"
  run "$work/tree-$name"
done

# --- (e) Makefiles: pkg-config alone, then zarr-config alone ----------------------------

# The quickstarts built by make with two-line Makefiles as docs/guide/linking.md shows
# them: one asks pkg-config (zarr.pc, zarr-fortran.pc) for every flag, the other
# zarr-config (found on PATH, with no PKG_CONFIG_PATH).
step "(e) Makefiles with pkg-config, and with zarr-config"
command -v make >/dev/null 2>&1 || fail "make is not installed"
zc="$prefix/bin/zarr-config"
[ -x "$zc" ] || fail "bin/zarr-config was not installed"
[ "$("$zc" --version)" = "$version" ] || fail "zarr-config --version says '$("$zc" --version)'"
zp="$("$zc" --prefix)"
[ "$(cd "$zp" && pwd -P)" = "$(cd "$prefix" && pwd -P)" ] || fail "zarr-config --prefix says '$zp'"
[ "$("$zc" --cflags --libs)" = "-I$zp/include -L$zp/${libdir#"$prefix"/} -lzarr" ] ||
  fail "zarr-config --cflags --libs says '$("$zc" --cflags --libs)'"
! "$zc" --bogus >/dev/null 2>&1 || fail "zarr-config accepts an unknown option"
if [ -n "$fc" ]; then
  [ "$("$zc" --fflags --flibs)" = "-I$zp/${moddir#"$prefix"/} -L$zp/${libdir#"$prefix"/} -lzarr_fortran -lzarr" ] ||
    fail "zarr-config --fflags --flibs says '$("$zc" --fflags --flibs)'"
  fmoddir="$(pkg-config --variable=fmoddir zarr-fortran)"
  [ -d "$fmoddir" ] && [ "$(cd "$fmoddir" && pwd -P)" = "$(cd "$moddir" && pwd -P)" ] ||
    fail "zarr-fortran.pc's fmoddir is '$fmoddir', expected $moddir"
  [ "$(pkg-config --modversion zarr-fortran)" = "$version" ] || fail "zarr-fortran.pc has another version"
else
  ! "$zc" --fflags >/dev/null 2>&1 || fail "zarr-config --fflags succeeds in a build without Fortran"
  ! pkg-config --exists zarr-fortran || fail "zarr-fortran.pc is installed by a build without Fortran"
fi
for flavour in pkg-config zarr-config; do
  dir="$work/make-$flavour"
  mkdir -p "$dir"
  cp "$here/examples-c/quickstart.c" "$here/examples-c/quickstart.f90" "$dir/"
  if [ "$flavour" = pkg-config ]; then
    c_flags='pkg-config --cflags --libs zarr'
    f_flags='pkg-config --cflags --libs zarr-fortran'
    menv=()
  else
    c_flags='zarr-config --cflags --libs'
    f_flags='zarr-config --fflags --flibs'
    menv=(-u PKG_CONFIG_PATH "PATH=$prefix/bin:$PATH")
  fi
  printf 'quickstart_c: quickstart.c ; $(CC) -o $@ $< $(shell %s) -lm\n' "$c_flags" >"$dir/Makefile"
  printf 'quickstart_f: quickstart.f90 ; $(FC) -o $@ $< $(shell %s)\n' "$f_flags" >>"$dir/Makefile"
  goals=(quickstart_c)
  [ -z "$fc" ] || goals+=(quickstart_f)
  env "${menv[@]}" make -C "$dir" CC="$cc" FC="${fc:-false}" "${goals[@]}" >"$dir/make.log" 2>&1 ||
    { cat "$dir/Makefile" "$dir/make.log" >&2; fail "make with $flavour failed"; }
  for goal in "${goals[@]}"; do
    needs_libzarr "$dir/$goal" || fail "$goal (make with $flavour) does not link libzarr.so"
    run "$dir/$goal" "LD_LIBRARY_PATH=$libdir"
  done
  step "make with $flavour alone built and ran ${goals[*]}"
done

# --- package version rules and a moved prefix -------------------------------------------

step "find_package version rules (SameMinorVersion) and a moved prefix"
mkdir -p "$work/moved"
cp -a "$prefix" "$work/moved/prefix"
probe="$work/probe"
mkdir -p "$probe"
cat >"$probe/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.16)
project(zarr_probe LANGUAGES C)
find_package(zarr $major.$minor CONFIG REQUIRED)
find_package(zarr $major.$((minor + 1)) CONFIG QUIET)
if(zarr_FOUND)
  message(FATAL_ERROR "zarr $major.$((minor + 1)) should not be found")
endif()
find_package(zarr $((major + 1)).0 CONFIG QUIET)
if(zarr_FOUND)
  message(FATAL_ERROR "zarr $((major + 1)).0 should not be found")
endif()
find_package(zarr $major.$minor CONFIG REQUIRED)
get_target_property(shared zarr::zarr IMPORTED_LOCATION)
get_target_property(static zarr::zarr_static IMPORTED_LOCATION)
get_target_property(deps zarr::zarr_static INTERFACE_LINK_LIBRARIES)
message(STATUS "zarr::zarr=\${shared}")
message(STATUS "zarr::zarr_static=\${static} deps=\${deps}")
foreach(f IN ITEMS "\${shared}" "\${static}")
  if(NOT EXISTS "\${f}")
    message(FATAL_ERROR "\${f} does not exist")
  endif()
endforeach()
if(TARGET zarr::fortran)
  get_target_property(fortran zarr::fortran IMPORTED_LOCATION)
  get_target_property(mods zarr::fortran INTERFACE_INCLUDE_DIRECTORIES)
  message(STATUS "zarr::fortran=\${fortran} mods=\${mods}")
  if(NOT EXISTS "\${fortran}" OR NOT EXISTS "\${mods}/zarr.mod")
    message(FATAL_ERROR "zarr::fortran points to missing files")
  endif()
endif()
if(TARGET zarr::mpi)
  get_target_property(mpi zarr::mpi IMPORTED_LOCATION)
  message(STATUS "zarr::mpi=\${mpi}")
  if(NOT EXISTS "\${mpi}")
    message(FATAL_ERROR "zarr::mpi points to a missing file")
  endif()
endif()
EOF
cmake -S "$probe" -B "$probe/build" -DCMAKE_PREFIX_PATH="$work/moved/prefix" >"$work/probe.log" 2>&1 ||
  { cat "$work/probe.log" >&2; fail "the version probe project failed"; }
grep -q "zarr::zarr=$work/moved/prefix/" "$work/probe.log" ||
  { cat "$work/probe.log" >&2; fail "the moved prefix's targets point elsewhere"; }
grep -q "deps=.*pthread" "$work/probe.log" || fail "zarr::zarr_static lacks its link dependencies"
if [ -n "$fc" ]; then
  grep -q "zarr::fortran=$work/moved/prefix/.* mods=$work/moved/prefix/" "$work/probe.log" ||
    { cat "$work/probe.log" >&2; fail "the moved prefix's zarr::fortran points elsewhere"; }
fi
if grep -q '^ZARR_MPI:BOOL=ON$' "$build/CMakeCache.txt"; then
  grep -q "zarr::mpi=$work/moved/prefix/" "$work/probe.log" ||
    { cat "$work/probe.log" >&2; fail "the moved prefix's zarr::mpi points elsewhere"; }
fi
PKG_CONFIG_PATH="$work/moved/prefix/${libdir#"$prefix"/}/pkgconfig" pkg-config --variable=libdir zarr |
  grep -q "^$work/moved/prefix/" || fail "zarr.pc in the moved prefix points elsewhere"
"$work/moved/prefix/bin/zarr-config" --libdir | grep -q "^$work/moved/prefix/" ||
  fail "zarr-config in the moved prefix points elsewhere"

finished=1
languages="C and C++"
[ -z "$fc" ] || languages="C, C++ and Fortran"
echo "check-install: PASS (libzarr $version: CMake shared, CMake static, pkg-config shared and static;" \
  "$languages examples; make with pkg-config and with zarr-config)"
