#!/usr/bin/env bash
# Reading netCDF archives as Zarr without copying them, beside netCDF-C reading the same
# files: benches/virtual/make_files.c writes $BENCH_VIRTUAL_FILES (default 12) files of 24
# steps of a 361 x 720 float32 field, netCDF-4 (deflate 1 + shuffle, a chunk per step) and
# netCDF-3 (64-bit offset); `zarrtool virtualize --concat time` makes the reference file of
# each set; read_netcdf.c reads every file's field one after another with nc_get_var_float,
# read_zarr.c the whole array through reference:///PATH with one zarr_array_read (the
# library reads and decodes chunks of all files at once). Each is the best of $BENCH_REPS
# (default 3) runs, in turns, hot (page cache warm) and cold (dropped before every run,
# when this user may: root). The two must sum the same values. Prints one table; figures
# are printed, never asserted. Data under $BENCH_VIRTUAL_DIR (default target/bench-virtual,
# about 0.5 GB). Needs the system netCDF library (libnetcdf-dev).
#
#   scripts/bench-virtual.sh
set -euo pipefail
cd "$(dirname "$0")/.."

files="${BENCH_VIRTUAL_FILES:-12}"
reps="${BENCH_REPS:-3}"
for n in "$files" "$reps"; do
  case "$n" in ''|*[!0-9]*|0) echo "bench-virtual: '$n' is not a positive integer" >&2; exit 2 ;; esac
done
work="${BENCH_VIRTUAL_DIR:-$PWD/target/bench-virtual}"
target="${CARGO_TARGET_DIR:-$PWD/target}"
mkdir -p "$work/bin"
work="$(cd "$work" && pwd)"

echo "bench-virtual: building libzarr and zarrtool (release, netcdf) and benches/virtual"
NC_CONFIG="${NC_CONFIG:-$(command -v nc-config)}" \
  cargo build --release --lib --bin zarrtool --features netcdf --quiet
netcdf_flags="$(nc-config --cflags) $(nc-config --libs)"
for program in make_files read_netcdf; do
  # shellcheck disable=SC2086  # nc-config's flags are words
  cc -O2 -Wall -Wextra -Werror -o "$work/bin/$program" "benches/virtual/$program.c" $netcdf_flags
done
cc -O2 -Wall -Wextra -Werror -Iinclude -I"$target/release" -o "$work/bin/read_zarr" \
  benches/virtual/read_zarr.c -L"$target/release" -lzarr -Wl,-rpath,"$target/release"

cold=false
if [ "$(id -u)" = 0 ] && [ -w /proc/sys/vm/drop_caches ]; then cold=true; fi
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }

rows=()
for kind in nc4 classic; do
  dir="$work/$kind-$files"
  if [ ! -f "$dir/done" ]; then
    echo "bench-virtual: writing $files $kind files in $dir"
    rm -rf "$dir"; mkdir -p "$dir"
    "$work/bin/make_files" "$dir" "$kind" "$files" 24
    touch "$dir/done"
  fi
  mapfile -t ncs < <(ls "$dir"/day-*.nc)
  "$target/release/zarrtool" virtualize "${ncs[@]}" --concat time -o "$dir/refs.json" --overwrite
  size=$(du -cb "${ncs[@]}" | tail -n 1 | cut -f1)
  modes=(hot); $cold && modes+=(cold)
  for mode in "${modes[@]}"; do
    best_nc=""; best_zarr=""
    [ "$mode" = hot ] && { "$work/bin/read_netcdf" "${ncs[@]}" >/dev/null; "$work/bin/read_zarr" "$dir/refs.json" >/dev/null; }
    for _ in $(seq "$reps"); do
      [ "$mode" = cold ] && drop
      read -r s_nc n_nc sum_nc < <("$work/bin/read_netcdf" "${ncs[@]}")
      [ "$mode" = cold ] && drop
      read -r s_zarr n_zarr sum_zarr < <("$work/bin/read_zarr" "$dir/refs.json")
      if [ "$n_nc $sum_nc" != "$n_zarr $sum_zarr" ]; then
        echo "bench-virtual: $kind: the values differ ($n_nc values, sum $sum_nc; $n_zarr, $sum_zarr)" >&2
        exit 1
      fi
      echo "RUN|$kind|$mode|netcdf-c|$s_nc|libzarr|$s_zarr"
      best_nc=$(awk -v a="$s_nc" -v b="$best_nc" 'BEGIN { print (b == "" || a < b) ? a : b }')
      best_zarr=$(awk -v a="$s_zarr" -v b="$best_zarr" 'BEGIN { print (b == "" || a < b) ? a : b }')
    done
    ratio=$(awk -v a="$best_nc" -v b="$best_zarr" 'BEGIN { printf "%.2f", a / b }')
    rows+=("| $kind, $files files, $((size / 1048576)) MiB | $mode | $best_nc | $best_zarr | $ratio |")
  done
done
$cold || echo "bench-virtual: not root: the page cache cannot be dropped, every run is hot" >&2
echo
echo "netCDF-C $(nc-config --version | cut -d' ' -f2), $(nproc) cores, best of $reps runs (seconds)"
echo "| files | page cache | netCDF-C, file by file | libzarr through references | netCDF-C / libzarr |"
echo "| --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
