#!/usr/bin/env python3
"""Compiles every code snippet of the user guide (docs/guide/*.md) and of README.md and runs
the programs.

Fenced blocks whose info string starts with `c`, `cpp` or `fortran` are checked; other
blocks (sh, text, json) are left alone. Words after the language say how:

    ```c              a whole program: compiled, linked against the build tree and run
    ```c norun        a whole program that needs what the test machine lacks (an object
                      store, say): compiled and linked only
    ```c mpi          an MPI program: built with mpicc (mpifort for Fortran) and run with
                      `mpirun -n 2`; one that includes <zarr_mpi.h> also links -lzarr_mpi,
                      a Fortran one that uses module zarr_mpi also its library
    ```c fragment     not a whole program: compiled (not linked) after the includes of the
                      wrapper below; C and C++ only

C is compiled as C11 and C++ as C++17, both with -Wall -Wextra -Wpedantic -Werror; Fortran
with gfortran -Wall -Werror -fcheck=all against the binding's module. Everything links
against the CMake build tree (`cmake -S . -B build && cmake --build build`, as
scripts/test.sh makes it): build/lib, include/ and build/include (zarr_build.h). Each
program runs in an empty temporary directory and must exit 0 within the time limit.

The programs of docs/guide/programs/*.c are compiled the same way and run with `--quick`.

Usage: python3 tests/docs/check_guide.py [--build DIR] [--keep] [--list] [PAGE.md ...]
Python 3 standard library only.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide"
LANGUAGES = {"c", "cpp", "fortran"}
OPTIONS = {"norun", "mpi", "fragment"}
TIMEOUT = 300
C_WARNINGS = ["-Wall", "-Wextra", "-Wpedantic", "-Werror"]
FORTRAN_FLAGS = ["-Wall", "-Werror", "-fcheck=all"]
MPIRUN = ["mpirun", "--oversubscribe", "-n", "2"]

# What a fragment is compiled after: it may use these headers' names.
WRAPPERS = {
    "c": "#include <stdbool.h>\n#include <stdint.h>\n#include <stdio.h>\n"
         "#include <stdlib.h>\n#include <string.h>\n#include <zarr.h>\n",
    "cpp": "#include <zarr.hpp>\n#include <cstdint>\n#include <cstdio>\n#include <string>\n"
           "#include <vector>\n",
}


class Block:
    def __init__(self, page, line, language, options, text):
        self.page, self.line, self.language, self.options, self.text = (
            page, line, language, options, text)

    @property
    def name(self):
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    def is_program(self):
        if self.language == "fortran":
            return re.search(r"^\s*program\s+\w+", self.text, re.M | re.I) is not None
        return re.search(r"\bint\s+main\s*\(", self.text) is not None


def blocks(page):
    """The checked fenced blocks of one Markdown page."""
    found = []
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^(`{3,})\s*(\S*)\s*(.*)$", lines[i])
        if not m:
            i += 1
            continue
        fence, language, rest = m.group(1), m.group(2).lower(), m.group(3).split()
        start = i + 1
        i += 1
        while i < len(lines) and not lines[i].startswith(fence):
            i += 1
        if i == len(lines):
            raise SystemExit(f"{page.name}:{start}: unterminated code block")
        if language in LANGUAGES:
            unknown = [w for w in rest if w not in OPTIONS]
            if unknown:
                raise SystemExit(f"{page.name}:{start}: unknown block options {unknown}")
            found.append(Block(page, start, language, set(rest),
                               "\n".join(lines[start:i]) + "\n"))
        i += 1
    return found


class Checker:
    def __init__(self, build, work):
        self.build = build
        self.work = work
        self.failures = []
        self.counts = {"run": 0, "compiled": 0, "fragment": 0}
        libdir = build / "lib"
        if not (libdir / "libzarr.so").exists():
            raise SystemExit(f"check_guide: {libdir}/libzarr.so is missing: build first "
                             "(cmake -S . -B build && cmake --build build)")
        self.includes = ["-I", str(ROOT / "include"), "-I", str(build / "include")]
        self.libs = ["-L", str(libdir), "-lzarr", f"-Wl,-rpath,{libdir}", "-lm"]
        # The binding's module as its tests build it (-fcheck=all), else the installed one.
        checked = build / "bindings" / "fortran" / "tests"
        if (checked / "mod-checked" / "zarr.mod").exists():
            self.fortran = ["-I", str(checked / "mod-checked"),
                            str(checked / "libzarr_fortran_checked.a")]
        else:
            plain = build / "bindings" / "fortran"
            self.fortran = ["-I", str(plain / "mod"), str(plain / "libzarr_fortran.a")]
        self.mpirun = list(MPIRUN)
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            self.mpirun.insert(1, "--allow-run-as-root")

    def fail(self, what, detail):
        self.failures.append(what)
        print(f"FAIL {what}\n{detail.rstrip()}\n", file=sys.stderr)

    def run(self, what, command, cwd, timeout=TIMEOUT):
        """Runs a command; False (reported) when it fails."""
        env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1")
        try:
            p = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            self.fail(what, f"timed out after {timeout} s: {' '.join(command)}\n"
                            f"{e.stdout or ''}")
            return False
        if p.returncode != 0:
            self.fail(what, f"exit status {p.returncode}: {' '.join(command)}\n{p.stdout}")
            return False
        return True

    def compile(self, what, language, source, exe, mpi=False, link=True):
        """Compiles (and links) one source file; False (reported) when it fails."""
        if language == "fortran":
            compiler = "mpifort" if mpi else "gfortran"
            fortran = self.fortran
            # Programs of the MPI layer's module (use zarr_mpi) link it and the module zarr
            # it was compiled with (the build's), and the layer's library.
            if re.search(r"^\s*use\s+zarr_mpi\b", source.read_text(encoding="utf-8"), re.M | re.I):
                plain = self.build / "bindings" / "fortran"
                if not (plain / "libzarr_mpi_fortran.a").exists():
                    self.fail(what, "uses zarr_mpi but the build has no libzarr_mpi_fortran.a "
                                    "(configured without MPI, or its Fortran has no mpi_f08)")
                    return False
                fortran = ["-I", str(plain / "mod"), str(plain / "libzarr_mpi_fortran.a"),
                           str(plain / "libzarr_fortran.a"), "-lzarr_mpi"]
            command = [compiler, *FORTRAN_FLAGS, str(source), "-o", str(exe),
                       "-J", str(exe.parent), *fortran, *self.libs]
        else:
            c = language == "c"
            compiler = ("mpicc" if c else "mpicxx") if mpi else ("cc" if c else "c++")
            std = "-std=c11" if c else "-std=c++17"
            command = [compiler, std, *C_WARNINGS, *self.includes, str(source)]
            # Programs of the MPI layer (#include <zarr_mpi.h>) link its library too.
            libs = list(self.libs)
            if re.search(r"^#include <zarr_mpi\.h>", source.read_text(encoding="utf-8"), re.M):
                if not (self.build / "lib" / "libzarr_mpi.so").exists():
                    self.fail(what, "includes zarr_mpi.h but the build has no libzarr_mpi.so "
                                    "(configured without MPI: ZARR_MPI=OFF)")
                    return False
                libs = ["-lzarr_mpi", *libs]
            # A fragment may define helpers that only other snippets use.
            command += (["-o", str(exe), *libs] if link
                        else ["-Wno-unused-function", "-c", "-o", os.devnull])
        if shutil.which(command[0]) is None:
            self.fail(what, f"{command[0]} is not installed")
            return False
        return self.run(what, command, exe.parent)

    def check_block(self, n, block):
        what = f"{block.name} ({block.language}{''.join(' ' + o for o in sorted(block.options))})"
        directory = self.work / f"block{n:03d}"
        directory.mkdir()
        suffix = {"c": ".c", "cpp": ".cpp", "fortran": ".f90"}[block.language]
        source = directory / ("snippet" + suffix)
        exe = directory / "snippet"
        if "fragment" in block.options:
            if block.language == "fortran":
                self.fail(what, "Fortran fragments are not supported: write a program")
                return
            if block.is_program():
                self.fail(what, "a whole program is marked `fragment`")
                return
            # Messages point at the page's lines.
            source.write_text(WRAPPERS[block.language]
                              + f'#line {block.line + 1} "{block.page.relative_to(ROOT)}"\n' + block.text)
            if self.compile(what, block.language, source, exe, link=False):
                self.counts["fragment"] += 1
                print(f"ok   {what}: compiled")
            return
        if not block.is_program():
            self.fail(what, "not a whole program (no main / program): mark it `fragment`")
            return
        source.write_text(block.text)
        mpi = "mpi" in block.options
        if not self.compile(what, block.language, source, exe, mpi=mpi):
            return
        if "norun" in block.options:
            self.counts["compiled"] += 1
            print(f"ok   {what}: compiled and linked")
            return
        rundir = directory / "run"
        rundir.mkdir()
        command = [*self.mpirun, str(exe)] if mpi else [str(exe)]
        if self.run(what, command, rundir):
            self.counts["run"] += 1
            print(f"ok   {what}: ran")

    def check_program(self, source):
        what = f"programs/{source.name}"
        directory = self.work / source.stem
        directory.mkdir()
        exe = directory / source.stem
        if not self.compile(what, "c", source, exe):
            return
        rundir = directory / "run"
        rundir.mkdir()
        if self.run(what, [str(exe), "--quick"], rundir):
            self.counts["run"] += 1
            print(f"ok   {what}: ran with --quick")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", type=Path, help="pages to check (default: all)")
    parser.add_argument("--build", type=Path, default=ROOT / "build",
                        help="the CMake build directory (default: build)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("--list", action="store_true", help="list the blocks and stop")
    args = parser.parse_args()
    pages = [p.resolve() for p in args.pages] or [ROOT / "README.md", *sorted(GUIDE.glob("*.md"))]
    found = [b for page in pages for b in blocks(page)]
    if args.list:
        for b in found:
            print(f"{b.name}: {b.language} {' '.join(sorted(b.options))}".rstrip())
        return 0
    if not found:
        raise SystemExit("check_guide: no code blocks found")
    work = Path(tempfile.mkdtemp(prefix="zarr-guide-"))
    checker = Checker(args.build.resolve(), work)
    try:
        for n, block in enumerate(found):
            checker.check_block(n, block)
        if not args.pages:
            for source in sorted((GUIDE / "programs").glob("*.c")):
                checker.check_program(source)
    finally:
        if args.keep or checker.failures:
            print(f"check_guide: work directory kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    c = checker.counts
    summary = (f"{len(found)} blocks: {c['run']} programs run, {c['compiled']} compiled "
               f"only, {c['fragment']} fragments compiled")
    if checker.failures:
        print(f"check_guide: FAIL ({len(checker.failures)} failed; {summary})", file=sys.stderr)
        return 1
    print(f"check_guide: PASS ({summary})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
