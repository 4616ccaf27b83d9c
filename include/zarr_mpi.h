/**
 * @file zarr_mpi.h
 * zarr_mpi.h — collective I/O of libzarr arrays over an MPI communicator (library
 * `libzarr_mpi`, CMake target `zarr::mpi`): every rank of a communicator gives its block of
 * a region or of a time step, and the layer writes each stored object (a chunk, or a shard
 * when the array is sharded) once, from one rank, with two-phase I/O.
 *
 * The layer is plain C above the C interface of zarr.h and is a library of its own, so
 * libzarr itself never links MPI. Its conventions are those of zarr.h (status codes,
 * parameter order, regions, Errors / Ownership / Thread safety paragraphs), with these
 * additions:
 *
 * - Collective calls: every `zarr_mpi_*` call that takes a communicator is collective over
 *   it, as MPI's collectives are: every rank of `comm` calls it, in the same order, with
 *   its own handle on the same array and arguments that agree where said. A rank that
 *   leaves a call out makes the others wait forever, as with MPI.
 * - Errors are collective: a failure on any rank (an argument refused, a store that
 *   fails) is returned on every rank, with the status of the lowest failing rank and its
 *   message prefixed by `rank N: ` (`zarr_mpi_last_error` copies it on every rank). The
 *   message is the layer's own: the libzarr message of the failing call is part of it, and
 *   zarr_last_error() of other ranks says nothing about it.
 * - Two-phase I/O: the stored objects that the union of the ranks' blocks touches are
 *   listed in C order of the grid and split into contiguous ranges, one per aggregator
 *   rank; every rank sends the part of its block that falls in each object to the object's
 *   aggregator (MPI_Alltoall of the counts, then MPI_Alltoallv of the pieces), and each
 *   aggregator assembles each of its objects in memory and writes it with one
 *   zarr_array_write() of the part the blocks cover. An object the blocks cover whole is
 *   written without being read; of an object covered in part, the elements no block
 *   covers keep their stored values (libzarr, or the aggregator when the covered part is
 *   not a box, reads the object and merges). Each object has one writer, so no
 *   synchronizer and no lock file is needed.
 * - Encoding where the data is (off unless `zarr_mpi_set_encode_where_held` or
 *   `ZARR_MPI_ENCODE_WHERE_HELD=1` turns it on): on a regular grid sharded at most once,
 *   with blocks that do not overlap, an object whose every chunk (inner chunk, when
 *   sharded) lies whole inside the array and is covered by the blocks has each chunk
 *   encoded (`zarr_array_encode_chunk`) by its encoder, the rank holding most of it (the
 *   lowest such rank on a tie): from its own block when the chunk lies whole in it, else
 *   after the chunk's other holders sent it their parts (an exchange of their own before
 *   the round's). This applies when some chunk's encoder is not the object's aggregator.
 *   The aggregator receives the encodings, lays out the shard and stores it
 *   (`zarr_array_write_encoded`). Compression then runs on every rank and only compressed
 *   bytes reach the aggregator, as HDF5 compresses on every rank in collective writes of
 *   filtered datasets. Other objects go through the aggregator as described above.
 * - Settings (process-wide; the values of rank 0 are used by a collective call):
 *   the number of aggregators (`zarr_mpi_set_aggregators`, environment variable
 *   `ZARR_MPI_AGGREGATORS`; as ROMIO's `cb_nodes`) and the bytes of objects one aggregator
 *   holds at once (`zarr_mpi_set_buffer_bytes`, `ZARR_MPI_BUFFER_BYTES`; as ROMIO's
 *   `cb_buffer_size`): an aggregator whose objects hold more handles them in rounds.
 * - MPI errors follow the communicator's error handler (by default they abort the job).
 * - Thread safety: the calls are thread-safe in the sense of MPI: collective calls on one
 *   communicator are made by one thread of each rank at a time, under the thread level the
 *   program initialised MPI with. The settings and the last error are safe from any thread
 *   (the last error and the statistics are the calling thread's).
 */

#ifndef ZARR_MPI_H
#define ZARR_MPI_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <zarr.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The default of `zarr_mpi_set_buffer_bytes`: each aggregator holds at most 64 MiB of the
 * objects it assembles in one round (ROMIO's `cb_buffer_size` is 16 MiB; Zarr objects,
 * shards above all, are larger than file stripes).
 */
#define ZARR_MPI_DEFAULT_BUFFER_BYTES ((size_t)64 << 20)

