/**
 * @file zarr.h
 * zarr.h — the C interface of libzarr: Zarr arrays for C, C++, Fortran and other languages.
 * Generated from the Rust sources by cbindgen; do not edit.
 *
 * Conventions
 * -----------
 * - Every fallible function returns zarr_status_t: ZARR_OK (0) on success, a negative
 *   ZARR_ERR_* code on failure. zarr_status_str() names a code; zarr_last_error() copies
 *   the calling thread's message, which names the key, field, chunk or argument at fault.
 * - Parameters: handle first, then inputs, then outputs. Every buffer pointer is followed by
 *   its length in bytes. Outputs are written only on success, except that a handle output
 *   (`out_*` of type `T **`) is set to NULL first, so it is NULL after any failure, and
 *   that the buffer of a failed region read may hold part of the region.
 * - Handles (zarr_store_t, zarr_group_t, zarr_array_t, zarr_array_builder_t, zarr_strings_t,
 *   zarr_vlen_list_t, zarr_request_t) are opaque. Free each with its own `*_free` function; free(NULL) is a
 *   no-op, freeing twice is undefined. Handles are reference-counted inside: an array keeps
 *   its store alive, so handles may be freed in any order.
 * - Strings passed in are UTF-8, NUL-terminated and only borrowed for the call. Buffers
 *   passed in are borrowed for the call only (except by the non-blocking `*_async` calls:
 *   without ZARR_ASYNC_COPY they read the buffer until the request is done). String
 *   outputs use (buf, len, needed): the text is copied NUL-terminated, `*needed` (may be
 *   NULL) gets its full size including the NUL, and a buffer too small gives
 *   ZARR_ERR_BUFFER_SIZE (pass buf = NULL, len = 0 to ask for the size).
 * - Enumerations (zarr_dtype_t, zarr_order_t, zarr_mode_t, zarr_attr_kind_t) are passed as
 *   int32_t; an unknown value gives ZARR_ERR_INVALID_ARG.
 * - Regions are `start` and `count` arrays of `ndim` uint64_t in the array's dimension
 *   order; `ndim` must equal the rank. The caller's buffer holds the region's elements in
 *   this machine's byte order, in C (row-major) or F (column-major) order.
 * - Thread safety: every function may be called from any thread. A zarr_array_t may be used
 *   by several threads at once: reads always, and writes when they touch different chunks
 *   (two writers touching one chunk, from threads or processes, may lose updates). No
 *   global initialisation is needed.
 * - fork(): a child may go on using the handles, stores and settings of its parent. A
 *   fork() waits until no libzarr call is running on another thread (nor a thread a call
 *   left storing appended shards), and calls of other threads wait while it forks, so the
 *   child inherits no lock held mid-call. The child's memory stores are its own copies.
 * - Every function's documentation ends with three paragraphs. "Errors:" names the codes
 *   it returns besides the usual ones, which any function returning zarr_status_t may give:
 *   ZARR_ERR_NULL_ARG (a required pointer is NULL), ZARR_ERR_INVALID_ARG (an unknown
 *   enumeration value, a string that is not UTF-8, JSON text that does not parse),
 *   ZARR_ERR_BUFFER_SIZE (a length no buffer can have: more than PTRDIFF_MAX bytes),
 *   ZARR_ERR_NO_MEMORY, ZARR_ERR_PANIC and ZARR_ERR_POISONED (below), and, from a call that
 *   reads or writes a store, ZARR_ERR_STORAGE_IO. "Ownership:" says what the caller gets
 *   to free, or must not free, beyond the rules above. "Thread safety:" adds to the rule
 *   above what matters for that call.
 * - Durability: a process killed at any moment leaves every key with its old or its new
 *   value. What survives a power loss is the store's zarr_durability: by default, what was
 *   written before zarr_store_flush, zarr_store_close or zarr_store_free returned.
 * - libzarr never prints (set ZARR_LOG to see panic reports on stderr). A panic inside
 *   libzarr returns ZARR_ERR_PANIC and poisons the handle involved (later calls on it
 *   return ZARR_ERR_POISONED).
 */

#ifndef ZARR_H
#define ZARR_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#if defined(_WIN32) && !defined(ZARR_STATIC)
#  define ZARR_API __declspec(dllimport)
#else
#  define ZARR_API
#endif


/**
 * Major version of libzarr.
 */
#define ZARR_VERSION_MAJOR 0

/**
 * Minor version of libzarr.
 */
#define ZARR_VERSION_MINOR 1

/**
 * Patch version of libzarr.
 */
#define ZARR_VERSION_PATCH 0

/**
 * MAJOR * 1000000 + MINOR * 1000 + PATCH.
 */
#define ZARR_VERSION_NUMBER 1000

/**
 * The soname major version: `libzarr.so.N` where N is this number.
 */
#define ZARR_ABI_VERSION 0

/**
 * The most bytes of encoded inner chunks an array handle keeps buffered between
 * `zarr_array_append` calls to a sharded array (256 MiB). Past it, after an append, the
 * handle stores its open shards and drops them from memory, and a later append reads a
 * shard it continues back once. Memory per handle is this much compressed data, plus
 * 24 bytes per inner chunk of each open shard, plus (during a call) the step's own
 * encoded chunks.
 */
#define ZARR_APPEND_BUFFER_BYTES (256 << 20)

/**
 * `zarr_features()` bit: zip files as stores (every build).
 */
#define ZARR_HAS_ZIP 1

/**
 * `zarr_features()` bit: `s3://` stores (S3 and S3-compatible servers).
 */
#define ZARR_HAS_S3 2

/**
 * `zarr_features()` bit: `gs://` stores (Google Cloud Storage).
 */
#define ZARR_HAS_GCS 4

/**
 * `zarr_features()` bit: `az://` and `abfs://` stores (Azure Blob Storage).
 */
#define ZARR_HAS_AZURE 8

/**
 * `zarr_features()` bit: read-only `http://` and `https://` stores.
 */
#define ZARR_HAS_HTTP 16

/**
 * `zarr_features()` bit: the zfp codecs (Zarr v3 `zfp`, numcodecs `zfpy`).
 */
#define ZARR_HAS_ZFP 32

/**
 * `zarr_features()` bit: the pcodec codec (numcodecs `pcodec`, Zarr v3 `numcodecs.pcodec`).
 */
#define ZARR_HAS_PCODEC 64

/**
 * `zarr_features()` bit: Icechunk repositories as stores (`icechunk:///PATH` URLs and
 * the commit, branch and tag calls).
 */
#define ZARR_HAS_ICECHUNK 128

/**
 * Zarr format number of the 2022 draft of v3 in the draft's own layout: a `zarr.json`
 * entry point, `meta/PATH.array.json` and `meta/PATH.group.json` documents, chunks
 * at `data/PATH/c0/1`. Accepted by `zarr_array_builder_set_zarr_format` and
 * `zarr_group_create`; reported by `zarr_array_zarr_format` and `zarr_group_zarr_format`.
 */
#define ZARR_FORMAT_V3_DRAFT 30

/**
 * Zarr format number of the 2022 draft of v3 in zarr-python 2.18's layout (its
 * experimental v3): `meta/root/PATH.array.json`, chunks at `data/root/PATH/c0/1`, its
 * own `zarr_format` URI and one `compressor`.
 */
#define ZARR_FORMAT_V3_DRAFT_ZARR_PYTHON 31

/**
 * Bytes a snapshot id takes with its NUL: the size of the `id_buf` of
 * `zarr_store_commit` and `zarr_store_snapshot_id`.
 */
#define ZARR_SNAPSHOT_ID_BYTES 21

/**
 * `flags` bit of the non-blocking calls: the library copies the buffer when the request is
 * submitted, so the caller may reuse it at once. Without it the library reads the
 * caller's buffer while the request runs: the caller must leave it untouched (and
 * allocated) until the request is done (`zarr_request_wait` or `zarr_request_test`
 * says so, or a flush or free of the array returned).
 */
#define ZARR_ASYNC_COPY 1

/**
 * Status codes returned by every fallible function. Values never change or get reused.
 */
enum zarr_status
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  /**
   * Success.
   */
  ZARR_OK = 0,
  /**
   * A required pointer argument was NULL.
   */
  ZARR_ERR_NULL_ARG = -1,
  /**
   * An argument was malformed or out of range (including unknown enum values).
   */
  ZARR_ERR_INVALID_ARG = -2,
  /**
   * `ndim` did not match the array's rank.
   */
  ZARR_ERR_RANK_MISMATCH = -3,
  /**
   * A region or index lay outside the array.
   */
  ZARR_ERR_OUT_OF_BOUNDS = -4,
  /**
   * The memory data type did not match the array's.
   */
  ZARR_ERR_DTYPE_MISMATCH = -5,
  /**
   * A buffer had the wrong size (or an output buffer was too small; see `needed`).
   */
  ZARR_ERR_BUFFER_SIZE = -6,
  /**
   * A node or key does not exist.
   */
  ZARR_ERR_NOT_FOUND = -7,
  /**
   * A node exists where none may be.
   */
  ZARR_ERR_EXISTS = -8,
  /**
   * A metadata document is malformed.
   */
  ZARR_ERR_METADATA = -9,
  /**
   * A codec is not supported by this build.
   */
  ZARR_ERR_CODEC_UNSUPPORTED = -10,
  /**
   * Encoding or decoding a chunk failed.
   */
  ZARR_ERR_CODEC = -11,
  /**
   * The storage backend failed.
   */
  ZARR_ERR_STORAGE_IO = -12,
  /**
   * A write through a read-only handle or store.
   */
  ZARR_ERR_READ_ONLY = -13,
  /**
   * A valid feature that this build does not implement.
   */
  ZARR_ERR_UNSUPPORTED = -14,
  /**
   * libzarr panicked; the message says where. The handle used is now poisoned.
   */
  ZARR_ERR_PANIC = -15,
  /**
   * The handle was poisoned by an earlier panic.
   */
  ZARR_ERR_POISONED = -16,
  /**
   * An internal invariant broke (a bug in libzarr).
   */
  ZARR_ERR_INTERNAL = -17,
  /**
   * A store key or node path is malformed or would escape the store.
   */
  ZARR_ERR_INVALID_KEY = -18,
  /**
   * Size arithmetic overflowed 64 bits.
   */
  ZARR_ERR_OVERFLOW = -19,
  /**
   * The node at a path is of the other kind (an array where a group was expected, or
   * the reverse).
   */
  ZARR_ERR_NODE_TYPE = -20,
  /**
   * A buffer could not be allocated (the process is short of memory or address space).
   */
  ZARR_ERR_NO_MEMORY = -21,
  /**
   * Some values did not fit the element type they were converted to (as netCDF's
   * `NC_ERANGE`); what the call did with the others is in its documentation.
   */
  ZARR_ERR_RANGE = -22,
  /**
   * Another writer was first: a commit or rebase of an Icechunk repository met another
   * writer's commit on the branch (nothing was committed; `zarr_store_rebase`, then
   * commit again), or another handle or process holds the array's append lock (nothing
   * was appended or resized; see `zarr_array_set_append_lock`).
   */
  ZARR_ERR_CONFLICT = -23,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum zarr_status zarr_status;
#else
typedef int32_t zarr_status;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Element types of the data path. Values never change or get reused.
 */
enum zarr_dtype
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  /**
   * bool (1 byte, 0 or 1).
   */
  ZARR_DTYPE_BOOL = 1,
  /**
   * int8_t.
   */
  ZARR_DTYPE_INT8 = 2,
  /**
   * int16_t.
   */
  ZARR_DTYPE_INT16 = 3,
  /**
   * int32_t.
   */
  ZARR_DTYPE_INT32 = 4,
  /**
   * int64_t; also the memory type of datetime64 and timedelta64 arrays.
   */
  ZARR_DTYPE_INT64 = 5,
  /**
   * uint8_t.
   */
  ZARR_DTYPE_UINT8 = 6,
  /**
   * uint16_t.
   */
  ZARR_DTYPE_UINT16 = 7,
  /**
   * uint32_t.
   */
  ZARR_DTYPE_UINT32 = 8,
  /**
   * uint64_t.
   */
  ZARR_DTYPE_UINT64 = 9,
  /**
   * IEEE 754 half precision, moved as its 16 bits.
   */
  ZARR_DTYPE_FLOAT16 = 10,
  /**
   * float.
   */
  ZARR_DTYPE_FLOAT32 = 11,
  /**
   * double.
   */
  ZARR_DTYPE_FLOAT64 = 12,
  /**
   * Two floats (real, imaginary), as C `float complex`.
   */
  ZARR_DTYPE_COMPLEX64 = 13,
  /**
   * Two doubles (real, imaginary), as C `double complex`.
   */
  ZARR_DTYPE_COMPLEX128 = 14,
  /**
   * Raw item bytes, `zarr_array_item_size` bytes each: fixed-width byte strings (`S`),
   * unicode strings (`U`, UTF-32 code units in native byte order), void (`V`, `r*`) and
   * structured records (fields in their stored byte order; see `zarr_array_field_layout`).
   */
  ZARR_DTYPE_RAW = 15,
  /**
   * Variable-length UTF-8 strings: read and written with the `zarr_array_*_vlen` calls.
   */
  ZARR_DTYPE_STRING = 16,
  /**
   * Variable-length bytes or numeric arrays: read and written with the
   * `zarr_array_*_vlen` calls.
   */
  ZARR_DTYPE_BYTES = 17,
  /**
   * bfloat16 (1 sign, 8 exponent, 7 mantissa bits), moved as its 16 bits (`uint16_t`);
   * a bfloat16 array is also read and written as `ZARR_DTYPE_FLOAT32` (exact widening;
   * narrowing rounds to nearest, ties to even).
   */
  ZARR_DTYPE_BFLOAT16 = 18,
  /**
   * float8_e4m3 (IEEE-like: infinities, NaN), moved as its byte.
   */
  ZARR_DTYPE_FLOAT8_E4M3 = 19,
  /**
   * float8_e4m3fn (no infinity; NaN 0x7f/0xff), moved as its byte.
   */
  ZARR_DTYPE_FLOAT8_E4M3FN = 20,
  /**
   * float8_e4m3fnuz (bias 8; NaN 0x80, no negative zero), moved as its byte.
   */
  ZARR_DTYPE_FLOAT8_E4M3FNUZ = 21,
  /**
   * float8_e4m3b11fnuz (bias 11; NaN 0x80), moved as its byte.
   */
  ZARR_DTYPE_FLOAT8_E4M3B11FNUZ = 22,
  /**
   * float8_e5m2 (IEEE-like), moved as its byte.
   */
  ZARR_DTYPE_FLOAT8_E5M2 = 23,
  /**
   * float8_e5m2fnuz (bias 16; NaN 0x80), moved as its byte.
   */
  ZARR_DTYPE_FLOAT8_E5M2FNUZ = 24,
  /**
   * float8_e3m4 (IEEE-like), moved as its byte.
   */
  ZARR_DTYPE_FLOAT8_E3M4 = 25,
  /**
   * float8_e8m0fnu (unsigned powers of two; NaN 0xff), moved as its byte.
   */
  ZARR_DTYPE_FLOAT8_E8M0FNU = 26,
  /**
   * float6_e2m3fn, one byte holding the value in its low 6 bits (the others 0).
   */
  ZARR_DTYPE_FLOAT6_E2M3FN = 27,
  /**
   * float6_e3m2fn, one byte holding the value in its low 6 bits (the others 0).
   */
  ZARR_DTYPE_FLOAT6_E3M2FN = 28,
  /**
   * float4_e2m1fn, one byte holding the value in its low 4 bits (the others 0).
   */
  ZARR_DTYPE_FLOAT4_E2M1FN = 29,
  /**
   * int2 as `int8_t` (-2..1); other values are refused on write.
   */
  ZARR_DTYPE_INT2 = 30,
  /**
   * int4 as `int8_t` (-8..7); other values are refused on write.
   */
  ZARR_DTYPE_INT4 = 31,
  /**
   * uint2 as `uint8_t` (0..3); other values are refused on write.
   */
  ZARR_DTYPE_UINT2 = 32,
  /**
   * uint4 as `uint8_t` (0..15); other values are refused on write.
   */
  ZARR_DTYPE_UINT4 = 33,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum zarr_dtype zarr_dtype;
#else
typedef int32_t zarr_dtype;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Element order of a buffer in memory.
 */
enum zarr_order
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  /**
   * Row-major: the last dimension varies fastest.
   */
  ZARR_ORDER_C = 0,
  /**
   * Column-major: the first dimension varies fastest.
   */
  ZARR_ORDER_F = 1,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum zarr_order zarr_order;
#else
typedef int32_t zarr_order;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * How stores and nodes are opened, as zarr-python's mode strings.
 */
enum zarr_mode
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  /**
   * "r": read only; must exist.
   */
  ZARR_MODE_R = 0,
  /**
   * "r+": read and write; must exist.
   */
  ZARR_MODE_R_PLUS = 1,
  /**
   * "a": read and write; created if missing.
   */
  ZARR_MODE_A = 2,
  /**
   * "w": created, replacing what is there.
   */
  ZARR_MODE_W = 3,
  /**
   * "w-": created; fails if something is there.
   */
  ZARR_MODE_W_MINUS = 4,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum zarr_mode zarr_mode;
#else
typedef int32_t zarr_mode;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Kinds of node at a path.
 */
enum zarr_node_kind
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  /**
   * Nothing Zarr recognises.
   */
  ZARR_NODE_NONE = 0,
  /**
   * An array.
   */
  ZARR_NODE_ARRAY = 1,
  /**
   * A group.
   */
  ZARR_NODE_GROUP = 2,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum zarr_node_kind zarr_node_kind;
#else
typedef int32_t zarr_node_kind;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * How concurrent writers of one array are synchronised.
 */
enum zarr_sync
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  /**
   * No locking: no two writers may touch one chunk.
   */
  ZARR_SYNC_NONE = 0,
  /**
   * Per-chunk locks inside this process, shared by every handle on the array.
   */
  ZARR_SYNC_THREAD = 1,
  /**
   * Per-chunk lock files in a directory shared by all writing processes.
   */
  ZARR_SYNC_PROCESS = 2,
  /**
   * Conditional writes checked against the version read (ETags on object stores).
   */
  ZARR_SYNC_VERSIONED = 3,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum zarr_sync zarr_sync;
#else
typedef int32_t zarr_sync;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * How much of what a store writes survives a crash (`zarr_store_set_durability`). At every
 * level a process killed at any moment leaves each key with its old or its new value,
 * never a mix, because values are written to a temporary file and renamed into place (a
 * leftover temporary file is ignored). The levels differ after a power loss or an
 * operating-system crash, and assume storage that honours fsync. Values never change or
 * get reused.
 */
enum zarr_durability
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  /**
   * Nothing is synced. After a power loss the writes of the last seconds (until the
   * operating system writes its cache back) may be lost: a key holds its old value, or
   * is missing if it was new, and on some filesystems a value renamed into place shortly
   * before holds an empty or truncated file.
   */
  ZARR_DURABILITY_NONE = 0,
  /**
   * The default for filesystem stores. The handle remembers the files it wrote and the
   * directories whose entries it changed, and fsyncs exactly those at
   * `zarr_store_flush`, `zarr_store_close` and `zarr_store_free` (other users' data on
   * a shared filesystem is not waited for). Once one of these returns successfully,
   * everything written through the handle before it survives a power loss; writes since
   * the last flush are as under `ZARR_DURABILITY_NONE`. A handle remembers at most
   * 16384 files and directories: the write that reaches that many flushes them.
   */
  ZARR_DURABILITY_FLUSH = 1,
  /**
   * Each value's file is fsynced before it is renamed into place and its directory
   * after (and every directory created or removed with it): when a write or erasure
   * returns (`zarr_store_set`, `zarr_array_write`, ...), it survives a power loss. The
   * slowest level: one or two device flushes per chunk written.
   */
  ZARR_DURABILITY_EACH_WRITE = 2,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum zarr_durability zarr_durability;
#else
typedef int32_t zarr_durability;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * What an attribute holds, as `zarr_array_attr_kind` and `zarr_group_attr_kind` report.
 * Values never change or get reused.
 */
enum zarr_attr_kind
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  /**
   * A string.
   */
  ZARR_ATTR_STRING = 1,
  /**
   * An integer (a JSON number without fraction or exponent).
   */
  ZARR_ATTR_INTEGER = 2,
  /**
   * Any other number.
   */
  ZARR_ATTR_FLOAT = 3,
  /**
   * A non-empty list of strings.
   */
  ZARR_ATTR_STRINGS = 4,
  /**
   * A non-empty list of integers.
   */
  ZARR_ATTR_INTEGERS = 5,
  /**
   * A non-empty list of numbers, some not integers.
   */
  ZARR_ATTR_FLOATS = 6,
  /**
   * Any other JSON: null, a bool, an object, an empty or mixed list.
   */
  ZARR_ATTR_OTHER = 7,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum zarr_attr_kind zarr_attr_kind;
#else
typedef int32_t zarr_attr_kind;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * How an array's chunk grid is laid out.
 */
enum zarr_chunk_grid
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  /**
   * Every chunk has the chunk shape (the last ones clipped by the array's shape).
   */
  ZARR_CHUNK_GRID_REGULAR = 0,
  /**
   * Chunk edge lengths per dimension (Zarr v3's `rectilinear` chunk grid).
   */
  ZARR_CHUNK_GRID_RECTILINEAR = 1,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum zarr_chunk_grid zarr_chunk_grid;
#else
typedef int32_t zarr_chunk_grid;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Settings for a new array. Create with `zarr_array_builder_new`, adjust with the
 * `zarr_array_builder_set_*` calls, then `zarr_array_create`.
 */
