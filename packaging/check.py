#!/usr/bin/env python3
"""Checks the Spack package and the conda recipe in packaging/ without Spack or conda-build.

Usage: python3 packaging/check.py [--spack-args FILE] [--conda-tests FILE]

Spack: packaging/spack/package.py is compiled and run against stub `spack.package` and
`spack_repo.builtin.build_systems.cmake` modules (Spack >= 1.0; and once more with only
`spack.package`, as older Spack has it) that provide the names it uses and record its
directives. The class Libzarr must be a CMakePackage whose url names the tarball of
scripts/dist.sh, with the version of Cargo.toml (a sha256 of 64 hex digits), the variants
cloud, tool and fortran (on by default), rust (Cargo.toml's rust-version or later) and cmake
as build dependencies; for every combination of variants cmake_args() must give exactly the
-D flags of the CMake options ZARR_CLOUD, ZARR_TOOL, ZARR_FORTRAN, ZARR_OFFLINE and
ZARR_BUILD_TESTS, each an option() of CMakeLists.txt. --spack-args writes the arguments of
the default variants, one a line: scripts/check-dist.sh configures the extracted tarball
with them.

conda: packaging/conda/recipe/meta.yaml is rendered for linux-64 as conda-build does for the
parts it uses ({% set %}, {{ expressions }}, `# [selector]` lines), parsed with PyYAML and
checked (name, Cargo.toml's version and license, the tarball as source, the compilers and
cmake, test commands); build.sh beside it must pass `bash -n`. --conda-tests writes the test
commands, one a line: check-dist.sh runs build.sh and then them on the extracted tarball.

Prints "packaging check: PASS" or fails with a message (exit status 1).
"""

import argparse
import itertools
import re
import subprocess
import sys
import tomllib
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPACK_PACKAGE = ROOT / "packaging" / "spack" / "package.py"
CONDA_RECIPE = ROOT / "packaging" / "conda" / "recipe"
SHA256 = re.compile(r"^[0-9a-f]{64}$")


class CheckError(Exception):
    pass


def require(condition, message):
    if not condition:
        raise CheckError(message)


def cargo_package():
    with open(ROOT / "Cargo.toml", "rb") as f:
        return tomllib.load(f)["package"]


def cmake_options():
    """Every option(NAME ...) of the project's CMake files."""
    names = set()
    for path in [ROOT / "CMakeLists.txt", *ROOT.glob("*/CMakeLists.txt"), *ROOT.glob("*/*/CMakeLists.txt")]:
        names.update(re.findall(r"^\s*option\(\s*(\w+)", path.read_text(), re.M))
    return names


# --- Spack -------------------------------------------------------------------------------


def spack_stubs(with_spack_repo):
    """Stub modules for package.py's imports; directives record into the class namespace."""

    def directive(kind):
        def record(*args, **kwargs):
            namespace = sys._getframe(1).f_locals
            namespace.setdefault("_directives", []).append((kind, args, kwargs))

        record.__name__ = kind
        return record

    class Variant:
        def __init__(self, value):
            self.value = value

    class Spec:
        def __init__(self, variants):
            self.variants = {name: Variant(value) for name, value in variants.items()}

        def satisfies(self, text):
            require(re.fullmatch(r"[+~]\w+", text), f"the stub Spec only knows +variant/~variant, not {text!r}")
            return self.variants[text[1:]].value == (text[0] == "+")

        __contains__ = satisfies

    class CMakePackage:
        def __init__(self, variants, run_tests=False):
            self.spec = Spec(variants)
            self.run_tests = run_tests
            self.stage = types.SimpleNamespace(path="/spack-stage/libzarr")

        @staticmethod
        def define(cmake_var, value):
            # What Spack's CMakeBuilder.define returns.
            if isinstance(value, bool):
                return f"-D{cmake_var}:BOOL={'ON' if value else 'OFF'}"
            if isinstance(value, (list, tuple)):
                value = ";".join(str(v) for v in value)
            return f"-D{cmake_var}:STRING={value}"

        def define_from_variant(self, cmake_var, variant=None):
            variant = variant or cmake_var.lower()
            require(variant in self.spec.variants, f"define_from_variant: no variant {variant!r}")
            return self.define(cmake_var, self.spec.variants[variant].value)

    names = {
        "version": directive("version"),
        "variant": directive("variant"),
        "depends_on": directive("depends_on"),
        "conflicts": directive("conflicts"),
        "license": directive("license"),
        "maintainers": directive("maintainers"),
        "join_path": lambda *parts: "/".join(parts),
    }
    package = types.ModuleType("spack.package")
    package.__dict__.update(names)
    if not with_spack_repo:
        package.CMakePackage = CMakePackage
    package.__all__ = sorted(k for k in package.__dict__ if not k.startswith("_"))
    modules = {"spack": types.ModuleType("spack"), "spack.package": package}
    if with_spack_repo:
        for name in ("spack_repo", "spack_repo.builtin", "spack_repo.builtin.build_systems"):
            modules[name] = types.ModuleType(name)
        cmake = types.ModuleType("spack_repo.builtin.build_systems.cmake")
        cmake.CMakePackage = CMakePackage
        modules[cmake.__name__] = cmake
    return modules, CMakePackage


