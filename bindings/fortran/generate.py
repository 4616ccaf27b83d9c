#!/usr/bin/env python3
"""Generates the Fortran binding's C layer from include/zarr.h:

  src/zarr_constants.inc  every ZARR_* constant (status codes, dtypes, orders, modes, node
                          kinds, sync kinds, version numbers) as a public parameter; included
                          by module zarr (src/zarr.f90)
  src/zarr_c.f90          module zarr_c: a bind(c) interface `c_<name>` for every function
                          of zarr.h, with exact kinds (used privately by module zarr)

Both files are committed. `generate.py --check` regenerates them in memory and fails if the
committed files differ (scripts/test.sh runs it), so they never drift from zarr.h.
"""
import sys
import textwrap
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import zarr_h  # noqa: E402

HERE = Path(__file__).resolve().parent
OUTPUTS = {"constants": HERE / "src" / "zarr_constants.inc", "interfaces": HERE / "src" / "zarr_c.f90"}
BANNER = "! Generated from include/zarr.h by bindings/fortran/generate.py; do not edit."

# `const char *` parameters that may be NULL: declared optional (absent passes NULL).
NULLABLE = {("zarr_copy", "compressor_json"), ("zarr_array_set_synchronizer", "lock_dir")}

# Numeric pointer parameters that are arrays in functions without an `ndim` parameter.
ARRAYS = {
    ("zarr_array_field_layout", "out_shape"),
    ("zarr_array_builder_set_chunk_edges", "edges"),
    ("zarr_array_chunk_edges", "out_edges"),
}

# C scalar types (after resolving zarr.h's typedefs) -> Fortran kinds.
SCALARS = {
    "int32_t": "integer(c_int32_t)",
    "uint32_t": "integer(c_int32_t)",  # Fortran has no unsigned integers: same bits
    "int64_t": "integer(c_int64_t)",
    "uint64_t": "integer(c_int64_t)",
    "size_t": "integer(c_size_t)",
    "bool": "logical(c_bool)",
    "double": "real(c_double)",
}


def comment(text, indent):
    """Doc text as `!` comment lines wrapped at 92 columns."""
    out = []
    for para in text.splitlines():
        out += textwrap.wrap(para, 92 - indent - 2) or [""]
    return [" " * indent + ("! " + line).rstrip() for line in out]


def resolve(h, ctype):
    """A typedef name -> its C type (`zarr_dtype_t` -> `int32_t`)."""
    return h.aliases.get(ctype, ctype)


def dummy(h, f, p):
    """The declaration of parameter `p` of function `f` in a bind(c) interface."""
    t = p.ctype.split()
    has_ndim = any(q.name == "ndim" and q.ctype == "size_t" for q in f.params)
    if t[-1] != "*":  # by value
        return f"{SCALARS[resolve(h, p.ctype)]}, value :: {p.name}"
    if p.ctype == "const char *":
        opt = ", optional" if (f.name, p.name) in NULLABLE else ""
        return f"character(kind=c_char), intent(in){opt} :: {p.name}(*)"
    if p.ctype in ("const char * const *", "const void * const *"):
        return f"type(c_ptr), intent(in) :: {p.name}(*)"
    if p.ctype in ("char *", "void *", "const void *"):
        return f"type(c_ptr), value :: {p.name}"
    if p.ctype == "void * *":  # a buffer libzarr allocates, freed with zarr_bytes_free
        return f"type(c_ptr), intent(out) :: {p.name}"
    base = [w for w in t if w not in ("const", "*")]
    if len(base) != 1:
        raise SystemExit(f"generate.py: no Fortran type for {p.ctype} {p.name} in {f.name}")
    base = base[0]
    if base in h.opaque:
        if t.count("*") == 1:  # a handle passed in
            return f"type(c_ptr), value :: {p.name}"
        if "const" in t[t.index("*"):]:  # T *const *: an array of handles passed in
            return f"type(c_ptr), intent(in) :: {p.name}(*)"
        return f"type(c_ptr), intent(out) :: {p.name}"  # T **: a handle output
    intent = "in" if t[0] == "const" else "out"
    # Numeric pointers are arrays of `ndim` elements in functions taking ndim, else scalars.
    shape = "(*)" if has_ndim or (f.name, p.name) in ARRAYS else ""
    return f"{SCALARS[resolve(h, base)]}, intent({intent}) :: {p.name}{shape}"