typedef struct zarr_array_builder_t zarr_array_builder_t;

/**
 * An array handle. Safe to use from several threads at once; keeps its store alive.
 */
typedef struct zarr_array_t zarr_array_t;

/**
 * A group handle. Safe to use from several threads at once; keeps its store alive.
 */
typedef struct zarr_group_t zarr_group_t;

/**
 * A non-blocking request (a write or an append queued on an array handle).
 */
typedef struct zarr_request_t zarr_request_t;

/**
 * A store handle. Arrays opened from it keep it alive, so it may be freed at any time.
 */
typedef struct zarr_store_t zarr_store_t;

/**
 * A list of strings owned by libzarr; free with `zarr_strings_free`.
 */
typedef struct zarr_strings_t zarr_strings_t;

/**
 * A list of variable-length items owned by libzarr; free with `zarr_vlen_list_free`.
 */
typedef struct zarr_vlen_list_t zarr_vlen_list_t;

/**
 * A status code: one of the `zarr_status` values.
 */
typedef int32_t zarr_status_t;

/**
 * An open mode: one of the `zarr_mode` values, passed as an integer.
 */
typedef int32_t zarr_mode_t;

/**
 * An element type: one of the `zarr_dtype` values, passed as an integer.
 */
typedef int32_t zarr_dtype_t;

/**
 * A memory order: one of the `zarr_order` values, passed as an integer.
 */
typedef int32_t zarr_order_t;

/**
 * A synchronization kind: one of the `zarr_sync` values.
 */
typedef int32_t zarr_sync_t;

/**
 * A chunk grid kind: one of the `zarr_chunk_grid` values.
 */
typedef int32_t zarr_chunk_grid_t;

/**
 * An attribute kind: one of the `zarr_attr_kind` values.
 */
typedef int32_t zarr_attr_kind_t;

/**
 * A node kind: one of the `zarr_node_kind` values.
 */
typedef int32_t zarr_node_kind_t;

/**
 * A durability level: one of the `zarr_durability` values, passed as an integer.
 */
typedef int32_t zarr_durability_t;



#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * Creates an array at `path` in `store` from the builder's settings. `mode` is
 * `ZARR_MODE_W` (replace the Zarr nodes at `path`, as `zarr_group_open` does; other keys
 * are kept), `ZARR_MODE_W_MINUS` (fail with
 * `ZARR_ERR_EXISTS` if anything is there) or `ZARR_MODE_A` (open an existing array
 * instead). Missing parent groups are created. `*out_array` is NULL on failure.
 *
 * Errors: `ZARR_ERR_EXISTS` (`ZARR_MODE_W_MINUS` and an array is at `path`, or an array
 * above it), `ZARR_ERR_NODE_TYPE` (`ZARR_MODE_W_MINUS` or `ZARR_MODE_A` and a group is at
 * `path`), `ZARR_ERR_INVALID_ARG` (settings that do not fit together, or a mode that does
 * not create), `ZARR_ERR_CODEC_UNSUPPORTED`, `ZARR_ERR_UNSUPPORTED`, `ZARR_ERR_READ_ONLY`
 * (a read-only store), `ZARR_ERR_INVALID_KEY` (`path`).
 *
 * Ownership: the builder stays the caller's (it may create more arrays). `*out_array` is a
 * new handle: free it with `zarr_array_free`. It keeps the store alive.
 *
 * Thread safety: any thread; one creator per path (say, MPI rank 0), then others open it:
 * creators of one path at once replace each other's nodes.
 */
ZARR_API
zarr_status_t zarr_array_create(const zarr_array_builder_t *builder,
                                const zarr_store_t *store,
                                const char *path,
                                zarr_mode_t mode,
                                zarr_array_t **out_array);

/**
 * Creates an array from a complete metadata document, for full control over the
 * metadata: a v2 `.zarray` document, or a Zarr v3 `zarr.json` array document (one whose
 * `zarr_format` is 3: any codec chain, sharding, chunk key encoding, dimension names and
 * attributes it holds are written as given). A v3 group document gives
 * `ZARR_ERR_INVALID_ARG`, a malformed one `ZARR_ERR_METADATA` naming the field at fault.
 * Missing parent groups are created in the document's format. Modes as for
 * `zarr_array_create`.
 *
 * Errors: `ZARR_ERR_METADATA` (a malformed document, the field named),
 * `ZARR_ERR_INVALID_ARG` (a group document), and those of `zarr_array_create`.
 *
 * Ownership: the document is only read. `*out_array` is a new handle: free it with
 * `zarr_array_free`. It keeps the store alive.
 *
 * Thread safety: any thread; one creator per path (say, MPI rank 0), then others open it:
 * creators of one path at once replace each other's nodes.
 */
ZARR_API
zarr_status_t zarr_array_create_json(const zarr_store_t *store,
                                     const char *path,
                                     const char *zarray_json,
                                     zarr_mode_t mode,
                                     zarr_array_t **out_array);

/**
 * Opens the array at `path` with `ZARR_MODE_R` (read-only), `ZARR_MODE_R_PLUS` or
 * `ZARR_MODE_A` (read-write). `*out_array` is NULL on failure.
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (no array at `path`), `ZARR_ERR_NODE_TYPE` (a group there),
 * `ZARR_ERR_METADATA` (a document libzarr cannot read, the field named),
 * `ZARR_ERR_CODEC_UNSUPPORTED`, `ZARR_ERR_INVALID_ARG` (a mode that creates: use a
 * builder), `ZARR_ERR_READ_ONLY` (a writable mode on a read-only store),
 * `ZARR_ERR_INVALID_KEY` (`path`).
 *
 * Ownership: `*out_array` is a new handle: free it with `zarr_array_free`. It keeps the
 * store alive.
 *
 * Thread safety: any thread; any number of handles, in any threads and processes, may be
 * open on one array.
 */
ZARR_API
zarr_status_t zarr_array_open(const zarr_store_t *store,
                              const char *path,
                              zarr_mode_t mode,
                              zarr_array_t **out_array);

/**
 * Releases an array handle (NULL is ignored), once its non-blocking requests are done
 * (it waits for them; their errors stay with the requests). Appends it buffered are
 * stored first (see `zarr_array_append`), but an error in doing so is lost and those
 * steps may then be missing: call `zarr_array_close` (or `zarr_array_flush`) before
 * freeing to see it. The append lock the handle holds is released. Freeing syncs nothing
 * by itself; when the handle holds the last reference to its store (the store handle was
 * freed), the store is released and flushed as `zarr_store_free` does (see
 * `zarr_durability`).
 *
 * A handle still open when the process ends normally (`exit()`, a return from `main`,
 * Fortran's `end program`) is finished as freeing it would: its requests are waited for,
 * its buffered appends stored, its lock released and its store flushed (an error then is
 * printed on standard error, unless `ZARR_QUIET` is set). `_exit`, a signal or a crash lose what was not flushed; a
 * `fork()` child's `exit()` leaves its parent's handles alone.
 *
 * Errors: none: it returns a value, never a status. An error storing buffered appends is
 * lost (see above).
 *
 * Ownership: takes the handle (NULL is ignored); the store is released with the last
 * handle using it.
 *
 * Thread safety: any thread, once no other call is using the handle.
 */
ZARR_API
void zarr_array_free(zarr_array_t *array);

/**
 * Reads the region `start[0..ndim]`, `count[0..ndim]` into `buf` (`buf_bytes` must equal
 * the product of `count` times the element size). Elements are of type `mem_dtype` (the
 * array's, see `zarr_array_dtype`) in this machine's byte order, laid out in `order`
 * (`ZARR_ORDER_C` or `ZARR_ORDER_F`). Everything is checked before any I/O. Missing
 * chunks read as the fill value; a chunk key a directory store cannot hold (a component
 * longer than the filesystem's name limit, as "."-separated keys of hundreds of
 * dimensions make) is `ZARR_ERR_INVALID_KEY`, never read as missing.
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_OUT_OF_BOUNDS` (the region leaves
 * the array), `ZARR_ERR_DTYPE_MISMATCH` (`mem_dtype`), `ZARR_ERR_BUFFER_SIZE`
 * (`buf_bytes`), `ZARR_ERR_OVERFLOW`, `ZARR_ERR_CODEC` (a chunk that does not decode or
 * fails its checksum, named), `ZARR_ERR_INVALID_KEY`.
 *
 * Ownership: `buf` stays the caller's; after a failure it may hold part of the region.
 *
 * Thread safety: any thread, at the same time as other reads and writes: each chunk is
 * read as it was before or after a write of it, never a mix.
 */
ZARR_API
zarr_status_t zarr_array_read(const zarr_array_t *array,
                              size_t ndim,
                              const uint64_t *start,
                              const uint64_t *count,
                              zarr_dtype_t mem_dtype,
                              zarr_order_t order,
                              void *buf,
                              size_t buf_bytes);

/**
 * Writes `buf` into the region `start`/`count`; arguments as for `zarr_array_read`.
 * Chunks the region covers are written without being read; partly covered chunks are read,
 * merged and rewritten. A chunk left equal to the fill value is erased. Writers to
 * different chunks may run concurrently; two writers touching one chunk may lose updates.
 * What survives a crash once this returns is the store's `zarr_durability`.
 *
 * Errors: as `zarr_array_read`, plus `ZARR_ERR_READ_ONLY` (a read-only handle or store)
 * and `ZARR_ERR_INVALID_ARG` (a value a narrow type cannot hold, e.g. int4).
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; writes at the same time are safe when they touch different
 * chunks (shards, when sharded): otherwise set a synchronizer
 * (`zarr_array_set_synchronizer`) or updates may be lost.
 */
ZARR_API
zarr_status_t zarr_array_write(const zarr_array_t *array,
                               size_t ndim,
                               const uint64_t *start,
                               const uint64_t *count,
                               zarr_dtype_t mem_dtype,
                               zarr_order_t order,
                               const void *buf,
                               size_t buf_bytes);

/**
 * Like `zarr_array_read`, but `mem_dtype` may be any numeric type (bool, the 8- to 64-bit
 * integers, float32, float64) while the array is of another: the elements are converted
 * as netCDF's `nc_get_vara_*` does. Integers convert exactly when they fit; floats to
 * integers truncate toward zero; bool is 0 or 1 (nonzero reads as 1; a bool buffer takes
 * only values that truncate to 0 or 1). Every element is converted; when some do not fit
 * the buffer's type (an integer outside its range, a finite value beyond float's range,
 * NaN or an infinity to an integer), the call still stores all of them, those as Rust's
 * saturating cast gives (NaN as 0, infinities to float stay infinite), and returns
 * `ZARR_ERR_RANGE`, as `nc_get_vara_*` returns `NC_ERANGE`. The same type is a plain read.
 * A buffer type at least as wide as the array's is converted in place in `buf`; a narrower
 * one goes through a temporary buffer of the region's items in the array's type.
 *
 * Errors: as `zarr_array_read`; `ZARR_ERR_RANGE` (elements that did not fit, counted in
 * the message, which names the first); `ZARR_ERR_DTYPE_MISMATCH` (the array's or the
 * buffer's type is not numeric: float16, complex, strings, raw items, ...).
 *
 * Ownership: `buf` stays the caller's; after a failure other than `ZARR_ERR_RANGE` it may
 * hold part of the region.
 *
 * Thread safety: as `zarr_array_read`.
 */
ZARR_API
zarr_status_t zarr_array_read_as(const zarr_array_t *array,
                                 size_t ndim,
                                 const uint64_t *start,
                                 const uint64_t *count,
                                 zarr_dtype_t mem_dtype,
                                 zarr_order_t order,
                                 void *buf,
                                 size_t buf_bytes);

/**
 * Like `zarr_array_write`, but `buf` holds elements of the numeric type `mem_dtype`,
 * converted to the array's type with the rules of `zarr_array_read_as` (as netCDF's
 * `nc_put_vara_*`). All elements are converted before anything is stored: when any does
 * not fit the array's type, nothing is written and the call returns `ZARR_ERR_RANGE`
 * (netCDF writes the region anyway, the values that do not fit as its build converts them,
 * cast or replaced by the fill value, and then returns `NC_ERANGE`).
 *
 * Errors: as `zarr_array_write`; `ZARR_ERR_RANGE` (nothing written);
 * `ZARR_ERR_DTYPE_MISMATCH` (a type that is not numeric).
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: as `zarr_array_write`.
 */
ZARR_API
zarr_status_t zarr_array_write_from(const zarr_array_t *array,
                                    size_t ndim,
                                    const uint64_t *start,
                                    const uint64_t *count,
                                    zarr_dtype_t mem_dtype,
                                    zarr_order_t order,
                                    const void *buf,
                                    size_t buf_bytes);

/**
 * Like `zarr_array_read`, but element `i` of the region (index per dimension) is at
 * element offset `Σ i[d] * mem_strides[d]` of `buf` (netCDF's `imap`), so a block can be
 * read into the interior of a larger array, halos excluded. Strides are in elements,
 * non-negative and must not make elements overlap; `buf_bytes` must reach the last element.
 *
 * Errors: as `zarr_array_read`; `ZARR_ERR_INVALID_ARG` for strides that make elements
 * overlap, `ZARR_ERR_BUFFER_SIZE` when `buf_bytes` does not reach the last element.
 *
 * Ownership: `buf` stays the caller's; after a failure it may hold part of the region.
 *
 * Thread safety: any thread, at the same time as other reads and writes: each chunk is
 * read as it was before or after a write of it, never a mix.
 */
ZARR_API
zarr_status_t zarr_array_read_strided(const zarr_array_t *array,
                                      size_t ndim,
                                      const uint64_t *start,
                                      const uint64_t *count,
                                      const int64_t *mem_strides,
                                      zarr_dtype_t mem_dtype,
                                      void *buf,
                                      size_t buf_bytes);

/**
 * Like `zarr_array_write`, with the strided buffer layout of `zarr_array_read_strided`.
 *
 * Errors: as `zarr_array_write`, and the stride errors of `zarr_array_read_strided`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; writes at the same time are safe when they touch different
 * chunks (shards, when sharded): otherwise set a synchronizer
 * (`zarr_array_set_synchronizer`) or updates may be lost.
 */
ZARR_API
zarr_status_t zarr_array_write_strided(const zarr_array_t *array,
                                       size_t ndim,
                                       const uint64_t *start,
                                       const uint64_t *count,
                                       const int64_t *mem_strides,
                                       zarr_dtype_t mem_dtype,
                                       const void *buf,
                                       size_t buf_bytes);

/**
 * Chooses how concurrent writers of this array are synchronised, as zarr-python 2's
 * synchronizers: `ZARR_SYNC_NONE` (the default: no two writers may touch one chunk),
 * `ZARR_SYNC_THREAD` (per-chunk locks inside this process) or `ZARR_SYNC_PROCESS`
 * (per-chunk lock files in `lock_dir`, a directory on a filesystem every writing process
 * sees, plus the in-process locks). `lock_dir` is required for `ZARR_SYNC_PROCESS` and
 * ignored otherwise. Set it on every writing handle before writing; reads never lock.
 *
 * The locks are the array's, not the handle's: every handle on the array in this process
 * shares them, and lock files are named by a stable hash of the chunk's real location (the
 * canonical directory of the array joined with the chunk key), so handles opened through
 * differently rooted stores (directory `X/s` + array `a`, or `X` + `s/a`) or through links
 * exclude each other. Processes and MPI ranks agree when they see the store at the same
 * canonical path: on several nodes, mount the shared filesystem at the same path on every
 * node, and put `lock_dir` on a filesystem whose `flock` works across nodes. For a memory
 * store, handles on the same store handle share the locks.
 *
 * `ZARR_SYNC_VERSIONED` takes no locks (lock files do not exist on object stores): a chunk,
 * or a shard, that a write covers only in part is read with its version (the object's
 * ETag), merged, and written with a conditional PUT that succeeds only if nobody changed
 * it since; otherwise it is read, merged and written again (up to 64 attempts, with short
 * random pauses, then `ZARR_ERR_STORAGE_IO`). No update is lost between writers that all
 * use it, in any number of processes or nodes. Writes that cover a whole chunk or shard
 * replace it without a condition (the last writer wins, as under locks), and a partly
 * written chunk that becomes all fill value is stored rather than erased (a conditional
 * erase does not exist). Updates can still be lost to a writer that does not use it, or
 * when a resize erases chunks while others write them. Object stores (S3, GCS, Azure) and
 * memory stores support it; directory and zip stores refuse it with
 * `ZARR_ERR_UNSUPPORTED` (use `ZARR_SYNC_PROCESS` there).
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (an unknown `sync`), `ZARR_ERR_NULL_ARG` (no `lock_dir`
 * for `ZARR_SYNC_PROCESS`), `ZARR_ERR_STORAGE_IO` (`lock_dir` cannot be created),
 * `ZARR_ERR_UNSUPPORTED` (`ZARR_SYNC_VERSIONED` on a directory or zip store); and those of
 * storing buffered appends.
 *
 * Ownership: `lock_dir` is copied.
 *
 * Thread safety: any thread; set it before the handle's writes start (a write already
 * running keeps the setting it started with).
 */
ZARR_API
zarr_status_t zarr_array_set_synchronizer(const zarr_array_t *array,
                                          zarr_sync_t sync,
                                          const char *lock_dir);

/**
 * Turns the array's append lock on (`on` true, the default) or off for this handle.
 *
 * Appending and resizing take the array's append lock at the handle's first append or
 * resize and keep it until the handle is freed, so that a second appender (another
 * process, or another handle of this one) is refused with `ZARR_ERR_CONFLICT` naming the
 * holder, instead of both being told every step was stored while half of them are lost
 * (netCDF-4 refuses a second writer likewise). On directory stores the lock is the file
 * `.zarr-append.lock` in the array's directory, naming the holder's host and process; on
 * object stores the same object, created by a conditional PUT. Icechunk repositories need
 * none (their commits refuse a conflicting writer), and zip archives, written whole by one
 * handle, have none. A lock left by a process that no longer runs on the same host is
 * taken over, with a notice on standard error (set `ZARR_QUIET` to silence it); a lock of
 * another host names the file to remove once its process is known to be gone. Taking the lock reads the array's metadata
 * again, so an appender continues after the steps of the one before. Region writes
 * (`zarr_array_write`) never take it.
 *
 * Writers that coordinate by other means turn it off on every such handle before their
 * first append or resize (turning it off releases a lock this handle holds): MPI ranks
 * of which one resizes while the others write regions, or handles that resize in turn
 * under their own locking.
 *
 * Errors: only the usual ones (Conventions).
 *
 * Ownership: nothing is kept.
 *
 * Thread safety: any thread; set it before the handle's appends and resizes start.
 */
ZARR_API
zarr_status_t zarr_array_set_append_lock(const zarr_array_t *array,
                                         bool on);

/**
 * Changes the array's shape; chunks wholly outside the new shape are erased. The handle
 * takes the array's append lock (see `zarr_array_set_append_lock`).
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_INVALID_ARG` (a shape the metadata
 * refuses), `ZARR_ERR_READ_ONLY`, `ZARR_ERR_CONFLICT` (another handle or process holds the
 * append lock: the message names it).
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; other handles and processes see the new shape after
 * `zarr_array_refresh`. Writes to chunks that a shrinking resize erases, made meanwhile
 * through other handles, are lost.
 */
ZARR_API
zarr_status_t zarr_array_resize(const zarr_array_t *array,
                                size_t ndim,
                                const uint64_t *shape);

/**
 * Appends `buf` (shape `count[0..ndim]`, other arguments as for `zarr_array_write`) along
 * `axis`; every other extent of `count` must equal the array's. The array grows by
 * `count[axis]`.
 *
 * On a sharded array (one level of shards) without a synchronizer, with `mem_dtype` the
 * array's own type, appends are streamed: the handle keeps the shards of the growing
 * axis that are not yet complete as their encoded inner chunks (at most
 * `ZARR_APPEND_BUFFER_BYTES`) and stores each shard once, after an append completes it:
 * a thread of the handle's own stores the completed shards while the next appends encode
 * (so up to one more set of completed shards is held while it works). The stored shape
 * (what other handles and processes see) grows once completed shards are stored and no
 * shard stays open (seen by a later append), at `zarr_array_flush` and when the handle is
 * freed; reads and queries through this handle see every appended step (they store the
 * buffer first). A write, resize, refresh or synchronizer change through the handle
 * stores the buffer first (a write only when it meets the open shards). A process killed
 * between flushes loses only the steps appended since the last one. Otherwise each append
 * rewrites the shards it touches at once. A refused append changes nothing. When storing
 * completed shards fails, the next append that collects them (the latest, the next one
 * that completes shards) or the flush returns the error, and that append appends
 * nothing; the shards stay buffered and the next flush stores them again.
 *
 * One handle appends to an array at a time (other handles may read): the first append
 * takes the array's append lock, held until the handle is freed, and an append through
 * another handle or process meanwhile is refused (see `zarr_array_set_append_lock`). A
 * program that ends without freeing the handle still stores what it buffered (see
 * `zarr_array_free`).
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_INVALID_ARG` (`axis` not below the
 * rank, or another extent differs from the array's), `ZARR_ERR_DTYPE_MISMATCH` (`mem_dtype`
 * is not the array's type: `zarr_array_append_from` converts), `ZARR_ERR_BUFFER_SIZE`, `ZARR_ERR_OVERFLOW`, `ZARR_ERR_READ_ONLY`, `ZARR_ERR_CODEC`,
 * `ZARR_ERR_CONFLICT` (another handle or process holds the append lock: the message names
 * it; nothing is appended).
 *
 * Ownership: `buf` is only read during the call; a streaming handle keeps the step's
 * encoded chunks (at most `ZARR_APPEND_BUFFER_BYTES` in all) until it stores them.
 *
 * Thread safety: any thread; calls on one handle are serialised. One handle appends to an
 * array at a time.
 */
