# Zarr.jl — a thin Julia layer over LibZarr (the generated ccall wrappers of libzarr's C API).
#
#   include("bindings/julia/src/Zarr.jl"); using .Zarr
#   store = Zarr.open_store("out.zarr", "a")
#   a = Zarr.create_array(store, "temperature", Float64, (1200, 1000); chunks = (300, 250))
#   Zarr.write!(a, data)                     # data::Array{Float64,2} of size (1200, 1000)
#   block = Zarr.read(a, (1, 1), (10, 20))   # 1-based start, Julia-order count
#   close(a); close(store)
#
# - Dimensions are in Julia (column-major) order and indices are 1-based, as in JuliaIO's
#   Zarr.jl: the layer reverses shapes, starts and counts and moves data in C order, so a
#   Julia Array goes to libzarr without a copy and the stored array is what zarr-python
#   expects (a (1200, 1000) Julia array is stored with shape [1000, 1200]).
# - Handles (Store, Group, ZArray) are mutable structs whose finalizers call libzarr's free
#   functions (which never fail, so finalizers never throw); `close` frees at once and may
#   be called any number of times. A closed handle passes NULL, which libzarr refuses with
#   ZARR_ERR_NULL_ARG.
# - Every failing call throws ZarrError(status, name, message); `check` reads
#   zarr_last_error right after the ccall, on the same thread.
# - Attributes and metadata are JSON strings, as in the C API.
module Zarr

include("LibZarr.jl")
using .LibZarr
const L = LibZarr

export ZarrError, Store, Group, ZArray

# ---- errors ------------------------------------------------------------------------------

"A failed libzarr call: its status code, the code's name and libzarr's message."
struct ZarrError <: Exception
    status::Int32
    name::String
    message::String
end
Base.showerror(io::IO, e::ZarrError) = print(io, "ZarrError: ", e.name, ": ", e.message)

"The calling thread's last libzarr error message."
function last_error()
    needed = Ref{Csize_t}(0)
    L.zarr_last_error(C_NULL, 0, needed)
    buf = Vector{UInt8}(undef, needed[])
    L.zarr_last_error(buf, length(buf), C_NULL)
    return String(resize!(buf, max(length(buf) - 1, 0)))  # without the NUL
end

"The error for a failed status; the message is read at once."
function zarr_error(rc)
    message = last_error()
    return ZarrError(rc, unsafe_string(L.zarr_status_str(rc)), message)
end

"Throws ZarrError unless `rc` is ZARR_OK. Call it right after the ccall."
check(rc) = rc == L.ZARR_OK ? nothing : throw(zarr_error(rc))

# A string output of the (buf, len, needed) convention: `call(buf, len, needed)` is run for
# the size, then into a buffer of that size.
function get_text(call)
    needed = Ref{Csize_t}(0)
    rc = call(C_NULL, 0, needed)
    buf = UInt8[]
    while rc == L.ZARR_ERR_BUFFER_SIZE  # again only if the text grew meanwhile
        buf = Vector{UInt8}(undef, needed[])
        rc = call(buf, length(buf), needed)
    end
    check(rc)
    return isempty(buf) ? "" : String(resize!(buf, Int(needed[]) - 1))  # without the NUL
end

# ---- handles -----------------------------------------------------------------------------

"A store: `open_store` (directory), `open_zip`, `open_url` or `memory_store`."
mutable struct Store
    ptr::Ptr{L.zarr_store_t}
    function Store(ptr::Ptr{L.zarr_store_t})
        return finalizer(free!, new(ptr))
    end
end

"A group: `open_group`, `create_group`."
mutable struct Group
    ptr::Ptr{L.zarr_group_t}
    function Group(ptr::Ptr{L.zarr_group_t})
        return finalizer(free!, new(ptr))
    end
end

"An array: `create_array`, `open_array`."
mutable struct ZArray
    ptr::Ptr{L.zarr_array_t}
    function ZArray(ptr::Ptr{L.zarr_array_t})
        return finalizer(free!, new(ptr))
    end
end

# The finalizers: free once, never throw.
function free!(s::Store)
    p, s.ptr = s.ptr, C_NULL
    p == C_NULL || L.zarr_store_free(p)
    return nothing
end
function free!(g::Group)
    p, g.ptr = g.ptr, C_NULL
    p == C_NULL || L.zarr_group_free(p)
    return nothing
end
function free!(a::ZArray)
    p, a.ptr = a.ptr, C_NULL
    p == C_NULL || L.zarr_array_free(p)
    return nothing
end

