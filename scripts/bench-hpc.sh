#!/usr/bin/env bash
# Parallel output benchmark (benches/hpc/): N MPI ranks each write a 3-D block of a float32
# field every step, the blocks uneven and not lined up with the chunks (field.h), with
# parallel netCDF-4 (HDF5 over MPI-IO: collective and independent, without compression and
# with zlib + shuffle) and with libzarr's C API in six patterns (bench_hpc_zarr.c): each
# rank its own chunks (blocking, and non-blocking behind a simulated computation), the
# guides' two old patterns (every rank writes its band of an array rank 0 grows each step;
# gather to rank 0, which appends), and the MPI layer's collective write and collective
# append (two-phase I/O), each without compression, with the default blosc and with
# zlib + shuffle; 1, 2 and 4 ranks. Prints one table: wall time, throughput of raw data,
# bytes on disk, files written per step, output seconds per step, the largest peak RSS of
# a rank beside the largest block, and for the non-blocking runs the fraction of the step
# spent waiting on output and the fraction of the blocking output time hidden. Every file
# is read back and checked bit for bit by the program that wrote it. Figures are printed,
# never asserted.
#
# Builds libzarr (release) and the programs (mpicc -Wall -Wextra -Werror); run it while no
# other build or benchmark runs, as the figures depend on idle cores:
#
#   scripts/bench-hpc.sh [--quick]      # --quick: 20 steps instead of 100
#
# Installs with apt what is missing: MPI (openmpi-bin, libopenmpi-dev) and Debian's
# parallel netCDF (libnetcdf-mpi-dev, with libhdf5-openmpi-dev), which sits beside the
# serial libnetcdf-dev: headers in /usr/lib/<multiarch>/netcdf/mpi/include, library
# libnetcdf_mpi, pkg-config netcdf-mpi (no nc-config of its own).
# Data goes to $BENCH_DIR (default target/bench-hpc); each output is removed once measured.
# With more ranks than cores the ranks share the cores (mpirun --oversubscribe).
set -euo pipefail
cd "$(dirname "$0")/.."

steps=100
for arg in "$@"; do
  case "$arg" in
    --quick) steps=20 ;;
    *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
  esac
done
NZ=64 NY=384 NX=256  # one step: 24 MiB; NY a multiple of 4 x every rank count
RANKS=(1 2 4)

MULTIARCH="$(gcc -print-multiarch)"
NC_MPI="/usr/lib/$MULTIARCH/netcdf/mpi"
need_apt=()
command -v mpicc >/dev/null 2>&1 || need_apt+=(openmpi-bin libopenmpi-dev)
[ -f "$NC_MPI/include/netcdf_par.h" ] || need_apt+=(libnetcdf-mpi-dev libhdf5-openmpi-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "bench-hpc: installing ${need_apt[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

TARGET="${CARGO_TARGET_DIR:-$PWD/target}"
BENCH_DIR="${BENCH_DIR:-$TARGET/bench-hpc}"
mkdir -p "$BENCH_DIR"
echo "bench-hpc: building libzarr (release) and the programs"
cargo build --release --quiet --lib --no-default-features
CFLAGS=(-O2 -Wall -Wextra -Werror)
mpicc "${CFLAGS[@]}" -I"$NC_MPI/include" benches/hpc/bench_hpc_netcdf.c \
  -o "$BENCH_DIR/bench_hpc_netcdf" $(pkg-config --libs netcdf-mpi) -lm
mpicc "${CFLAGS[@]}" -Iinclude benches/hpc/bench_hpc_zarr.c src-mpi/zarr_mpi.c \
  -o "$BENCH_DIR/bench_hpc_zarr" -L"$TARGET/release" -lzarr -Wl,-rpath,"$TARGET/release" -lm

log="$BENCH_DIR/bench-hpc.log"
: > "$log"
run() {  # run RANKS PROGRAM OUTPUT MODE CODEC: one measurement, its row and bytes on disk
  local n=$1 program=$2 out=$3 mode=$4 codec=$5 row
  rm -rf "$out"
  echo "bench-hpc: $n rank(s), $program $mode $codec" >&2
  row=$(mpirun --oversubscribe --bind-to none -n "$n" "$BENCH_DIR/$program" "$out" "$mode" \
          "$codec" "$steps" "$NZ" "$NY" "$NX" | tee -a "$log" | grep '^ROW|')
  # bytes on disk, files, and of those the metadata documents
  echo "$row|$(du -sb "$out" 2>/dev/null | cut -f1)|$(find "$out" -type f 2>/dev/null | wc -l)|$(find "$out" -type f -name 'zarr.json' 2>/dev/null | wc -l)" \
    >> "$BENCH_DIR/rows"
  rm -rf "$out"
}
: > "$BENCH_DIR/rows"
for n in "${RANKS[@]}"; do
  for mode in collective independent; do
    for codec in none zlib; do
      run "$n" bench_hpc_netcdf "$BENCH_DIR/out.nc" "$mode" "$codec"
    done
  done
  for mode in blocking nonblocking band-append gather collective-write collective; do
    for codec in none blosc zlib; do
      run "$n" bench_hpc_zarr "$BENCH_DIR/out.zarr" "$mode" "$codec"
    done
  done
done

echo
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(uname -sr), local disk"
echo "command: scripts/bench-hpc.sh $*; $steps steps of $NZ x $NY x $NX float32 ($((NZ * NY * NX * 4 / 1048576)) MiB a step) split along y in uneven blocks; shared chunks $NZ x $((NY / 4)) x $NX"
echo
python3 - "$BENCH_DIR/rows" "$steps" <<'PY'
import sys

rows = [line.rstrip("\n").split("|")[1:] for line in open(sys.argv[1]) if line.strip()]
measured = {tuple(r[:4]): r for r in rows if not r[4].startswith("unsupported")}
steps = int(sys.argv[2])
print("| ranks | library | access | codec | wall s | MiB/s | on disk MiB | files per step "
      "| output s/step | peak RSS MiB (block) | waiting (share of step) | output hidden "
      "| vs netCDF-4 best | wrong values |")
print("|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    lib, mode, codec, n = r[:4]
    if r[4].startswith("unsupported"):
        print(f"| {n} | {lib} | {mode} | {codec} | {r[4]} | | | | | | | | | |")
        continue
    wall, mibs, out_step, compute, wait, rss, block, bad, size, files, meta = r[4:]
    per_step = "1 file" if lib == "netCDF-4" else f"{(int(files) - int(meta)) / steps:.2f}".rstrip("0").rstrip(".")
    hidden = vs = ""
    waiting = f"{float(wait):.0%}" if float(wait) >= 0 else ""
    if mode == "nonblocking":
        blocking = measured.get((lib, "blocking", codec, n))
        if blocking:
            hidden = f"{1 - float(out_step) / float(blocking[6]):.0%}"
    if lib == "libzarr" and mode != "nonblocking":
        # Equal compression: none beside none, blosc and zlib + shuffle beside zlib + shuffle;
        # netCDF-4's faster mode of the two.
        peer_codec = "none" if codec == "none" else "zlib"
        peers = [measured[k] for k in (("netCDF-4", m, peer_codec, n) for m in ("collective", "independent")) if k in measured]
        if peers:
            vs = f"{float(mibs) / max(float(p[5]) for p in peers):.2f}x"
    size_mib = f"{int(size) / 1048576:.0f}" if size else ""
    print(f"| {n} | {lib} | {mode} | {codec} | {wall} | {mibs} | {size_mib} | {per_step} "
          f"| {out_step} | {rss} ({block}) | {waiting} | {hidden} | {vs} | {bad} |")
PY