ZARR_API
zarr_status_t zarr_array_append(const zarr_array_t *array,
                                size_t axis,
                                size_t ndim,
                                const uint64_t *count,
                                zarr_dtype_t mem_dtype,
                                zarr_order_t order,
                                const void *buf,
                                size_t buf_bytes);

/**
 * Like `zarr_array_append`, but `buf` holds elements of the numeric type `mem_dtype`,
 * converted to the array's type as `zarr_array_write_from` converts them (a float64 model
 * field appended to a float32 series, say). All elements are converted before anything is
 * stored: when any does not fit the array's type, nothing is appended and the call
 * returns `ZARR_ERR_RANGE`. The converted step is appended as `zarr_array_append` appends
 * one of the array's own type (streamed on a sharded array).
 *
 * Errors: as `zarr_array_append`; `ZARR_ERR_RANGE` (nothing appended);
 * `ZARR_ERR_DTYPE_MISMATCH` (the array's or the buffer's type is not numeric).
 *
 * Ownership: as `zarr_array_append`.
 *
 * Thread safety: as `zarr_array_append`.
 */
ZARR_API
zarr_status_t zarr_array_append_from(const zarr_array_t *array,
                                     size_t axis,
                                     size_t ndim,
                                     const uint64_t *count,
                                     zarr_dtype_t mem_dtype,
                                     zarr_order_t order,
                                     const void *buf,
                                     size_t buf_bytes);

/**
 * Like `zarr_array_append`, with the strided buffer layout of `zarr_array_read_strided`:
 * element `i` of the step (extents `count`) is at element offset `Σ i[d] * mem_strides[d]`
 * of `buf`, so a step can be appended from the interior of a larger array, halos excluded.
 *
 * Errors: as `zarr_array_append`, and the stride errors of `zarr_array_read_strided`.
 *
 * Ownership: as `zarr_array_append`.
 *
 * Thread safety: as `zarr_array_append`.
 */
ZARR_API
zarr_status_t zarr_array_append_strided(const zarr_array_t *array,
                                        size_t axis,
                                        size_t ndim,
                                        const uint64_t *count,
                                        const int64_t *mem_strides,
                                        zarr_dtype_t mem_dtype,
                                        const void *buf,
                                        size_t buf_bytes);

/**
 * Finishes the handle's work and reports its errors, as closing a netCDF file does: it
 * waits for the handle's non-blocking requests (their errors stay with the requests),
 * then on a writable handle stores what appends buffered and flushes the store, as
 * `zarr_array_flush` does; a read-only handle has nothing to store. Unlike
 * `zarr_array_free`, which loses such an error, it returns it. The handle stays usable
 * (closing again finds nothing to store): free it with `zarr_array_free`.
 *
 * Errors: those of storing the buffered appends and syncing the store
 * (`ZARR_ERR_STORAGE_IO`, `ZARR_ERR_CODEC`); the appends that failed stay buffered.
 *
 * Ownership: the handle stays the caller's.
 *
 * Thread safety: any thread, once the handle's appends are done; serialised with them.
 */
ZARR_API zarr_status_t zarr_array_close(const zarr_array_t *array);

/**
 * Stores what appends buffered on this handle (the open shards, then the shape) and
 * flushes the store (`zarr_store_flush`): every step appended before it is then readable
 * through other handles and processes and survives this process being killed. A shard
 * left incomplete is stored whole again when a later append completes it, so flush
 * rarely (e.g. at checkpoints). `ZARR_ERR_READ_ONLY` on a read-only handle; nothing to
 * store is not an error. It first waits for the handle's non-blocking requests (their
 * errors stay with the requests: see `zarr_request_wait`).
 *
 * Errors: `ZARR_ERR_READ_ONLY` (a read-only handle), and those of storing the shards and
 * syncing the store (`ZARR_ERR_STORAGE_IO`, `ZARR_ERR_CODEC`).
 *
 * Ownership: the handle keeps its open shards in memory.
 *
 * Thread safety: any thread; serialised with the handle's appends.
 */
ZARR_API zarr_status_t zarr_array_flush(const zarr_array_t *array);

/**
 * Sets `*out_rank` to the number of dimensions.
 *
 * Errors: only the usual ones (Conventions).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API zarr_status_t zarr_array_rank(const zarr_array_t *array, size_t *out_rank);

/**
 * Copies the shape into `out_shape[0..ndim]` (`ndim` must be the rank).
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim` is not the rank).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API
zarr_status_t zarr_array_shape(const zarr_array_t *array,
                               size_t ndim,
                               uint64_t *out_shape);

/**
 * Copies the chunk shape into `out_chunks[0..ndim]` (`ndim` must be the rank); on a
 * rectilinear chunk grid, the largest edge of each dimension (`zarr_array_chunk_edges`
 * gives every edge).
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim` is not the rank).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API
zarr_status_t zarr_array_chunk_shape(const zarr_array_t *array,
                                     size_t ndim,
                                     uint64_t *out_chunks);

/**
 * Copies the shard shape into `out_shape[0..ndim]` (`ndim` must be the rank);
 * `ZARR_ERR_NOT_FOUND` when the array is not sharded. `zarr_array_chunk_shape` gives the
 * inner chunks.
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_NOT_FOUND` (not sharded).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API
zarr_status_t zarr_array_shard_shape(const zarr_array_t *array,
                                     size_t ndim,
                                     uint64_t *out_shape);

/**
 * Sets `*out_levels` to the number of nested sharding levels: 0 when the array is not
 * sharded, 1 for shards of chunks, 2 for shards of inner shards of chunks, and so on.
 *
 * Errors: only the usual ones (Conventions).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API zarr_status_t zarr_array_shard_levels(const zarr_array_t *array, size_t *out_levels);

/**
 * Copies the shard shape of sharding level `level` into `out_shape[0..ndim]` (`ndim` must
 * be the rank): level 0 is the stored shards (as `zarr_array_shard_shape`), level 1 the
 * inner shards inside them, and so on; `ZARR_ERR_NOT_FOUND` when `level` is not below
 * `zarr_array_shard_levels`.
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_NOT_FOUND` (no such level).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API
zarr_status_t zarr_array_shard_level_shape(const zarr_array_t *array,
                                           size_t level,
                                           size_t ndim,
                                           uint64_t *out_shape);

/**
 * Sets `*out_dtype` to the memory element type reads and writes use (`ZARR_DTYPE_INT64`
 * for datetime64 and timedelta64; `zarr_array_dtype_name` tells the stored type).
 *
 * Errors: only the usual ones (Conventions).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API zarr_status_t zarr_array_dtype(const zarr_array_t *array, zarr_dtype_t *out_dtype);

/**
 * Copies the stored type as v2 metadata writes it (`"<f8"`, `"|u1"`, `">M8[ns]"`, `"|S4"`,
 * `"|O"` for variable-length items, the JSON field list of a structured type) into `buf`
 * (string output convention: `*needed` gets the size with NUL; too small gives
 * `ZARR_ERR_BUFFER_SIZE`).
 *
 * Errors: `ZARR_ERR_BUFFER_SIZE` (string output convention).
 *
 * Ownership: the text is copied into the caller's `buf` (string output convention).
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API
zarr_status_t zarr_array_dtype_name(const zarr_array_t *array,
                                    char *buf,
                                    size_t len,
                                    size_t *needed);

/**
 * Sets `*out_size` to the size of one element in bytes.
 *
 * Errors: only the usual ones (Conventions).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API zarr_status_t zarr_array_item_size(const zarr_array_t *array, size_t *out_size);

/**
 * Copies the fill value (one element, native byte order) into `buf`, whose `len` must be
 * the element size, and sets `*out_is_null` to whether the metadata says `null` (then
 * `buf` gets zeros, which is what missing chunks read as). Variable-length arrays give
 * `ZARR_ERR_DTYPE_MISMATCH`: their fill value is an item, given by
 * `zarr_array_fill_value_json`.
 *
 * Errors: `ZARR_ERR_DTYPE_MISMATCH` (a variable-length array), `ZARR_ERR_BUFFER_SIZE`
 * (`len` is not the element size).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API
zarr_status_t zarr_array_fill_value(const zarr_array_t *array,
                                    void *buf,
                                    size_t len,
                                    bool *out_is_null);

/**
 * Makes `value` the array's CF missing value: its fill value (which unwritten chunks read
 * as) and the `_FillValue` attribute beside it, in one document in Zarr v3, in Zarr v2 in
 * `.zarray` then `.zattrs` (see `zarr_array_builder_set_missing_value` for the
 * encodings). Format 1 and the 2022 draft keep it in the fill value alone (a `_FillValue`
 * attribute there is removed).
 *
 * A float type takes the nearest value it holds, with a notice on standard error when
 * that is not `value` exactly (as `zarr_array_builder_set_missing_value`).
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (a value the type cannot hold: beyond a float type's
 * range, or for integers out of range, a fraction or NaN; or an array without numbers:
 * nothing is written), `ZARR_ERR_READ_ONLY`.
 *
 * Ownership: nothing is kept.
 *
 * Thread safety: any thread; updates through one handle are serialised, while of updates
 * made at once through several handles or processes the last one wins.
 */
ZARR_API zarr_status_t zarr_array_set_missing_value(const zarr_array_t *array, double value);

/**
 * Sets `*out_is_set` to whether the array has a CF missing value and `*out_value` to it
 * (false and 0 when none, and after a failure), whichever way the store holds it: a `_FillValue` attribute (xarray's
 * base64 form, a number, or "NaN"), as xarray, NCZarr and libzarr write it, or outside
 * v3 (where it comes first) a `fill_value` that is not null (which xarray and NCZarr read as the
 * missing value).
 *
 * Errors: `ZARR_ERR_METADATA` (a `_FillValue` attribute that is no value of the type),
 * `ZARR_ERR_DTYPE_MISMATCH` (a 64-bit integer missing value a double cannot hold exactly).
 *
 * Ownership: nothing is kept; the results go to the caller's outputs.
 *
 * Thread safety: any thread; it reads the store (the attributes).
 */
ZARR_API
zarr_status_t zarr_array_missing_value(const zarr_array_t *array,
                                       bool *out_is_set,
                                       double *out_value);

/**
 * Copies the fill value as the array's metadata writes it ("NaN", "0", "null",
 * "[1.0,2.0]"; in Zarr v3 a NaN with a payload as hex bits, "0x7fc00001", and a record
 * as an object of field values) into `buf` (string output convention).
 *
 * Errors: `ZARR_ERR_BUFFER_SIZE` (string output convention); `ZARR_ERR_NO_MEMORY` when
 * the text of a large item (base64 of hundreds of MiB) cannot be allocated.
 *
 * Ownership: the text is copied into the caller's `buf` (string output convention).
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API
zarr_status_t zarr_array_fill_value_json(const zarr_array_t *array,
                                         char *buf,
                                         size_t len,
                                         size_t *needed);

/**
 * Sets `*out_order` to the element order inside chunks: `ZARR_ORDER_F` for a v3 transpose
 * that reverses the dimensions, `ZARR_ORDER_C` otherwise (also for other permutations,
 * which reads and writes handle like any order).
 *
 * Errors: only the usual ones (Conventions).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API zarr_status_t zarr_array_order(const zarr_array_t *array, zarr_order_t *out_order);

/**
 * Copies into `out_permutation[0..ndim]` (`ndim` must be the rank) the order of the
 * dimensions inside decoded chunks, over every `transpose` of the codec chain: chunk
 * dimension `k` is array dimension `out_permutation[k]` (`0, 1, …` for C order, reversed
 * for F order, any permutation in Zarr v3).
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim` is not the rank).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API
zarr_status_t zarr_array_chunk_permutation(const zarr_array_t *array,
                                           size_t ndim,
                                           size_t *out_permutation);

/**
 * Sets `*out_version` to the array's Zarr format: 1, 2, 3, `ZARR_FORMAT_V3_DRAFT` or
 * `ZARR_FORMAT_V3_DRAFT_ZARR_PYTHON` (the 2022 draft layout, detected on open).
 *
 * Errors: only the usual ones (Conventions).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API zarr_status_t zarr_array_zarr_format(const zarr_array_t *array, int32_t *out_version);

/**
 * Sets `*out_nbytes` to the size of all elements in bytes.
 *
 * Errors: only the usual ones (Conventions).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API zarr_status_t zarr_array_nbytes(const zarr_array_t *array, uint64_t *out_nbytes);

/**
 * Sets `*out_nbytes` to the bytes stored for the array: metadata, attributes and chunks.
 *
 * Errors: only the usual ones (Conventions); it lists the store.
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; the store is listed as it
 * is then.
 */
ZARR_API zarr_status_t zarr_array_nbytes_stored(const zarr_array_t *array, uint64_t *out_nbytes);

/**
 * Sets `*out_count` to the number of chunks in the grid.
 *
 * Errors: only the usual ones (Conventions).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API zarr_status_t zarr_array_nchunks(const zarr_array_t *array, uint64_t *out_count);

/**
 * Lists the chunks of the grid that the region `start`/`count` touches — the shards, when
 * the array is sharded: the units stored and rewritten whole, so writers (threads,
 * processes, MPI ranks) that never share one need no synchronizer. `*out_count` gets how
 * many there are; their indices, `ndim` numbers each, in C order of the grid, are copied to
 * `out_indices` when `capacity` (in chunks) holds them all, else `ZARR_ERR_BUFFER_SIZE`
 * (pass NULL and 0 to ask for the count). `zarr_array_chunk_region` gives each one's
 * elements.
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_OUT_OF_BOUNDS` (the region leaves
 * the array), `ZARR_ERR_BUFFER_SIZE` (`capacity` too small; `*out_count` is set).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API
zarr_status_t zarr_array_region_chunks(const zarr_array_t *array,
                                       size_t ndim,
                                       const uint64_t *start,
                                       const uint64_t *count,
                                       uint64_t *out_indices,
                                       size_t capacity,
                                       size_t *out_count);

/**
 * Copies the region of the grid's chunk at `index` (`ndim` numbers; a shard when the array
 * is sharded) to `out_start` and `out_count`: its first element and extent per dimension,
 * clipped to the array's shape. `ZARR_ERR_OUT_OF_BOUNDS` when `index` is outside the grid.
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_OUT_OF_BOUNDS` (`index` outside the
 * grid).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API
zarr_status_t zarr_array_chunk_region(const zarr_array_t *array,
                                      size_t ndim,
                                      const uint64_t *index,
                                      uint64_t *out_start,
                                      uint64_t *out_count);

/**
 * Sets `*out_kind` to the layout of the chunk grid: `ZARR_CHUNK_GRID_REGULAR` or
 * `ZARR_CHUNK_GRID_RECTILINEAR`.
 *
 * Errors: only the usual ones (Conventions).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API
zarr_status_t zarr_array_chunk_grid_kind(const zarr_array_t *array,
                                         zarr_chunk_grid_t *out_kind);

/**
 * Copies into `out_grid[0..ndim]` (`ndim` must be the rank) the number of chunks (shards
 * when sharded) along each dimension that hold elements of the array.
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim` is not the rank).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API
zarr_status_t zarr_array_chunk_grid_shape(const zarr_array_t *array,
                                          size_t ndim,
                                          uint64_t *out_grid);

/**
 * Lists the edge lengths of the chunks (shards when sharded) along dimension `dim` that
 * hold elements of the array, first to last: `*out_count` gets how many there are; they
 * are copied to `out_edges` when `capacity` holds them all, else `ZARR_ERR_BUFFER_SIZE`
 * (pass NULL and 0 to ask for the count). A regular grid's edges are all the chunk
 * shape's; the last edge may reach past the array's extent.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (`dim` not below the rank), `ZARR_ERR_BUFFER_SIZE`
 * (`capacity` too small; `*out_count` is set).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API
zarr_status_t zarr_array_chunk_edges(const zarr_array_t *array,
                                     size_t dim,
                                     uint64_t *out_edges,
                                     size_t capacity,
                                     size_t *out_count);

/**
 * Copies into `out_chunk[0..ndim]` the index of the grid's chunk (shard when sharded)
 * holding the element at `index` (`ndim` numbers, inside the array's shape).
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_OUT_OF_BOUNDS` (`index` outside the
 * array).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API
zarr_status_t zarr_array_chunk_of(const zarr_array_t *array,
                                  size_t ndim,
                                  const uint64_t *index,
                                  uint64_t *out_chunk);

/**
 * Reads the array's metadata again from the store, so this handle sees the shape (and
 * the rest) that another handle or process changed since it was opened — after another
 * MPI rank resized or appended, say (each rank calls it after the barrier that follows
 * the resize). Decoded chunks the handle keeps (`zarr_array_set_cache_bytes`) are dropped.
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (the array was deleted), `ZARR_ERR_METADATA`; and those of
 * storing buffered appends.
 *
 * Ownership: nothing changes hands.
 *
 * Thread safety: any thread; calls running meanwhile on the handle use the old or the new
 * metadata.
 */
ZARR_API zarr_status_t zarr_array_refresh(const zarr_array_t *array);

/**
 * Keeps up to `bytes` of decoded chunks on this handle for later reads (0, the default,
 * keeps none and frees what is kept): a read takes the chunks it finds there instead of
 * reading and decoding them, least recently used chunks make room first. For viewers and
 * analysis loops that read overlapping regions again and again. The handle stays safe to
 * use from many threads. Any write through any handle or store of this process makes every
 * kept chunk stale, so reads never see older data than this process wrote; changes made by
 * other processes are seen after `zarr_array_refresh` (which empties the cache).
 * Variable-length arrays are not cached. Memory: at most `bytes`, plus one chunk per
 * reading thread.
 *
 * Errors: `ZARR_ERR_NULL_ARG` for a NULL handle.
 *
 * Ownership: the kept chunks belong to the handle and are freed with it (or by a size of 0).
 *
 * Thread safety: any thread, at the same time as reads and writes through the handle.
 */
ZARR_API zarr_status_t zarr_array_set_cache_bytes(const zarr_array_t *array, size_t bytes);

/**
 * Sets `*out_count` to the number of chunks that are stored.
 *
 * Errors: only the usual ones (Conventions); it lists the store.
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; the store is listed as it
 * is then.
 */
ZARR_API
zarr_status_t zarr_array_nchunks_initialized(const zarr_array_t *array,
                                             uint64_t *out_count);

/**
 * Copies the array's metadata document, as its format has it (`.zarray`, v1 `meta` or
 * v3 `zarr.json`), into `buf`.
 *
 * Errors: `ZARR_ERR_BUFFER_SIZE` (string output convention).
 *
 * Ownership: the text is copied into the caller's `buf` (string output convention).
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API
zarr_status_t zarr_array_metadata_json(const zarr_array_t *array,
                                       char *buf,
                                       size_t len,
                                       size_t *needed);

/**
 * Copies the attributes (a JSON object, `{}` when there are none) into `buf`.
 *
 * Errors: `ZARR_ERR_BUFFER_SIZE` (string output convention), `ZARR_ERR_METADATA`.
 *
 * Ownership: the text is copied into the caller's `buf` (string output convention).
 *
 * Thread safety: any thread; it reads the store.
 */
ZARR_API
zarr_status_t zarr_array_attrs_get(const zarr_array_t *array,
                                   char *buf,
                                   size_t len,
                                   size_t *needed);

/**
 * Replaces all attributes with the JSON object `json`.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (not a JSON object), `ZARR_ERR_READ_ONLY` (a read-only
 * handle or store).
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; updates through one handle are serialised, while of updates
 * made at once through several handles or processes the last one wins.
 */
ZARR_API zarr_status_t zarr_array_attrs_set(const zarr_array_t *array, const char *json);

/**
 * Copies the JSON value of attribute `key` into `buf`; `ZARR_ERR_NOT_FOUND` if absent.
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (no such attribute), `ZARR_ERR_BUFFER_SIZE` (string output
 * convention), `ZARR_ERR_METADATA`.
 *
 * Ownership: the text is copied into the caller's `buf` (string output convention).
 *
 * Thread safety: any thread; it reads the store.
 */
ZARR_API
zarr_status_t zarr_array_attr_get(const zarr_array_t *array,
                                  const char *key,
                                  char *buf,
                                  size_t len,
                                  size_t *needed);

/**
 * Sets attribute `key` to the JSON value `json`, keeping the others.
 *
 * Errors: `ZARR_ERR_READ_ONLY` (a read-only handle or store), `ZARR_ERR_INVALID_ARG` (a
 * `_FillValue` that is no missing value of the array's numeric type: text that encodes no
 * number, a fraction or a value out of range for integers; nothing is written).
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; updates through one handle are serialised, while of updates
 * made at once through several handles or processes the last one wins.
 */
ZARR_API
zarr_status_t zarr_array_attr_set(const zarr_array_t *array,
                                  const char *key,
                                  const char *json);

/**
 * Deletes attribute `key`; `ZARR_ERR_NOT_FOUND` if absent.
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (no such attribute), `ZARR_ERR_READ_ONLY`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; updates through one handle are serialised, while of updates
 * made at once through several handles or processes the last one wins.
 */
ZARR_API zarr_status_t zarr_array_attr_delete(const zarr_array_t *array, const char *key);

/**
 * Reports what attribute `key` holds (`*out_kind`, a `zarr_attr_kind` value) and,
 * when `out_count` is not NULL, its number of items (1 for a scalar, the length of a list).
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (no such attribute), `ZARR_ERR_METADATA`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; it reads the store.
 */
ZARR_API
zarr_status_t zarr_array_attr_kind(const zarr_array_t *array,
                                   const char *key,
                                   zarr_attr_kind_t *out_kind,
                                   size_t *out_count);

