#!/usr/bin/env bash
# Makes the source release: libzarr-<version>.tar.gz (version from Cargo.toml), which builds
# with no network access.
#
# Usage: scripts/dist.sh [output-dir]      (default: dist/)
#
# The tarball holds, under libzarr-<version>/:
#   - the tracked sources of the commit checked out (git archive HEAD; uncommitted changes
#     are not included, and a warning says so);
#   - vendor/: every crate of Cargo.lock (cargo vendor), for all platforms, including the
#     optional ones (system-tls) and the dev-dependencies (not needed by a build, but cargo
#     vendor does not leave them out);
#   - .cargo/config.toml: replaces crates.io with vendor/, so cargo (run from the tree's
#     top directory, as CMake does) reads no registry. CMake then passes --offline
#     (ZARR_OFFLINE is on by default when vendor/ is present).
# fuzz/ has its own lock file and is not vendored: it does not build offline.
#
# The archive is reproducible: entries sorted, owner root, times set to the commit's time,
# gzip without a timestamp; the same commit and lock file give the same bytes (and sha256,
# written beside it as libzarr-<version>.tar.gz.sha256, as Spack and conda recipes need).
# Needs git, cargo (with network access, or crates already in cargo's cache), GNU tar, gzip.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/dist}"

die() { echo "dist: $*" >&2; exit 1; }

for tool in git cargo tar gzip sha256sum; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is not installed"
done
git -C "$root" rev-parse --verify -q HEAD >/dev/null || die "$root is not a git checkout with a commit"

version="$(sed -n 's/^version *= *"\([0-9][0-9.]*\)".*/\1/p' "$root/Cargo.toml" | head -n 1)"
[ -n "$version" ] || die "cannot read the version from Cargo.toml"
name="libzarr-$version"

if [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then
  echo "dist: warning: uncommitted changes are not in the tarball (it is made from HEAD)" >&2
fi

mkdir -p "$out"
out="$(cd "$out" && pwd)"
stage=""
cleanup() { [ -z "$stage" ] || rm -rf "$stage"; }
trap cleanup EXIT
stage="$(mktemp -d "${TMPDIR:-/tmp}/libzarr-dist.XXXXXX")"
tree="$stage/$name"

echo "dist: sources of $(git -C "$root" rev-parse --short HEAD)"
git -C "$root" archive --format=tar --prefix="$name/" HEAD | tar -x -C "$stage"
[ ! -e "$tree/.cargo" ] && [ ! -e "$tree/vendor" ] ||
  die "the sources already have .cargo/ or vendor/: dist.sh would overwrite them"

echo "dist: vendoring the crates of Cargo.lock"
# Run in the tree, so that the crates go to vendor/ beside Cargo.toml; the configuration
# cargo prints (with an absolute path) is not used: the one below is relative.
(cd "$tree" && cargo vendor --locked --quiet vendor >/dev/null) || die "cargo vendor failed"
mkdir -p "$tree/.cargo"
cat >"$tree/.cargo/config.toml" <<'EOF'
# Written by scripts/dist.sh: crates come from vendor/ (the crates of Cargo.lock), never
# from the network. Relative paths here are relative to this directory's parent.
[source.crates-io]
replace-with = "vendored-sources"

[source.vendored-sources]
directory = "vendor"
EOF

echo "dist: writing $out/$name.tar.gz"
mtime="$(git -C "$root" log -1 --format=%ct HEAD)"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" --mode=go-w \
  --format=gnu -C "$stage" -cf - "$name" | gzip -9n >"$stage/$name.tar.gz"
(cd "$stage" && sha256sum "$name.tar.gz") >"$stage/$name.tar.gz.sha256"
mv -f "$stage/$name.tar.gz" "$out/$name.tar.gz"
mv -f "$stage/$name.tar.gz.sha256" "$out/$name.tar.gz.sha256"

crates="$(find "$tree/vendor" -mindepth 1 -maxdepth 1 -type d | wc -l)"
size="$(du -h "$out/$name.tar.gz" | cut -f1)"
echo "dist: $out/$name.tar.gz ($size, $crates vendored crates)"
echo "dist: sha256 $(cut -d' ' -f1 "$out/$name.tar.gz.sha256")"
