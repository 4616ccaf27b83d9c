#!/usr/bin/env python3
"""CI check of the Julia binding (run by scripts/test.sh; Julia itself is not needed):

1. src/LibZarr.jl is exactly what generate.py makes from include/zarr.h today.
2. Independently of generate.py's code, the committed file wraps every function of zarr.h
   once and nothing else, each `ccall` naming its own symbol with the C parameter names,
   and every argument and return type is what the fixed C -> Julia map below gives for
   zarr.h's C type (typedefs resolved on both sides); the typedefs, opaque types and
   constants match the header too.

Exits nonzero with one line per problem.
"""
import re
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import generate  # noqa: E402
import zarr_h  # noqa: E402

# The fixed map from C types (typedefs resolved, as zarr_h.normalise writes them) to the
# Julia types of a ccall. HANDLE stands for each opaque handle type of zarr.h.
FIXED = {
    "void": "Cvoid",
    "bool": "Bool",
    "int32_t": "Int32",
    "uint32_t": "UInt32",
    "uint64_t": "UInt64",
    "size_t": "Csize_t",
    "const char *": "Cstring",
    "char *": "Ptr{UInt8}",
    "const char * const *": "Ptr{Cstring}",
    "const void * const *": "Ptr{Ptr{Cvoid}}",
    "void * *": "Ptr{Ptr{Cvoid}}",
    "const size_t *": "Ptr{Csize_t}",
    "void *": "Ptr{Cvoid}",
    "const void *": "Ptr{Cvoid}",
    "bool *": "Ptr{Bool}",
    "double": "Cdouble",
    "double *": "Ptr{Cdouble}",
    "int32_t *": "Ptr{Int32}",
    "size_t *": "Ptr{Csize_t}",
    "uint64_t *": "Ptr{UInt64}",
    "const uint64_t *": "Ptr{UInt64}",
    "const int64_t *": "Ptr{Int64}",
    "HANDLE *": "Ptr{HANDLE}",
    "const HANDLE *": "Ptr{HANDLE}",
    "HANDLE * *": "Ptr{Ptr{HANDLE}}",
    "HANDLE * const *": "Ptr{Ptr{HANDLE}}",
}
# The Julia types the typedefs of zarr.h must be bound to.
SCALAR = {"int32_t": "Int32", "uint32_t": "UInt32", "int64_t": "Int64", "uint64_t": "UInt64"}

WRAPPER = re.compile(
    r'^function (\w+)\(([^)]*)\)\n'
    r'    ccall\(\(:(\w+), libzarr\), ([^,]+), \(([^()]*)\)((?:, [^\n]*)?)\)\nend$',
    re.M)


def expected(h, ctype):
    """The Julia type of a C type by the fixed map, or None if the map has no entry."""
    words = [h.aliases.get(w, w) for w in ctype.split()]
    handles = [w for w in words if w in h.opaque]
    key = " ".join("HANDLE" if w in h.opaque else w for w in words)
    jl = FIXED.get(key)
    return jl.replace("HANDLE", handles[0]) if jl and handles else jl


def split_types(text):
    """`Ptr{A}, Cstring,` -> ['Ptr{A}', 'Cstring'] (commas inside braces kept)."""
    types, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            types.append(cur.strip())
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    if cur.strip():
        types.append(cur.strip())
    return types


def main():
    h = zarr_h.parse()
    problems = []
    committed = generate.OUTPUT.read_text(encoding="utf-8") if generate.OUTPUT.exists() else ""
    if committed != generate.generate(h):
        problems.append("src/LibZarr.jl is not what generate.py makes from include/zarr.h "
                        "(run python3 bindings/julia/generate.py)")

    # Julia-side typedefs and opaque types, resolved when comparing.
    aliases = dict(re.findall(r"^const (zarr_\w+_t) = (\w+)$", committed, re.M))
    structs = re.findall(r"^mutable struct (\w+) end$", committed, re.M)
    for name, ctype in h.aliases.items():
        if aliases.get(name) != SCALAR[ctype]:
            problems.append(f"typedef {name}: Julia has {aliases.get(name)}, C has {ctype}")
    if sorted(structs) != sorted(h.opaque):
        problems.append(f"opaque types: Julia {sorted(structs)}, C {sorted(h.opaque)}")

    def resolve(jl):
        return re.sub(r"\bzarr_\w+_t\b", lambda m: aliases.get(m.group(0), m.group(0)), jl)

    # Constants: every ZARR_* value of the header, with its value.
    consts = {name: int(v) for name, v in
              re.findall(r"^const (ZARR_\w+) = (?:\w+\()?(-?\d+)\)?$", committed, re.M)}
    want = {c.name: c.value for c in h.defines}
    want.update({c.name: c.value for values in h.enums.values() for c in values})
    if consts != want:
        missing = sorted(set(want.items()) ^ set(consts.items()))
        problems.append(f"constants differ from zarr.h: {missing}")

    # Wrappers.
    wrappers = {}
    for m in WRAPPER.finditer(committed):
        if m.group(1) in wrappers:
            problems.append(f"{m.group(1)} is wrapped twice")
        wrappers[m.group(1)] = m
    if len(wrappers) != committed.count("\nfunction "):
        problems.append("LibZarr.jl has functions check.py cannot read")
    for f in h.functions:
        m = wrappers.pop(f.name, None)
        if m is None:
            problems.append(f"{f.name} has no wrapper")
            continue
        args = [a.strip() for a in m.group(2).split(",") if a.strip()]
        passed = [a.strip() for a in m.group(6).split(",") if a.strip()]
        names = [generate.argname(p.name) for p in f.params]
        if m.group(3) != f.name:
            problems.append(f"{f.name} calls the symbol {m.group(3)}")
        if args != names or passed != names:
            problems.append(f"{f.name}: arguments {args} passed as {passed}, C has {names}")
        jl_types = [resolve(t) for t in split_types(m.group(5))]
        for i, p in enumerate(f.params):
            want_t = expected(h, p.ctype)
            if want_t is None:
                problems.append(f"{f.name}: no fixed Julia type for C type '{p.ctype}' (add it to check.py)")
            elif i >= len(jl_types) or jl_types[i] != resolve(want_t):
                got = jl_types[i] if i < len(jl_types) else "nothing"
                problems.append(f"{f.name}: argument {p.name} is {got}, C type {p.ctype} needs {want_t}")
        if len(jl_types) != len(f.params):
            problems.append(f"{f.name}: {len(jl_types)} argument types for {len(f.params)} parameters")
        want_r = expected(h, f.ret)
        if want_r is None:
            problems.append(f"{f.name}: no fixed Julia type for C return type '{f.ret}'")
        elif resolve(m.group(4).strip()) != resolve(want_r):
            problems.append(f"{f.name}: returns {m.group(4)}, C type {f.ret} needs {want_r}")
    for name in wrappers:
        problems.append(f"{name} is wrapped but not in zarr.h")

    for p in problems:
        print("julia check:", p)
    if problems:
        sys.exit(1)
    print(f"julia check: LibZarr.jl is current and wraps all {len(h.functions)} functions of "
          "zarr.h with the C types")


if __name__ == "__main__":
    main()