/**
 * What the last collective write or append of the calling thread did, as this rank saw
 * it (`zarr_mpi_last_stats`).
 */
typedef struct zarr_mpi_stats_t {
    /** Stored objects (chunks, or shards) the ranks' blocks touched: the same on every rank. */
    uint64_t objects;
    /** Of those, the objects this rank wrote as their aggregator. */
    uint64_t objects_written;
    /** Of those, the objects this rank read first because the blocks covered a part of
     * them that is not a box (libzarr merges the other partly covered objects itself). */
    uint64_t objects_merged;
    /** Bytes of block data (without headers) this rank sent to aggregators, itself included
     * (not the raw parts of split chunks sent to their encoders). */
    uint64_t bytes_sent;
    /** Bytes of block data this rank received as an aggregator. */
    uint64_t bytes_received;
    /** Exchange rounds (the same on every rank). */
    uint32_t rounds;
    /** Aggregator ranks used (the same on every rank). */
    uint32_t aggregators;
    /** Chunks this rank encoded as their encoder (encoding where the data is, see the
     * header's conventions): from its own block, or gathered from the chunk's holders.
     * Their aggregators store them as they are. */
    uint64_t chunks_encoded;
} zarr_mpi_stats_t;

/**
 * Creates the array at `path` collectively: rank 0 creates it from `builder` with `mode`
 * (as `zarr_array_create`: `ZARR_MODE_W`, `ZARR_MODE_W_MINUS`, or `ZARR_MODE_A` to open an
 * array that exists), the ranks meet, then every other rank opens it read-write
 * (`ZARR_MODE_R_PLUS`) through its own `store`. Every handle gets its append lock turned off
 * (`zarr_array_set_append_lock`): the layer coordinates the ranks, and only rank 0 resizes
 * (`zarr_mpi_append`). `path` must be the same on every rank, and every `store` must reach
 * the same storage (the same directory on a shared filesystem, the same bucket and prefix).
 * On failure on any rank, no rank keeps a handle (`*out_array` is NULL everywhere); what
 * rank 0 created stays.
 *
 * Errors: those of `zarr_array_create` on rank 0 and of `zarr_array_open` on the others,
 * from the lowest failing rank, on every rank (see the collective errors above).
 *
 * Ownership: `builder` is only read, and only on rank 0 (other ranks may pass NULL).
 * `*out_array` is a new handle of this rank: free it with `zarr_array_free`.
 *
 * Thread safety: collective over `comm` (see the header's conventions).
 */
zarr_status_t zarr_mpi_array_create(MPI_Comm comm, const zarr_array_builder_t *builder,
                                    const zarr_store_t *store, const char *path,
                                    zarr_mode_t mode, zarr_array_t **out_array);

/**
 * Opens the array at `path` collectively: every rank opens it through its own `store` with
 * `mode` (`ZARR_MODE_R`, `ZARR_MODE_R_PLUS` or `ZARR_MODE_A`) and turns the handle's append
 * lock off, as `zarr_mpi_array_create` does. On failure on any rank no rank keeps a
 * handle.
 *
 * Errors: those of `zarr_array_open`, from the lowest failing rank, on every rank.
 *
 * Ownership: `*out_array` is a new handle of this rank: free it with `zarr_array_free`.
 *
 * Thread safety: collective over `comm`.
 */
zarr_status_t zarr_mpi_array_open(MPI_Comm comm, const zarr_store_t *store, const char *path,
                                  zarr_mode_t mode, zarr_array_t **out_array);

