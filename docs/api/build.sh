#!/usr/bin/env bash
# Builds the API reference from include/zarr.h with Doxygen, warnings as errors.
#
# Usage: bash docs/api/build.sh [output-dir]     (default: build/api; HTML in html/)
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-build/api}"
command -v doxygen >/dev/null 2>&1 || { echo "docs/api/build.sh: doxygen is not installed" >&2; exit 1; }
mkdir -p "$out"
# The output directory is given on stdin after the project's settings.
{ cat docs/api/Doxyfile; echo "OUTPUT_DIRECTORY = \"$out\""; } | doxygen -
[ -f "$out/html/zarr_8h.html" ] || { echo "docs/api/build.sh: no page for zarr.h was written" >&2; exit 1; }
echo "docs/api/build.sh: API reference in $out/html/index.html"