def load_spack_package(with_spack_repo):
    modules, base = spack_stubs(with_spack_repo)
    saved = {name: sys.modules.get(name) for name in modules}
    sys.modules.update(modules)
    try:
        code = compile(SPACK_PACKAGE.read_text(), str(SPACK_PACKAGE), "exec")
        namespace = {"__name__": "spack.pkg.libzarr"}
        exec(code, namespace)
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    require("Libzarr" in namespace, "package.py defines no class Libzarr")
    cls = namespace["Libzarr"]
    require(isinstance(cls, type) and issubclass(cls, base), "Libzarr is not a CMakePackage")
    return cls


def check_spack(version, rust_version, options, args_out):
    for with_spack_repo in (True, False):
        cls = load_spack_package(with_spack_repo)
    require((cls.__doc__ or "").strip(), "Libzarr has no docstring (spack info shows it)")
    require(cls.url.endswith(f"/libzarr-{version}.tar.gz"), f"url {cls.url} does not name libzarr-{version}.tar.gz")
    directives = getattr(cls, "_directives", [])

    def recorded(kind):
        return [(args, kwargs) for k, args, kwargs in directives if k == kind]

    versions = {args[0]: kwargs for args, kwargs in recorded("version")}
    require(version in versions, f"package.py has no version {version} (Cargo.toml's)")
    for v, kwargs in versions.items():
        require(SHA256.match(kwargs.get("sha256", "")), f"version {v}: sha256 is not 64 hex digits")

    variants = {args[0]: kwargs for args, kwargs in recorded("variant")}
    require(set(variants) == {"cloud", "tool", "fortran"}, f"variants are {sorted(variants)}")
    for name, kwargs in variants.items():
        require(kwargs.get("default") is True, f"variant {name} is not on by default (CMake's default)")
        require(kwargs.get("description"), f"variant {name} has no description")

    deps = {args[0].split("@")[0]: (args[0], kwargs) for args, kwargs in recorded("depends_on")}
    for name in ("rust", "cmake", "c", "cxx", "fortran"):
        require(name in deps, f"no depends_on({name!r})")
        require(deps[name][1].get("type") == "build", f"{name} is not a build-only dependency")
    require(deps["rust"][0] == f"rust@{rust_version}:", f"depends_on({deps['rust'][0]!r}), Cargo.toml has rust-version {rust_version}")
    require(deps["fortran"][1].get("when") == "+fortran", "the Fortran compiler is not needed only with +fortran")

    on = {True: "ON", False: "OFF"}
    for cloud, tool, fortran, run_tests in itertools.product((True, False), repeat=4):
        pkg = cls({"cloud": cloud, "tool": tool, "fortran": fortran}, run_tests=run_tests)
        args = pkg.cmake_args()
        expected = [
            f"-DZARR_CLOUD:BOOL={on[cloud]}",
            f"-DZARR_TOOL:BOOL={on[tool]}",
            f"-DZARR_FORTRAN:BOOL={on[fortran]}",
            "-DZARR_OFFLINE:BOOL=ON",
            f"-DZARR_BUILD_TESTS:BOOL={on[run_tests]}",
        ]
        combination = f"cloud={cloud} tool={tool} fortran={fortran} run_tests={run_tests}"
        require(sorted(args) == sorted(expected), f"cmake_args() with {combination}: {args}, expected {expected}")
        for arg in args:
            name = re.match(r"-D(\w+):", arg).group(1)
            require(name in options, f"cmake_args() sets {name}, which is no option() of the CMake project")

    env = types.SimpleNamespace(values={})
    env.set = lambda name, value: env.values.__setitem__(name, value)
    pkg = cls({"cloud": True, "tool": True, "fortran": True})
    pkg.setup_build_environment(env)
    require(env.values.get("CARGO_HOME", "").startswith(pkg.stage.path), "CARGO_HOME is not in the build stage")

    if args_out:
        Path(args_out).write_text("\n".join(pkg.cmake_args()) + "\n")
    print(f"packaging check: Spack package: version {version}, variants {sorted(variants)}, "
          f"cmake_args {pkg.cmake_args()}")