/**
 * Writes the region that the ranks' blocks make up, collectively: each rank gives its block
 * `start[0..ndim]`, `count[0..ndim]` with its elements in `buf` (arguments as for
 * `zarr_array_write`: `mem_dtype` is the array's type, `order` the buffer's layout,
 * `buf_bytes` the block's size). Any decomposition works: regular or uneven blocks, blocks
 * that do not line up with chunks or shards, ranks with an empty block (a zero in
 * `count`). Blocks should not overlap; where they do, the block of the highest rank wins.
 * The objects the blocks touch are written with two-phase I/O (see the header's
 * conventions): each once, by one aggregator rank, in rounds when they hold more than the
 * buffer setting. Every handle must see the same shape (the layer checks it against rank
 * 0's: a handle that is behind after a resize made elsewhere gives
 * `ZARR_ERR_INVALID_ARG`; `zarr_array_refresh` it first).
 *
 * Every argument is checked on every rank before any data moves: a refusal on one rank is
 * returned on all, and nothing is written. A failure while writing (an aggregator's store
 * fails) is returned on every rank after the round it happened in; objects written before
 * it stay written, the later rounds are not written.
 *
 * Errors: `ZARR_ERR_RANK_MISMATCH` (`ndim`), `ZARR_ERR_OUT_OF_BOUNDS` (a block leaves the
 * array), `ZARR_ERR_DTYPE_MISMATCH` (`mem_dtype` is not the array's type),
 * `ZARR_ERR_UNSUPPORTED` (a variable-length array), `ZARR_ERR_BUFFER_SIZE` (`buf_bytes`),
 * `ZARR_ERR_INVALID_ARG` (an unknown `order`, handles that disagree on the shape, a
 * setting in the environment of rank 0 that does not parse),
 * `ZARR_ERR_OVERFLOW` (a round's exchange beyond MPI's counts), and those of
 * `zarr_array_write` and `zarr_array_read` on the aggregators; each from the lowest failing
 * rank, on every rank.
 *
 * Ownership: `buf` is only read during the call.
 *
 * Thread safety: collective over `comm`. Other writers of the objects the blocks touch
 * (outside this call) may lose updates, as with `zarr_array_write`.
 */
zarr_status_t zarr_mpi_write(MPI_Comm comm, const zarr_array_t *array, size_t ndim,
                             const uint64_t *start, const uint64_t *count,
                             zarr_dtype_t mem_dtype, zarr_order_t order, const void *buf,
                             size_t buf_bytes);

/**
 * Appends a step along `axis`, collectively: each rank gives its block of the step,
 * `start` being where the block starts inside the step (`start[axis]` is 0 for a step of
 * one index along `axis`) and `count` its extent (a zero in `count` for a rank without
 * data). The step's extent along `axis` is the largest `start[axis] + count[axis]` of the
 * ranks; along the other axes blocks lie inside the array's extent. Elements of the step
 * that no block covers read as the fill value.
 *
 * Rank 0 grows the array once (`zarr_array_resize`) and every other rank updates its handle
 * with `zarr_array_refresh` (one read of the metadata document per rank and step: libzarr's
 * C interface has no call that sets a handle's shape without reading or storing it, and a
 * handle refuses to write outside its shape), then the step is written as
 * `zarr_mpi_write` writes. When the write fails on any rank, rank 0 shrinks the array back
 * and every handle refreshes again, so after the call the array holds its last complete
 * step and every handle sees the same shape. While the call runs, a reader that reads
 * the metadata between the resize and the end of the write sees the new step with fill
 * values where it is not yet written; a job killed inside the call can leave it so (see
 * docs/guide/fortran-mpi.md).
 *
 * Errors: as `zarr_mpi_write`, plus `ZARR_ERR_INVALID_ARG` (`axis` not below the rank),
 * `ZARR_ERR_OVERFLOW` (the new extent), and those of `zarr_array_resize` on rank 0 and of
 * `zarr_array_refresh` on the others; each from the lowest failing rank, on every rank.
 * When shrinking back fails too, its error is added to the message.
 *
 * Ownership: `buf` is only read during the call.
 *
 * Thread safety: collective over `comm`. Handles outside the communicator see the new
 * shape after `zarr_array_refresh`. Other appenders of the array (outside this call)
 * are not excluded: the handles' append locks are off.
 */
zarr_status_t zarr_mpi_append(MPI_Comm comm, const zarr_array_t *array, size_t axis,
                              size_t ndim, const uint64_t *start, const uint64_t *count,
                              zarr_dtype_t mem_dtype, zarr_order_t order, const void *buf,
                              size_t buf_bytes);

