#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh Debian machine with Rust:
# system packages (cmake, pkg-config, C/C++ and Fortran compilers, OpenMPI, valgrind for the
# sanitizer stage, nginx-light as the web server of the HTTP store tests, tmux for the
# progress-bar test, OpenSSL's headers for the system-TLS build check, clang 19 for the
# full-C23 header test, PyYAML for the conda recipe check, the netCDF library and its
# ncgen/ncdump for zarrtool's netCDF import, debootstrap for the Debian 13 chroot below, strace
# for the crash-state checker's recordings), two Python
# virtual environments with pinned zarr-python 2.18 and zarr-python 3.x + tensorstore for the
# interop tests, and a third with the pinned moto S3 server and zarr-python 3 with obstore for
# the object-store tests (tests/object_store.rs, tests/interop/test_s3_interop.py), and the
# pinned Azurite (npm) for the Azure Blob Storage tests; and a Debian 13 (trixie) chroot with
# Python 3.13 holding zarr-python 3.4 (which needs Python >= 3.12) and Python's icechunk for
# tests/interop/test_zp34_interop.py and tests/interop/test_icechunk_interop.py.
# Idempotent: a second run only checks that everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."

ENV_DIR="${ZARR_TEST_ENV:-$PWD/.test-env}"

need_apt=()
for tool in cmake pkg-config cc c++ gfortran make mpicc mpirun valgrind nginx npm tmux nc-config ncgen strace; do
  command -v "$tool" >/dev/null 2>&1 || need_apt+=("$tool")
done
pkg-config --exists openssl 2>/dev/null || need_apt+=(libssl-dev)
# A compiler with full C23 for the header test (GCC 12 knows only -std=c2x).
command -v clang-19 >/dev/null 2>&1 || need_apt+=(clang-19)
python3 -c 'import yaml' >/dev/null 2>&1 || need_apt+=(python3-yaml)
# Doxygen builds the API reference from zarr.h (docs/api/build.sh).
command -v doxygen >/dev/null 2>&1 || need_apt+=(doxygen)
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || need_apt+=(debootstrap)
# ip brings up the loopback interface of the release check's network namespace.
command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || need_apt+=(iproute2)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing system packages (missing: ${need_apt[*]})"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  pkgs=(cmake pkg-config build-essential gfortran openmpi-bin libopenmpi-dev valgrind nginx-light tmux
        libssl-dev clang-19 python3-yaml libnetcdf-dev netcdf-bin doxygen debootstrap iproute2 strace)
  # Node.js may come from elsewhere than Debian (its npm then conflicts with Debian's npm):
  # Debian's packages only when npm is missing.
  command -v npm >/dev/null 2>&1 || pkgs+=(nodejs npm)
  pkgs+=(doxygen)
  $SUDO apt-get install -y -qq "${pkgs[@]}" >/dev/null
  # The tests start their own nginx on a loopback port; the package's service is not used.
  if command -v service >/dev/null 2>&1; then $SUDO service nginx stop >/dev/null 2>&1 || true; fi
fi

make_venv() {
  local name=$1; shift
  local dir="$ENV_DIR/$name"
  local stamp="$dir/.pins"
  local pins="$*"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$pins" ]; then
    return
  fi
  echo "setup: creating Python environment $name ($pins)"
  rm -rf "$dir"
  python3 -m venv "$dir"
  "$dir/bin/pip" install -q --disable-pip-version-check "$@"
  echo "$pins" > "$stamp"
}

# zarr-python 2.18 (the v2 reference) and zarr-python 3.x with tensorstore and xarray, and
# netCDF4-python (with cftime) for xarray to read the netCDF files the fidelity tests compare
# with their imports (tests/interop/test_xarray_fidelity.py); kerchunk with h5py (netCDF-4
# and HDF5) and scipy (netCDF-3) makes the reference files of
# tests/interop/test_kerchunk_interop.py.
make_venv zp2 numpy==2.2.6 numcodecs==0.15.1 zarr==2.18.7 pytest==8.3.5
make_venv zp3 numpy==2.2.6 numcodecs==0.16.1 zarr==3.1.6 tensorstore==0.1.86 ml_dtypes==0.6.0 pytest==8.3.5 \
  xarray==2025.6.1 pandas==2.2.3 netCDF4==1.7.2 cftime==1.6.4.post1 \
  kerchunk==0.2.10 h5py==3.16.0 scipy==1.15.3 fsspec==2026.9.0 ujson==6.1.0
# The S3 server of the object-store tests (the tests start it on loopback) and zarr-python 3
# reading and writing the same bucket through obstore.
make_venv objstore 'moto[server]==5.2.5' numpy==2.2.6 numcodecs==0.16.1 zarr==3.1.6 \
  obstore==0.12.1 tensorstore==0.1.86 ml_dtypes==0.6.0 pytest==8.3.5