/**
 * Sets attribute `key` to the UTF-8 string `value` (any text: the library escapes
 * it), keeping the others.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (`key` or `value` not UTF-8; U+F8FF followed by `NaN`,
 * `Infinity` or `-Infinity`, the library's mark of a non-finite float), `ZARR_ERR_READ_ONLY`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: as `zarr_array_attr_set`.
 */
ZARR_API
zarr_status_t zarr_array_attr_set_string(const zarr_array_t *array,
                                         const char *key,
                                         const char *value);

/**
 * Copies the string attribute `key` holds into `buf` (string output convention).
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (no such attribute), `ZARR_ERR_DTYPE_MISMATCH` (it is not
 * a string; the message names it and says what it is), `ZARR_ERR_BUFFER_SIZE`.
 *
 * Ownership: the text is copied into the caller's `buf` (string output convention).
 *
 * Thread safety: any thread; it reads the store.
 */
ZARR_API
zarr_status_t zarr_array_attr_get_string(const zarr_array_t *array,
                                         const char *key,
                                         char *buf,
                                         size_t len,
                                         size_t *needed);

/**
 * Sets attribute `key` to the list of the `n` UTF-8 strings at `values`. netCDF-C
 * (4.9) cannot open a v2 store holding a list of strings as an attribute: join such lists
 * into one string (CF's `flag_meanings` is blank-separated) for stores netCDF reads.
 *
 * Errors: `ZARR_ERR_NULL_ARG` (`values` or one of its strings NULL), `ZARR_ERR_INVALID_ARG`
 * (a string not UTF-8, named by index), `ZARR_ERR_READ_ONLY`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: as `zarr_array_attr_set`.
 */
ZARR_API
zarr_status_t zarr_array_attr_set_strings(const zarr_array_t *array,
                                          const char *key,
                                          const char *const *values,
                                          size_t n);

/**
 * Gives the list of strings attribute `key` holds.
 *
 * Errors: `ZARR_ERR_NOT_FOUND`, `ZARR_ERR_DTYPE_MISMATCH` (not a list of strings; the
 * message names the attribute, or the item, at fault).
 *
 * Ownership: the caller frees `*out_list` with `zarr_strings_free`; it is NULL after a
 * failure.
 *
 * Thread safety: any thread; it reads the store.
 */
ZARR_API
zarr_status_t zarr_array_attr_get_strings(const zarr_array_t *array,
                                          const char *key,
                                          zarr_strings_t **out_list);

/**
 * Sets attribute `key` to the number at `value`, of type `dtype`:
 * `ZARR_DTYPE_INT32`, `ZARR_DTYPE_INT64`, `ZARR_DTYPE_FLOAT32` or `ZARR_DTYPE_FLOAT64`.
 * A float32 is written as the shortest decimal that reads back as the same float32
 * (0.1f as `0.1`): readers that see JSON get the value meant, as a double, and
 * `zarr_array_attr_get_number` with `ZARR_DTYPE_FLOAT32` gives the float exactly. No type is
 * recorded beside the value. NaN and infinities are written as the bare tokens `NaN`,
 * `Infinity` and `-Infinity`, as Python's `json` (and so zarr-python) writes them; readers
 * that hold to strict JSON (tensorstore, for one) then refuse the whole document, as they
 * refuse zarr-python's.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (another `dtype`), `ZARR_ERR_READ_ONLY`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: as `zarr_array_attr_set`.
 */
ZARR_API
zarr_status_t zarr_array_attr_set_number(const zarr_array_t *array,
                                         const char *key,
                                         zarr_dtype_t dtype,
                                         const void *value);

/**
 * Stores the number attribute `key` holds at `value`, as `dtype` (the types of
 * `zarr_array_attr_set_number`). Any number reads as a float type; only integers read as an
 * integer type.
 *
 * Errors: `ZARR_ERR_NOT_FOUND`, `ZARR_ERR_DTYPE_MISMATCH` (not a number, or a float read
 * as an integer; the message names the attribute), `ZARR_ERR_RANGE` (it does not fit in
 * `dtype`), `ZARR_ERR_INVALID_ARG` (another `dtype`).
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; it reads the store.
 */
ZARR_API
zarr_status_t zarr_array_attr_get_number(const zarr_array_t *array,
                                         const char *key,
                                         zarr_dtype_t dtype,
                                         void *value);

/**
 * Sets attribute `key` to the list of the `n` numbers of type `dtype` at `values`
 * (the types and float32 rule of `zarr_array_attr_set_number`).
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (another `dtype`), `ZARR_ERR_OVERFLOW` (`n` values exceed the address space), `ZARR_ERR_READ_ONLY`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: as `zarr_array_attr_set`.
 */
ZARR_API
zarr_status_t zarr_array_attr_set_numbers(const zarr_array_t *array,
                                          const char *key,
                                          zarr_dtype_t dtype,
                                          const void *values,
                                          size_t n);

/**
 * Stores the list of numbers attribute `key` holds in `values` (room for `len` of
 * type `dtype`, the types of `zarr_array_attr_get_number`); `*out_count` gets the list's
 * length, also when it exceeds `len` (then `ZARR_ERR_BUFFER_SIZE`; pass `len` 0 to ask).
 *
 * Errors: `ZARR_ERR_NOT_FOUND`, `ZARR_ERR_DTYPE_MISMATCH` (not a list of numbers, or a
 * float read as an integer; the message names the item), `ZARR_ERR_RANGE`,
 * `ZARR_ERR_BUFFER_SIZE`, `ZARR_ERR_OVERFLOW` (`len` values exceed the address space).
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; it reads the store.
 */
ZARR_API
zarr_status_t zarr_array_attr_get_numbers(const zarr_array_t *array,
                                          const char *key,
                                          zarr_dtype_t dtype,
                                          void *values,
                                          size_t len,
                                          size_t *out_count);

/**
 * Sets the dimension names: `ndim` UTF-8 strings, one per dimension, NULL for an unnamed
 * dimension (an empty string is a name: ""). v3 arrays keep them in the `dimension_names`
 * of their metadata (null for unnamed), v2 arrays in the `_ARRAY_DIMENSIONS` attribute
 * (xarray's convention), where every dimension needs a name: a NULL gives
 * `ZARR_ERR_INVALID_ARG` there.
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_INVALID_ARG` (a NULL name in v2),
 * `ZARR_ERR_READ_ONLY`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; updates through one handle are serialised, while of updates
 * made at once through several handles or processes the last one wins.
 */
ZARR_API
zarr_status_t zarr_array_set_dimension_names(const zarr_array_t *array,
                                             size_t ndim,
                                             const char *const *names);

/**
 * Gets the dimension names into a new string list, in which an unnamed dimension (v3
 * null) is a NULL item (`zarr_strings_get` gives NULL) and a name that is the empty string
 * is ""; `ZARR_ERR_NOT_FOUND` when the array has none, `ZARR_ERR_METADATA` when
 * `_ARRAY_DIMENSIONS` is not a list of rank strings. A v2 array without
 * `_ARRAY_DIMENSIONS` that netCDF-C wrote (NCZarr) has the names of its `_nczarr_array`
 * dimension paths (`/grid/lat` is `lat`).
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (no names), `ZARR_ERR_METADATA`.
 *
 * Ownership: `*out_names` is a new list: free it with `zarr_strings_free`.
 *
 * Thread safety: any thread; it reads the store.
 */
ZARR_API
zarr_status_t zarr_array_dimension_names(const zarr_array_t *array,
                                         zarr_strings_t **out_names);

/**
 * Starts settings for an array of `ndim` dimensions with extents `shape` and element type
 * `dtype`, stored in this machine's byte order. The Zarr format is that of the group the
 * array is created in (Zarr v3 at the top of a store) unless
 * `zarr_array_builder_set_zarr_format` chooses. Other defaults: chunks guessed from the
 * shape, C order, no attributes, the fill value xarray writes (v2: NaN for floats, ""
 * for strings, null for other types, so no real value is masked; v3: 0, or "" for
 * strings); v3: chunk keys "c/0/1"; v2: "." separator; both: blosc zstd level 1 with
 * byte shuffle in 1 MiB blocks (`{"id": "blosc", "cname": "zstd", "clevel": 1, "shuffle":
 * 1, "blocksize": 1048576}`), which zarr-python 2 and 3 and tensorstore read. A v2
 * scalar gets the empty `_ARRAY_DIMENSIONS` list xarray needs.
 * `ZARR_DTYPE_RAW` starts as `|V1`: give the real type with
 * `zarr_array_builder_set_dtype_name`.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (an unknown `dtype`); the shape is checked by
 * `zarr_array_create`.
 *
 * Ownership: `shape` is copied; `*out_builder` is new: free it with
 * `zarr_array_builder_free`.
 *
 * Thread safety: any thread: calls on one builder are serialised (usually one thread fills
 * it in).
 */
ZARR_API
zarr_status_t zarr_array_builder_new(zarr_dtype_t dtype,
                                     size_t ndim,
                                     const uint64_t *shape,
                                     zarr_array_builder_t **out_builder);

/**
 * Frees a builder (NULL is ignored).
 *
 * Errors: none: it returns a value, never a status.
 *
 * Ownership: takes the builder (NULL is ignored); arrays created from it do not need it.
 *
 * Thread safety: any thread, once no other call is using the handle.
 */
ZARR_API void zarr_array_builder_free(zarr_array_builder_t *builder);

/**
 * Sets the stored type by name: numpy strings with byte order (`">f8"`, `"<M8[ns]"`,
 * `"<m8[s]"`, `"|S8"`, `">U4"`, `"|V16"`), Zarr v3 names ("float32", "bfloat16",
 * "float8_e4m3fn", "int4", "r16", "string", "bytes"; native order), a Zarr v3 `data_type`
 * object (`{"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor":
 * 10}}`, `{"name": "struct", "configuration": {"fields": [{"name": "x", "data_type":
 * "float32"}]}}`; native order), a structured type as its JSON field list
 * (`[["x", "<f4"], ["tag", "|S2", [3]]]`), or an object codec configuration
 * (`{"id": "vlen-array", "dtype": "<i4"}`). A numpy string without its byte order (`"f8"`)
 * is in this machine's order, as numpy reads it. In Zarr v3 every multi-byte field of a record
 * has the one byte order of its `bytes` codec: creating a v3 array of a record mixing
 * orders gives `ZARR_ERR_UNSUPPORTED`, as does a sub-array field.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (a name libzarr does not know).
 *
 * Ownership: nothing is kept: the builder copies what it is given.
 *
 * Thread safety: any thread: calls on one builder are serialised (usually one thread fills
 * it in).
 */
ZARR_API
zarr_status_t zarr_array_builder_set_dtype_name(zarr_array_builder_t *builder,
                                                const char *name);

/**
 * Sets the chunk shape (`ndim` must be the array's rank; every extent ≥ 1).
 *
 * Errors: only the usual ones (Conventions); the setting is checked by
 * `zarr_array_create`.
 *
 * Ownership: nothing is kept: the builder copies what it is given.
 *
 * Thread safety: any thread: calls on one builder are serialised (usually one thread fills
 * it in).
 */
ZARR_API
zarr_status_t zarr_array_builder_set_chunk_shape(zarr_array_builder_t *builder,
                                                 size_t ndim,
                                                 const uint64_t *chunks);

/**
 * Gives dimension `dim` the `n` chunk edge lengths at `edges` (each ≥ 1, summing to at
 * least the extent), making the array's chunk grid rectilinear (Zarr format 3 only; Zarr v3's
 * `rectilinear` chunk grid extension). Dimensions given no edges keep the chunk shape's
 * length (or the guessed one). When sharded the edges are the shards' and each must be a
 * multiple of the inner chunk shape (inner chunks stay regular).
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (`dim` not below the rank, no edges, an edge of 0, a sum
 * past 64 bits, more than 2^24 edges); the rest is checked by `zarr_array_create`.
 *
 * Ownership: nothing is kept: the builder copies what it is given.
 *
 * Thread safety: any thread: calls on one builder are serialised (usually one thread fills
 * it in).
 */
ZARR_API
zarr_status_t zarr_array_builder_set_chunk_edges(zarr_array_builder_t *builder,
                                                 size_t dim,
                                                 const uint64_t *edges,
                                                 size_t n);

/**
 * Sets the fill value from one element of type `dtype` (which must be the array's memory
 * type) of `len` bytes at `value`.
 *
 * Errors: only the usual ones (Conventions); the setting is checked by
 * `zarr_array_create`.
 *
 * Ownership: nothing is kept: the builder copies what it is given.
 *
 * Thread safety: any thread: calls on one builder are serialised (usually one thread fills
 * it in).
 */
ZARR_API
zarr_status_t zarr_array_builder_set_fill_value(zarr_array_builder_t *builder,
                                                zarr_dtype_t dtype,
                                                const void *value,
                                                size_t len);

/**
 * Sets the fill value as metadata JSON: "0", "\"NaN\"", "null", "[1.0, 0.0]", a float's
 * bits as hex ("\"0x7fc00001\"", the only way to give a NaN with a payload: Zarr v3
 * writes it so, other formats refuse it with `ZARR_ERR_INVALID_ARG`), "\"NaT\"", an
 * object of field values for a record (`{"x": 1.5, "tag": "YWI="}`) or base64 of its bytes.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (not JSON); the value is checked by `zarr_array_create`.
 *
 * Ownership: nothing is kept: the builder copies what it is given.
 *
 * Thread safety: any thread: calls on one builder are serialised (usually one thread fills
 * it in).
 */
ZARR_API
zarr_status_t zarr_array_builder_set_fill_value_json(zarr_array_builder_t *builder,
                                                     const char *json);

/**
 * Makes `value` the array's CF missing value (`_FillValue`), written so that xarray,
 * netCDF-C (NCZarr) and CF readers mask it: Zarr v2 keeps it in `fill_value` (for xarray)
 * and in a `_FillValue` attribute as NCZarr reads it (a number, or "NaN", "Infinity",
 * "-Infinity", its type recorded in `_NCZARR_ATTR`: `{"types": {"_FillValue": "<f4"}}`);
 * Zarr v3 in `fill_value` and in xarray's `_FillValue` attribute beside it (a float as
 * base64 of its little-endian double bytes, an integer as a number). It replaces any fill value set
 * before (and a later fill value replaces it). A double holds every missing value of a
 * type up to 32 bits and 64-bit integers up to 2^53 in magnitude.
 *
 * A float16 or float32 array takes the nearest value of its type, as netCDF stores a
 * double `_FillValue` given for a float variable (1e20 is stored as the float32
 * 1.0000000200408773e20), and says so in a notice on standard error (silenced by
 * `ZARR_QUIET`) when that is not `value` exactly; `zarr_array_missing_value` then gives
 * the value stored.
 *
 * Errors: only the usual ones (Conventions); `zarr_array_create` refuses with
 * `ZARR_ERR_INVALID_ARG`, naming the array, a value the type cannot hold (a finite value
 * beyond a float type's range; for integers a value out of range, a fraction or NaN) or
 * an array without numbers (strings, booleans, records, dates), and creates nothing.
 *
 * Ownership: nothing is kept: the builder copies what it is given.
 *
 * Thread safety: any thread: calls on one builder are serialised (usually one thread fills
 * it in).
 */
ZARR_API
zarr_status_t zarr_array_builder_set_missing_value(zarr_array_builder_t *builder,
                                                   double value);

/**
 * Sets the element order inside chunks (`ZARR_ORDER_C` or `ZARR_ORDER_F`).
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (an unknown `order`).
 *
 * Ownership: nothing is kept: the builder copies what it is given.
 *
 * Thread safety: any thread: calls on one builder are serialised (usually one thread fills
 * it in).
 */
ZARR_API
zarr_status_t zarr_array_builder_set_order(zarr_array_builder_t *builder,
                                           zarr_order_t order);

/**
 * Sets any order of the dimensions inside chunks, as a Zarr v3 `transpose` codec does:
 * chunk dimension `k` is array dimension `permutation[k]` (`ndim` entries, a permutation
 * of 0 to rank - 1; what `zarr_array_chunk_permutation` gives back). It replaces the order
 * `zarr_array_builder_set_order` set, and a later `zarr_array_builder_set_order` replaces
 * it. A list that is not a permutation gives `ZARR_ERR_INVALID_ARG` at creation; v1 and v2
 * arrays hold only C and F order, so other permutations give `ZARR_ERR_UNSUPPORTED` there.
 *
 * Errors: only the usual ones (Conventions); the setting is checked by
 * `zarr_array_create`.
 *
 * Ownership: nothing is kept: the builder copies what it is given.
 *
 * Thread safety: any thread: calls on one builder are serialised (usually one thread fills
 * it in).
 */
ZARR_API
zarr_status_t zarr_array_builder_set_chunk_permutation(zarr_array_builder_t *builder,
                                                       size_t ndim,
                                                       const size_t *permutation);

/**
 * Sets the chunk key separator: "." (flat keys "0.1") or "/" (nested keys "0/1"). With "."
 * a chunk key is one file name in a directory store, which past about a hundred dimensions
 * outgrows the filesystem's name limit (255 bytes on most): use "/" there.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (not "." or "/").
 *
 * Ownership: nothing is kept: the builder copies what it is given.
 *
 * Thread safety: any thread: calls on one builder are serialised (usually one thread fills
 * it in).
 */
ZARR_API
zarr_status_t zarr_array_builder_set_dimension_separator(zarr_array_builder_t *builder,
                                                         const char *separator);

/**
 * Gives a Zarr v3 array the chunk key encoding `name`: "default" (keys "c/0/1", or "c.0.1"
 * with the separator ".") or "v2" (keys "0.1", or "0/1" with the separator "/", as v2
 * arrays name chunks). `separator` is "." or "/", or NULL for the encoding's own default
 * ("/" for "default", "." for "v2"). Arrays of other formats keep their own keys: "v2"
 * for them gives `ZARR_ERR_INVALID_ARG` at creation.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (an unknown `name` or `separator`).
 *
 * Ownership: nothing is kept: the builder copies what it is given.
 *
 * Thread safety: any thread: calls on one builder are serialised (usually one thread fills
 * it in).
 */
ZARR_API
zarr_status_t zarr_array_builder_set_chunk_key_encoding(zarr_array_builder_t *builder,
                                                        const char *name,
                                                        const char *separator);

/**
 * Sets where the index of every shard lies, at its start (`index_at_start`) or at its end
 * (zarr-python's default), and whether a `crc32c` checksum follows it (`checksum`, the
 * default; without it the index codecs are `bytes` alone). Applies to every level of a
 * nested sharding; only sharded arrays use it.
 *
 * Errors: only the usual ones (Conventions).
 *
 * Ownership: nothing is kept: the builder copies what it is given.
 *
 * Thread safety: any thread: calls on one builder are serialised (usually one thread fills
 * it in).
 */
ZARR_API
zarr_status_t zarr_array_builder_set_shard_index(zarr_array_builder_t *builder,
                                                 bool index_at_start,
                                                 bool checksum);

/**
 * Sets the compressor as numcodecs JSON (`{"id": "zstd", "level": 3}`), or "null" for
 * none, or a JSON list of them: Zarr v3's bytes-to-bytes codecs in the order they encode
 * (`[{"id": "zstd", "level": 3}, {"id": "crc32c"}]`; `crc32c` is Zarr v3's checksum
 * codec). A v2 array holds one: a list of several gives `ZARR_ERR_INVALID_ARG` at creation.
 * Each may also be in Zarr v3's form (`{"name": "zstd", "configuration": {"level": 3}}`,
 * `{"name": "blosc", "configuration": {"cname": "lz4", "shuffle": "bitshuffle"}}`), whatever
 * the format.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (not JSON); the codecs are checked by `zarr_array_create`
 * (`ZARR_ERR_CODEC_UNSUPPORTED` for one this build lacks).
 *
 * Ownership: nothing is kept: the builder copies what it is given.
 *
 * Thread safety: any thread: calls on one builder are serialised (usually one thread fills
 * it in).
 */
ZARR_API
zarr_status_t zarr_array_builder_set_compressor_json(zarr_array_builder_t *builder,
                                                     const char *json);

/**
 * Sets the filter list as JSON: numcodecs configurations applied in order before the
 * compressor (`[{"id": "delta", "dtype": "<i4"}, {"id": "crc32"}]`), "null" or "[]" for
 * none. Entries may also be Zarr v3 array codecs: those registered in zarr-extensions
 * (`{"name": "scale_offset", "configuration": {"offset": 5, "scale": 10}}`, `cast_value`,
 * `bitround`, `reshape`), which only Zarr v3 metadata holds, and `numcodecs.<id>` names
 * for numcodecs' filters. Each filter is checked against the type it receives when the
 * array is created.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (not JSON); the filters are checked by
 * `zarr_array_create` (`ZARR_ERR_INVALID_ARG` for a bad configuration,
 * `ZARR_ERR_UNSUPPORTED` for a registered codec in a format other than 3).
 *
 * Ownership: nothing is kept: the builder copies what it is given.
 *
 * Thread safety: any thread: calls on one builder are serialised (usually one thread fills
 * it in).
 */
ZARR_API
zarr_status_t zarr_array_builder_set_filters_json(zarr_array_builder_t *builder,
                                                  const char *json);

/**
 * Sets the attributes written with the array (a JSON object).
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (not a JSON object).
 *
 * Ownership: nothing is kept: the builder copies what it is given.
 *
 * Thread safety: any thread: calls on one builder are serialised (usually one thread fills
 * it in).
 */
ZARR_API
zarr_status_t zarr_array_builder_set_attributes_json(zarr_array_builder_t *builder,
                                                     const char *json);