# Handles pass as their C pointers to the LibZarr wrappers (kept alive during the call).
Base.unsafe_convert(::Type{Ptr{L.zarr_store_t}}, s::Store) = s.ptr
Base.unsafe_convert(::Type{Ptr{L.zarr_group_t}}, g::Group) = g.ptr
Base.unsafe_convert(::Type{Ptr{L.zarr_array_t}}, a::ZArray) = a.ptr

"Frees a group or an array now; later calls on it throw ZARR_ERR_NULL_ARG."
Base.close(x::Union{Group,ZArray}) = free!(x)

"Finishes a store (a zip's central directory is written here) and frees it."
function Base.close(s::Store)
    s.ptr == C_NULL && return nothing
    rc = L.zarr_store_close(s)
    err = rc == L.ZARR_OK ? nothing : zarr_error(rc)
    free!(s)
    err === nothing || throw(err)
    return nothing
end

# A new handle from a call with a handle output.
function new_handle(T, H, call)
    out = Ref{Ptr{H}}(C_NULL)
    check(call(out))
    return T(out[])
end

# Strings taken from a zarr_strings_t list, which is then freed.
function take_strings(list::Ptr{L.zarr_strings_t})
    try
        n = Int(L.zarr_strings_count(list))
        return String[unsafe_string(L.zarr_strings_get(list, i)) for i in 0:n-1]
    finally
        L.zarr_strings_free(list)
    end
end

# ---- element types and modes -------------------------------------------------------------

"The zarr_dtype_t of a Julia element type."
dtype(::Type{Bool}) = L.ZARR_DTYPE_BOOL
dtype(::Type{Int8}) = L.ZARR_DTYPE_INT8
dtype(::Type{Int16}) = L.ZARR_DTYPE_INT16
dtype(::Type{Int32}) = L.ZARR_DTYPE_INT32
dtype(::Type{Int64}) = L.ZARR_DTYPE_INT64
dtype(::Type{UInt8}) = L.ZARR_DTYPE_UINT8
dtype(::Type{UInt16}) = L.ZARR_DTYPE_UINT16
dtype(::Type{UInt32}) = L.ZARR_DTYPE_UINT32
dtype(::Type{UInt64}) = L.ZARR_DTYPE_UINT64
dtype(::Type{Float16}) = L.ZARR_DTYPE_FLOAT16
dtype(::Type{Float32}) = L.ZARR_DTYPE_FLOAT32
dtype(::Type{Float64}) = L.ZARR_DTYPE_FLOAT64
dtype(::Type{ComplexF32}) = L.ZARR_DTYPE_COMPLEX64
dtype(::Type{ComplexF64}) = L.ZARR_DTYPE_COMPLEX128

const ELTYPES = Dict{Int32,DataType}(
    dtype(T) => T for T in (Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64,
                            Float16, Float32, Float64, ComplexF32, ComplexF64))

const MODES = Dict("r" => L.ZARR_MODE_R, "r+" => L.ZARR_MODE_R_PLUS, "a" => L.ZARR_MODE_A,
                   "w" => L.ZARR_MODE_W, "w-" => L.ZARR_MODE_W_MINUS)

"A zarr-python mode string (\"r\", \"r+\", \"a\", \"w\", \"w-\") as a zarr_mode_t."
mode(m::AbstractString) = haskey(MODES, m) ? MODES[m] :
                          throw(ArgumentError("mode must be one of r, r+, a, w, w-: $m"))

# Julia-order extents or 1-based indices as C-order uint64 (0-based when `base` is 1).
c_order(x, base = 0) = UInt64[v - base for v in reverse(collect(x))]

# ---- stores ------------------------------------------------------------------------------

"Opens a directory as a store (modes as zarr_store_open_fs)."
open_store(path::AbstractString, m::AbstractString = "a") =
    new_handle(Store, L.zarr_store_t, out -> L.zarr_store_open_fs(path, mode(m), out))

"Opens a zip file as a store; `deflate` compresses new entries."
open_zip(path::AbstractString, m::AbstractString = "r"; deflate::Bool = false) =
    new_handle(Store, L.zarr_store_t, out -> L.zarr_store_open_zip(path, mode(m), deflate, out))

"""Opens a store by URL: a path, `file://`, `memory://`, `zip://`, `s3://`, `gs://`,
`az://`, `abfs://` or `http(s)://` (read-only); `options` is a JSON object of settings
(endpoint, region, credentials, timeouts, ...; see zarr_store_open_url)."""
open_url(url::AbstractString, m::AbstractString = "r"; options::AbstractString = "{}") =
    new_handle(Store, L.zarr_store_t, out -> L.zarr_store_open_url(url, mode(m), options, out))

"What this build has: a bit set of `ZARR_HAS_*` values (see zarr_features)."
features() = L.zarr_features()