/**
 * Commits what every rank wrote through its own `store` (a writable Icechunk repository on
 * a branch, every rank's store at the same snapshot) as ONE snapshot, collectively: every
 * rank but 0 exports its uncommitted changes (`zarr_store_changes_export`), rank 0 gathers
 * them (`MPI_Gatherv`), merges them into its own (`zarr_store_changes_merge`, rank 1 first)
 * and commits with `message` (`zarr_store_commit`); then every other rank discards its
 * changes (in the commit now) and rebases (`zarr_store_rebase`), so that all ranks go on
 * from the new snapshot, whose id every rank gets in `id_buf` (`id_len` at least
 * `ZARR_SNAPSHOT_ID_BYTES`; NULL with 0 when not wanted; emptied first, so an empty id after
 * the call means nothing was committed). Handles opened on the stores stay usable; after a
 * commit that resized or otherwise changed an array, the other ranks refresh their handles
 * on it (`zarr_array_refresh`). When another writer committed on the branch meanwhile, rank
 * 0 rebases its session (holding every rank's changes) onto that commit and commits again,
 * once; `ZARR_ERR_CONFLICT` remains only when the changes conflict.
 *
 * The ranks write disjoint stored objects (whole chunks, or whole shards of a sharded
 * array), as `zarr_mpi_write` does, and create, resize or change arrays and groups only
 * on rank 0; other ranks see such changes once committed. So: rank 0 creates the
 * repository and the arrays and commits them with `zarr_store_commit` (changes are not
 * merged into a repository's first snapshot), then every rank opens its store and the
 * arrays (`zarr_mpi_array_open`), then per step `zarr_mpi_write` and `zarr_mpi_commit`.
 * `zarr_mpi_append` does not work on a repository: rank 0's growth of the array is not
 * visible to the other ranks' sessions before a commit (they report that their refreshed
 * handle does not see the new shape, and the growth is taken back).
 *
 * On failure before the commit (on any rank) nothing is committed and every rank keeps its
 * uncommitted changes (rank 0's may include some merged from others): give the step up
 * with `zarr_store_discard` on every rank, or retry (after `zarr_store_rebase` on every
 * rank when the failure was a conflict, so that all stores read the same snapshot again).
 * When the commit succeeded but a rank's discard or rebase failed, that error is returned
 * on every rank and `id_buf` holds the commit's id on every rank.
 *
 * Errors: `ZARR_ERR_NULL_ARG` (`store` or `message` NULL, `id_buf` NULL with `id_len` above
 * 0), `ZARR_ERR_BUFFER_SIZE` (`id_len` too small: nothing done), `ZARR_ERR_OVERFLOW`
 * (changes beyond what MPI counts), and those of `zarr_store_changes_export`,
 * `zarr_store_changes_merge` (naming the rank whose changes it was), `zarr_store_commit`
 * (`ZARR_ERR_INVALID_ARG` when no rank wrote anything), `zarr_store_discard` and
 * `zarr_store_rebase` (`ZARR_ERR_CONFLICT` when the changes conflict with a commit made
 * meanwhile); each from the lowest failing rank, on every rank.
 *
 * Ownership: `message` is only read (on rank 0); the id is copied into `id_buf`.
 *
 * Thread safety: collective over `comm`, once the ranks' writes through their stores are
 * done.
 */
zarr_status_t zarr_mpi_commit(MPI_Comm comm, const zarr_store_t *store, const char *message,
                              char *id_buf, size_t id_len);

/**
 * Sets the number of aggregator ranks of later collective writes (`count` above 0; more
 * than the communicator's ranks means all of them), or restores the default (0): one
 * aggregator per node (the ranks of `MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)`) when the
 * communicator spans several nodes, every rank when it lies on one node. Aggregators are
 * taken one per node in turn (the first rank of each node, then the second, ...), as
 * ROMIO spreads `cb_nodes`. Without a call, the environment variable
 * `ZARR_MPI_AGGREGATORS` (a positive integer) is used when set. A collective call uses
 * rank 0's setting.
 *
 * Errors: `ZARR_ERR_INVALID_ARG` (`count` below 0).
 *
 * Ownership: nothing changes hands.
 *
 * Thread safety: any thread; collective calls that have started keep the value they read.
 */
zarr_status_t zarr_mpi_set_aggregators(int count);

/**
 * Sets how many bytes of stored objects one aggregator assembles in a round (0 restores
 * the default, `ZARR_MPI_DEFAULT_BUFFER_BYTES`): the objects of an aggregator are taken in
 * order into rounds of at most this many bytes of their decoded size (an object larger
 * than the buffer gets a round of its own). An aggregator holds about this much of received
 * pieces plus the object it is assembling (and libzarr's buffers to encode it); every rank
 * also holds, during a round, a packed copy of the parts of its block that go to other
 * ranks (its own parts are never copied). More rounds mean more collective exchanges. Without a call, the environment variable
 * `ZARR_MPI_BUFFER_BYTES` (bytes, with an optional suffix k, m or g for KiB, MiB, GiB)
 * is used when set. A collective call uses rank 0's setting.
 *
 * Errors: only the usual ones.
 *
 * Ownership: nothing changes hands.
 *
 * Thread safety: any thread; collective calls that have started keep the value they read.
 */