/**
 * Sets the Zarr format version, 2 or 3 (by default the format of the group above the new
 * array, else 3). Settings left at their defaults follow the version (see
 * `zarr_array_builder_new`); in v3 a null fill value is written as 0 (v3 has none).
 * `ZARR_FORMAT_V3_DRAFT` and `ZARR_FORMAT_V3_DRAFT_ZARR_PYTHON` write the 2022 draft layout
 * (chunk keys "c0/1"; the store's root gets the draft's `zarr.json` entry point, and a
 * store whose root `zarr.json` is anything else gives `ZARR_ERR_EXISTS` on creation).
 * Other numbers give `ZARR_ERR_INVALID_ARG`.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (see above).
 *
 * Ownership: nothing is kept: the builder copies what it is given.
 *
 * Thread safety: any thread: calls on one builder are serialised (usually one thread fills
 * it in).
 */
ZARR_API
zarr_status_t zarr_array_builder_set_zarr_format(zarr_array_builder_t *builder,
                                                 int32_t version);

/**
 * Groups chunks into shards of `ndim` extents `shape` (each a multiple of the chunk
 * shape): one stored object per shard, with an index (bytes little-endian + crc32c) at
 * its end. Zarr v3 only: creating a v2 array with a shard shape gives
 * `ZARR_ERR_INVALID_ARG`. Variable-length items (strings, bytes) can be sharded too.
 *
 * Errors: only the usual ones (Conventions); the setting is checked by
 * `zarr_array_create`.
 *
 * Ownership: nothing is kept: the builder copies what it is given.
 *
 * Thread safety: any thread: calls on one builder are serialised (usually one thread fills
 * it in).
 */
ZARR_API
zarr_status_t zarr_array_builder_set_shard_shape(zarr_array_builder_t *builder,
                                                 size_t ndim,
                                                 const uint64_t *shape);

/**
 * Nests one more level of sharding inside the shards set so far: the shards' units
 * become inner shards of `ndim` extents `shape` (dividing the enclosing shard shape, a
 * multiple of the chunk shape), each with its own index (bytes little-endian + crc32c)
 * at its end. Call after `zarr_array_builder_set_shard_shape`, once per extra level;
 * setting the shard shape again drops the nested levels.
 *
 * Errors: only the usual ones (Conventions); the setting is checked by
 * `zarr_array_create`.
 *
 * Ownership: nothing is kept: the builder copies what it is given.
 *
 * Thread safety: any thread: calls on one builder are serialised (usually one thread fills
 * it in).
 */
ZARR_API
zarr_status_t zarr_array_builder_add_inner_shard_shape(zarr_array_builder_t *builder,
                                                       size_t ndim,
                                                       const uint64_t *shape);

/**
 * Sets the dimension names, `ndim` UTF-8 strings in C order, one per dimension, written
 * with the array as `zarr_array_set_dimension_names` writes them: v3 arrays keep them in
 * the `dimension_names` of their metadata (NULL for an unnamed dimension, written as null;
 * "" is the name ""), the other formats in the `_ARRAY_DIMENSIONS` attribute (xarray's
 * convention), where every dimension needs a name.
 *
 * Errors: only the usual ones (Conventions); `zarr_array_create` refuses with
 * `ZARR_ERR_INVALID_ARG` a count of names that is not the rank, or a NULL name outside v3,
 * and creates nothing.
 *
 * Ownership: nothing is kept: the builder copies what it is given.
 *
 * Thread safety: any thread: calls on one builder are serialised (usually one thread fills
 * it in).
 */
ZARR_API
zarr_status_t zarr_array_builder_set_dimension_names(zarr_array_builder_t *builder,
                                                     size_t ndim,
                                                     const char *const *names);

/**
 * Commits everything written through `store` since its last commit (or its opening) as
 * one new snapshot of its branch, atomically, with `message`: readers of the repository
 * see all of it or none of it. The new snapshot's id (20 characters) goes to `id_buf`
 * (`id_len` at least `ZARR_SNAPSHOT_ID_BYTES`, checked before committing; NULL with
 * `id_len` 0 when not wanted). Appends to arrays in a repository are never held back
 * on their handles (as they are for sharded arrays elsewhere until `zarr_array_flush`):
 * a commit holds every step appended before it. A store freed without a commit commits
 * nothing: what it
 * wrote is dropped (the chunks it stored stay as unreferenced files until the
 * repository's garbage collection).
 *
 * Another writer's commit on the branch since this store's session began gives
 * `ZARR_ERR_CONFLICT` and commits nothing: call `zarr_store_rebase`, then commit again.
 * On S3 the branch moves by a conditional write: of racing commits from anywhere exactly
 * one succeeds. On a local disk Icechunk moves the branch without a conditional write;
 * libzarr makes the move exclusive itself (an exclusive `flock` on the repository's
 * directory, which threads and processes take in turn), so of racing libzarr commits
 * exactly one succeeds. Other programs (Python's icechunk) do not take that lock: a commit
 * of theirs at the same instant as one of libzarr's on a local disk may still be lost.
 *
 * Durability: on a local disk (where Icechunk itself syncs no file) libzarr syncs each
 * file the commit names (chunks, manifests, transaction log, snapshot; each file, then
 * its directory) before the branch file that names them is written, and the branch file
 * before the call returns, so a power cut leaves the branch at this commit or the one
 * before, never naming a missing file. A failed sync is `ZARR_ERR_STORAGE_IO` naming the
 * file. On S3 every object is durable when written.
 *
 * Errors: `ZARR_ERR_CONFLICT` (see above), `ZARR_ERR_INVALID_ARG` (nothing was written
 * since the last commit), `ZARR_ERR_READ_ONLY` (opened read-only, or at a tag or
 * snapshot), `ZARR_ERR_BUFFER_SIZE` (`id_len` too small; nothing committed),
 * `ZARR_ERR_UNSUPPORTED` (not an Icechunk repository), `ZARR_ERR_STORAGE_IO`.
 *
 * Ownership: the message is copied; the id is copied into the caller's `id_buf`.
 *
 * Thread safety: any thread, once writes through the store are done.
 */
ZARR_API
zarr_status_t zarr_store_commit(const zarr_store_t *store,
                                const char *message,
                                char *id_buf,
                                size_t id_len);

/**
 * Copies the id of the snapshot `store` reads (the last commit through it, or the one
 * it was opened at) into `id_buf` (`id_len` at least `ZARR_SNAPSHOT_ID_BYTES`).
 *
 * Errors: `ZARR_ERR_BUFFER_SIZE`, `ZARR_ERR_NULL_ARG`, `ZARR_ERR_UNSUPPORTED` (not an
 * Icechunk repository).
 *
 * Ownership: the id is copied into the caller's `id_buf`.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API
zarr_status_t zarr_store_snapshot_id(const zarr_store_t *store,
                                     char *id_buf,
                                     size_t id_len);

/**
 * Drops everything written through `store` since its last commit (or its opening): it
 * reads its branch as last committed again. Arrays opened before may hold metadata that
 * no longer exists: open them again.
 *
 * Errors: `ZARR_ERR_READ_ONLY`, `ZARR_ERR_UNSUPPORTED` (not an Icechunk repository).
 *
 * Ownership: nothing changes hands.
 *
 * Thread safety: any thread, once writes through the store are done.
 */
ZARR_API zarr_status_t zarr_store_discard(const zarr_store_t *store);

/**
 * Moves what `store` wrote since its last commit onto its branch's newest snapshot, after
 * `zarr_store_commit` gave `ZARR_ERR_CONFLICT`: it succeeds when the commits made on the
 * branch meanwhile changed no array, group or chunk that this store changed, and the
 * store then reads those commits too; commit again afterwards. Overlapping changes give
 * `ZARR_ERR_CONFLICT` (the message lists them) and keep this store's changes as they were.
 *
 * Errors: `ZARR_ERR_CONFLICT`, `ZARR_ERR_READ_ONLY`, `ZARR_ERR_UNSUPPORTED` (not an
 * Icechunk repository), `ZARR_ERR_STORAGE_IO`.
 *
 * Ownership: nothing changes hands.
 *
 * Thread safety: any thread, once writes through the store are done.
 */
ZARR_API zarr_status_t zarr_store_rebase(const zarr_store_t *store);

/**
 * Creates the tag `name` at the snapshot `store` reads (its last commit, or the snapshot
 * it was opened at). Tags never move: open one with `icechunk:///PATH?tag=NAME`, the
 * name percent-encoded where it holds a space, `&`, `#`, `=`, `%` or other characters a
 * URL query cannot carry as they are (`a b` is `?tag=a%20b`). On a local disk the tag is
 * synced to disk before the call returns, as a commit is.
 *
 * Names no URL can open are refused: the empty name, and names holding a control
 * character (U+0000 to U+001F, U+007F to U+009F).
 *
 * Errors: `ZARR_ERR_EXISTS` (the tag exists, or existed), `ZARR_ERR_INVALID_ARG` (a name
 * refused above, or one Icechunk refuses), `ZARR_ERR_UNSUPPORTED` (not an Icechunk
 * repository), `ZARR_ERR_STORAGE_IO`.
 *
 * Ownership: the name is copied.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API zarr_status_t zarr_store_create_tag(const zarr_store_t *store, const char *name);

/**
 * Creates the branch `name` at the snapshot `store` reads. Write to it by opening
 * `icechunk:///PATH?branch=NAME`, the name percent-encoded as for
 * `zarr_store_create_tag`. On a local disk the branch is synced to disk before the call
 * returns, as a commit is. The same names as for tags are refused.
 *
 * Errors: `ZARR_ERR_EXISTS` (the branch exists), `ZARR_ERR_INVALID_ARG` (an empty name,
 * one holding a control character, or one Icechunk refuses), `ZARR_ERR_UNSUPPORTED` (not
 * an Icechunk repository), `ZARR_ERR_STORAGE_IO`.
 *
 * Ownership: the name is copied.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API zarr_status_t zarr_store_create_branch(const zarr_store_t *store, const char *name);

/**
 * Makes the chunk at `key` of an Icechunk repository (`ARRAY/c/0/1`, the array's chunk
 * key encoding) a virtual chunk: `length` bytes at `offset` of the file `location` (an
 * absolute path or a `file:///` URL), read from there whenever the chunk is read, never
 * copied: a code that writes netCDF (or any file of chunks a Zarr codec reads) publishes
 * a Zarr view of its output this way. The file must lie beneath a directory the store
 * was opened with in its option `virtual_chunk_containers` (a writable store declares
 * them in the repository's configuration; readers name them too to be allowed to read
 * there), and hold at least `offset + length` bytes now. The array's metadata (its codecs)
 * must describe the bytes as they are. Uncommitted until `zarr_store_commit`, as any write.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (a relative path, `.` or `..` in it, a file that is
 * missing or too short, or one beneath no allowed directory: the file and the key
 * named), `ZARR_ERR_INVALID_KEY` (not a chunk key of an array), `ZARR_ERR_READ_ONLY`,
 * `ZARR_ERR_UNSUPPORTED` (not an Icechunk repository, or a remote location),
 * `ZARR_ERR_STORAGE_IO`.
 *
 * Ownership: the key and location are copied.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API
zarr_status_t zarr_store_set_virtual_ref(const zarr_store_t *store,
                                         const char *key,
                                         const char *location,
                                         uint64_t offset,
                                         uint64_t length);

/**
 * Copies the history of the snapshot `store` reads, newest first, into `buf` as JSON text:
 * an array of objects `{"id", "parent", "time", "message"}` (`parent` null for the
 * repository's first snapshot; `time` RFC 3339 in UTC). String output convention: `len`
 * bytes, NUL-terminated; `*needed` (may be NULL) gets the full size; pass `buf = NULL,
 * len = 0` to ask the size.
 *
 * Errors: `ZARR_ERR_BUFFER_SIZE` (the text was truncated), `ZARR_ERR_UNSUPPORTED` (not an
 * Icechunk repository), `ZARR_ERR_STORAGE_IO`.
 *
 * Ownership: the text is copied into the caller's `buf`.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API
zarr_status_t zarr_store_history_json(const zarr_store_t *store,
                                      char *buf,
                                      size_t len,
                                      size_t *needed);

/**
 * Serializes everything written through `store` since its last commit (or its opening)
 * into a new buffer `*out_bytes` of `*out_len` bytes, for `zarr_store_changes_merge` on
 * another store of the same repository: the way several processes (MPI ranks) write one
 * commit. Each writer opens the branch after the commit that created the arrays, writes
 * chunks of its own only (no array or group created or resized), exports and does not
 * commit; one store merges every writer's bytes and commits once. The chunks are in the
 * repository already; the bytes name them (and carry chunks small enough to be kept
 * inline), so they are small. The store keeps its changes: discard them
 * (`zarr_store_discard`) and rebase (`zarr_store_rebase`) to go on at the new commit.
 *
 * The bytes also hold the repository's storage settings (bucket, prefix, endpoint; on a
 * local disk the writer's absolute path of the repository, in clear), with S3 keys given
 * as options overwritten by `*`: the merging store uses its own. Whoever receives the
 * bytes learns where the repository lies.
 *
 * On a local disk the chunks this store wrote are synced first (each file and its
 * directory), so the chunks the bytes name are on disk before any commit names them (on a
 * filesystem shared by several nodes, each writer syncs its own).
 *
 * Errors: `ZARR_ERR_READ_ONLY` (opened read-only, or at a tag or snapshot),
 * `ZARR_ERR_UNSUPPORTED` (not an Icechunk repository), `ZARR_ERR_NULL_ARG` (`store`,
 * `out_bytes` or `out_len` NULL), `ZARR_ERR_STORAGE_IO` (the sync or the serialization
 * failed).
 *
 * Ownership: `*out_bytes` is new: free it with `zarr_bytes_free`; it is NULL (and
 * `*out_len` 0, when the pointers are not NULL) after a failure.
 *
 * Thread safety: any thread, once writes through the store are done.
 */
ZARR_API
zarr_status_t zarr_store_changes_export(const zarr_store_t *store,
                                        void **out_bytes,
                                        size_t *out_len);

/**
 * Adds the changes another store exported (`zarr_store_changes_export`: `len` bytes at
 * `bytes`) to what `store` wrote since its last commit, so that its next
 * `zarr_store_commit` holds both as one snapshot. Merge every writer's bytes, then commit.
 *
 * Both stores must read the same snapshot: changes written on another one (a commit came
 * between) give `ZARR_ERR_CONFLICT` and merge nothing; the writers then discard, rebase
 * and write again. Two stores that created or changed the same array or group differently
 * give `ZARR_ERR_CONFLICT` too (create arrays and groups in a commit before the writers
 * start); of a stored object two stores wrote, the one merged last wins, so writers
 * write disjoint stored objects: whole chunks, or whole shards of a sharded array (two
 * writers of one shard each store the whole shard). Bytes that do not decode as exported
 * changes give `ZARR_ERR_INVALID_ARG` (damage that still decodes is not detected), and so
 * does a store still at the repository's first snapshot (which every repository shares:
 * commit the arrays first). Each chunk the bytes write is checked against its array as
 * `store` sees it with the changes (created or resized by them, or as it is here): a
 * chunk of an array `store` removed, or of a node it does not know, one whose indices are
 * not as many as the array's dimensions, or one outside its grid (`store` shrank the
 * array) gives `ZARR_ERR_INVALID_ARG` naming the array and the chunk. On every error
 * nothing changes in `store`.
 *
 * Errors: `ZARR_ERR_CONFLICT`, `ZARR_ERR_INVALID_ARG`, `ZARR_ERR_READ_ONLY` (opened
 * read-only, or at a tag or snapshot), `ZARR_ERR_UNSUPPORTED` (not an Icechunk
 * repository), `ZARR_ERR_NULL_ARG` (`bytes` NULL with `len` above 0),
 * `ZARR_ERR_BUFFER_SIZE` (`len` larger than any buffer).
 *
 * Ownership: the bytes are only read.
 *
 * Thread safety: any thread, once writes through the store are done.
 */
ZARR_API
zarr_status_t zarr_store_changes_merge(const zarr_store_t *store,
                                       const void *bytes,
                                       size_t len);

/**
 * Frees a buffer of bytes libzarr gave (`zarr_store_changes_export`). NULL is a no-op.
 *
 * Errors: none: it returns nothing, never a status.
 *
 * Ownership: `bytes` is released; do not use it afterwards.
 *
 * Thread safety: any thread, once no other call is using the buffer.
 */
ZARR_API void zarr_bytes_free(void *bytes);

/**
 * Sets `*out_bytes` to the most bytes `zarr_array_encode_chunk` writes for one chunk of
 * this array: a size for its `out` buffer.
 *
 * Errors: `ZARR_ERR_OVERFLOW` (the bound does not fit a `size_t`).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API zarr_status_t zarr_array_encoded_chunk_bound(const zarr_array_t *array, size_t *out_bytes);

/**
 * Encodes the whole chunk at `index` (`ndim` numbers) of the grid the codecs encode (the
 * inner chunks when the array is sharded, else the chunks) from `buf`: the chunk's
 * elements in the array's type (`zarr_array_dtype`), native byte order, C order, past the
 * array's edge too (`buf_bytes` must be the chunk's size). The encoding goes to `out`
 * (`out_bytes` long; `zarr_array_encoded_chunk_bound` is always enough) and its length to
 * `*out_written`; `*out_stored` is false, and nothing written, when the chunk equals the
 * fill value and is not stored. Nothing is stored by this call: the encodings go to
 * `zarr_array_write_encoded`, in this process or another one with a handle of the same
 * array.
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_OUT_OF_BOUNDS` (`index` outside
 * the grid), `ZARR_ERR_BUFFER_SIZE` (`buf_bytes` is not the chunk's size; or `out` is
 * too small: `*out_written` is then the length needed), `ZARR_ERR_UNSUPPORTED` (variable-
 * length items, nested shards, a rectilinear grid of shards), `ZARR_ERR_CODEC`.
 *
 * Ownership: nothing is kept; `buf` is only read.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API
zarr_status_t zarr_array_encode_chunk(const zarr_array_t *array,
                                      size_t ndim,
                                      const uint64_t *index,
                                      const void *buf,
                                      size_t buf_bytes,
                                      void *out_buf,
                                      size_t out_bytes,
                                      size_t *out_written,
                                      bool *out_stored);

/**
 * Sets `*out_units` to how many encoded chunks `zarr_array_write_encoded` takes for the
 * object at `index` (`ndim` numbers) of the grid of stored objects (shards when sharded,
 * else chunks): the inner chunks per shard, or 1.
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH`, `ZARR_ERR_OUT_OF_BOUNDS`, `ZARR_ERR_UNSUPPORTED` (as
 * `zarr_array_encode_chunk`).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API
zarr_status_t zarr_array_encoded_units(const zarr_array_t *array,
                                       size_t ndim,
                                       const uint64_t *index,
                                       size_t *out_units);

/**
 * Stores the object at `index` (`ndim` numbers; a shard when sharded, else a chunk) whole
 * from `nunits` encodings made by `zarr_array_encode_chunk` (`zarr_array_encoded_units`
 * of them: a shard's inner chunks in C order within it): `units[i]` of `unit_bytes[i]`
 * bytes, or NULL for a chunk not stored (read as the fill value). The object's old
 * content is replaced; an object of no stored chunk is erased. The shard's index is
 * built here. Under the handle's synchronizer, as `zarr_array_write`; durability as the
 * store's `zarr_durability`.
 *
 * The encodings are stored as given: bytes that did not come from
 * `zarr_array_encode_chunk` for this array and chunk are refused only when longer than
 * `zarr_array_encoded_chunk_bound`, and otherwise fail when read.
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH`, `ZARR_ERR_OUT_OF_BOUNDS`, `ZARR_ERR_UNSUPPORTED` (as
 * `zarr_array_encode_chunk`), `ZARR_ERR_INVALID_ARG` (`nunits` is not the object's, or an
 * encoding longer than the bound), `ZARR_ERR_READ_ONLY`, `ZARR_ERR_IO`.
 *
 * Ownership: nothing is kept; the encodings are only read.
 *
 * Thread safety: any thread; as `zarr_array_write` for writers of the same object.
 */
ZARR_API
zarr_status_t zarr_array_write_encoded(const zarr_array_t *array,
                                       size_t ndim,
                                       const uint64_t *index,
                                       size_t nunits,
                                       const void *const *units,
                                       const size_t *unit_bytes);

/**
 * The fixed name of a status code (`"ZARR_ERR_NOT_FOUND"`); never NULL, "ZARR_UNKNOWN_STATUS"
 * for values that are not statuses. The string is static: do not free it.
 *
 * Errors: none: it returns a value, never a status.
 *
 * Ownership: the string is static: never free it.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API const char *zarr_status_str(zarr_status_t status);

/**
 * Copies the calling thread's last error message into `buf` (`len` bytes), always
 * NUL-terminated, truncated if needed; `*needed` (may be NULL) gets the full size with
 * the NUL. Meaningful right after a failing call on the same thread; calling it does not
 * change the message. Returns `ZARR_ERR_BUFFER_SIZE` if the message was truncated (pass
 * `buf = NULL, len = 0` to query the size).
 *
 * Errors: `ZARR_ERR_BUFFER_SIZE` (the message was truncated), `ZARR_ERR_NULL_ARG` (`buf`
 * NULL with `len` above 0).
 *
 * Ownership: the text is copied into the caller's `buf` (string output convention).
 *
 * Thread safety: any thread; each thread has its own last message.
 */
ZARR_API zarr_status_t zarr_last_error(char *buf, size_t len, size_t *needed);

