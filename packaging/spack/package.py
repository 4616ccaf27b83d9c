# Spack package for libzarr, built from its release tarball (scripts/dist.sh), whose crates
# are vendored: the build needs no network (CMake runs cargo --offline in such a tree).
#
# For Spack 0.23 or later (compilers as the dependencies c, cxx, fortran). To use it, copy
# this file to <repo>/packages/libzarr/package.py of a Spack package repository. Before
# publishing:
#   url     where the tarballs made by scripts/dist.sh are published (the placeholder below
#           names no real server); `spack install` takes the version's tarball from there,
#           or from a Spack mirror holding libzarr/libzarr-<version>.tar.gz.
#   sha256  each version's checksum, the one scripts/dist.sh writes beside the tarball
#           (libzarr-<version>.tar.gz.sha256); the tarball is reproducible, so the same
#           commit gives the same checksum. The zeros below are a placeholder.
# Checked by packaging/check.py (syntax, versions, variants, cmake_args) and
# scripts/check-dist.sh (CMake accepts these arguments in the extracted tarball).
from spack.package import *  # noqa: F401,F403

try:  # Spack >= 1.0: the build systems live in the builtin package repository
    from spack_repo.builtin.build_systems.cmake import CMakePackage
except ImportError:  # older Spack: spack.package provides CMakePackage
    pass


class Libzarr(CMakePackage):
    """Zarr arrays and hierarchies (v2 and v3) for C, C++ and Fortran: the C library
    libzarr (zarr.h), the header-only C++ binding zarr.hpp, an optional Fortran module and
    the zarrtool command."""

    homepage = "https://example.org/libzarr"
    url = "https://example.org/libzarr/releases/libzarr-0.1.0.tar.gz"

    license("MIT")

    version("0.1.0", sha256="0000000000000000000000000000000000000000000000000000000000000000")

    variant("cloud", default=True, description="Object stores (S3, GCS, Azure Blob, HTTP), TLS by rustls")
    variant("tool", default=True, description="The zarrtool command line")
    variant("fortran", default=True, description="The Fortran binding (module zarr)")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("fortran", type="build", when="+fortran")
    depends_on("rust@1.89:", type="build")
    depends_on("cmake@3.16:", type="build")

    def setup_build_environment(self, env):
        # A cargo home of the build's own: no user configuration or cache is read.
        env.set("CARGO_HOME", join_path(self.stage.path, "cargo-home"))

    def cmake_args(self):
        return [
            self.define_from_variant("ZARR_CLOUD", "cloud"),
            self.define_from_variant("ZARR_TOOL", "tool"),
            self.define_from_variant("ZARR_FORTRAN", "fortran"),
            # The tarball has the crates: never let cargo try the network.
            self.define("ZARR_OFFLINE", True),
            self.define("ZARR_BUILD_TESTS", self.run_tests),
        ]