# The Azure Blob Storage emulator for the object-store tests (the tests start it on loopback).
AZURITE=azurite@3.37.0
if [ ! -f "$ENV_DIR/azurite/.pins" ] || [ "$(cat "$ENV_DIR/azurite/.pins")" != "$AZURITE" ]; then
  echo "setup: installing $AZURITE"
  rm -rf "$ENV_DIR/azurite"
  mkdir -p "$ENV_DIR/azurite"
  npm install --prefix "$ENV_DIR/azurite" --no-audit --no-fund --silent "$AZURITE" >/dev/null
  echo "$AZURITE" > "$ENV_DIR/azurite/.pins"
fi
# An S3 server that checks request signatures (moto does not), for the signature test of
# tests/object_store.rs: the s3s-fs binary, built once from crates.io with its own lock file.
S3S=s3s-fs@0.14.1
if [ ! -f "$ENV_DIR/s3s/.pins" ] || [ "$(cat "$ENV_DIR/s3s/.pins")" != "$S3S" ]; then
  echo "setup: building $S3S (once; cached in $ENV_DIR/s3s)"
  rm -rf "$ENV_DIR/s3s"
  cargo install --quiet --locked --root "$ENV_DIR/s3s" --features binary "$S3S"
  echo "$S3S" > "$ENV_DIR/s3s/.pins"
fi
# zarr-python 3.4 needs Python >= 3.12: a minimal Debian 13 chroot (Python 3.13) with a venv at
# /opt/zp34. Its Python runs as `chroot "$ENV_DIR/trixie" /opt/zp34/bin/python SCRIPT` with no
# mounts (numpy and zarr need neither /proc nor more of /dev than debootstrap makes); the tests
# put their data under "$ENV_DIR/trixie/tmp". zfpy is pinned to 1.0.1: numcodecs 0.17.1 reads
# zfpy's version as integers separated by dots, so 1.0.1.post0 makes `import numcodecs` fail.
# icechunk 2.3.0 is the newest Python release of the 2.3 line of the icechunk crate libzarr
# uses (2.3.1, which has no Python release): both write and read the same on-disk format.
# VirtualiZarr 2.8 (with h5py and obstore, which its HDF5 parser needs) writes repositories of
# virtual chunks for test_icechunk_interop.py.
# A changed pin list changes the stamp, so an existing chroot gets a new venv with every pin.
TRIXIE_BASE="debian trixie minbase python3 python3-venv"
ZP34_PINS=(zarr==3.4.2 numcodecs==0.17.1 numpy==2.5.5 pcodec==1.1.0 zfpy==1.0.1 cast-value-rs==0.5.1
  icechunk==2.3.0 xarray==2026.9.0 pandas==3.1.1 virtualizarr==2.8.0 h5py==3.16.0 obstore==0.12.1)
trixie="$ENV_DIR/trixie"
if [ ! -f "$trixie/.pins" ] || [ "$(cat "$trixie/.pins")" != "$TRIXIE_BASE ${ZP34_PINS[*]}" ]; then
  start=$(date +%s)
  if [ ! -f "$trixie/.base" ] || [ "$(cat "$trixie/.base")" != "$TRIXIE_BASE" ]; then
    echo "setup: creating the Debian 13 chroot $trixie"
    # Never delete through a mount (a /proc or /dev left mounted inside by hand).
    if grep -q " $trixie/" /proc/mounts; then
      echo "setup: something is mounted under $trixie: unmount it first" >&2
      exit 1
    fi
    rm -rf "$trixie"
    PATH="$PATH:/usr/sbin:/sbin" debootstrap --variant=minbase --include=python3,python3-venv \
      trixie "$trixie" http://deb.debian.org/debian >/dev/null
    # Only Python is used: drop the package caches and lists (about 100 MB).
    rm -rf "$trixie"/var/cache/apt/archives/*.deb "$trixie"/var/lib/apt/lists/*
    echo "$TRIXIE_BASE" > "$trixie/.base"
  fi
  echo "setup: installing ${ZP34_PINS[*]} in the chroot's /opt/zp34"
  rm -rf "$trixie/opt/zp34" "$trixie/.pins"
  chroot "$trixie" python3 -m venv /opt/zp34
  # pip inside the chroot trusts the certificate authorities this machine trusts (a copy of the
  # host's bundle for the install only); host pip settings that name host paths are dropped.
  ca="${PIP_CERT:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}"
  cp "$ca" "$trixie/tmp/setup-ca.crt"
  if ! chroot "$trixie" env -u PIP_FIND_LINKS -u PIP_CERT -u REQUESTS_CA_BUNDLE \
      SSL_CERT_FILE=/tmp/setup-ca.crt /opt/zp34/bin/pip install -q --disable-pip-version-check \
      --no-cache-dir --cert /tmp/setup-ca.crt "${ZP34_PINS[@]}"; then
    rm -f "$trixie/tmp/setup-ca.crt"
    echo "setup: pip install in the chroot failed" >&2
    exit 1
  fi
  rm -f "$trixie/tmp/setup-ca.crt"
  echo "$TRIXIE_BASE ${ZP34_PINS[*]}" > "$trixie/.pins"
  echo "setup: chroot ready in $(( $(date +%s) - start ))s"
fi
echo "setup: test environment ready in $ENV_DIR"