/**
 * The library version as MAJOR * 1000000 + MINOR * 1000 + PATCH (equals
 * `ZARR_VERSION_NUMBER` when header and library match).
 *
 * Errors: none: it returns a value, never a status.
 *
 * Ownership: nothing changes hands.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API uint32_t zarr_version_number(void);

/**
 * The library version as a static string ("0.1.0").
 *
 * Errors: none: it returns a value, never a status.
 *
 * Ownership: the string is static: never free it.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API const char *zarr_version_string(void);

/**
 * Whether this build supports the codec or filter `id` ("blosc", "zstd", "delta", …, and
 * the Zarr v3 array codecs registered in zarr-extensions: "scale_offset", "cast_value",
 * "bitround", "reshape"); false for NULL.
 *
 * Errors: none: it returns a value, never a status.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API bool zarr_codec_supported(const char *id);

/**
 * What this build has, as a bit set of `ZARR_HAS_*` values: test with
 * `zarr_features() & ZARR_HAS_S3`. The header is the same for every build (all calls are
 * declared); a store kind missing from the set makes `zarr_store_open_url` give
 * `ZARR_ERR_UNSUPPORTED`.
 *
 * Errors: none: it returns a value, never a status.
 *
 * Ownership: nothing changes hands.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API uint32_t zarr_features(void);

/**
 * Whether handles may be used from several threads at once (always true).
 *
 * Errors: none: it returns a value, never a status.
 *
 * Ownership: nothing changes hands.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API bool zarr_threadsafe(void);

/**
 * Sets the number of worker threads for multi-chunk work (0 = the default: the
 * `ZARR_NUM_THREADS` environment variable, else the cores this process may use).
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (more than 4096), `ZARR_ERR_INTERNAL` (the threads cannot
 * start).
 *
 * Ownership: nothing changes hands.
 *
 * Thread safety: any thread; the setting is process-wide and applies to calls that start
 * after it (calls running meanwhile finish on the old threads).
 */
ZARR_API zarr_status_t zarr_set_num_threads(size_t threads);

/**
 * The number of worker threads.
 *
 * Errors: none: it returns a value, never a status.
 *
 * Ownership: nothing changes hands.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API size_t zarr_get_num_threads(void);

/**
 * Looks up an element type by name: a Zarr v3 name (`"float32"`) or a numpy string
 * (`"<f4"`).
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (an unknown name).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API zarr_status_t zarr_dtype_from_name(const char *name, zarr_dtype_t *out_dtype);

/**
 * The Zarr v3 name of an element type ("float32"), static; NULL for unknown values.
 *
 * Errors: none: it returns a value, never a status.
 *
 * Ownership: the string is static: never free it.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API const char *zarr_dtype_name(zarr_dtype_t dtype);

/**
 * Size in bytes of one element of `dtype`; 0 for unknown values and for `ZARR_DTYPE_RAW`,
 * `ZARR_DTYPE_STRING` and `ZARR_DTYPE_BYTES`, whose size depends on the array.
 *
 * Errors: none: it returns a value, never a status.
 *
 * Ownership: nothing changes hands.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API size_t zarr_dtype_size(zarr_dtype_t dtype);

/**
 * Opens or creates the group at `path` ("" or "/" is the root): `ZARR_MODE_R` and
 * `ZARR_MODE_R_PLUS` need it to exist, `ZARR_MODE_A` creates it if missing, `ZARR_MODE_W`
 * replaces the Zarr nodes there (arrays with their chunks, groups' documents, everything
 * below; keys that belong to no node, such as other files in the directory, are kept),
 * `ZARR_MODE_W_MINUS` fails if anything is there. Missing
 * parent groups are created. A new group gets the format of the group above it, or Zarr
 * v3 at the top of a store (`zarr_group_create` chooses). An array at `path` gives
 * `ZARR_ERR_NODE_TYPE`.
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (`ZARR_MODE_R` or `ZARR_MODE_R_PLUS` and no group),
 * `ZARR_ERR_NODE_TYPE` (an array at `path`), `ZARR_ERR_EXISTS` (`ZARR_MODE_W_MINUS` and
 * something is there, or an array above a group to create), `ZARR_ERR_METADATA`,
 * `ZARR_ERR_READ_ONLY` (a mode that writes, on a read-only store), `ZARR_ERR_INVALID_KEY`
 * (`path`).
 *
 * Ownership: `*out_group` is a new handle: free it with `zarr_group_free`. It keeps the
 * store alive.
 *
 * Thread safety: any thread; one creator per path (say, MPI rank 0), then others open it:
 * creators of one path at once replace each other's nodes.
 */
ZARR_API
zarr_status_t zarr_group_open(const zarr_store_t *store,
                              const char *path,
                              zarr_mode_t mode,
                              zarr_group_t **out_group);

/**
 * Like `zarr_group_open`, but a group that has to be created is written in Zarr format
 * `zarr_format` (2: `.zgroup`; 3: `zarr.json`; `ZARR_FORMAT_V3_DRAFT` or
 * `ZARR_FORMAT_V3_DRAFT_ZARR_PYTHON`: the 2022 draft's group document, parents left
 * implicit), as are missing parent groups. An existing group opens in whatever format it
 * has; in a store holding a 2022-draft hierarchy new groups take its layout.
 *
 * Errors: those of `zarr_group_open`, and `ZARR_ERR_INVALID_ARG` (an unknown
 * `zarr_format`).
 *
 * Ownership: `*out_group` is a new handle: free it with `zarr_group_free`. It keeps the
 * store alive.
 *
 * Thread safety: any thread; one creator per path (say, MPI rank 0), then others open it:
 * creators of one path at once replace each other's nodes.
 */
ZARR_API
zarr_status_t zarr_group_create(const zarr_store_t *store,
                                const char *path,
                                zarr_mode_t mode,
                                int32_t zarr_format,
                                zarr_group_t **out_group);

/**
 * Like `zarr_group_create`, giving the group the attributes in `attributes_json` (a JSON
 * object; NULL or `"{}"` for none). A group that has to be created is written with them in
 * one document write (v3 `zarr.json`; v2 `.zgroup` then `.zattrs`), so a v3 group with
 * attributes can go into a store where each key is written once (a zip file); an existing
 * group opened for writing gets them set, replacing its attributes (`ZARR_MODE_R` gives
 * `ZARR_ERR_READ_ONLY` when there are attributes to set).
 *
 * Errors: those of `zarr_group_create`; `ZARR_ERR_INVALID_ARG` (attributes that are not a
 * JSON object), `ZARR_ERR_READ_ONLY` (`ZARR_MODE_R` with attributes).
 *
 * Ownership: `*out_group` is a new handle: free it with `zarr_group_free`. It keeps the
 * store alive.
 *
 * Thread safety: any thread; one creator per path (say, MPI rank 0), then others open it:
 * creators of one path at once replace each other's nodes.
 */
ZARR_API
zarr_status_t zarr_group_create_with_attrs(const zarr_store_t *store,
                                           const char *path,
                                           zarr_mode_t mode,
                                           int32_t zarr_format,
                                           const char *attributes_json,
                                           zarr_group_t **out_group);

/**
 * Opens the group at `path` through its consolidated metadata (inside a v3 group's
 * `zarr.json`, else `path/.zmetadata`): the documents of every node it holds, and the
 * member lists of its groups, come from that one read (one request on an object store for
 * v3, two for v2), as zarr-python serves consolidated metadata; chunks are read from the
 * store. Nodes added after consolidation are not listed, but open when asked for by path
 * (read from the store). `ZARR_ERR_NOT_FOUND` without consolidated metadata. The
 * consolidated document is bounded as every metadata document (1 GiB, refused unread
 * beyond); an entry whose name only normalises onto a key (`g//a/.zarray`, `./a`) is
 * refused, never merged with the real one.
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (no consolidated metadata), `ZARR_ERR_METADATA` (also a
 * document over 1 GiB), `ZARR_ERR_INVALID_KEY` (an entry naming no normal key), and those
 * of `zarr_group_open`.
 *
 * Ownership: `*out_group` is a new handle: free it with `zarr_group_free`. It keeps the
 * store alive.
 *
 * Thread safety: any thread; the handle serves the metadata as it was consolidated.
 */
ZARR_API
zarr_status_t zarr_group_open_consolidated(const zarr_store_t *store,
                                           const char *path,
                                           zarr_mode_t mode,
                                           zarr_group_t **out_group);

/**
 * Consolidates the metadata of the hierarchy at `path`, as zarr-python's
 * `consolidate_metadata` does for each format. A v2 group: every `.zarray`, `.zgroup` and
 * `.zattrs` below `path` into `path/.zmetadata` (`zarr_consolidated_format: 1`). A v3
 * group: every `zarr.json` below `path` into the group's own `zarr.json`, as its
 * `consolidated_metadata` member (`kind: "inline"`, keyed by path relative to the group),
 * which zarr-python 3 and `zarr_group_open_consolidated` read. The 2022 draft layout has
 * no consolidated metadata (`ZARR_ERR_UNSUPPORTED`). Run it again after adding nodes: a
 * consolidated reader does not list nodes added since.
 *
 * Errors: `ZARR_ERR_METADATA` (a document that is not JSON), `ZARR_ERR_UNSUPPORTED` (the
 * 2022 draft layout), `ZARR_ERR_READ_ONLY`, `ZARR_ERR_INVALID_KEY` (`path`).
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; nodes written meanwhile may be missed: consolidate when
 * writers are done.
 */
ZARR_API zarr_status_t zarr_consolidate_metadata(const zarr_store_t *store, const char *path);

/**
 * Releases a group handle (NULL is ignored).
 *
 * Errors: none: it returns a value, never a status.
 *
 * Ownership: takes the handle (NULL is ignored); the store is released with the last
 * handle using it.
 *
 * Thread safety: any thread, once no other call is using the handle.
 */
ZARR_API void zarr_group_free(zarr_group_t *group);

/**
 * Copies the group's normalised path ("" for the root) into `buf`.
 *
 * Errors: `ZARR_ERR_BUFFER_SIZE` (string output convention).
 *
 * Ownership: the text is copied into the caller's `buf` (string output convention).
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API
zarr_status_t zarr_group_path(const zarr_group_t *group,
                              char *buf,
                              size_t len,
                              size_t *needed);

/**
 * Sets `*out_version` to the group's Zarr format: 2, 3, `ZARR_FORMAT_V3_DRAFT` or
 * `ZARR_FORMAT_V3_DRAFT_ZARR_PYTHON`.
 *
 * Errors: only the usual ones (Conventions).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API zarr_status_t zarr_group_zarr_format(const zarr_group_t *group, int32_t *out_version);

/**
 * Sets `*out_kind` to what is at `path` in `store`.
 *
 * Errors: `ZARR_ERR_INVALID_KEY` (`path`).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread; it reads the store.
 */
ZARR_API
zarr_status_t zarr_node_kind_at(const zarr_store_t *store,
                                const char *path,
                                zarr_node_kind_t *out_kind);

/**
 * Sets `*out_kind` to what is at `path` below the group ("a/b" for nested members).
 *
 * Errors: `ZARR_ERR_INVALID_KEY` (`path`).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread; it reads the store.
 */
ZARR_API
zarr_status_t zarr_group_contains(const zarr_group_t *group,
                                  const char *path,
                                  zarr_node_kind_t *out_kind);

/**
 * Lists the names of the group's direct members of `kind` (`ZARR_NODE_ARRAY`,
 * `ZARR_NODE_GROUP`, or `ZARR_NODE_NONE` for all), sorted, into a new string list.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (an unknown `kind`).
 *
 * Ownership: `*out_names` is a new list: free it with `zarr_strings_free`.
 *
 * Thread safety: any thread, at the same time as any other call; the store is listed as it
 * is then.
 */
ZARR_API
zarr_status_t zarr_group_members(const zarr_group_t *group,
                                 zarr_node_kind_t kind,
                                 zarr_strings_t **out_names);

/**
 * Opens (or, by mode, creates) the group at `path` below this group.
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (`ZARR_MODE_R` or `ZARR_MODE_R_PLUS` and no group),
 * `ZARR_ERR_NODE_TYPE` (an array at `path`), `ZARR_ERR_EXISTS` (`ZARR_MODE_W_MINUS` and
 * something is there, or an array above a group to create), `ZARR_ERR_METADATA`,
 * `ZARR_ERR_READ_ONLY` (a mode that writes, on a read-only store), `ZARR_ERR_INVALID_KEY`
 * (`path`).
 *
 * Ownership: `*out_group` is a new handle: free it with `zarr_group_free`. It keeps the
 * store alive.
 *
 * Thread safety: any thread; one creator per path (say, MPI rank 0), then others open it:
 * creators of one path at once replace each other's nodes.
 */
ZARR_API
zarr_status_t zarr_group_open_group(const zarr_group_t *group,
                                    const char *path,
                                    zarr_mode_t mode,
                                    zarr_group_t **out_group);

/**
 * Opens the array at `path` below this group (`ZARR_MODE_R`, `ZARR_MODE_R_PLUS`,
 * `ZARR_MODE_A`).
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (no array at `path`), `ZARR_ERR_NODE_TYPE` (a group there),
 * `ZARR_ERR_METADATA` (a document libzarr cannot read, the field named),
 * `ZARR_ERR_CODEC_UNSUPPORTED`, `ZARR_ERR_INVALID_ARG` (a mode that creates: use a
 * builder), `ZARR_ERR_READ_ONLY` (a writable mode on a read-only store),
 * `ZARR_ERR_INVALID_KEY` (`path`).
 *
 * Ownership: `*out_array` is a new handle: free it with `zarr_array_free`. It keeps the
 * store alive.
 *
 * Thread safety: any thread; any number of handles may be open on one array.
 */
ZARR_API
zarr_status_t zarr_group_open_array(const zarr_group_t *group,
                                    const char *path,
                                    zarr_mode_t mode,
                                    zarr_array_t **out_array);

/**
 * Creates an array at `path` below this group from the builder's settings (modes as for
 * `zarr_array_create`).
 *
 * Errors: `ZARR_ERR_EXISTS` (`ZARR_MODE_W_MINUS` and an array is at `path`, or an array
 * above it), `ZARR_ERR_NODE_TYPE` (`ZARR_MODE_W_MINUS` or `ZARR_MODE_A` and a group is at
 * `path`), `ZARR_ERR_INVALID_ARG` (settings that do not fit together, or a mode that does
 * not create), `ZARR_ERR_CODEC_UNSUPPORTED`, `ZARR_ERR_UNSUPPORTED`, `ZARR_ERR_READ_ONLY`
 * (a read-only store), `ZARR_ERR_INVALID_KEY` (`path`).
 *
 * Ownership: the builder stays the caller's. `*out_array` is a new handle: free it with
 * `zarr_array_free`. It keeps the store alive.
 *
 * Thread safety: any thread; one creator per path (say, MPI rank 0), then others open it:
 * creators of one path at once replace each other's nodes.
 */
ZARR_API
zarr_status_t zarr_group_create_array(const zarr_group_t *group,
                                      const zarr_array_builder_t *builder,
                                      const char *path,
                                      zarr_mode_t mode,
                                      zarr_array_t **out_array);

/**
 * Deletes the member at `path` below this group and everything under it.
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (nothing at `path`), `ZARR_ERR_READ_ONLY`,
 * `ZARR_ERR_INVALID_KEY`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; handles still open on what was deleted are not told.
 */
ZARR_API zarr_status_t zarr_group_delete(const zarr_group_t *group, const char *path);

/**
 * Moves the member at `from` to `to` (both below this group); the destination must not
 * exist. Groups above `to` are created.
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (nothing at `from`), `ZARR_ERR_EXISTS` (something at `to`),
 * `ZARR_ERR_INVALID_ARG` (`to` inside `from`, also through a symbolic link in the store,
 * naming both), `ZARR_ERR_READ_ONLY` (a read-only handle, as consolidated ones are),
 * `ZARR_ERR_UNSUPPORTED` (the 2022 draft layout), `ZARR_ERR_INVALID_KEY`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; handles still open on the old path are not told.
 */
ZARR_API zarr_status_t zarr_group_move(const zarr_group_t *group, const char *from, const char *to);

/**
 * Copies the group's attributes (a JSON object) into `buf`.
 *
 * Errors: `ZARR_ERR_BUFFER_SIZE` (string output convention), `ZARR_ERR_METADATA`.
 *
 * Ownership: the text is copied into the caller's `buf` (string output convention).
 *
 * Thread safety: any thread; it reads the store.
 */
ZARR_API
zarr_status_t zarr_group_attrs_get(const zarr_group_t *group,
                                   char *buf,
                                   size_t len,
                                   size_t *needed);

/**
 * Replaces all of the group's attributes with the JSON object `json`.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (not a JSON object), `ZARR_ERR_READ_ONLY` (a read-only
 * handle or store).
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; updates through one handle are serialised, while of updates
 * made at once through several handles or processes the last one wins.
 */
ZARR_API zarr_status_t zarr_group_attrs_set(const zarr_group_t *group, const char *json);

/**
 * Copies the JSON value of the group's attribute `key`; `ZARR_ERR_NOT_FOUND` if absent.
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (no such attribute), `ZARR_ERR_BUFFER_SIZE` (string output
 * convention), `ZARR_ERR_METADATA`.
 *
 * Ownership: the text is copied into the caller's `buf` (string output convention).
 *
 * Thread safety: any thread; it reads the store.
 */
ZARR_API
zarr_status_t zarr_group_attr_get(const zarr_group_t *group,
                                  const char *key,
                                  char *buf,
                                  size_t len,
                                  size_t *needed);

/**
 * Sets the group's attribute `key` to the JSON value `json`.
 *
 * Errors: `ZARR_ERR_READ_ONLY` (a read-only handle or store).
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; updates through one handle are serialised, while of updates
 * made at once through several handles or processes the last one wins.
 */
ZARR_API
zarr_status_t zarr_group_attr_set(const zarr_group_t *group,
                                  const char *key,
                                  const char *json);

/**
 * Reports what the group's attribute `key` holds (`*out_kind`, a `zarr_attr_kind` value) and,
 * when `out_count` is not NULL, its number of items (1 for a scalar, the length of a list).
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (no such attribute), `ZARR_ERR_METADATA`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; it reads the store.
 */
ZARR_API
zarr_status_t zarr_group_attr_kind(const zarr_group_t *group,
                                   const char *key,
                                   zarr_attr_kind_t *out_kind,
                                   size_t *out_count);

/**
 * Sets the group's attribute `key` to the UTF-8 string `value` (any text: the library escapes
 * it), keeping the others.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (`key` or `value` not UTF-8; U+F8FF followed by `NaN`,
 * `Infinity` or `-Infinity`, the library's mark of a non-finite float), `ZARR_ERR_READ_ONLY`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: as `zarr_group_attr_set`.
 */
ZARR_API
zarr_status_t zarr_group_attr_set_string(const zarr_group_t *group,
                                         const char *key,
                                         const char *value);

/**
 * Copies the string the group's attribute `key` holds into `buf` (string output convention).
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (no such attribute), `ZARR_ERR_DTYPE_MISMATCH` (it is not
 * a string; the message names it and says what it is), `ZARR_ERR_BUFFER_SIZE`.
 *
 * Ownership: the text is copied into the caller's `buf` (string output convention).
 *
 * Thread safety: any thread; it reads the store.
 */
ZARR_API
zarr_status_t zarr_group_attr_get_string(const zarr_group_t *group,
                                         const char *key,
                                         char *buf,
                                         size_t len,
                                         size_t *needed);

/**
 * Sets the group's attribute `key` to the list of the `n` UTF-8 strings at `values`. netCDF-C
 * (4.9) cannot open a v2 store holding a list of strings as an attribute: join such lists
 * into one string (CF's `flag_meanings` is blank-separated) for stores netCDF reads.
 *
 * Errors: `ZARR_ERR_NULL_ARG` (`values` or one of its strings NULL), `ZARR_ERR_INVALID_ARG`
 * (a string not UTF-8, named by index), `ZARR_ERR_READ_ONLY`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: as `zarr_group_attr_set`.
 */
ZARR_API
zarr_status_t zarr_group_attr_set_strings(const zarr_group_t *group,
                                          const char *key,
                                          const char *const *values,
                                          size_t n);

/**
 * Gives the list of strings the group's attribute `key` holds.
 *
 * Errors: `ZARR_ERR_NOT_FOUND`, `ZARR_ERR_DTYPE_MISMATCH` (not a list of strings; the
 * message names the attribute, or the item, at fault).
 *
 * Ownership: the caller frees `*out_list` with `zarr_strings_free`; it is NULL after a
 * failure.
 *
 * Thread safety: any thread; it reads the store.
 */
ZARR_API
zarr_status_t zarr_group_attr_get_strings(const zarr_group_t *group,
                                          const char *key,
                                          zarr_strings_t **out_list);

/**
 * Sets the group's attribute `key` to the number at `value`, of type `dtype`:
 * `ZARR_DTYPE_INT32`, `ZARR_DTYPE_INT64`, `ZARR_DTYPE_FLOAT32` or `ZARR_DTYPE_FLOAT64`.
 * A float32 is written as the shortest decimal that reads back as the same float32
 * (0.1f as `0.1`): readers that see JSON get the value meant, as a double, and
 * `zarr_group_attr_get_number` with `ZARR_DTYPE_FLOAT32` gives the float exactly. No type is
 * recorded beside the value. NaN and infinities are written as the bare tokens `NaN`,
 * `Infinity` and `-Infinity`, as Python's `json` (and so zarr-python) writes them; readers
 * that hold to strict JSON (tensorstore, for one) then refuse the whole document, as they
 * refuse zarr-python's.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (another `dtype`), `ZARR_ERR_READ_ONLY`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: as `zarr_group_attr_set`.
 */