"A new empty in-memory store."
memory_store() = new_handle(Store, L.zarr_store_t, out -> L.zarr_store_new_memory(out))

# ---- groups ------------------------------------------------------------------------------

"Opens or creates the group at `path` (\"\" is the root); modes as zarr_group_open."
open_group(store::Store, path::AbstractString = "", m::AbstractString = "a") =
    new_handle(Group, L.zarr_group_t, out -> L.zarr_group_open(store, path, mode(m), out))

"Like `open_group`, but a group that has to be created gets Zarr format `zarr_format`."
create_group(store::Store, path::AbstractString, m::AbstractString = "a"; zarr_format::Integer = 2) =
    new_handle(Group, L.zarr_group_t,
               out -> L.zarr_group_create(store, path, mode(m), zarr_format, out))

"Opens or creates the group at `path` below `group`."
open_group(group::Group, path::AbstractString, m::AbstractString = "a") =
    new_handle(Group, L.zarr_group_t, out -> L.zarr_group_open_group(group, path, mode(m), out))

"The sorted names of the group's direct members: `kind` is :all, :arrays or :groups."
function members(group::Group; kind::Symbol = :all)
    k = kind === :arrays ? L.ZARR_NODE_ARRAY : kind === :groups ? L.ZARR_NODE_GROUP : L.ZARR_NODE_NONE
    out = Ref{Ptr{L.zarr_strings_t}}(C_NULL)
    rc = L.zarr_group_members(group, k, out)
    check(rc)
    return take_strings(out[])
end

"What is at `path`: :none, :array or :group."
function node_kind(group::Group, path::AbstractString)
    kind = Ref{L.zarr_node_kind_t}(0)
    check(L.zarr_group_contains(group, path, kind))
    return kind[] == L.ZARR_NODE_ARRAY ? :array : kind[] == L.ZARR_NODE_GROUP ? :group : :none
end

# ---- arrays ------------------------------------------------------------------------------

"""
    create_array(parent, path, T, dims; chunks, shards, fill_value, compressor, attributes,
                 zarr_format, mode = "w") -> ZArray

Creates an array of element type `T` and Julia-order `dims` in a Store or below a Group.
`chunks` and `shards` are Julia-order; `fill_value`, `compressor` and `attributes` are JSON
strings; defaults are zarr_array_builder_new's.
"""
function create_array(parent::Union{Store,Group}, path::AbstractString, ::Type{T}, dims;
                      chunks = nothing, shards = nothing, fill_value = nothing,
                      compressor = nothing, attributes = nothing, zarr_format = nothing,
                      mode::AbstractString = "w") where {T}
    shape = c_order(dims)
    b = Ref{Ptr{L.zarr_array_builder_t}}(C_NULL)
    check(L.zarr_array_builder_new(dtype(T), length(shape), shape, b))
    try
        zarr_format === nothing || check(L.zarr_array_builder_set_zarr_format(b[], zarr_format))
        if chunks !== nothing
            c = c_order(chunks)
            check(L.zarr_array_builder_set_chunk_shape(b[], length(c), c))
        end
        if shards !== nothing
            s = c_order(shards)
            check(L.zarr_array_builder_set_shard_shape(b[], length(s), s))
        end
        fill_value === nothing || check(L.zarr_array_builder_set_fill_value_json(b[], fill_value))
        compressor === nothing || check(L.zarr_array_builder_set_compressor_json(b[], compressor))
        attributes === nothing || check(L.zarr_array_builder_set_attributes_json(b[], attributes))
        m = Zarr.mode(mode)
        if parent isa Store
            return new_handle(ZArray, L.zarr_array_t,
                              out -> L.zarr_array_create(b[], parent, path, m, out))
        else
            return new_handle(ZArray, L.zarr_array_t,
                              out -> L.zarr_group_create_array(parent, b[], path, m, out))
        end
    finally
        L.zarr_array_builder_free(b[])
    end
end

"Opens an array (\"r\", \"r+\" or \"a\") in a Store or below a Group."
open_array(store::Store, path::AbstractString, m::AbstractString = "r") =
    new_handle(ZArray, L.zarr_array_t, out -> L.zarr_array_open(store, path, mode(m), out))
open_array(group::Group, path::AbstractString, m::AbstractString = "r") =
    new_handle(ZArray, L.zarr_array_t, out -> L.zarr_group_open_array(group, path, mode(m), out))

function Base.ndims(a::ZArray)
    rank = Ref{Csize_t}(0)
    check(L.zarr_array_rank(a, rank))
    return Int(rank[])
end

"The Julia-order shape."
function Base.size(a::ZArray)
    shape = Vector{UInt64}(undef, ndims(a))
    check(L.zarr_array_shape(a, length(shape), shape))
    return Tuple(Int.(reverse(shape)))
