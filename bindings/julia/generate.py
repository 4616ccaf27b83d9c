#!/usr/bin/env python3
"""Generates bindings/julia/src/LibZarr.jl from include/zarr.h: the opaque handle types,
the typedefs, every ZARR_* constant and a `ccall` wrapper for every function, each with the
header's documentation. The output is committed; check.py regenerates it and compares.

    python3 bindings/julia/generate.py          # rewrite src/LibZarr.jl
"""
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import zarr_h  # noqa: E402

OUTPUT = Path(__file__).resolve().parent / "src" / "LibZarr.jl"

# C scalar types -> Julia types. Pointers are built from these (see julia_type).
SCALARS = {
    "void": "Cvoid",
    "bool": "Bool",
    "char": "Cchar",
    "int32_t": "Int32",
    "uint32_t": "UInt32",
    "int64_t": "Int64",
    "uint64_t": "UInt64",
    "size_t": "Csize_t",
    "double": "Cdouble",
}

JULIA_KEYWORDS = {
    "abstract", "baremodule", "begin", "break", "catch", "const", "continue", "do", "else",
    "elseif", "end", "export", "false", "finally", "for", "function", "global", "if",
    "import", "in", "isa", "let", "local", "macro", "module", "mutable", "outer",
    "primitive", "quote", "return", "struct", "true", "try", "type", "using", "where",
    "while",
}


def julia_type(h, ctype):
    """The ccall type of a normalised C type (zarr_h.normalise)."""
    if ctype == "const char *":
        return "Cstring"  # NUL-terminated string in (or a static string returned)
    if ctype == "char *":
        return "Ptr{UInt8}"  # a caller's output buffer
    if ctype == "const char * const *":
        return "Ptr{Cstring}"
    if ctype == "const void * const *":
        return "Ptr{Ptr{Cvoid}}"
    words = ctype.split()
    if words[-2:] == ["*", "const"]:
        return julia_type(h, " ".join(words[:-1]))  # a const pointer is a pointer
    if words[-1] == "*":
        inner = words[:-1]
        if inner and inner[0] == "const":
            inner = inner[1:]
        return "Ptr{" + julia_type(h, " ".join(inner)) + "}"
    if len(words) != 1:
        raise SystemExit(f"generate.py: no Julia type for C type '{ctype}'")
    name = words[0]
    if name in h.aliases or name in h.opaque:
        return name
    if name not in SCALARS:
        raise SystemExit(f"generate.py: no Julia type for C type '{ctype}'")
    return SCALARS[name]


def argname(name):
    return name + "_" if name in JULIA_KEYWORDS else name


def docstring(text):
    """A Julia string literal body: backslashes and dollars escaped."""
    return text.replace("\\", "\\\\").replace("$", "\\$").replace('"""', '\\"\\"\\"')


def generate(h):
    out = [
        "# Generated from include/zarr.h by bindings/julia/generate.py; do not edit.",
        "#",
        "# LibZarr: one `ccall` wrapper per function of libzarr's C API, with its C types",
        "# (check.py verifies them against zarr.h). Set ENV[\"LIBZARR\"] to the library's path",
        "# before loading if libzarr is not on the loader's search path.",
        "module LibZarr",
        "",
        'const libzarr = get(ENV, "LIBZARR", "libzarr")',
        "",
        "# Opaque handle types.",
    ]
    for name in h.opaque:
        out.append(f"mutable struct {name} end")
    out += ["", "# Integer typedefs."]
    for name, ctype in h.aliases.items():
        out.append(f"const {name} = {SCALARS[ctype]}")
    out += ["", "# Version macros."]
    for c in h.defines:
        out.append(f"const {c.name} = {c.value}")
    for enum, values in h.enums.items():
        alias = enum + "_t" if enum + "_t" in h.aliases else "Int32"
        out += ["", f"# enum {enum}"]
        for c in values:
            out.append(f"const {c.name} = {alias}({c.value})")
    for f in h.functions:
        args = [argname(p.name) for p in f.params]
        types = [julia_type(h, p.ctype) for p in f.params]
        ret = julia_type(h, f.ret)
        tuple_ = "(" + ", ".join(types) + ("," if len(types) == 1 else "") + ")"
        sig = f"{f.name}(" + ", ".join(args) + ")"
        out += [
            "",
            '"""',
            f"    {sig} -> {ret}",
            "",
            docstring(f.doc),
            '"""',
            f"function {sig}",
            f"    ccall((:{f.name}, libzarr), {ret}, {tuple_}" + ("" if not args else ", " + ", ".join(args)) + ")",
            "end",
        ]
    out += ["", "end # module LibZarr", ""]
    return "\n".join(out)


def main():
    text = generate(zarr_h.parse())
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"generate.py: wrote {OUTPUT.relative_to(zarr_h.ROOT)}")


if __name__ == "__main__":
    main()