ZARR_API
zarr_status_t zarr_group_attr_set_number(const zarr_group_t *group,
                                         const char *key,
                                         zarr_dtype_t dtype,
                                         const void *value);

/**
 * Stores the number the group's attribute `key` holds at `value`, as `dtype` (the types of
 * `zarr_group_attr_set_number`). Any number reads as a float type; only integers read as an
 * integer type.
 *
 * Errors: `ZARR_ERR_NOT_FOUND`, `ZARR_ERR_DTYPE_MISMATCH` (not a number, or a float read
 * as an integer; the message names the attribute), `ZARR_ERR_RANGE` (it does not fit in
 * `dtype`), `ZARR_ERR_INVALID_ARG` (another `dtype`).
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; it reads the store.
 */
ZARR_API
zarr_status_t zarr_group_attr_get_number(const zarr_group_t *group,
                                         const char *key,
                                         zarr_dtype_t dtype,
                                         void *value);

/**
 * Sets the group's attribute `key` to the list of the `n` numbers of type `dtype` at `values`
 * (the types and float32 rule of `zarr_group_attr_set_number`).
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (another `dtype`), `ZARR_ERR_OVERFLOW` (`n` values exceed the address space), `ZARR_ERR_READ_ONLY`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: as `zarr_group_attr_set`.
 */
ZARR_API
zarr_status_t zarr_group_attr_set_numbers(const zarr_group_t *group,
                                          const char *key,
                                          zarr_dtype_t dtype,
                                          const void *values,
                                          size_t n);

/**
 * Stores the list of numbers the group's attribute `key` holds in `values` (room for `len` of
 * type `dtype`, the types of `zarr_group_attr_get_number`); `*out_count` gets the list's
 * length, also when it exceeds `len` (then `ZARR_ERR_BUFFER_SIZE`; pass `len` 0 to ask).
 *
 * Errors: `ZARR_ERR_NOT_FOUND`, `ZARR_ERR_DTYPE_MISMATCH` (not a list of numbers, or a
 * float read as an integer; the message names the item), `ZARR_ERR_RANGE`,
 * `ZARR_ERR_BUFFER_SIZE`, `ZARR_ERR_OVERFLOW` (`len` values exceed the address space).
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; it reads the store.
 */
ZARR_API
zarr_status_t zarr_group_attr_get_numbers(const zarr_group_t *group,
                                          const char *key,
                                          zarr_dtype_t dtype,
                                          void *values,
                                          size_t len,
                                          size_t *out_count);

/**
 * Deletes the group's attribute `key`; `ZARR_ERR_NOT_FOUND` if absent.
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (no such attribute), `ZARR_ERR_READ_ONLY`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; updates through one handle are serialised, while of updates
 * made at once through several handles or processes the last one wins.
 */
ZARR_API zarr_status_t zarr_group_attr_delete(const zarr_group_t *group, const char *key);

/**
 * Copies the array or group tree at `source_path` in `source` to `target_path` in
 * `target` (any stores), with attributes, chunk by chunk in bounded memory. With
 * `compressor_json` NULL chunks are copied as stored; otherwise every chunk is re-encoded
 * with that compressor ("null" for none). `mode`: `ZARR_MODE_W`, `ZARR_MODE_W_MINUS` or
 * `ZARR_MODE_A`, applied to the top node. A target that overlaps the source (the same
 * node, or one inside the other, through any store roots, links or handles on the same
 * directory, zip file or memory store) is refused with `ZARR_ERR_INVALID_ARG` naming both
 * locations, before anything is erased or written.
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (nothing at `source_path`), `ZARR_ERR_INVALID_ARG`
 * (overlapping source and target, a bad mode), `ZARR_ERR_EXISTS` (`ZARR_MODE_W_MINUS`),
 * `ZARR_ERR_READ_ONLY`, `ZARR_ERR_CODEC_UNSUPPORTED`, `ZARR_ERR_CODEC`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; the source is copied as it is read, so do not write it
 * meanwhile.
 */
ZARR_API
zarr_status_t zarr_copy(const zarr_store_t *source,
                        const char *source_path,
                        const zarr_store_t *target,
                        const char *target_path,
                        const char *compressor_json,
                        zarr_mode_t mode);

/**
 * Converts the v1 array at `path` (keys `meta` and `attrs`) to v2 in place, as
 * zarr-python's `migrate_1to2`.
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (no v1 array at `path`), `ZARR_ERR_METADATA`,
 * `ZARR_ERR_READ_ONLY`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; no other handle may use the array meanwhile.
 */
ZARR_API zarr_status_t zarr_migrate_1to2(const zarr_store_t *store, const char *path);

/**
 * Like `zarr_array_write`, but returns at once with `*out_request`: the write runs on a
 * thread of the array handle behind the handle's earlier non-blocking requests that touch
 * its chunks (shards, when sharded), its chunks encoded on the pool. Writes and appends of
 * one handle apply as in submission order; requests on different chunks run at once (as
 * many as the pool has workers), so a loop of one-chunk writes encodes in parallel. `flags` is 0 or `ZARR_ASYNC_COPY` (see there: without it, `buf` must stay
 * untouched until the request is done). The call first waits while the requests in
 * flight hold more than the budget allows (`zarr_set_async_budget`).
 *
 * Errors: at submission, `ZARR_ERR_NULL_ARG`, `ZARR_ERR_RANK_MISMATCH` (`ndim`),
 * `ZARR_ERR_INVALID_ARG` (`flags`, `mem_dtype`, `order`, or a buffer larger than the
 * whole budget), `ZARR_ERR_READ_ONLY`, `ZARR_ERR_NO_MEMORY` (the copy); every other error
 * of `zarr_array_write` is the request's, given by `zarr_request_wait` or
 * `zarr_request_test` with the same guarantee: a failed write stores no chunk torn, and
 * later requests still run.
 *
 * Ownership: `*out_request` is a new handle (NULL on failure): free it with
 * `zarr_request_free`. The request holds the array (and its store) until it is done.
 *
 * Thread safety: any thread, as `zarr_array_write`. Requests submitted by one thread
 * apply in submission order; blocking calls on the handle do not wait for its requests
 * (wait for them first when they touch the same chunks).
 */
ZARR_API
zarr_status_t zarr_array_write_async(const zarr_array_t *array,
                                     size_t ndim,
                                     const uint64_t *start,
                                     const uint64_t *count,
                                     zarr_dtype_t mem_dtype,
                                     zarr_order_t order,
                                     const void *buf,
                                     size_t buf_bytes,
                                     uint32_t flags,
                                     zarr_request_t **out_request);

/**
 * Like `zarr_array_write_from`, but non-blocking as `zarr_array_write_async`: `buf` holds
 * elements of the numeric type `mem_dtype`, converted to the array's type when the
 * request runs (as netCDF's `nc_put_vara_*`).
 *
 * Errors: as `zarr_array_write_async`; the request's also `ZARR_ERR_RANGE` (a value does
 * not fit the array's type: nothing is written) and `ZARR_ERR_DTYPE_MISMATCH` (a type
 * that is not numeric).
 *
 * Ownership: as `zarr_array_write_async`.
 *
 * Thread safety: as `zarr_array_write_async`.
 */
ZARR_API
zarr_status_t zarr_array_write_from_async(const zarr_array_t *array,
                                          size_t ndim,
                                          const uint64_t *start,
                                          const uint64_t *count,
                                          zarr_dtype_t mem_dtype,
                                          zarr_order_t order,
                                          const void *buf,
                                          size_t buf_bytes,
                                          uint32_t flags,
                                          zarr_request_t **out_request);

/**
 * Like `zarr_array_write_strided`, but non-blocking as `zarr_array_write_async`.
 *
 * Errors: as `zarr_array_write_async`; the stride errors come from the request.
 *
 * Ownership: as `zarr_array_write_async`; `mem_strides` is copied.
 *
 * Thread safety: as `zarr_array_write_async`.
 */
ZARR_API
zarr_status_t zarr_array_write_strided_async(const zarr_array_t *array,
                                             size_t ndim,
                                             const uint64_t *start,
                                             const uint64_t *count,
                                             const int64_t *mem_strides,
                                             zarr_dtype_t mem_dtype,
                                             const void *buf,
                                             size_t buf_bytes,
                                             uint32_t flags,
                                             zarr_request_t **out_request);

/**
 * Like `zarr_array_append`, but non-blocking as `zarr_array_write_async`: the appends
 * of one handle grow the array in submission order.
 *
 * Errors: as `zarr_array_write_async`; the other errors of `zarr_array_append` come from
 * the request (a failed append appends nothing; later appends still run).
 *
 * Ownership: as `zarr_array_write_async`.
 *
 * Thread safety: any thread; one handle appends to an array at a time.
 */
ZARR_API
zarr_status_t zarr_array_append_async(const zarr_array_t *array,
                                      size_t axis,
                                      size_t ndim,
                                      const uint64_t *count,
                                      zarr_dtype_t mem_dtype,
                                      zarr_order_t order,
                                      const void *buf,
                                      size_t buf_bytes,
                                      uint32_t flags,
                                      zarr_request_t **out_request);

/**
 * Like `zarr_array_append_from`, but non-blocking as `zarr_array_append_async`: `buf`
 * holds elements of the numeric type `mem_dtype`, converted to the array's type when the
 * request runs.
 *
 * Errors: as `zarr_array_append_async`; the request's also `ZARR_ERR_RANGE` (a value does
 * not fit the array's type: nothing is appended) and `ZARR_ERR_DTYPE_MISMATCH` (a type
 * that is not numeric).
 *
 * Ownership: as `zarr_array_write_async`.
 *
 * Thread safety: as `zarr_array_append_async`.
 */
ZARR_API
zarr_status_t zarr_array_append_from_async(const zarr_array_t *array,
                                           size_t axis,
                                           size_t ndim,
                                           const uint64_t *count,
                                           zarr_dtype_t mem_dtype,
                                           zarr_order_t order,
                                           const void *buf,
                                           size_t buf_bytes,
                                           uint32_t flags,
                                           zarr_request_t **out_request);

/**
 * Like `zarr_array_append_strided`, but non-blocking as `zarr_array_append_async`.
 *
 * Errors: as `zarr_array_append_async`; the stride errors come from the request.
 *
 * Ownership: as `zarr_array_write_async`; `mem_strides` is copied.
 *
 * Thread safety: as `zarr_array_append_async`.
 */
ZARR_API
zarr_status_t zarr_array_append_strided_async(const zarr_array_t *array,
                                              size_t axis,
                                              size_t ndim,
                                              const uint64_t *count,
                                              const int64_t *mem_strides,
                                              zarr_dtype_t mem_dtype,
                                              const void *buf,
                                              size_t buf_bytes,
                                              uint32_t flags,
                                              zarr_request_t **out_request);

/**
 * Waits until the request is done and returns its status; a failure's message is the
 * calling thread's last error (`zarr_last_error`). Waiting again returns the same.
 *
 * Errors: those of the write or append (see `zarr_array_write_async`).
 *
 * Ownership: the request stays the caller's.
 *
 * Thread safety: any thread; several may wait for one request.
 */
ZARR_API zarr_status_t zarr_request_wait(const zarr_request_t *request);

/**
 * Sets `*out_done` to whether the request is done, without waiting. When it is done, the
 * status is the request's (as `zarr_request_wait` returns it); otherwise `ZARR_OK`.
 *
 * Errors: those of the request once done.
 *
 * Ownership: the request stays the caller's.
 *
 * Thread safety: any thread.
 */
ZARR_API zarr_status_t zarr_request_test(const zarr_request_t *request, bool *out_done);

/**
 * Waits for the `n` requests of `requests` (NULL entries are skipped) and returns the
 * status of the first that failed, in the order given (its message is the last error);
 * `ZARR_OK` when all succeeded. It always waits for all of them.
 *
 * Errors: those of the requests.
 *
 * Ownership: the requests stay the caller's.
 *
 * Thread safety: any thread.
 */
ZARR_API zarr_status_t zarr_request_wait_all(zarr_request_t *const *requests, size_t n);

/**
 * Releases a request handle (NULL is ignored). A request not yet done still runs to its
 * end (its array's flush or free waits for it), but its error is lost.
 *
 * Errors: none: it returns a value, never a status.
 *
 * Ownership: takes the handle.
 *
 * Thread safety: any thread, once no other call is using the handle.
 */
ZARR_API void zarr_request_free(zarr_request_t *request);

/**
 * Sets the process-wide budget of bytes held by non-blocking requests in flight (their
 * buffers, copied or borrowed; 0, the default: no limit). A submission that would pass it
 * waits until enough requests are done; one larger than the whole budget is refused, also
 * when it was waiting as the budget dropped below it (`ZARR_ERR_INVALID_ARG`).
 *
 * Errors: none beyond the usual ones (Conventions).
 *
 * Ownership: nothing changes hands.
 *
 * Thread safety: any thread; submissions waiting see the new budget at once.
 */
ZARR_API zarr_status_t zarr_set_async_budget(size_t bytes);

/**
 * Sets `*out_bytes` to the bytes non-blocking requests hold now and `*out_peak` to the
 * most they held at once since the last reset (either may be NULL); with `reset_peak`,
 * then starts the peak again from the bytes held now.
 *
 * Errors: only the usual ones (Conventions).
 *
 * Ownership: nothing is kept; the results go to the caller's outputs.
 *
 * Thread safety: any thread.
 */
ZARR_API zarr_status_t zarr_async_in_flight(bool reset_peak, size_t *out_bytes, size_t *out_peak);

/**
 * Opens a directory as a store. `ZARR_MODE_R` opens it read-only and `ZARR_MODE_R_PLUS`
 * read-write (both need it to exist); `ZARR_MODE_A`, `ZARR_MODE_W` and `ZARR_MODE_W_MINUS`
 * open it read-write and create it if missing (nothing is erased at store level).
 * `*out_store` is NULL on failure. Writes are synced as `ZARR_DURABILITY_FLUSH` says until
 * `zarr_store_set_durability` changes it. Every key is resolved beneath the directory when
 * it is used: symbolic links that stay inside are followed; one that leads outside, and
 * any absolute link, gives `ZARR_ERR_INVALID_KEY`. A FIFO, socket or device at a key gives
 * `ZARR_ERR_STORAGE_IO` without blocking; a key with a component longer than the
 * filesystem's name limit gives `ZARR_ERR_INVALID_KEY`.
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (`ZARR_MODE_R` or `ZARR_MODE_R_PLUS` and no directory),
 * `ZARR_ERR_STORAGE_IO` (not a directory, or it cannot be created).
 *
 * Ownership: `*out_store` is a new handle: free it with `zarr_store_free`.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API
zarr_status_t zarr_store_open_fs(const char *path,
                                 zarr_mode_t mode,
                                 zarr_store_t **out_store);

/**
 * Opens a zip file as a store: `ZARR_MODE_R` reads it; `ZARR_MODE_W` creates it
 * (replacing a file there), `ZARR_MODE_W_MINUS` creates it and fails if it exists,
 * `ZARR_MODE_A` adds entries (creating it if missing), `ZARR_MODE_R_PLUS` adds entries to an
 * existing zip. Each key can be written once; rewriting one gives `ZARR_ERR_EXISTS`. New
 * entries are stored, or deflated when `deflate` is true. Call `zarr_store_close` to finish
 * the zip and see any error (freeing does it too, silently). Metadata documents written
 * through the handle read back at once; chunks only after closing.
 *
 * Nothing is written at `path` before closing: the new archive is built in a hidden
 * temporary file beside it (appending copies the old archive there at the first write,
 * without recompressing, so it costs a rewrite of the archive) and moved over `path` by
 * `zarr_store_close`. A process killed at any moment, even while closing, leaves the
 * previous archive whole with all its entries (or no file, for a new one); opening for
 * writing removes temporary files left by killed writers. Only one handle at a time may
 * write over an existing zip: a second one fails with `ZARR_ERR_STORAGE_IO` (a lock, which
 * readers ignore). Writing through a symbolic link (or a chain of them) updates the file it
 * leads to, beside which the temporary file is made; the link stays a link.
 *
 * Entry names must be keys as they are: a name that only normalises onto one (`a//0`,
 * `a\0`, `./a/0`) makes the zip refused with `ZARR_ERR_INVALID_KEY` naming it
 * (zarr-python reads names verbatim, so such an entry would be another array for it);
 * entries of directories (ending in `/`) are skipped; a name repeated in the central
 * directory reads as its last entry, as zarr-python reads it.
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (a mode that reads an existing zip, and none is there),
 * `ZARR_ERR_EXISTS` (`ZARR_MODE_W_MINUS` and a file is there), `ZARR_ERR_INVALID_KEY` (an
 * entry name that escapes the store or is not a normal key),
 * `ZARR_ERR_STORAGE_IO` (not a zip, or another handle is writing it).
 *
 * Ownership: `*out_store` is a new handle: free it with `zarr_store_free`.
 *
 * Thread safety: any thread; calls through one handle are serialised inside. One writing
 * handle per zip.
 */
ZARR_API
zarr_status_t zarr_store_open_zip(const char *path,
                                  zarr_mode_t mode,
                                  bool deflate,
                                  zarr_store_t **out_store);

/**
 * Opens the store that `url` names, with `mode` as for `zarr_store_open_fs`
 * (`ZARR_MODE_R` read-only, every other mode read-write). `options_json` may be NULL, or
 * a JSON object of settings; a setting the store kind does not use gives
 * `ZARR_ERR_INVALID_ARG`. `*out_store` is NULL on failure. URLs:
 *
 * - a plain path or `file://PATH`: a directory, as `zarr_store_open_fs`; a plain path
 *   ending in `.zip` that is not a directory is a zip file, as in zarr-python;
 * - `memory://`: a new, empty memory store;
 * - `zip://PATH`: a zip file, as `zarr_store_open_zip` (option `"deflate": true`);
 * - `s3://BUCKET/PREFIX` (S3 and S3-compatible servers), `gs://BUCKET/PREFIX` (Google
 *   Cloud Storage), `az://CONTAINER/PREFIX` or
 *   `abfs://CONTAINER@ACCOUNT.dfs.core.windows.net/PREFIX` (Azure Blob Storage);
 * - `http://…` and `https://…`: a web server, read-only (any other mode gives
 *   `ZARR_ERR_READ_ONLY`); keys are read with GET and range GETs below the URL.
 *
 * Object-store options: `endpoint` (e.g. `"http://127.0.0.1:9000"`; an `http://` endpoint
 * allows plain HTTP), `region`, `access_key_id`, `secret_access_key`, `session_token`,
 * `profile` (an AWS profile, read from `~/.aws/credentials` and `~/.aws/config`),
 * `anonymous` (unsigned requests, for public S3 buckets and Azure containers; refused with
 * `ZARR_ERR_UNSUPPORTED` for `gs://`), `allow_http`, `timeout_ms` (per
 * request, default 30000), `connect_timeout_ms` (5000), `max_retries` (3; 5xx, throttling
 * and dropped connections are retried with back-off), `retry_timeout_ms` (60000),
 * `max_requests` (requests of this store in flight at once, default 64),
 * `multipart_threshold` (values this long or longer are uploaded in parts, default 64 MiB)
 * and `part_size` (16 MiB, at least 5 MiB), `zarr_format` (1, 2 or 3: the format the store
 * holds, whose documents are then looked for first, so that opening a v2 array or a
 * consolidated v2 hierarchy takes one request instead of two; v3 takes one either way),
 * `max_list_keys` (the most keys one listing may hold, default 10000000: more is
 * `ZARR_ERR_STORAGE_IO`, never a cut listing); and any `aws_*`, `google_*` or `azure_*` key of the object_store crate (e.g.
 * `"azure_storage_use_emulator": true`).
 *
 * Credentials, when the options give none: S3 reads the `AWS_*` environment variables
 * (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`,
 * `AWS_ENDPOINT_URL`, ...), then the profile named by `AWS_PROFILE` (else `default`) in
 * `~/.aws/credentials` and `~/.aws/config` (or `AWS_SHARED_CREDENTIALS_FILE`,
 * `AWS_CONFIG_FILE`), then instance or container metadata; GCS reads
 * `GOOGLE_APPLICATION_CREDENTIALS` and the `GOOGLE_*` variables; Azure the `AZURE_STORAGE_*`
 * variables. Opening sends no request: a missing bucket shows at the first read
 * (`ZARR_ERR_NOT_FOUND`, naming it). Errors name the URL and key and the HTTP status,
 * never a secret: URLs in messages lose their user information and query values, and of
 * a server's error body only its code and message are kept. Every request has a timeout.
 * Redirects are followed only to the same scheme, host and port (credentials never go to
 * another host); one elsewhere gives `ZARR_ERR_STORAGE_IO` naming its status. A server
 * that ignores `Range` costs no more memory than the bytes asked for. Listings must come
 * in key order: a server repeating keys or continuation tokens gives
 * `ZARR_ERR_STORAGE_IO`; keys that cannot be keys of a store (`data//x`) are skipped. A value is written with one PUT (or one
 * multipart upload): readers see the old or the new object, never a mix; a PUT is durable
 * when it returns, so every `zarr_durability` level is accepted. Updates of one object by
 * several writers at once may be lost (the last PUT wins) unless the array's synchronizer is
 * `ZARR_SYNC_VERSIONED` (ETag-checked conditional writes); mode `ZARR_MODE_W_MINUS` creates
 * with a conditional PUT, so of several creators exactly one succeeds.
 *
 * `icechunk:///PATH` opens the Icechunk repository in the directory PATH, and
 * `icechunk+s3://BUCKET/PREFIX` the one at a prefix on S3 (builds with
 * `ZARR_HAS_ICECHUNK`; options `endpoint`, `region`, `access_key_id`,
 * `secret_access_key`, `session_token`, `allow_http`, `anonymous`, as for `s3://`): queries `?branch=NAME` (default `main`), `?tag=NAME` or
 * `?snapshot=ID` say where in its history. `ZARR_MODE_R` reads (a tag and a snapshot
 * open in this mode only); the other modes write to the branch, `ZARR_MODE_R_PLUS` needing
 * the repository to exist, `ZARR_MODE_A`, `ZARR_MODE_W` and `ZARR_MODE_W_MINUS` creating
 * it in a missing or empty directory or prefix (nothing is erased). What is written stays invisible
 * to every other reader until `zarr_store_commit`; a store freed without a commit commits
 * nothing. Icechunk holds Zarr v3 only: v2 metadata is refused with
 * `ZARR_ERR_UNSUPPORTED`. A missing repository, branch, tag or snapshot gives
 * `ZARR_ERR_NOT_FOUND` naming it; no options apply to local repositories.
 *
 * `reference:///PATH` opens the kerchunk reference file (JSON, version 0 or 1) at the
 * absolute path PATH as a read-only store (`ZARR_MODE_R` only; other modes give
 * `ZARR_ERR_READ_ONLY`; `reference:relative/path` gives `ZARR_ERR_INVALID_ARG`): each key
 * is bytes held in the file or a byte range of a local file it names (netCDF-4, HDF5 and
 * netCDF-3 archives read as Zarr without being copied). A reference may point only beneath
 * the reference file's own directory (held from when the store opens; a reference file in
 * `/` needs the option, else `ZARR_ERR_INVALID_ARG`); option `allowed_targets`, a list of
 * absolute directories (`{"allowed_targets": ["/data/archive"]}`), allows those too. A
 * relative target is relative to the reference file's directory. A reference elsewhere
 * (another directory, a `..` component, a symbolic link leading out of the directory it is
 * named in) gives `ZARR_ERR_INVALID_KEY` when read or sized, naming the key and the
 * target; one on another host (`s3://`, `http://`, ...) gives `ZARR_ERR_UNSUPPORTED` (not
 * supported yet); a range past the end of its file gives `ZARR_ERR_STORAGE_IO`. A malformed
 * reference file, or one past the limits (512 MiB of JSON, 4 million references, 10000
 * templates and 10000 `gen` entries, keys and URLs of 4096 bytes), gives
 * `ZARR_ERR_METADATA` when opened (`ZARR_ERR_INVALID_KEY` for a key that is not a normal
 * key, `ZARR_ERR_UNSUPPORTED` for templates that take arguments).
 *
 * A build without object stores (see `zarr_features`) gives `ZARR_ERR_UNSUPPORTED` for
 * their URLs; an unknown scheme or malformed URL gives `ZARR_ERR_INVALID_ARG`.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (an unknown scheme, a malformed URL, an option the store
 * kind does not use), `ZARR_ERR_UNSUPPORTED` (a store kind this build lacks),
 * `ZARR_ERR_READ_ONLY` (`http(s)://` with a mode that writes), and those of
 * `zarr_store_open_fs` and `zarr_store_open_zip` for their URLs.
 *
 * Ownership: the URL and options are copied. `*out_store` is a new handle: free it with
 * `zarr_store_free`.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API
zarr_status_t zarr_store_open_url(const char *url,
                                  zarr_mode_t mode,
                                  const char *options_json,
                                  zarr_store_t **out_store);

/**
 * Finishes pending work and reports its errors; the store stays usable. It first waits
 * until no non-blocking request of the process is in flight (their errors stay with the
 * requests). A directory store
 * is flushed as `zarr_store_flush` does. For a zip written through the handle, the new
 * archive's central directory is written, the file synced to disk and atomically renamed
 * over the zip's path: a crash before the rename leaves the old archive, after it the new
 * one. If closing fails, the zip at the path is as it was and the entries written through
 * the handle are lost. A no-op for memory stores.
 *
 * Errors: `ZARR_ERR_STORAGE_IO` (the zip or a sync failed).
 *
 * Ownership: the handle stays the caller's: free it with `zarr_store_free`.
 *
 * Thread safety: any thread, once writes through the store are done (a zip write after
 * closing starts a new archive).
 */