zarr_status_t zarr_mpi_set_buffer_bytes(size_t bytes);

/**
 * Turns on (`on` nonzero) or off the encoding of chunks by the ranks that hold (most of)
 * them in later collective writes (see the header's conventions): only encoded bytes then
 * reach the aggregators (the parts of a chunk split between ranks travel raw to its
 * encoder first), and the ranks share the compression. Off by default: on one node, where
 * the pieces travel through shared memory, it measured faster only with a slow codec
 * (zlib, at 2 ranks) and slower with blosc (the aggregators encode with their worker
 * threads from their own blocks); across nodes it sends the compressed size instead of
 * the raw one. Without a call, the environment variable `ZARR_MPI_ENCODE_WHERE_HELD` (0 or
 * 1) is used when set. A collective call uses rank 0's setting.
 *
 * Errors: only the usual ones.
 *
 * Ownership: nothing changes hands.
 *
 * Thread safety: any thread; collective calls that have started keep the value they read.
 */
zarr_status_t zarr_mpi_set_encode_where_held(int on);

/**
 * Copies the calling thread's last error message of this layer into `buf` (string output
 * convention of zarr.h: always NUL-terminated, `*needed` gets the full size with the NUL,
 * `ZARR_ERR_BUFFER_SIZE` when truncated). After a failed collective call every rank has the
 * same message, which starts with `rank N: `, N the lowest failing rank.
 *
 * Errors: `ZARR_ERR_BUFFER_SIZE` (truncated), `ZARR_ERR_NULL_ARG` (`buf` NULL with `len`
 * above 0).
 *
 * Ownership: the text is copied into the caller's `buf`.
 *
 * Thread safety: any thread; each thread has its own last message.
 */
zarr_status_t zarr_mpi_last_error(char *buf, size_t len, size_t *needed);

/**
 * Copies into `*out_stats` what the calling thread's last `zarr_mpi_write` or
 * `zarr_mpi_append` did on this rank (all zeros before the first, and for a call refused
 * before any data moved).
 *
 * Errors: only the usual ones.
 *
 * Ownership: the result goes to the caller's output.
 *
 * Thread safety: any thread; each thread has its own statistics.
 */
zarr_status_t zarr_mpi_last_stats(zarr_mpi_stats_t *out_stats);

/**
 * `zarr_mpi_array_open` with the communicator as a Fortran handle (`MPI_Fint`: `mpi_f08`'s
 * `MPI_Comm%MPI_VAL`, or the integer of the `mpi` module), converted by `MPI_Comm_f2c`:
 * what the Fortran module `zarr_mpi` calls. Errors, ownership and thread safety: as
 * `zarr_mpi_array_open`.
 */
zarr_status_t zarr_mpi_array_open_f(MPI_Fint comm, const zarr_store_t *store, const char *path,
                                    zarr_mode_t mode, zarr_array_t **out_array);

/**
 * `zarr_mpi_write` with the communicator as a Fortran handle (see `zarr_mpi_array_open_f`).
 * Errors, ownership and thread safety: as `zarr_mpi_write`.
 */
zarr_status_t zarr_mpi_write_f(MPI_Fint comm, const zarr_array_t *array, size_t ndim,
                               const uint64_t *start, const uint64_t *count,
                               zarr_dtype_t mem_dtype, zarr_order_t order, const void *buf,
                               size_t buf_bytes);

/**
 * `zarr_mpi_append` with the communicator as a Fortran handle (see `zarr_mpi_array_open_f`).
 * Errors, ownership and thread safety: as `zarr_mpi_append`.
 */
zarr_status_t zarr_mpi_append_f(MPI_Fint comm, const zarr_array_t *array, size_t axis,
                                size_t ndim, const uint64_t *start, const uint64_t *count,
                                zarr_dtype_t mem_dtype, zarr_order_t order, const void *buf,
                                size_t buf_bytes);

/**
 * `zarr_mpi_commit` with the communicator as a Fortran handle (see `zarr_mpi_array_open_f`).
 * Errors, ownership and thread safety: as `zarr_mpi_commit`.
 */
zarr_status_t zarr_mpi_commit_f(MPI_Fint comm, const zarr_store_t *store, const char *message,
                                char *id_buf, size_t id_len);

#ifdef __cplusplus
}
#endif

#endif /* ZARR_MPI_H */