def result(h, f):
    if f.ret == "void":
        return None
    if f.ret in ("const char *", "const void *"):
        return "type(c_ptr)"
    return SCALARS[resolve(h, f.ret)]


def continued(head, names, tail, indent):
    """`head(a, b, ...) tail` split with `&` so no line exceeds 100 columns."""
    lines, line = [], " " * indent + head + "("
    for i, name in enumerate(names):
        piece = name + (", " if i < len(names) - 1 else ")")
        if len(line) + len(piece) > 96:
            lines.append(line.rstrip() + " &")
            line = " " * (indent + 4) + piece
        else:
            line += piece
    if not names:
        line += ")"
    lines.append(line + " &")
    lines.append(" " * (indent + 4) + tail)
    return lines


def interfaces(h):
    out = [
        BANNER,
        "!",
        "! The C layer of the Fortran binding: one bind(c) interface per function of zarr.h,",
        "! named c_<function>. Pointers to handles are type(c_ptr) by value; handle outputs",
        "! type(c_ptr), intent(out); strings in are NUL-terminated character arrays; buffers are",
        "! type(c_ptr); indices and extents are integer(c_int64_t) (uint64_t has the same bits).",
        "module zarr_c",
        "  use, intrinsic :: iso_c_binding",
        "  implicit none",
        "  interface",
    ]
    for f in h.functions:
        out.append("")
        out += comment(f.doc, 4)
        names = [p.name for p in f.params]
        res = result(h, f)
        bind = f'bind(c, name="{f.name}")'
        if res is None:
            out += continued(f"subroutine c_{f.name}", names, bind, 4)
        else:
            out += continued(f"function c_{f.name}", names, bind + " result(res)", 4)
        out.append("      import")
        out.append("      implicit none")
        for p in f.params:
            out.append("      " + dummy(h, f, p))
        if res is not None:
            out.append(f"      {res} :: res")
        out.append(f"    end {'subroutine' if res is None else 'function'} c_{f.name}")
    out += ["  end interface", "end module zarr_c", ""]
    return "\n".join(out)


def constants(h):
    out = [
        BANNER,
        "!",
        "! Every ZARR_* constant of zarr.h as a public integer(c_int32_t) parameter. Included in",
        "! the specification part of module zarr, which uses iso_c_binding.",
    ]
    groups = [("version macros", h.defines)] + [(f"enum {k}", v) for k, v in h.enums.items()]
    for title, values in groups:
        out += ["", f"! {title}"]
        for c in values:
            out += comment(c.doc, 0)
            out.append(f"integer(c_int32_t), parameter, public :: {c.name} = {c.value}")
    out.append("")
    return "\n".join(out)


def main():
    h = zarr_h.parse()
    texts = {"constants": constants(h), "interfaces": interfaces(h)}
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] not in ([], ["--check"]):
        raise SystemExit("usage: generate.py [--check]")
    stale = []
    for key, path in OUTPUTS.items():
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old == texts[key]:
            continue
        if check:
            stale.append(str(path.relative_to(zarr_h.ROOT)))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(texts[key], encoding="utf-8")
            print(f"generate.py: wrote {path.relative_to(zarr_h.ROOT)}")
    if stale:
        raise SystemExit("generate.py: out of date with include/zarr.h: " + ", ".join(stale)
                         + " (run python3 bindings/fortran/generate.py)")
    if check:
        print(f"generate.py: Fortran C layer up to date ({len(h.functions)} functions)")


if __name__ == "__main__":
    main()