ZARR_API zarr_status_t zarr_store_close(const zarr_store_t *store);

/**
 * Sets how much of what the store writes survives a crash (see `zarr_durability`).
 * Directory stores accept every level; memory and zip stores accept only
 * `ZARR_DURABILITY_NONE` and give `ZARR_ERR_UNSUPPORTED` for the others, since they cannot
 * sync what they write. Lowering the level keeps what is still to be flushed.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (an unknown level), `ZARR_ERR_UNSUPPORTED` (see above).
 *
 * Ownership: nothing changes hands.
 *
 * Thread safety: any thread; writes running meanwhile are synced at the old or the new
 * level.
 */
ZARR_API
zarr_status_t zarr_store_set_durability(const zarr_store_t *store,
                                        zarr_durability_t level);

/**
 * Syncs what the handle wrote since its last flush (under `ZARR_DURABILITY_FLUSH`: each
 * file written and each directory whose entries changed), so it survives a power loss;
 * the first failure is reported, after every file was tried. A no-op for other levels and
 * for memory and zip stores. It first waits until no non-blocking request of the process
 * is in flight (their errors stay with the requests).
 *
 * Errors: `ZARR_ERR_STORAGE_IO` (the first file or directory that failed).
 *
 * Ownership: nothing changes hands.
 *
 * Thread safety: any thread; writes finishing meanwhile may be left to the next flush.
 */
ZARR_API zarr_status_t zarr_store_flush(const zarr_store_t *store);

/**
 * Creates an empty in-memory store.
 *
 * Errors: only the usual ones (Conventions).
 *
 * Ownership: `*out_store` is a new handle: free it with `zarr_store_free`.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API zarr_status_t zarr_store_new_memory(zarr_store_t **out_store);

/**
 * Releases a store handle (NULL is ignored), once no non-blocking request of the process
 * is in flight, flushing it first as `zarr_store_flush` does;
 * a flush error cannot be reported here: call `zarr_store_close` first to see it. Arrays
 * opened from it stay usable; what they write afterwards is flushed when the last of them
 * is freed.
 *
 * An Icechunk repository's uncommitted writes are dropped, never committed.
 *
 * Errors: none: it returns a value, never a status. A flush error is lost (see above).
 *
 * Ownership: takes the handle (NULL is ignored); arrays and groups opened from it keep the
 * store alive.
 *
 * Thread safety: any thread, once no other call is using the handle.
 */
ZARR_API void zarr_store_free(zarr_store_t *store);

/**
 * Stores `len` bytes at `key`, replacing any value.
 *
 * Errors: `ZARR_ERR_READ_ONLY`, `ZARR_ERR_INVALID_KEY`, `ZARR_ERR_EXISTS` (a zip key
 * written before).
 *
 * Ownership: `value` is copied.
 *
 * Thread safety: any thread; of writes of one key at once, the last one wins.
 */
ZARR_API
zarr_status_t zarr_store_set(const zarr_store_t *store,
                             const char *key,
                             const void *value,
                             size_t len);

/**
 * Copies the value at `key` into `buf`. `*needed` (may be NULL) gets its size; a buffer
 * too small gives `ZARR_ERR_BUFFER_SIZE` and nothing is copied. A missing key gives
 * `ZARR_ERR_NOT_FOUND`. The size is asked of the store first (a HEAD request on object
 * stores), so a value too large for `buf` is measured, never read; a fitting value is read
 * with `len` as its limit, so a value that grew past `len` meanwhile is refused the same
 * way (`*needed` its new size) and no more than `len` bytes of it are held.
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (no such key), `ZARR_ERR_BUFFER_SIZE` (`len` too small;
 * `*needed` is set), `ZARR_ERR_INVALID_KEY`.
 *
 * Ownership: the value is copied into the caller's `buf`.
 *
 * Thread safety: any thread; a value is read whole, old or new.
 */
ZARR_API
zarr_status_t zarr_store_get(const zarr_store_t *store,
                             const char *key,
                             void *buf,
                             size_t len,
                             size_t *needed);

/**
 * Sets `*out_exists` to whether `key` exists.
 *
 * Errors: `ZARR_ERR_INVALID_KEY`.
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API
zarr_status_t zarr_store_contains(const zarr_store_t *store,
                                  const char *key,
                                  bool *out_exists);

/**
 * Removes `key`; `ZARR_ERR_NOT_FOUND` if it does not exist.
 *
 * Errors: `ZARR_ERR_NOT_FOUND` (no such key), `ZARR_ERR_READ_ONLY`,
 * `ZARR_ERR_INVALID_KEY`, `ZARR_ERR_UNSUPPORTED` (a zip entry).
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API zarr_status_t zarr_store_erase(const zarr_store_t *store, const char *key);

/**
 * Removes every key starting with `prefix` ("" erases everything).
 *
 * Errors: `ZARR_ERR_READ_ONLY`, `ZARR_ERR_INVALID_KEY`, `ZARR_ERR_UNSUPPORTED` (zip
 * entries).
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; keys written meanwhile under `prefix` may stay.
 */
ZARR_API zarr_status_t zarr_store_erase_prefix(const zarr_store_t *store, const char *prefix);

/**
 * Lists every key starting with `prefix`, sorted, into a new string list.
 *
 * Errors: `ZARR_ERR_INVALID_KEY`, `ZARR_ERR_UNSUPPORTED` (a store that cannot list, such
 * as a plain web server).
 *
 * Ownership: `*out_keys` is a new list: free it with `zarr_strings_free`.
 *
 * Thread safety: any thread, at the same time as any other call; the store is listed as it
 * is then.
 */
ZARR_API
zarr_status_t zarr_store_list(const zarr_store_t *store,
                              const char *prefix,
                              zarr_strings_t **out_keys);

/**
 * Lists one level below `prefix` ("" or ending in "/"): the keys directly under it and the
 * child prefixes (names without "/"), each sorted, into two new string lists.
 *
 * Errors: as `zarr_store_list`.
 *
 * Ownership: `*out_keys` and `*out_prefixes` are new lists: free each with
 * `zarr_strings_free`.
 *
 * Thread safety: any thread, at the same time as any other call; the store is listed as it
 * is then.
 */
ZARR_API
zarr_status_t zarr_store_list_dir(const zarr_store_t *store,
                                  const char *prefix,
                                  zarr_strings_t **out_keys,
                                  zarr_strings_t **out_prefixes);

/**
 * Number of strings in a list (0 for NULL).
 *
 * Errors: none: it returns a value, never a status.
 *
 * Ownership: nothing changes hands.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API size_t zarr_strings_count(const zarr_strings_t *list);

/**
 * String `index` of a list, valid until the list is freed; NULL when out of range, and
 * for a null item (only lists of dimension names have them: an unnamed dimension).
 *
 * Errors: none: it returns a value, never a status.
 *
 * Ownership: the string belongs to the list: never free it, nor use it after
 * `zarr_strings_free`.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API const char *zarr_strings_get(const zarr_strings_t *list, size_t index);

/**
 * Frees a string list (NULL is ignored).
 *
 * Errors: none: it returns a value, never a status.
 *
 * Ownership: takes the list (NULL is ignored) and every string it gave.
 *
 * Thread safety: any thread, once no other call is using the handle.
 */
ZARR_API void zarr_strings_free(zarr_strings_t *list);

/**
 * Sets `*out_count` to the number of fields of a structured array's record, nested records
 * flattened to their leaves (`"outer.inner"`); 0 for other arrays.
 *
 * Errors: only the usual ones (Conventions).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API zarr_status_t zarr_array_nfields(const zarr_array_t *array, size_t *out_count);

/**
 * Copies the name of field `index` (nested names joined by dots) into `buf` (string
 * output convention). `ZARR_ERR_OUT_OF_BOUNDS` when there is no such field.
 *
 * Errors: `ZARR_ERR_OUT_OF_BOUNDS` (no such field), `ZARR_ERR_BUFFER_SIZE`.
 *
 * Ownership: the text is copied into the caller's `buf` (string output convention).
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API
zarr_status_t zarr_array_field_name(const zarr_array_t *array,
                                    size_t index,
                                    char *buf,
                                    size_t len,
                                    size_t *needed);

/**
 * Copies the numpy type string of one element of field `index` (`"<i4"`, `">f8"`,
 * `"|S2"`) into `buf` (string output convention).
 *
 * Errors: `ZARR_ERR_OUT_OF_BOUNDS` (no such field), `ZARR_ERR_BUFFER_SIZE`.
 *
 * Ownership: the text is copied into the caller's `buf` (string output convention).
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API
zarr_status_t zarr_array_field_dtype_name(const zarr_array_t *array,
                                          size_t index,
                                          char *buf,
                                          size_t len,
                                          size_t *needed);

/**
 * Gives where field `index` lies in a record: `*out_offset` (bytes from the record's
 * start), `*out_size` (bytes, sub-array included), and its sub-array shape: `*out_ndim`
 * dimensions (0 for a scalar field) copied into `out_shape`, which has room for
 * `max_ndim`. `ZARR_ERR_BUFFER_SIZE` when `max_ndim` is too small (`*out_ndim` is set).
 * Field bytes keep their stored byte order.
 *
 * Errors: `ZARR_ERR_OUT_OF_BOUNDS` (no such field), `ZARR_ERR_BUFFER_SIZE` (`max_ndim`).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API
zarr_status_t zarr_array_field_layout(const zarr_array_t *array,
                                      size_t index,
                                      size_t *out_offset,
                                      size_t *out_size,
                                      size_t *out_ndim,
                                      uint64_t *out_shape,
                                      size_t max_ndim);

/**
 * Sets `*out_dtype` to the element type of a variable-length array's items: the numeric
 * type of `vlen-array` items (as `zarr_array_read_vlen` gives them, in native byte order;
 * `*out_item_size` gets its size), `ZARR_DTYPE_STRING` for strings and `ZARR_DTYPE_BYTES`
 * for byte strings (`*out_item_size` 1: items are runs of bytes). `out_item_size` may be
 * NULL. An array of fixed-size items gives `ZARR_ERR_DTYPE_MISMATCH`.
 *
 * Errors: `ZARR_ERR_DTYPE_MISMATCH` (an array of fixed-size items).
 *
 * Ownership: nothing is kept; the result goes to the caller's output.
 *
 * Thread safety: any thread, at the same time as any other call; it answers from this
 * handle's copy of the metadata (`zarr_array_refresh` reads it again).
 */
ZARR_API
zarr_status_t zarr_array_vlen_item_dtype(const zarr_array_t *array,
                                         zarr_dtype_t *out_dtype,
                                         size_t *out_item_size);

/**
 * Converts records read with `ZARR_DTYPE_RAW` (fields in their stored byte order, as
 * `zarr_array_field_dtype_name` gives it) to this machine's byte order, in place: every
 * multi-byte number, each half of a complex number, each UTF-32 code unit, in nested
 * records and sub-array fields too. `buf_bytes` must be a whole number of records
 * (`zarr_array_item_size`). Arrays that are not structured are left unchanged.
 *
 * Errors: `ZARR_ERR_BUFFER_SIZE` (not a whole number of records).
 *
 * Ownership: `buf` stays the caller's and is converted in place.
 *
 * Thread safety: any thread; only `buf` is touched.
 */
ZARR_API
zarr_status_t zarr_array_records_to_native(const zarr_array_t *array,
                                           void *buf,
                                           size_t buf_bytes);

/**
 * Converts records in this machine's byte order to their stored byte order, in place, for
 * a write with `ZARR_DTYPE_RAW`: the reverse of `zarr_array_records_to_native`.
 *
 * Errors: `ZARR_ERR_BUFFER_SIZE` (not a whole number of records).
 *
 * Ownership: `buf` stays the caller's and is converted in place.
 *
 * Thread safety: any thread; only `buf` is touched.
 */
ZARR_API
zarr_status_t zarr_array_records_to_stored(const zarr_array_t *array,
                                           void *buf,
                                           size_t buf_bytes);

/**
 * Reads the items of region `start`/`count` of a variable-length array (`|O`, `string`,
 * `bytes`) in `order` into caller buffers: item `i` is the bytes from `data[offsets[i]]`
 * up to `data[offsets[i + 1]]`, so `offsets` needs one entry more than the region has
 * elements (`n_offsets`). Numeric array items are in native byte order. `*data_needed`
 * gets the bytes the items take; when `data_bytes` is smaller (a NULL `data` with 0 asks
 * for the size) the call gives `ZARR_ERR_BUFFER_SIZE` and fills nothing else. A stored
 * string that is not UTF-8 gives `ZARR_ERR_CODEC`.
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_OUT_OF_BOUNDS`,
 * `ZARR_ERR_DTYPE_MISMATCH` (an array of fixed-size items), `ZARR_ERR_BUFFER_SIZE`
 * (`n_offsets` or `data_bytes`), `ZARR_ERR_CODEC`.
 *
 * Ownership: `offsets` and `data` stay the caller's.
 *
 * Thread safety: any thread, at the same time as other reads and writes: each chunk is
 * read as it was before or after a write of it, never a mix.
 */
ZARR_API
zarr_status_t zarr_array_read_vlen(const zarr_array_t *array,
                                   size_t ndim,
                                   const uint64_t *start,
                                   const uint64_t *count,
                                   zarr_order_t order,
                                   uint64_t *offsets,
                                   size_t n_offsets,
                                   void *data,
                                   size_t data_bytes,
                                   size_t *data_needed);

/**
 * Reads the items of a region (arguments as for `zarr_array_read_vlen`) into a list owned
 * by libzarr, set in `*out_list` (NULL on failure); free it with `zarr_vlen_list_free`.
 *
 * Errors: as `zarr_array_read_vlen`, without `ZARR_ERR_BUFFER_SIZE`.
 *
 * Ownership: `*out_list` is a new list: free it with `zarr_vlen_list_free`.
 *
 * Thread safety: any thread, at the same time as other reads and writes: each chunk is
 * read as it was before or after a write of it, never a mix.
 */
ZARR_API
zarr_status_t zarr_array_read_vlen_list(const zarr_array_t *array,
                                        size_t ndim,
                                        const uint64_t *start,
                                        const uint64_t *count,
                                        zarr_order_t order,
                                        zarr_vlen_list_t **out_list);

/**
 * Number of items in a list (0 for NULL).
 *
 * Errors: none: it returns a value, never a status.
 *
 * Ownership: nothing changes hands.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API size_t zarr_vlen_list_count(const zarr_vlen_list_t *list);

/**
 * Item `index` of a list, valid until the list is freed, followed by a NUL byte (so a
 * string without embedded NULs is a C string); `*out_len` (if not NULL) gets its length
 * without that NUL. NULL when `index` is out of range.
 *
 * Errors: none: it returns a value, never a status.
 *
 * Ownership: the item belongs to the list: never free it, nor use it after
 * `zarr_vlen_list_free`.
 *
 * Thread safety: any thread, at the same time as any other call.
 */
ZARR_API
const void *zarr_vlen_list_item(const zarr_vlen_list_t *list,
                                size_t index,
                                size_t *out_len);

/**
 * Frees a list (NULL is ignored).
 *
 * Errors: none: it returns a value, never a status.
 *
 * Ownership: takes the list (NULL is ignored) and every item it gave.
 *
 * Thread safety: any thread, once no other call is using the handle.
 */
ZARR_API void zarr_vlen_list_free(zarr_vlen_list_t *list);

/**
 * Writes one item per element of region `start`/`count` (in `order`) into a
 * variable-length array: item `i` is `lengths[i]` bytes at `items[i]`, or, when `lengths`
 * is NULL, the NUL-terminated string `items[i]`. Strings must be UTF-8 and array items a
 * whole number of elements (native byte order); every item is checked before anything is
 * stored, and a rejected call stores nothing.
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_OUT_OF_BOUNDS`,
 * `ZARR_ERR_DTYPE_MISMATCH` (an array of fixed-size items), `ZARR_ERR_INVALID_ARG` (a
 * string that is not UTF-8, an item that is not whole elements), `ZARR_ERR_READ_ONLY`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; writes at the same time are safe when they touch different
 * chunks (shards, when sharded): otherwise set a synchronizer
 * (`zarr_array_set_synchronizer`) or updates may be lost.
 */
ZARR_API
zarr_status_t zarr_array_write_vlen(const zarr_array_t *array,
                                    size_t ndim,
                                    const uint64_t *start,
                                    const uint64_t *count,
                                    zarr_order_t order,
                                    const void *const *items,
                                    const size_t *lengths);

/**
 * Appends one item per element of a region of shape `count[0..ndim]` along `axis` of a
 * variable-length array (items as `zarr_array_write_vlen` takes them, in `order`); every
 * other extent of `count` must equal the array's. The array grows by `count[axis]`, then
 * the items are written; a rejected item shrinks it back, so a failed call leaves the
 * array as it was. Appends of variable-length items are not buffered.
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_INVALID_ARG` (`axis` not below the
 * rank, another extent differs from the array's, a string that is not UTF-8, an item that
 * is not whole elements), `ZARR_ERR_DTYPE_MISMATCH` (an array of fixed-size items: use
 * `zarr_array_append`), `ZARR_ERR_OVERFLOW`, `ZARR_ERR_READ_ONLY`.
 *
 * Ownership: nothing is kept: arguments are only read during the call.
 *
 * Thread safety: any thread; calls on one handle are serialised. One handle appends to an
 * array at a time.
 */
ZARR_API
zarr_status_t zarr_array_append_vlen(const zarr_array_t *array,
                                     size_t axis,
                                     size_t ndim,
                                     const uint64_t *count,
                                     zarr_order_t order,
                                     const void *const *items,
                                     const size_t *lengths);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* ZARR_H */