end

"The Julia-order chunk shape."
function chunks(a::ZArray)
    c = Vector{UInt64}(undef, ndims(a))
    check(L.zarr_array_chunk_shape(a, length(c), c))
    return Tuple(Int.(reverse(c)))
end

"The element type."
function Base.eltype(a::ZArray)
    d = Ref{L.zarr_dtype_t}(0)
    check(L.zarr_array_dtype(a, d))
    return ELTYPES[d[]]
end

"The Zarr format version (2 or 3)."
function zarr_format(a::ZArray)
    v = Ref{Int32}(0)
    check(L.zarr_array_zarr_format(a, v))
    return Int(v[])
end

"Changes the shape (Julia order); chunks wholly outside it are erased."
function Base.resize!(a::ZArray, dims)
    shape = c_order(dims)
    check(L.zarr_array_resize(a, length(shape), shape))
    return a
end

"""
    read!(a, out, start = ones) -> out

Reads the block of size `size(out)` at the 1-based Julia-order `start` into `out`.
"""
function read!(a::ZArray, out::Array{T}, start = ntuple(_ -> 1, ndims(out))) where {T}
    first, count = c_order(start, 1), c_order(size(out))
    check(L.zarr_array_read(a, length(count), first, count, dtype(T), L.ZARR_ORDER_C, out,
                            sizeof(out)))
    return out
end

"""
    read(a, start = ones, count = size(a) .- start .+ 1) -> Array

Reads a block (1-based Julia-order `start`, Julia-order `count`); everything by default.
"""
function read(a::ZArray, start = ntuple(_ -> 1, ndims(a)), count = size(a) .- Tuple(start) .+ 1)
    out = Array{eltype(a)}(undef, Tuple(count)...)
    return read!(a, out, start)
end

"""
    write!(a, data, start = ones) -> a

Writes `data` at the 1-based Julia-order `start` (other AbstractArrays are collected first).
"""
function write!(a::ZArray, data::Array{T}, start = ntuple(_ -> 1, ndims(data))) where {T}
    first, count = c_order(start, 1), c_order(size(data))
    check(L.zarr_array_write(a, length(count), first, count, dtype(T), L.ZARR_ORDER_C, data,
                             sizeof(data)))
    return a
end
write!(a::ZArray, data::AbstractArray, start = ntuple(_ -> 1, ndims(data))) =
    write!(a, collect(data), start)

"Sets the dimension names, Julia order (stored reversed, as xarray reads them)."
function set_dimension_names!(a::ZArray, names)
    names = reverse(String.(collect(names)))
    GC.@preserve names begin
        ptrs = Cstring[Base.unsafe_convert(Cstring, n) for n in names]
        check(L.zarr_array_set_dimension_names(a, length(ptrs), ptrs))
    end
    return a
end

# ---- attributes (JSON) -------------------------------------------------------------------

"All attributes of an array or group as one JSON object."
attributes(a::ZArray) = get_text((b, n, nd) -> L.zarr_array_attrs_get(a, b, n, nd))
attributes(g::Group) = get_text((b, n, nd) -> L.zarr_group_attrs_get(g, b, n, nd))

"Replaces all attributes with the JSON object `json`."
set_attributes!(a::ZArray, json::AbstractString) = (check(L.zarr_array_attrs_set(a, json)); a)
set_attributes!(g::Group, json::AbstractString) = (check(L.zarr_group_attrs_set(g, json)); g)

"The JSON value of attribute `key` (ZarrError ZARR_ERR_NOT_FOUND if absent)."
attribute(a::ZArray, key::AbstractString) =
    get_text((b, n, nd) -> L.zarr_array_attr_get(a, key, b, n, nd))
attribute(g::Group, key::AbstractString) =
    get_text((b, n, nd) -> L.zarr_group_attr_get(g, key, b, n, nd))

"Sets attribute `key` to the JSON value `json`."
set_attribute!(a::ZArray, key::AbstractString, json::AbstractString) =
    (check(L.zarr_array_attr_set(a, key, json)); a)
set_attribute!(g::Group, key::AbstractString, json::AbstractString) =
    (check(L.zarr_group_attr_set(g, key, json)); g)

"Deletes attribute `key`."
delete_attribute!(a::ZArray, key::AbstractString) = (check(L.zarr_array_attr_delete(a, key)); a)
delete_attribute!(g::Group, key::AbstractString) = (check(L.zarr_group_attr_delete(g, key)); g)

"The library version (\"0.1.0\")."
version() = unsafe_string(L.zarr_version_string())

end # module Zarr