# --- conda -------------------------------------------------------------------------------

SELECTORS = {"linux": True, "linux64": True, "unix": True, "x86_64": True,
             "osx": False, "win": False, "aarch64": False, "arm64": False, "ppc64le": False}


def render_meta(text, selectors):
    """Renders the subset of conda-build's Jinja and selectors that meta.yaml may use."""
    functions = {
        "compiler": lambda language: f"{language}_compiler_stub",
        "stdlib": lambda language: f"{language}_stdlib_stub",
        "pin_subpackage": lambda name, **kwargs: name,
        "pin_compatible": lambda name, **kwargs: name,
    }
    variables = {}
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        def evaluate(expression, names):
            try:
                return eval(expression, {"__builtins__": {}}, names)
            except Exception as e:
                raise CheckError(f"meta.yaml:{number}: cannot evaluate {expression.strip()!r}: {e}")

        m = re.fullmatch(r"\s*\{%-?\s*set\s+(\w+)\s*=\s*(.+?)\s*-?%\}\s*", line)
        if m:
            variables[m.group(1)] = evaluate(m.group(2), dict(variables))
            continue
        require("{%" not in line, f"meta.yaml:{number}: unsupported Jinja statement")
        m = re.fullmatch(r"(.*?)\s+#\s*\[([^\]]+)\]\s*", line)
        if m:
            if not evaluate(m.group(2), dict(selectors)):
                continue
            line = m.group(1)
        line = re.sub(r"\{\{(.+?)\}\}", lambda m: str(evaluate(m.group(1), {**functions, **variables})), line)
        lines.append(line)
    return "\n".join(lines) + "\n"


def check_conda(version, license, tests_out):
    try:
        import yaml
    except ImportError:
        raise CheckError("PyYAML is needed to parse meta.yaml (Debian: apt-get install python3-yaml)")
    text = (CONDA_RECIPE / "meta.yaml").read_text()
    try:
        meta = yaml.safe_load(render_meta(text, SELECTORS))
    except yaml.YAMLError as e:
        raise CheckError(f"meta.yaml, rendered for linux-64, is not YAML: {e}")
    require(isinstance(meta, dict), "meta.yaml is not a mapping")
    require(meta["package"]["name"] == "libzarr", "package/name is not libzarr")
    require(str(meta["package"]["version"]) == version, f"package/version is not {version} (Cargo.toml's)")
    source = meta["source"]
    require(str(source["url"]).endswith(f"/libzarr-{version}.tar.gz"), f"source/url {source['url']} is not the release tarball")
    require(isinstance(source["sha256"], str) and SHA256.match(source["sha256"]), "source/sha256 is not 64 hex digits")
    require(isinstance(meta["build"]["number"], int), "build/number is not an integer")
    require(not meta["build"].get("skip"), "the recipe skips linux-64")
    other = yaml.safe_load(render_meta(text, {**SELECTORS, "linux": False, "linux64": False, "osx": True}))
    require(other["build"].get("skip") is True, "the recipe does not skip non-Linux platforms")
    build = [str(r) for r in meta["requirements"]["build"]]
    for wanted in ("c_compiler_stub", "cxx_compiler_stub", "rust_compiler_stub", "cmake", "cargo-bundle-licenses"):
        require(any(r.split()[0] == wanted for r in build), f"requirements/build lacks {wanted}")
    commands = meta["test"]["commands"]
    require(isinstance(commands, list) and commands and all(isinstance(c, str) for c in commands),
            "test/commands is not a list of commands")
    require(str(meta["about"]["license"]) == license, f"about/license is not {license} (Cargo.toml's)")
    script = CONDA_RECIPE / "build.sh"
    require(script.is_file(), "the recipe has no build.sh")
    syntax = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    require(syntax.returncode == 0, f"build.sh: {syntax.stderr.strip()}")
    if tests_out:
        Path(tests_out).write_text("\n".join(commands) + "\n")
    print(f"packaging check: conda recipe: libzarr {version}, {len(build)} build requirements, "
          f"{len(commands)} test commands")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spack-args", help="write the Spack package's cmake_args() here")
    parser.add_argument("--conda-tests", help="write the conda recipe's test commands here")
    args = parser.parse_args()
    package = cargo_package()
    try:
        check_spack(package["version"], package["rust-version"], cmake_options(), args.spack_args)
        check_conda(package["version"], package["license"], args.conda_tests)
    except (CheckError, KeyError, TypeError, SyntaxError, NameError, AttributeError) as e:
        kind = "" if isinstance(e, CheckError) else f"{type(e).__name__}: "
        print(f"packaging check: FAIL: {kind}{e}", file=sys.stderr)
        return 1
    print("packaging check: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
