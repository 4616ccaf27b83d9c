/*
 * zarr_mpi.c — collective writes and appends of libzarr arrays over MPI (two-phase I/O).
 *
 * This file is the whole MPI layer (include/zarr_mpi.h documents its calls). It sits above
 * libzarr's C interface and uses nothing else of libzarr, so it lives apart from the Rust
 * sources (src/), in a library of its own that links MPI while libzarr.so never does.
 *
 * A collective write goes:
 *   1. prepare: rank 0 broadcasts the settings and its handle's shape; every rank checks its
 *      arguments and its handle's shape; the statuses are agreed (one MPI_Allreduce, and a
 *      broadcast of the lowest failing rank's message when there is one);
 *   2. plan: every rank lists the stored objects (chunks, shards) its block touches
 *      (zarr_array_region_chunks) by their C-order index in the grid; an MPI_Allgatherv of
 *      these indices gives every rank the sorted union. The union is split into contiguous
 *      ranges, one per aggregator, and each aggregator's range into rounds that hold at
 *      most the buffer setting; every rank computes the same plan, so nothing else is sent;
 *   3. rounds: each rank packs, for every object of the round its block touches, the piece
 *      (block ∩ object, in C order) behind a header (object, start, count), sends the counts
 *      (MPI_Alltoall) then the pieces (MPI_Alltoallv); each aggregator assembles each of its
 *      objects in the bounding box of the pieces it got and writes it with one
 *      zarr_array_write; the round's statuses are agreed.
 */
#include "zarr_mpi.h"

#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MESSAGE_BYTES 2048
/* The dimensions of a shape broadcast at once (longer shapes go in several). */
#define SHAPE_BATCH 64

/* ---- errors and settings ----------------------------------------------------------- */

static _Thread_local char last_error[MESSAGE_BYTES];
static _Thread_local zarr_mpi_stats_t last_stats;

/* -1 until a setter is called: then the environment is read. */
static atomic_int setting_aggregators = -1;
static atomic_llong setting_buffer = -1;
static atomic_int setting_encode = -1;

/* A rank's local error: the first failure wins. */
typedef struct {
    zarr_status_t status;
    char message[MESSAGE_BYTES];
} error_t_;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void fail(error_t_ *e, zarr_status_t status, const char *format, ...) {
    if (e->status != ZARR_OK) return;
    e->status = status;
    va_list args;
    va_start(args, format);
    vsnprintf(e->message, sizeof e->message, format, args);
    va_end(args);
}

/* A failure of a libzarr call: its message follows `what`. */
static void fail_zarr(error_t_ *e, zarr_status_t status, const char *what) {
    char message[MESSAGE_BYTES];
    if (zarr_last_error(message, sizeof message, NULL) == ZARR_ERR_NULL_ARG) message[0] = 0;
    fail(e, status, "%s: %s", what, message);
}

static void set_last_error(const char *message) {
    snprintf(last_error, sizeof last_error, "%s", message);
}

/*
 * Agrees on the status of a collective step: every rank gets the status and the message
 * of the lowest failing rank (prefixed with "rank N: "), or ZARR_OK. With `inout_max`, the
 * largest value of the ranks comes back in it (carried by the same MPI_Allreduce).
 */
static zarr_status_t agree(MPI_Comm comm, error_t_ *e, uint64_t *inout_max) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    uint64_t v[2] = {e->status != ZARR_OK ? (uint64_t)(size - rank) : 0,
                     inout_max ? *inout_max : 0};
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_UINT64_T, MPI_MAX, comm);
    if (inout_max) *inout_max = v[1];
    if (v[0] == 0) return ZARR_OK;
    int root = size - (int)v[0];
    struct {
        int32_t status;
        char message[MESSAGE_BYTES];
    } packet;
    memset(&packet, 0, sizeof packet);
    if (rank == root) {
        packet.status = e->status;
        snprintf(packet.message, sizeof packet.message, "rank %d: %.2000s", rank, e->message);
    }
    MPI_Bcast(&packet, (int)sizeof packet, MPI_BYTE, root, comm);
    packet.message[MESSAGE_BYTES - 1] = 0;
    e->status = packet.status;
    snprintf(e->message, sizeof e->message, "%s", packet.message);
    set_last_error(packet.message);
    return packet.status;
}

zarr_status_t zarr_mpi_set_aggregators(int count) {
    if (count < 0) {
        set_last_error("zarr_mpi_set_aggregators: count is negative");
        return ZARR_ERR_INVALID_ARG;
    }
    atomic_store(&setting_aggregators, count);
    return ZARR_OK;
}

zarr_status_t zarr_mpi_set_buffer_bytes(size_t bytes) {
    long long value = bytes > (size_t)LLONG_MAX ? LLONG_MAX : (long long)bytes;
    atomic_store(&setting_buffer, value);
    return ZARR_OK;
}

zarr_status_t zarr_mpi_set_encode_where_held(int on) {
    atomic_store(&setting_encode, on != 0);
    return ZARR_OK;
}

zarr_status_t zarr_mpi_last_error(char *buf, size_t len, size_t *needed) {
    size_t full = strlen(last_error) + 1;
    if (needed) *needed = full;
    if (!buf) {
        if (len > 0) return ZARR_ERR_NULL_ARG;
        return full > 1 ? ZARR_ERR_BUFFER_SIZE : ZARR_OK;
    }
    if (len == 0) return ZARR_ERR_BUFFER_SIZE;
    size_t n = full <= len ? full - 1 : len - 1;
    memcpy(buf, last_error, n);
    buf[n] = 0;
    return full <= len ? ZARR_OK : ZARR_ERR_BUFFER_SIZE;
}

zarr_status_t zarr_mpi_last_stats(zarr_mpi_stats_t *out_stats) {
    if (!out_stats) return ZARR_ERR_NULL_ARG;
    *out_stats = last_stats;
    return ZARR_OK;
}

/* The settings as rank 0 reads them: a setter's value, else the environment's. */
static void read_settings(uint64_t *aggregators, uint64_t *buffer, uint64_t *encode,
                          error_t_ *e) {
    int on = atomic_load(&setting_encode);
    *encode = on > 0;
    if (on < 0) {
        const char *text = getenv("ZARR_MPI_ENCODE_WHERE_HELD");
        if (text && *text && strcmp(text, "0") != 0 && strcmp(text, "1") != 0)
            fail(e, ZARR_ERR_INVALID_ARG, "ZARR_MPI_ENCODE_WHERE_HELD is \"%s\": not 0 or 1",
                 text);
        *encode = text && strcmp(text, "1") == 0;
    }
    int count = atomic_load(&setting_aggregators);
    *aggregators = 0;
    if (count >= 0) {
        *aggregators = (uint64_t)count;
    } else {
        const char *text = getenv("ZARR_MPI_AGGREGATORS");
        if (text && *text) {
            char *end = NULL;
            unsigned long long v = strtoull(text, &end, 10);
            if (*end || text[0] == '-' || v == 0 || v > INT_MAX)
                fail(e, ZARR_ERR_INVALID_ARG,
                     "ZARR_MPI_AGGREGATORS is \"%s\": not a positive integer", text);
            else
                *aggregators = v;
        }
    }
    long long bytes = atomic_load(&setting_buffer);
    *buffer = ZARR_MPI_DEFAULT_BUFFER_BYTES;
    if (bytes > 0) {
        *buffer = (uint64_t)bytes;
    } else if (bytes < 0) {
        const char *text = getenv("ZARR_MPI_BUFFER_BYTES");
        if (text && *text) {
            char *end = NULL;
            unsigned long long v = strtoull(text, &end, 10);
            unsigned shift = 0;
            if (*end == 'k' || *end == 'K') shift = 10;
            if (*end == 'm' || *end == 'M') shift = 20;
            if (*end == 'g' || *end == 'G') shift = 30;
            if (shift) end++;
            if (*end || text[0] == '-' || v == 0 || v > (UINT64_MAX >> shift))
                fail(e, ZARR_ERR_INVALID_ARG,
                     "ZARR_MPI_BUFFER_BYTES is \"%s\": not a positive size (bytes, or with "
                     "k, m or g)",
                     text);
            else
                *buffer = (uint64_t)v << shift;
        }
    }
}

/* ---- the communicator's nodes, kept as an attribute of the communicator -------------- */

typedef struct {
    int nodes;
    int *order; /* ranks by (rank on its node, node): the order aggregators are taken in */
} topology_t;

static int topology_keyval = MPI_KEYVAL_INVALID;

static int topology_delete(MPI_Comm comm, int keyval, void *attribute, void *extra) {
    (void)comm;
    (void)keyval;
    (void)extra;
    topology_t *t = attribute;
    free(t->order);
    free(t);
    return MPI_SUCCESS;
}

typedef struct {
    int local, leader, rank;
} placement_t;

static int compare_placement(const void *a, const void *b) {
    const placement_t *x = a, *y = b;
    if (x->local != y->local) return x->local < y->local ? -1 : 1;
    if (x->leader != y->leader) return x->leader < y->leader ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The nodes of `comm` (computed collectively once, then kept on the communicator). */
static zarr_status_t topology(MPI_Comm comm, const topology_t **out, error_t_ *e) {
    int rank = 0, size = 1, flag = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (topology_keyval == MPI_KEYVAL_INVALID)
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, topology_delete, &topology_keyval, NULL);
    void *attribute = NULL;
    MPI_Comm_get_attr(comm, topology_keyval, &attribute, &flag);
    if (flag) {
        *out = attribute;
        return ZARR_OK;
    }
    MPI_Comm node;
    int local = 0, leader = rank;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Bcast(&leader, 1, MPI_INT, 0, node);
    MPI_Comm_free(&node);
    topology_t *t = calloc(1, sizeof *t);
    placement_t *all = malloc(sizeof *all * (size_t)size);
    int *pairs = malloc(sizeof *pairs * 2 * (size_t)size);
    if (t) t->order = malloc(sizeof *t->order * (size_t)size);
    if (!t || !t->order || !all || !pairs)
        fail(e, ZARR_ERR_NO_MEMORY, "no memory for the communicator's %d ranks", size);
    zarr_status_t status = agree(comm, e, NULL);
    if (status == ZARR_OK) {
        int mine[2] = {local, leader};
        MPI_Allgather(mine, 2, MPI_INT, pairs, 2, MPI_INT, comm);
        for (int r = 0; r < size; r++)
            all[r] = (placement_t){pairs[2 * r], pairs[2 * r + 1], r};
        qsort(all, (size_t)size, sizeof *all, compare_placement);
        for (int r = 0; r < size; r++) {
            t->order[r] = all[r].rank;
            t->nodes += all[r].local == 0;
        }
        MPI_Comm_set_attr(comm, topology_keyval, t);
        *out = t;
        t = NULL;
    }
    if (t) free(t->order);
    free(t);
    free(all);
    free(pairs);
    return status;
}

/* ---- boxes ------------------------------------------------------------------------- */

/* The number of elements of a box; false on overflow. */
static bool volume(const uint64_t *count, size_t ndim, uint64_t *out) {
    uint64_t v = 1;
    for (size_t d = 0; d < ndim; d++) {
        if (count[d] != 0 && v > UINT64_MAX / count[d]) return false;
        v *= count[d];
    }
    *out = v;
    return true;
}

/* a ∩ b into out; false when empty. */
static bool intersect(const uint64_t *a_start, const uint64_t *a_count, const uint64_t *b_start,
                      const uint64_t *b_count, size_t ndim, uint64_t *out_start,
                      uint64_t *out_count) {
    for (size_t d = 0; d < ndim; d++) {
        uint64_t lo = a_start[d] > b_start[d] ? a_start[d] : b_start[d];
        uint64_t a_end = a_start[d] + a_count[d], b_end = b_start[d] + b_count[d];
        uint64_t hi = a_end < b_end ? a_end : b_end;
        if (hi <= lo) return false;
        out_start[d] = lo;
        out_count[d] = hi - lo;
    }
    return true;
}

/* Element strides of a box of extents `count` laid out in C or F order. */
static void strides(const uint64_t *count, size_t ndim, zarr_order_t order, uint64_t *out) {
    uint64_t s = 1;
    if (order == ZARR_ORDER_F) {
        for (size_t d = 0; d < ndim; d++) {
            out[d] = s;
            s *= count[d];
        }
    } else {
        for (size_t d = ndim; d-- > 0;) {
            out[d] = s;
            s *= count[d];
        }
    }
}

/*
 * Copies the elements of a box of extents `count` from `src` (element strides `src_strides`)
 * to `dst` (`dst_strides`), `item` bytes each; with `dst` NULL, marks the box's elements in
 * the byte map `map` instead (laid out as `dst_strides`). `index` is scratch of `ndim`.
 */
static void copy_box(char *dst, unsigned char *map, const uint64_t *dst_strides, const char *src,
                     const uint64_t *src_strides, const uint64_t *count, size_t ndim,
                     size_t item, uint64_t *index) {
    size_t last = ndim - 1;
    for (size_t d = 0; d < ndim; d++) {
        if (count[d] == 0) return;
        index[d] = 0;
    }
    bool rows = dst_strides[last] == 1 && src_strides[last] == 1;
    for (;;) {
        uint64_t dst_at = 0, src_at = 0;
        for (size_t d = 0; d < last; d++) {
            dst_at += index[d] * dst_strides[d];
            src_at += index[d] * src_strides[d];
        }
        if (map) {
            if (dst_strides[last] == 1) {
                memset(map + dst_at, 1, (size_t)count[last]);
            } else {
                for (uint64_t i = 0; i < count[last]; i++) map[dst_at + i * dst_strides[last]] = 1;
            }
        } else if (rows) {
            memcpy(dst + dst_at * item, src + src_at * item, (size_t)count[last] * item);
        } else {
            for (uint64_t i = 0; i < count[last]; i++)
                memcpy(dst + (dst_at + i * dst_strides[last]) * item,
                       src + (src_at + i * src_strides[last]) * item, item);
        }
        size_t d = last;
        for (;;) {
            if (d == 0) return;
            d--;
            if (++index[d] < count[d]) break;
            index[d] = 0;
        }
    }
}

/* ---- a collective call's context --------------------------------------------------- */

typedef struct {
    MPI_Comm comm;
    int rank, size;
    const zarr_array_t *array;
    size_t ndim;      /* the handle's rank */
    uint64_t *shape;  /* the handle's shape (rank 0's, once checked) */
    zarr_dtype_t dtype;
    size_t item;
    uint64_t aggregators_setting, buffer;
    bool encode; /* chunks encoded by the ranks that hold them, where they can be */
    int naggregators;
    const int *aggregators; /* ranks, in the order objects are dealt out */
    /* 14 * ndim numbers: 0-6 the exchange's and grow's, 7 object_region's, 8-13
     * write_object's */
    uint64_t *scratch;
} context_t;

static void context_free(context_t *c) {
    free(c->shape);
    free(c->scratch);
    c->shape = c->scratch = NULL;
}

/* Number i of the handle's layout: its shape, then (in scratch while preparing) its chunk
 * shape and its grid shape. */
static uint64_t layout_number(const context_t *c, uint64_t i) {
    return i < c->ndim ? c->shape[i] : c->scratch[i - c->ndim];
}

/*
 * Every rank learns its communicator's size and its handle's rank, shape and type; rank 0
 * broadcasts the settings, its shape, chunk shape and grid shape, which every other handle
 * must equal. Local failures are left in `e` for the caller's agree().
 */
static void prepare(MPI_Comm comm, const zarr_array_t *array, context_t *c, error_t_ *e) {
    memset(c, 0, sizeof *c);
    c->comm = comm;
    c->array = array;
    MPI_Comm_rank(comm, &c->rank);
    MPI_Comm_size(comm, &c->size);
    zarr_status_t st = zarr_array_rank(array, &c->ndim);
    if (st != ZARR_OK) {
        fail_zarr(e, st, "zarr_array_rank");
        c->ndim = 0;
    }
    if (c->ndim > 0) {
        c->shape = malloc(sizeof *c->shape * c->ndim);
        c->scratch = malloc(sizeof *c->scratch * 14 * c->ndim);
        if (!c->shape || !c->scratch) {
            fail(e, ZARR_ERR_NO_MEMORY, "no memory for a shape of %zu dimensions", c->ndim);
        } else if ((st = zarr_array_shape(array, c->ndim, c->shape)) != ZARR_OK) {
            fail_zarr(e, st, "zarr_array_shape");
        } else if ((st = zarr_array_dtype(array, &c->dtype)) != ZARR_OK) {
            fail_zarr(e, st, "zarr_array_dtype");
        } else if ((st = zarr_array_item_size(array, &c->item)) != ZARR_OK) {
            fail_zarr(e, st, "zarr_array_item_size");
        } else if ((st = zarr_array_chunk_shape(array, c->ndim, c->scratch)) != ZARR_OK) {
            fail_zarr(e, st, "zarr_array_chunk_shape");
        } else if ((st = zarr_array_chunk_grid_shape(array, c->ndim, c->scratch + c->ndim)) !=
                   ZARR_OK) {
            fail_zarr(e, st, "zarr_array_chunk_grid_shape");
        }
    } else if (e->status == ZARR_OK) {
        fail(e, ZARR_ERR_UNSUPPORTED, "0-dimensional arrays are not written collectively");
    }
    /* Rank 0's settings and shape; a rank 0 that failed sends an empty shape. */
    uint64_t header[4] = {0, 0, 0, 0};
    if (c->rank == 0) {
        read_settings(&header[0], &header[1], &header[3], e);
        header[2] = e->status == ZARR_OK ? (uint64_t)c->ndim : 0;
    }
    MPI_Bcast(header, 4, MPI_UINT64_T, 0, comm);
    c->aggregators_setting = header[0];
    c->buffer = header[1];
    c->encode = header[3] != 0;
    /* Rank 0's shape, chunk shape and grid shape (objects per dimension), compared. */
    bool differs = header[2] != (uint64_t)c->ndim;
    uint64_t batch[SHAPE_BATCH], first_difference = 0, total = 3 * header[2];
    for (uint64_t at = 0; at < total; at += SHAPE_BATCH) {
        int n = (int)(total - at < SHAPE_BATCH ? total - at : SHAPE_BATCH);
        for (int i = 0; i < n && c->rank == 0; i++) batch[i] = layout_number(c, at + (uint64_t)i);
        MPI_Bcast(batch, n, MPI_UINT64_T, 0, comm);
        for (int i = 0; i < n && !differs && e->status == ZARR_OK; i++)
            if (batch[i] != layout_number(c, at + (uint64_t)i)) {
                differs = true;
                first_difference = at + (uint64_t)i;
            }
    }
    if (header[2] > 0 && differs && c->rank != 0 && first_difference < c->ndim)
        fail(e, ZARR_ERR_INVALID_ARG,
             "this rank's handle does not see the shape rank 0's sees (%zu dimensions, "
             "first difference at dimension %llu): the array changed since it was opened "
             "or refreshed (zarr_array_refresh), or the ranks passed different arrays",
             c->ndim, (unsigned long long)first_difference);
    else if (header[2] > 0 && differs && c->rank != 0)
        fail(e, ZARR_ERR_INVALID_ARG,
             "this rank's array is not chunked as rank 0's (its %s differs at dimension "
             "%llu): the ranks passed different arrays",
             first_difference < 2 * c->ndim ? "chunk shape" : "grid of stored objects",
             (unsigned long long)(first_difference % c->ndim));
}

/* Checks a block's arguments against the handle (`axis` < ndim: the block of a step). */
static void check_block(const context_t *c, size_t ndim, const uint64_t *start,
                        const uint64_t *count, zarr_dtype_t mem_dtype, zarr_order_t order,
                        const void *buf, size_t buf_bytes, size_t axis, error_t_ *e) {
    if (e->status != ZARR_OK) return;
    if (!start || !count) {
        fail(e, ZARR_ERR_NULL_ARG, "%s is NULL", start ? "count" : "start");
        return;
    }
    if (ndim != c->ndim) {
        fail(e, ZARR_ERR_RANK_MISMATCH, "ndim is %zu but the array has %zu dimensions", ndim,
             c->ndim);
        return;
    }
    if (c->dtype == ZARR_DTYPE_STRING || c->dtype == ZARR_DTYPE_BYTES) {
        fail(e, ZARR_ERR_UNSUPPORTED,
             "variable-length arrays are not written collectively (zarr_array_write_vlen)");
        return;
    }
    if (mem_dtype != c->dtype) {
        fail(e, ZARR_ERR_DTYPE_MISMATCH, "mem_dtype is %s but the array's type is %s",
             zarr_dtype_name(mem_dtype) ? zarr_dtype_name(mem_dtype) : "unknown",
             zarr_dtype_name(c->dtype) ? zarr_dtype_name(c->dtype) : "unknown");
        return;
    }
    if (order != ZARR_ORDER_C && order != ZARR_ORDER_F) {
        fail(e, ZARR_ERR_INVALID_ARG, "order %d is neither ZARR_ORDER_C nor ZARR_ORDER_F",
             (int)order);
        return;
    }
    for (size_t d = 0; d < ndim; d++) {
        if (start[d] > UINT64_MAX - count[d]) {
            fail(e, ZARR_ERR_OVERFLOW, "start[%zu] + count[%zu] overflows", d, d);
            return;
        }
        if (d != axis && start[d] + count[d] > c->shape[d]) {
            fail(e, ZARR_ERR_OUT_OF_BOUNDS,
                 "the block leaves the array: start[%zu] + count[%zu] = %llu + %llu > extent "
                 "%llu",
                 d, d, (unsigned long long)start[d], (unsigned long long)count[d],
                 (unsigned long long)c->shape[d]);
            return;
        }
    }
    uint64_t n = 0;
    if (!volume(count, ndim, &n) || (c->item && n > SIZE_MAX / c->item)) {
        fail(e, ZARR_ERR_OVERFLOW, "the block's size overflows");
        return;
    }
    if (n * c->item != buf_bytes) {
        fail(e, ZARR_ERR_BUFFER_SIZE,
             "buf_bytes is %zu but the block holds %llu elements of %zu bytes (%llu bytes)",
             buf_bytes, (unsigned long long)n, c->item, (unsigned long long)(n * c->item));
        return;
    }
    if (!buf && buf_bytes > 0) fail(e, ZARR_ERR_NULL_ARG, "buf is NULL");
}

/* ---- two-phase write --------------------------------------------------------------- */

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* One piece an aggregator writes: received, or its own block's (never copied). */
typedef struct {
    uint64_t object; /* index into the plan's objects */
    const uint64_t *start, *count;
    const char *data;
    const uint64_t *strides; /* element strides of `data`; NULL: C order of `count` */
    int sender;
    /* An encoded chunk instead (`start`, `count` and `strides` unused): chunk `unit` of
     * the object, `bytes` long, or not stored when `!stored`. */
    bool encoded, stored;
    uint64_t unit, bytes;
} piece_t;

static int compare_piece(const void *a, const void *b) {
    const piece_t *x = a, *y = b;
    if (x->object != y->object) return x->object < y->object ? -1 : 1;
    return (x->sender > y->sender) - (x->sender < y->sender);
}

typedef struct {
    uint64_t nobjects;
    uint64_t *ids;     /* sorted C-order indices in the grid */
    uint64_t *rounds;  /* round of each object */
    uint64_t nrounds;
    uint64_t *grid;    /* objects per dimension */
    /* this rank's block */
    size_t nmine;
    uint64_t *mine;    /* plan indices of the objects the block touches */
} plan_t;

static void plan_free(plan_t *p) {
    free(p->ids);
    free(p->rounds);
    free(p->grid);
    free(p->mine);
    memset(p, 0, sizeof *p);
}

/* Aggregator (index into c->aggregators) of plan object k: contiguous ranges. */
static int owner(const context_t *c, const plan_t *p, uint64_t k) {
    uint64_t n = (uint64_t)c->naggregators;
    if (p->nobjects <= UINT64_MAX / n) return (int)(k * n / p->nobjects);
    return (int)(k / (p->nobjects / n + 1));
}

static void unravel(uint64_t id, const uint64_t *grid, size_t ndim, uint64_t *index) {
    for (size_t d = ndim; d-- > 0;) {
        index[d] = id % grid[d];
        id /= grid[d];
    }
}

/* The region of plan object k (its chunk or shard, clipped to the shape). */
static zarr_status_t object_region(const context_t *c, const plan_t *p, uint64_t k,
                                   uint64_t *start, uint64_t *count, error_t_ *e) {
    uint64_t *index = c->scratch + 7 * c->ndim;
    unravel(p->ids[k], p->grid, c->ndim, index);
    zarr_status_t st = zarr_array_chunk_region(c->array, c->ndim, index, start, count);
    if (st != ZARR_OK) fail_zarr(e, st, "zarr_array_chunk_region");
    return st;
}

/*
 * Lists the objects the block touches, gathers the union and splits it into aggregators'
 * ranges and rounds. Collective; local failures end in agree().
 */
static zarr_status_t make_plan(const context_t *c, const uint64_t *start, const uint64_t *count,
                               plan_t *p, error_t_ *e) {
    memset(p, 0, sizeof *p);
    size_t ndim = c->ndim;
    uint64_t n = 0;
    uint64_t *indices = NULL;
    p->grid = malloc(sizeof *p->grid * ndim);
    if (!p->grid) fail(e, ZARR_ERR_NO_MEMORY, "no memory for the grid's shape");
    zarr_status_t st;
    if (e->status == ZARR_OK &&
        (st = zarr_array_chunk_grid_shape(c->array, ndim, p->grid)) != ZARR_OK)
        fail_zarr(e, st, "zarr_array_chunk_grid_shape");
    uint64_t total = 1;
    if (e->status == ZARR_OK && !volume(p->grid, ndim, &total))
        fail(e, ZARR_ERR_OVERFLOW, "the grid has more than 2^64 chunks");
    if (e->status == ZARR_OK && !volume(count, ndim, &n)) n = 0;
    if (e->status == ZARR_OK && n > 0) {
        size_t found = 0;
        st = zarr_array_region_chunks(c->array, ndim, start, count, NULL, 0, &found);
        if (st != ZARR_OK && st != ZARR_ERR_BUFFER_SIZE) {
            fail_zarr(e, st, "zarr_array_region_chunks");
        } else if (found > INT_MAX || found > SIZE_MAX / sizeof(uint64_t) / ndim) {
            fail(e, ZARR_ERR_OVERFLOW, "the block touches %zu objects, more than MPI counts",
                 found);
        } else {
            indices = malloc(sizeof *indices * ndim * (found ? found : 1));
            p->mine = malloc(sizeof *p->mine * (found ? found : 1));
            if (!indices || !p->mine) {
                fail(e, ZARR_ERR_NO_MEMORY, "no memory for the %zu objects of the block", found);
            } else if ((st = zarr_array_region_chunks(c->array, ndim, start, count, indices,
                                                      found, &found)) != ZARR_OK) {
                fail_zarr(e, st, "zarr_array_region_chunks");
            } else {
                p->nmine = found;
                for (size_t i = 0; i < found; i++) {
                    uint64_t id = 0;
                    for (size_t d = 0; d < ndim; d++) id = id * p->grid[d] + indices[i * ndim + d];
                    p->mine[i] = id;
                }
            }
        }
    }
    free(indices);
    int *counts = malloc(sizeof *counts * (size_t)c->size);
    int *displs = malloc(sizeof *displs * (size_t)c->size);
    if (!counts || !displs) fail(e, ZARR_ERR_NO_MEMORY, "no memory for %d counts", c->size);
    if ((st = agree(c->comm, e, NULL)) != ZARR_OK) goto done;
    int nmine = (int)p->nmine;
    MPI_Allgather(&nmine, 1, MPI_INT, counts, 1, MPI_INT, c->comm);
    uint64_t all = 0;
    for (int r = 0; r < c->size; r++) {
        displs[r] = (int)all;
        all += (uint64_t)counts[r];
    }
    if (all > INT_MAX) {
        fail(e, ZARR_ERR_OVERFLOW, "the blocks touch %llu objects in all, more than MPI counts",
             (unsigned long long)all);
    } else {
        p->ids = malloc(sizeof *p->ids * (all ? all : 1));
        if (!p->ids) fail(e, ZARR_ERR_NO_MEMORY, "no memory for %llu object indices",
                          (unsigned long long)all);
    }
    if ((st = agree(c->comm, e, NULL)) != ZARR_OK) goto done;
    MPI_Allgatherv(p->mine ? p->mine : (uint64_t *)p->ids, nmine, MPI_UINT64_T, p->ids, counts,
                   displs, MPI_UINT64_T, c->comm);
    /* The union, sorted; this rank's objects become indices into it. */
    qsort(p->ids, (size_t)all, sizeof *p->ids, compare_u64);
    uint64_t unique = 0;
    for (uint64_t i = 0; i < all; i++)
        if (unique == 0 || p->ids[unique - 1] != p->ids[i]) p->ids[unique++] = p->ids[i];
    p->nobjects = unique;
    for (size_t i = 0; i < p->nmine; i++) {
        const uint64_t *at = bsearch(&p->mine[i], p->ids, (size_t)unique, sizeof *p->ids,
                                     compare_u64);
        p->mine[i] = (uint64_t)(at - p->ids);
    }
    /* Rounds: each aggregator's objects in order, at most the buffer's bytes a round. */
    p->rounds = malloc(sizeof *p->rounds * (unique ? unique : 1));
    if (!p->rounds) fail(e, ZARR_ERR_NO_MEMORY, "no memory for %llu objects",
                         (unsigned long long)unique);
    uint64_t *ostart = c->scratch, *ocount = c->scratch + ndim;
    int current = -1;
    uint64_t round = 0, held = 0;
    for (uint64_t k = 0; k < unique && e->status == ZARR_OK; k++) {
        if (object_region(c, p, k, ostart, ocount, e) != ZARR_OK) break;
        uint64_t elements = 0, bytes = UINT64_MAX;
        if (volume(ocount, ndim, &elements) && elements <= UINT64_MAX / c->item)
            bytes = elements * c->item;
        int a = owner(c, p, k);
        if (a != current) {
            current = a;
            round = 0;
            held = 0;
        } else if (held > 0 && (bytes > c->buffer || held > c->buffer - bytes)) {
            round++;
            held = 0;
        }
        held = bytes > UINT64_MAX - held ? UINT64_MAX : held + bytes;
        p->rounds[k] = round;
        if (round + 1 > p->nrounds) p->nrounds = round + 1;
    }
    st = agree(c->comm, e, NULL);
done:
    free(counts);
    free(displs);
    return st;
}

/* ---- encoding where the data is ----------------------------------------------------- */

/* Marks the header word of an encoded chunk in a round's messages. */
#define ENCODED_PIECE (UINT64_C(1) << 63)

/* Which objects have their chunks encoded by the ranks that hold them, and the buffers
 * to encode with. */
typedef struct {
    bool possible;      /* a regular grid, sharded at most once, blocks that do not overlap */
    bool split;         /* some encoded object has a chunk split between ranks */
    uint64_t *blocks;   /* every rank's block: its start, then its count */
    uint64_t *shape;    /* the array's shape, then scratch numbers (see plan_encoding) */
    uint64_t *unit;     /* the chunk (inner chunk) shape */
    uint64_t *per;      /* chunks per object along each dimension */
    uint64_t nunits;    /* chunks per object */
    size_t bound;       /* most bytes of one encoding */
    size_t unit_bytes;  /* bytes of one chunk's elements */
    uint64_t unit_elements;
    char *ok;           /* per plan object: its chunks are encoded where they are */
    char *chunk;        /* one chunk's elements (C order), when not a run of the block */
} encoding_t;

static void encoding_free(encoding_t *x) {
    free(x->blocks);
    free(x->shape);
    free(x->ok);
    free(x->chunk);
    memset(x, 0, sizeof *x);
}

/* The first element of chunk `u` of plan object k, into `at` (uses scratch 1). */
static void unit_start(const context_t *c, const plan_t *p, const encoding_t *x, uint64_t k,
                       uint64_t u, uint64_t *at) {
    uint64_t *object = x->shape + c->ndim;
    unravel(p->ids[k], p->grid, c->ndim, object);
    unravel(u, x->per, c->ndim, at);
    for (size_t d = 0; d < c->ndim; d++) at[d] = (object[d] * x->per[d] + at[d]) * x->unit[d];
}

/* Whether `inner` contains the box `start`/`count`. */
static bool contains(const uint64_t *inner_start, const uint64_t *inner_count,
                     const uint64_t *start, const uint64_t *count, size_t ndim) {
    for (size_t d = 0; d < ndim; d++)
        if (start[d] < inner_start[d] || start[d] + count[d] > inner_start[d] + inner_count[d])
            return false;
    return true;
}

/* The rank that encodes the chunk at `at`: the one holding most of it (the lowest of
 * those on a tie), or -1 when the blocks do not cover it whole (uses scratch 8-9). */
static int chunk_encoder(const context_t *c, const encoding_t *x, const uint64_t *at) {
    size_t ndim = c->ndim;
    uint64_t *ps = x->shape + 8 * ndim, *pc = x->shape + 9 * ndim, covered = 0, most = 0;
    int encoder = -1;
    for (int r = 0; r < c->size; r++) {
        const uint64_t *b = x->blocks + 2 * ndim * (size_t)r;
        uint64_t v = 0;
        if (!intersect(b, b + ndim, at, x->unit, ndim, ps, pc) || !volume(pc, ndim, &v)) continue;
        covered += v;
        if (v > most) {
            most = v;
            encoder = r;
        }
    }
    return covered == x->unit_elements ? encoder : -1;
}

/* Whether every chunk of plan object k inside the array lies whole in it and is covered by
 * the blocks, so that each can be encoded by the rank holding most of it (its encoder);
 * and some chunk's encoder is a rank other than the object's aggregator (an aggregator
 * encoding every chunk itself gains nothing: it writes them from its pieces, encoding on
 * its worker threads). Sets x->split when a chunk is split between ranks. */
static bool encodable(const context_t *c, const plan_t *p, encoding_t *x, uint64_t k) {
    size_t ndim = c->ndim;
    uint64_t *at = x->shape + 2 * ndim;
    int aggregator = c->aggregators[owner(c, p, k)];
    bool remote = false, split = false;
    for (uint64_t u = 0; u < x->nunits; u++) {
        unit_start(c, p, x, k, u, at);
        bool outside = false, crosses = false;
        for (size_t d = 0; d < ndim; d++) {
            outside |= at[d] >= x->shape[d];
            crosses |= at[d] + x->unit[d] > x->shape[d];
        }
        if (outside) continue;
        if (crosses) return false;
        int encoder = chunk_encoder(c, x, at);
        if (encoder < 0) return false;
        const uint64_t *b = x->blocks + 2 * ndim * (size_t)encoder;
        split |= !contains(b, b + ndim, at, x->unit, ndim);
        remote |= encoder != aggregator;
    }
    x->split |= remote && split;
    return remote;
}

/* Whether the ranks' blocks overlap. */
static bool blocks_overlap(const context_t *c, const encoding_t *x) {
    size_t ndim = c->ndim;
    uint64_t *ps = x->shape + 8 * ndim, *pc = x->shape + 9 * ndim;
    for (int r = 0; r < c->size; r++)
        for (int q = 0; q < r; q++) {
            const uint64_t *a = x->blocks + 2 * ndim * (size_t)r,
                           *b = x->blocks + 2 * ndim * (size_t)q;
            if (intersect(a, a + ndim, b, b + ndim, ndim, ps, pc)) return true;
        }
    return false;
}

/* Learns every rank's block and decides, for every plan object, whether its chunks are
 * encoded where they are. Collective; local failures end in agree(). */
static zarr_status_t plan_encoding(const context_t *c, const plan_t *p, const uint64_t *start,
                                   const uint64_t *count, encoding_t *x, error_t_ *e) {
    size_t ndim = c->ndim;
    memset(x, 0, sizeof *x);
    x->blocks = malloc(sizeof *x->blocks * 2 * ndim * (size_t)c->size);
    x->shape = malloc(sizeof *x->shape * 12 * ndim);
    uint64_t *mine = malloc(sizeof *mine * 2 * ndim);
    if (!x->blocks || !x->shape || !mine) fail(e, ZARR_ERR_NO_MEMORY, "no memory for the blocks");
    zarr_status_t st = agree(c->comm, e, NULL);
    if (st != ZARR_OK) {
        free(mine);
        return st;
    }
    memcpy(mine, start, sizeof *mine * ndim);
    memcpy(mine + ndim, count, sizeof *mine * ndim);
    MPI_Allgather(mine, (int)(2 * ndim), MPI_UINT64_T, x->blocks, (int)(2 * ndim), MPI_UINT64_T,
                  c->comm);
    free(mine);
    /* x->shape: 0 the shape, 1 an object's index, 2-4 scratch, 5 unit, 6 per, 7-11
     * scratch */
    x->unit = x->shape + 5 * ndim;
    x->per = x->shape + 6 * ndim;
    zarr_chunk_grid_t kind;
    size_t levels = 0;
    if (!c->encode || zarr_array_chunk_grid_kind(c->array, &kind) != ZARR_OK ||
        zarr_array_shard_levels(c->array, &levels) != ZARR_OK || kind != ZARR_CHUNK_GRID_REGULAR ||
        levels > 1)
        return agree(c->comm, e, NULL);
    uint64_t *object = x->shape + ndim;
    if ((st = zarr_array_shape(c->array, ndim, x->shape)) != ZARR_OK ||
        (st = zarr_array_chunk_shape(c->array, ndim, x->unit)) != ZARR_OK ||
        (st = levels ? zarr_array_shard_shape(c->array, ndim, object)
                     : zarr_array_chunk_shape(c->array, ndim, object)) != ZARR_OK ||
        (st = zarr_array_encoded_chunk_bound(c->array, &x->bound)) != ZARR_OK) {
        fail_zarr(e, st, "reading the array's chunk layout");
        return agree(c->comm, e, NULL);
    }
    uint64_t elements = 1;
    x->nunits = 1;
    for (size_t d = 0; d < ndim; d++) {
        x->per[d] = object[d] / x->unit[d];
        x->nunits *= x->per[d];
    }
    if (!volume(x->unit, ndim, &elements) || elements > SIZE_MAX / c->item) {
        fail(e, ZARR_ERR_OVERFLOW, "a chunk's size overflows");
        return agree(c->comm, e, NULL);
    }
    x->unit_bytes = (size_t)elements * c->item;
    x->unit_elements = elements;
    x->ok = calloc(p->nobjects ? p->nobjects : 1, 1);
    if (!x->ok) {
        fail(e, ZARR_ERR_NO_MEMORY, "no memory for %llu objects",
             (unsigned long long)p->nobjects);
        return agree(c->comm, e, NULL);
    }
    if (blocks_overlap(c, x)) return agree(c->comm, e, NULL);
    x->possible = true;
    for (uint64_t k = 0; k < p->nobjects; k++) x->ok[k] = encodable(c, p, x, k);
    return agree(c->comm, e, NULL);
}

/* Whether plan object k has its chunks encoded where they are. */
static bool encoded_object(const encoding_t *x, uint64_t k) { return x->possible && x->ok[k]; }

/* One chunk of the own block, encoded for its object's aggregator. */
typedef struct {
    uint64_t object, unit;
    int to;
    char *data; /* NULL when not stored */
    size_t bytes;
} encoded_t;

/*
 * The counts of an exchange: `words[q]` words of 8 bytes go to rank q; fills `counts`
 * (send counts, send displacements, receive counts, receive displacements, `size` each)
 * and `total` (words sent, received). Collective (MPI_Alltoall of the counts); counts
 * beyond what MPI takes are a failure in `e` (and count 0), for the caller's agree().
 */
static void exchange_counts(const context_t *c, const uint64_t *words, int *counts,
                            uint64_t total[2], error_t_ *e) {
    size_t size = (size_t)c->size;
    int *sdispls = counts + size, *rcounts = counts + 2 * size, *rdispls = counts + 3 * size;
    total[0] = total[1] = 0;
    for (size_t q = 0; q < size; q++) {
        if (words[q] > INT_MAX || total[0] + words[q] > INT_MAX)
            fail(e, ZARR_ERR_OVERFLOW,
                 "a round sends more than %d words of 8 bytes: lower the buffer setting",
                 INT_MAX);
        counts[q] = e->status == ZARR_OK ? (int)words[q] : 0;
        sdispls[q] = (int)total[0];
        total[0] += (uint64_t)counts[q];
    }
    MPI_Alltoall(counts, 1, MPI_INT, rcounts, 1, MPI_INT, c->comm);
    for (size_t q = 0; q < size; q++) {
        if (total[1] + (uint64_t)rcounts[q] > INT_MAX)
            fail(e, ZARR_ERR_OVERFLOW,
                 "a round receives more than %d words of 8 bytes: lower the buffer setting",
                 INT_MAX);
        rdispls[q] = e->status == ZARR_OK ? (int)total[1] : 0;
        total[1] += (uint64_t)rcounts[q];
    }
}

/* Appends chunk u of plan object k (first element `at`), encoded from `elements` (a
 * chunk in C order), to `*out` (`*n` of `*cap`), for the object's aggregator. */
static void push_encoding(const context_t *c, const plan_t *p, const encoding_t *x, uint64_t k,
                          uint64_t u, const uint64_t *at, const char *elements, encoded_t **out,
                          size_t *n, size_t *cap, zarr_mpi_stats_t *stats, error_t_ *e) {
    size_t ndim = c->ndim;
    uint64_t *inner = x->shape + 7 * ndim;
    for (size_t d = 0; d < ndim; d++) inner[d] = at[d] / x->unit[d];
    /* Encoded straight into the buffer that travels, then cut to its length. */
    char *encoding = malloc(x->bound ? x->bound : 1);
    if (!encoding) {
        fail(e, ZARR_ERR_NO_MEMORY, "no memory for an encoding of up to %zu bytes", x->bound);
        return;
    }
    size_t bytes = 0;
    bool stored = false;
    zarr_status_t st = zarr_array_encode_chunk(c->array, ndim, inner, elements, x->unit_bytes,
                                               encoding, x->bound, &bytes, &stored);
    if (st != ZARR_OK) {
        free(encoding);
        fail_zarr(e, st, "zarr_array_encode_chunk");
        return;
    }
    if (*n == *cap) {
        size_t grown_cap = *cap ? 2 * *cap : 16;
        encoded_t *grown = realloc(*out, sizeof **out * grown_cap);
        if (!grown) {
            free(encoding);
            fail(e, ZARR_ERR_NO_MEMORY, "no memory for %zu encoded chunks", grown_cap);
            return;
        }
        *out = grown;
        *cap = grown_cap;
    }
    encoded_t *item = &(*out)[*n];
    *item = (encoded_t){k, u, c->aggregators[owner(c, p, k)], NULL, 0};
    if (stored) {
        char *cut = realloc(encoding, bytes ? bytes : 1);
        item->data = cut ? cut : encoding;
        item->bytes = bytes;
    } else {
        free(encoding);
    }
    (*n)++;
    stats->chunks_encoded++;
}

/* A chunk split between ranks that this rank encodes: its elements, gathered. */
typedef struct {
    uint64_t object, unit;
    char *elements;
    uint64_t filled; /* elements copied in so far */
} assembly_t;

static int compare_assembly(const void *a, const void *b) {
    const assembly_t *x = a, *y = b;
    if (x->object != y->object) return x->object < y->object ? -1 : 1;
    return (x->unit > y->unit) - (x->unit < y->unit);
}

/* Words (8 bytes) of a piece of a split chunk sent to its encoder: object, chunk, box, elements. */
static uint64_t split_words(size_t ndim, uint64_t bytes) { return 2 + 2 * ndim + (bytes + 7) / 8; }

/* Copies the box `ps`/`pc` (inside the chunk at `at`) from `src` (strides `sstrides`) into
 * the chunk's elements (C order). Uses scratch 3-4. */
static void into_chunk(const context_t *c, const encoding_t *x, char *chunk, const uint64_t *at,
                       const uint64_t *ps, const uint64_t *pc, const char *src,
                       const uint64_t *sstrides) {
    size_t ndim = c->ndim;
    uint64_t *cstrides = x->shape + 3 * ndim, *index = x->shape + 4 * ndim, off = 0;
    for (size_t d = 0; d < ndim; d++) off += (ps[d] - at[d]) * cstrides[d];
    copy_box(chunk + off * c->item, NULL, cstrides, src, sstrides, pc, ndim, c->item, index);
}

/*
 * Encodes the chunks of this round's encoded objects that this rank is the encoder of into
 * `*out` (`*n` of them): those in its own block from there; those split between ranks
 * after the other holders sent it their parts (an exchange of its own, collective when
 * x->split, which is the same on every rank). Returns the status the ranks agreed on in
 * that exchange (then the round ends on every rank); other failures are left in `e` for
 * the caller's agree().
 */
static zarr_status_t encode_round(const context_t *c, const plan_t *p, encoding_t *x, uint64_t round,
                         const uint64_t *start, const uint64_t *count, const uint64_t *bstrides,
                         const char *buf, encoded_t **out, size_t *n, zarr_mpi_stats_t *stats,
                         error_t_ *e) {
    size_t ndim = c->ndim, size = (size_t)c->size, cap = 0, nassembly = 0, assembly_cap = 0;
    uint64_t *at = x->shape + 2 * ndim, *cstrides = x->shape + 3 * ndim,
             *index = x->shape + 4 * ndim, *ps = x->shape + 10 * ndim, *pc = x->shape + 11 * ndim;
    *out = NULL;
    *n = 0;
    strides(x->unit, ndim, ZARR_ORDER_C, cstrides);
    bool split = x->possible && x->split;
    zarr_status_t agreed = ZARR_OK;
    assembly_t *assembly = NULL;
    uint64_t *words = split ? calloc(size, sizeof *words) : NULL, *sendbuf = NULL,
             *recvbuf = NULL;
    int *scounts = split ? malloc(sizeof(int) * 4 * size) : NULL;
    if (split && (!words || !scounts)) fail(e, ZARR_ERR_NO_MEMORY, "no memory for %zu counts", size);
    /* pass 0 counts what goes to other encoders and encodes the own chunks; pass 1 packs */
    for (int pass = 0; pass < (split ? 2 : 1); pass++) {
        if (pass == 1) {
            if ((agreed = agree(c->comm, e, NULL)) != ZARR_OK) goto done;
            uint64_t total[2];
            exchange_counts(c, words, scounts, total, e);
            sendbuf = malloc(sizeof *sendbuf * (total[0] ? total[0] : 1));
            recvbuf = malloc(sizeof *recvbuf * (total[1] ? total[1] : 1));
            if (!sendbuf || !recvbuf)
                fail(e, ZARR_ERR_NO_MEMORY, "no memory for %llu + %llu words of split chunks",
                     (unsigned long long)total[0], (unsigned long long)total[1]);
            if ((agreed = agree(c->comm, e, NULL)) != ZARR_OK) goto done;
            for (size_t q = 0; q < size; q++) words[q] = (uint64_t)scounts[size + q];
        }
        for (size_t i = 0; i < p->nmine && e->status == ZARR_OK; i++) {
            uint64_t k = p->mine[i];
            if (p->rounds[k] != round || !encoded_object(x, k)) continue;
            for (uint64_t u = 0; u < x->nunits && e->status == ZARR_OK; u++) {
                unit_start(c, p, x, k, u, at);
                bool outside = false;
                for (size_t d = 0; d < ndim; d++) outside |= at[d] >= x->shape[d];
                if (outside || !intersect(start, count, at, x->unit, ndim, ps, pc)) continue;
                int encoder = chunk_encoder(c, x, at);
                uint64_t from = 0, v = 0;
                for (size_t d = 0; d < ndim; d++) from += (ps[d] - start[d]) * bstrides[d];
                volume(pc, ndim, &v);
                if (encoder != c->rank) {
                    if (pass == 0) {
                        if (words) words[encoder] += split_words(ndim, v * c->item);
                        continue;
                    }
                    uint64_t *w = sendbuf + words[encoder], *pstrides = x->shape + 7 * ndim;
                    w[0] = k;
                    w[1] = u;
                    memcpy(w + 2, ps, sizeof *w * ndim);
                    memcpy(w + 2 + ndim, pc, sizeof *w * ndim);
                    strides(pc, ndim, ZARR_ORDER_C, pstrides);
                    copy_box((char *)(w + 2 + 2 * ndim), NULL, pstrides, buf + from * c->item,
                             bstrides, pc, ndim, c->item, index);
                    words[encoder] += split_words(ndim, v * c->item);
                    continue;
                }
                if (pass == 1) continue;
                if (v == x->unit_elements) {
                    /* The whole chunk is in the block: encoded from there (as it is, when
                     * it is one run of the block). */
                    const char *elements = buf + from * c->item;
                    bool run = true;
                    for (size_t d = 0; d < ndim; d++)
                        run &= x->unit[d] == 1 || bstrides[d] == cstrides[d];
                    if (!run) {
                        if (!x->chunk && !(x->chunk = malloc(x->unit_bytes ? x->unit_bytes : 1))) {
                            fail(e, ZARR_ERR_NO_MEMORY, "no memory to encode a chunk of %zu bytes",
                                 x->unit_bytes);
                            break;
                        }
                        copy_box(x->chunk, NULL, cstrides, elements, bstrides, x->unit, ndim,
                                 c->item, index);
                        elements = x->chunk;
                    }
                    push_encoding(c, p, x, k, u, at, elements, out, n, &cap, stats, e);
                    continue;
                }
                /* Split: this rank holds most of it and gathers the rest. */
                if (nassembly == assembly_cap) {
                    size_t grown_cap = assembly_cap ? 2 * assembly_cap : 8;
                    assembly_t *grown = realloc(assembly, sizeof *assembly * grown_cap);
                    if (!grown) {
                        fail(e, ZARR_ERR_NO_MEMORY, "no memory for %zu split chunks", grown_cap);
                        break;
                    }
                    assembly = grown;
                    assembly_cap = grown_cap;
                }
                char *elements = malloc(x->unit_bytes ? x->unit_bytes : 1);
                if (!elements) {
                    fail(e, ZARR_ERR_NO_MEMORY, "no memory to gather a chunk of %zu bytes",
                         x->unit_bytes);
                    break;
                }
                assembly[nassembly++] = (assembly_t){k, u, elements, v};
                into_chunk(c, x, elements, at, ps, pc, buf + from * c->item, bstrides);
            }
        }
    }
    if (!split) goto done;
    {
        int *sdispls = scounts + size, *rcounts = scounts + 2 * size, *rdispls = scounts + 3 * size;
        MPI_Alltoallv(sendbuf, scounts, sdispls, MPI_UINT64_T, recvbuf, rcounts, rdispls,
                      MPI_UINT64_T, c->comm);
        uint64_t *pstrides = x->shape + 7 * ndim;
        if (nassembly > 1) qsort(assembly, nassembly, sizeof *assembly, compare_assembly);
        for (size_t q = 0; q < size && e->status == ZARR_OK; q++) {
            const uint64_t *w = recvbuf + rdispls[q], *end = w + rcounts[q];
            while (w < end) {
                assembly_t *a = NULL, key = {0, 0, NULL, 0};
                uint64_t v = 0;
                if ((uint64_t)(end - w) >= 2 + 2 * ndim && w[0] < p->nobjects &&
                    w[1] < x->nunits) {
                    key.object = w[0];
                    key.unit = w[1];
                    a = nassembly ? bsearch(&key, assembly, nassembly, sizeof *assembly,
                                            compare_assembly)
                                  : NULL;
                }
                if (a) {
                    unit_start(c, p, x, a->object, a->unit, at);
                    if (!contains(at, x->unit, w + 2, w + 2 + ndim, ndim) ||
                        !volume(w + 2 + ndim, ndim, &v) ||
                        (uint64_t)(end - w) < split_words(ndim, v * c->item))
                        a = NULL;
                }
                if (!a) {
                    fail(e, ZARR_ERR_INTERNAL, "a part of a split chunk from rank %zu is not "
                         "one this rank encodes", q);
                    break;
                }
                strides(w + 2 + ndim, ndim, ZARR_ORDER_C, pstrides);
                into_chunk(c, x, a->elements, at, w + 2, w + 2 + ndim,
                           (const char *)(w + 2 + 2 * ndim), pstrides);
                a->filled += v;
                w += split_words(ndim, v * c->item);
            }
        }
        for (size_t j = 0; j < nassembly && e->status == ZARR_OK; j++) {
            if (assembly[j].filled != x->unit_elements) {
                fail(e, ZARR_ERR_INTERNAL, "a split chunk got %llu of its %llu elements",
                     (unsigned long long)assembly[j].filled,
                     (unsigned long long)x->unit_elements);
                break;
            }
            unit_start(c, p, x, assembly[j].object, assembly[j].unit, at);
            push_encoding(c, p, x, assembly[j].object, assembly[j].unit, at,
                          assembly[j].elements, out, n, &cap, stats, e);
        }
    }
done:
    for (size_t j = 0; j < nassembly; j++) free(assembly[j].elements);
    free(assembly);
    free(words);
    free(scounts);
    free(sendbuf);
    free(recvbuf);
    return agreed;
}

static void encoded_free(encoded_t *items, size_t n) {
    for (size_t i = 0; i < n; i++) free(items[i].data);
    free(items);
}

/* Words of an encoded chunk in a round's messages: object, chunk, length, bytes. */
static uint64_t encoded_words(size_t bytes) { return 3 + (bytes + 7) / 8; }

/* Stores plan object k from its pieces, all encoded chunks. */
static void write_encoded_object(const context_t *c, const plan_t *p, const encoding_t *x,
                                 uint64_t k, const piece_t *pieces, size_t npieces,
                                 zarr_mpi_stats_t *stats, error_t_ *e) {
    const void **units = calloc(x->nunits ? x->nunits : 1, sizeof *units);
    size_t *lengths = calloc(x->nunits ? x->nunits : 1, sizeof *lengths);
    if (!units || !lengths) {
        fail(e, ZARR_ERR_NO_MEMORY, "no memory for %llu chunks", (unsigned long long)x->nunits);
    } else {
        for (size_t i = 0; i < npieces && e->status == ZARR_OK; i++) {
            if (!pieces[i].encoded || pieces[i].unit >= x->nunits) {
                fail(e, ZARR_ERR_INTERNAL, "a piece of an encoded object from rank %d is not "
                     "an encoded chunk", pieces[i].sender);
                break;
            }
            units[pieces[i].unit] = pieces[i].stored ? pieces[i].data : NULL;
            lengths[pieces[i].unit] = (size_t)pieces[i].bytes;
        }
    }
    if (e->status == ZARR_OK) {
        uint64_t *index = c->scratch + 7 * c->ndim;
        unravel(p->ids[k], p->grid, c->ndim, index);
        zarr_status_t st =
            zarr_array_write_encoded(c->array, c->ndim, index, (size_t)x->nunits, units, lengths);
        if (st != ZARR_OK) fail_zarr(e, st, "zarr_array_write_encoded");
        else stats->objects_written++;
    }
    free(units);
    free(lengths);
}

/* Writes one object from its pieces (sorted by sender): the bounding box of the pieces,
 * read first when they do not cover it. */
/* Counts an object of `elements` written, or records why its write failed. */
static void count_write(zarr_status_t st, uint64_t elements, zarr_mpi_stats_t *stats,
                        error_t_ *e) {
    if (st != ZARR_OK) {
        char what[160];
        snprintf(what, sizeof what, "zarr_array_write of an object's %llu elements",
                 (unsigned long long)elements);
        fail_zarr(e, st, what);
    } else {
        stats->objects_written++;
    }
}

static void write_object(const context_t *c, const piece_t *pieces, size_t npieces,
                         zarr_mpi_stats_t *stats, error_t_ *e) {
    size_t ndim = c->ndim;
    uint64_t *bstart = c->scratch + 8 * ndim, *bcount = c->scratch + 9 * ndim,
             *bstrides = c->scratch + 10 * ndim, *pstrides = c->scratch + 11 * ndim,
             *offset = c->scratch + 12 * ndim, *index = c->scratch + 13 * ndim;
    for (size_t d = 0; d < ndim; d++) {
        uint64_t lo = UINT64_MAX, hi = 0;
        for (size_t i = 0; i < npieces; i++) {
            if (pieces[i].start[d] < lo) lo = pieces[i].start[d];
            if (pieces[i].start[d] + pieces[i].count[d] > hi)
                hi = pieces[i].start[d] + pieces[i].count[d];
        }
        bstart[d] = lo;
        bcount[d] = hi - lo;
    }
    uint64_t elements = 0, covered = 0;
    if (!volume(bcount, ndim, &elements) || elements > SIZE_MAX / c->item) {
        fail(e, ZARR_ERR_OVERFLOW, "an object's size overflows");
        return;
    }
    bool disjoint = true;
    for (size_t i = 0; i < npieces; i++) {
        uint64_t v = 0;
        volume(pieces[i].count, ndim, &v);
        covered += v;
        for (size_t j = 0; j < i && disjoint; j++) {
            bool apart = false;
            for (size_t d = 0; d < ndim && !apart; d++)
                apart = pieces[i].start[d] >= pieces[j].start[d] + pieces[j].count[d] ||
                        pieces[j].start[d] >= pieces[i].start[d] + pieces[i].count[d];
            disjoint = apart;
        }
    }
    strides(bcount, ndim, ZARR_ORDER_C, bstrides);
    bool whole = disjoint && covered == elements;
    if (!whole && !disjoint) {
        /* Overlapping blocks: count the elements covered with a byte map. */
        unsigned char *map = calloc((size_t)elements, 1);
        if (!map) {
            fail(e, ZARR_ERR_NO_MEMORY, "no memory for the map of %llu elements",
                 (unsigned long long)elements);
            return;
        }
        for (size_t i = 0; i < npieces; i++) {
            uint64_t at = 0;
            for (size_t d = 0; d < ndim; d++) at += (pieces[i].start[d] - bstart[d]) * bstrides[d];
            copy_box(NULL, map + at, bstrides, NULL, bstrides, pieces[i].count, ndim, 1, index);
        }
        whole = memchr(map, 0, (size_t)elements) == NULL;
        free(map);
    }
    zarr_status_t st = ZARR_OK;
    if (npieces == 1) {
        /* One piece is the whole box: written straight from where it is. */
        const piece_t *piece = &pieces[0];
        bool contiguous = !piece->strides;
        if (!contiguous) {
            strides(bcount, ndim, ZARR_ORDER_C, pstrides);
            contiguous = memcmp(pstrides, piece->strides, sizeof *pstrides * ndim) == 0;
        }
        if (contiguous) {
            st = zarr_array_write(c->array, ndim, bstart, bcount, c->dtype, ZARR_ORDER_C,
                                  piece->data, (size_t)elements * c->item);
        } else {
            int64_t *mem = malloc(sizeof *mem * ndim);
            uint64_t last = 0;
            for (size_t d = 0; d < ndim && mem; d++) {
                mem[d] = (int64_t)piece->strides[d];
                last += (bcount[d] - 1) * piece->strides[d];
            }
            st = mem ? zarr_array_write_strided(c->array, ndim, bstart, bcount, mem, c->dtype,
                                                piece->data, (size_t)(last + 1) * c->item)
                     : ZARR_ERR_NO_MEMORY;
            free(mem);
        }
        count_write(st, elements, stats, e);
        return;
    }
    size_t bytes = (size_t)elements * c->item;
    char *box = malloc(bytes ? bytes : 1);
    if (!box) {
        fail(e, ZARR_ERR_NO_MEMORY, "no memory to assemble %zu bytes", bytes);
        return;
    }
    if (!whole) {
        /* The pieces make no box: the elements between them keep their stored values. */
        st = zarr_array_read(c->array, ndim, bstart, bcount, c->dtype, ZARR_ORDER_C, box, bytes);
        if (st != ZARR_OK) {
            fail_zarr(e, st, "zarr_array_read (merging a partly covered object)");
            free(box);
            return;
        }
        stats->objects_merged++;
    }
    for (size_t i = 0; i < npieces; i++) {
        uint64_t at = 0;
        for (size_t d = 0; d < ndim; d++) {
            offset[d] = pieces[i].start[d] - bstart[d];
            at += offset[d] * bstrides[d];
        }
        strides(pieces[i].count, ndim, ZARR_ORDER_C, pstrides);
        copy_box(box + at * c->item, NULL, bstrides, pieces[i].data,
                 pieces[i].strides ? pieces[i].strides : pstrides, pieces[i].count, ndim,
                 c->item, index);
    }
    st = zarr_array_write(c->array, ndim, bstart, bcount, c->dtype, ZARR_ORDER_C, box, bytes);
    count_write(st, elements, stats, e);
    free(box);
}

/* The words (8 bytes) of one piece behind its header. */
static uint64_t piece_words(size_t ndim, uint64_t bytes) { return 1 + 2 * ndim + (bytes + 7) / 8; }

/* The rounds of a planned write. Collective. */
static zarr_status_t exchange(const context_t *c, const plan_t *p, encoding_t *x,
                              const uint64_t *start, const uint64_t *count, zarr_order_t order,
                              const char *buf, zarr_mpi_stats_t *stats, error_t_ *e) {
    size_t ndim = c->ndim, size = (size_t)c->size;
    uint64_t *ostart = c->scratch, *ocount = c->scratch + ndim, *pstart = c->scratch + 2 * ndim,
             *pcount = c->scratch + 3 * ndim, *bstrides = c->scratch + 4 * ndim,
             *pstrides = c->scratch + 5 * ndim, *index = c->scratch + 6 * ndim;
    int *scounts = malloc(sizeof(int) * size * 4);
    uint64_t *sfill = malloc(sizeof *sfill * size);
    if (!scounts || !sfill) fail(e, ZARR_ERR_NO_MEMORY, "no memory for %zu counts", size);
    zarr_status_t st = agree(c->comm, e, NULL);
    if (st != ZARR_OK) {
        free(scounts);
        free(sfill);
        return st;
    }
    int *sdispls = scounts + size, *rcounts = scounts + 2 * size, *rdispls = scounts + 3 * size;
    strides(count, ndim, order, bstrides);
    int me = -1; /* this rank's aggregator index */
    for (int a = 0; a < c->naggregators; a++)
        if (c->aggregators[a] == c->rank) me = a;
    for (uint64_t r = 0; r < p->nrounds; r++) {
        uint64_t *sendbuf = NULL, *recvbuf = NULL;
        piece_t *pieces = NULL;
        uint64_t words[2] = {0, 0}; /* to send, to receive */
        uint64_t nself = 0, *boxes = NULL; /* this rank's pieces of its own objects */
        uint64_t *per = sfill;
        memset(per, 0, sizeof *per * size);
        /* The own block's chunks of this round's encoded objects, encoded first. */
        encoded_t *coded = NULL;
        size_t ncoded = 0;
        if ((st = encode_round(c, p, x, r, start, count, bstrides, buf, &coded, &ncoded, stats,
                               e)) != ZARR_OK) {
            encoded_free(coded, ncoded);
            break;
        }
        for (size_t i = 0; i < ncoded; i++) {
            if (coded[i].to == c->rank) nself++;
            else per[coded[i].to] += encoded_words(coded[i].bytes);
        }
        /* What goes to whom. */
        for (size_t i = 0; i < p->nmine && e->status == ZARR_OK; i++) {
            uint64_t k = p->mine[i];
            if (p->rounds[k] != r || encoded_object(x, k)) continue;
            if (object_region(c, p, k, ostart, ocount, e) != ZARR_OK) break;
            if (!intersect(start, count, ostart, ocount, ndim, pstart, pcount)) continue;
            int to = c->aggregators[owner(c, p, k)];
            uint64_t v = 0;
            volume(pcount, ndim, &v);
            if (to == c->rank) nself++; /* kept here: never packed nor sent */
            else per[to] += piece_words(ndim, v * c->item);
        }
        exchange_counts(c, per, scounts, words, e);
        uint64_t npieces = 0;
        if (e->status == ZARR_OK) {
            sendbuf = malloc(sizeof *sendbuf * (words[0] ? words[0] : 1));
            recvbuf = malloc(sizeof *recvbuf * (words[1] ? words[1] : 1));
            /* at most one piece per header's worth of words, and the own ones */
            npieces = words[1] / 3 + nself;
            pieces = malloc(sizeof *pieces * (npieces ? npieces : 1));
            boxes = malloc(sizeof *boxes * 2 * ndim * (nself ? nself : 1));
            if (!sendbuf || !recvbuf || !pieces || !boxes)
                fail(e, ZARR_ERR_NO_MEMORY, "no memory for a round of %llu + %llu words",
                     (unsigned long long)words[0], (unsigned long long)words[1]);
        }
        /* Pack (the own pieces come first in `pieces`). */
        uint64_t nown = 0;
        for (size_t q = 0; q < size; q++) per[q] = (uint64_t)sdispls[q];
        for (size_t i = 0; i < ncoded && e->status == ZARR_OK; i++) {
            const encoded_t *item = &coded[i];
            stats->bytes_sent += item->bytes;
            if (item->to == c->rank) {
                pieces[nown++] = (piece_t){item->object, NULL, NULL, item->data, NULL, c->rank,
                                           true, item->data != NULL, item->unit, item->bytes};
                stats->bytes_received += item->bytes;
                continue;
            }
            uint64_t *w = sendbuf + per[item->to];
            w[0] = item->object | ENCODED_PIECE;
            w[1] = item->unit;
            w[2] = item->data ? item->bytes : UINT64_MAX;
            if (item->bytes) memcpy(w + 3, item->data, item->bytes);
            per[item->to] += encoded_words(item->bytes);
        }
        for (size_t i = 0; i < p->nmine && e->status == ZARR_OK; i++) {
            uint64_t k = p->mine[i];
            if (p->rounds[k] != r || encoded_object(x, k)) continue;
            if (object_region(c, p, k, ostart, ocount, e) != ZARR_OK) break;
            if (!intersect(start, count, ostart, ocount, ndim, pstart, pcount)) continue;
            uint64_t v = 0, at = 0;
            volume(pcount, ndim, &v);
            stats->bytes_sent += v * c->item;
            for (size_t d = 0; d < ndim; d++) at += (pstart[d] - start[d]) * bstrides[d];
            int to = c->aggregators[owner(c, p, k)];
            if (to == c->rank) {
                uint64_t *box = boxes + 2 * ndim * nown;
                memcpy(box, pstart, sizeof *box * ndim);
                memcpy(box + ndim, pcount, sizeof *box * ndim);
                pieces[nown++] = (piece_t){k, box, box + ndim, buf + at * c->item, bstrides,
                                           c->rank, false, false, 0, 0};
                stats->bytes_received += v * c->item;
                continue;
            }
            uint64_t *w = sendbuf + per[to];
            w[0] = k;
            memcpy(w + 1, pstart, sizeof *w * ndim);
            memcpy(w + 1 + ndim, pcount, sizeof *w * ndim);
            strides(pcount, ndim, ZARR_ORDER_C, pstrides);
            copy_box((char *)(w + 1 + 2 * ndim), NULL, pstrides, buf + at * c->item, bstrides,
                     pcount, ndim, c->item, index);
            per[to] += piece_words(ndim, v * c->item);
        }
        if ((st = agree(c->comm, e, NULL)) == ZARR_OK) {
            MPI_Alltoallv(sendbuf, scounts, sdispls, MPI_UINT64_T, recvbuf, rcounts, rdispls,
                          MPI_UINT64_T, c->comm);
            free(sendbuf);
            sendbuf = NULL;
            /* Unpack: the pieces in sender order, then by object. */
            uint64_t found = nown;
            for (size_t q = 0; q < size && e->status == ZARR_OK; q++) {
                const uint64_t *w = recvbuf + rdispls[q], *end = w + rcounts[q];
                while (w < end) {
                    uint64_t k = w[0] & ~ENCODED_PIECE, v = 0;
                    if ((w[0] & ENCODED_PIECE) && (uint64_t)(end - w) >= 3 && me >= 0 &&
                        k < p->nobjects && owner(c, p, k) == me && p->rounds[k] == r &&
                        encoded_object(x, k) && found < npieces && w[1] < x->nunits &&
                        (w[2] == UINT64_MAX || w[2] <= x->bound) &&
                        (uint64_t)(end - w) >= encoded_words(w[2] == UINT64_MAX ? 0 : w[2])) {
                        bool stored = w[2] != UINT64_MAX;
                        uint64_t bytes = stored ? w[2] : 0;
                        pieces[found++] = (piece_t){k, NULL, NULL, (const char *)(w + 3), NULL,
                                                    (int)q, true, stored, w[1], bytes};
                        stats->bytes_received += bytes;
                        w += encoded_words(bytes);
                        continue;
                    }
                    if ((w[0] & ENCODED_PIECE) || me < 0 || k >= p->nobjects || owner(c, p, k) != me ||
                        p->rounds[k] != r || found == npieces ||
                        (uint64_t)(end - w) < 1 + 2 * ndim) {
                        fail(e, ZARR_ERR_INTERNAL, "a piece from rank %zu is not this round's",
                             q);
                        break;
                    }
                    pieces[found] = (piece_t){k, w + 1, w + 1 + ndim,
                                              (const char *)(w + 1 + 2 * ndim), NULL, (int)q,
                                              false, false, 0, 0};
                    volume(pieces[found].count, ndim, &v);
                    stats->bytes_received += v * c->item;
                    w += piece_words(ndim, v * c->item);
                    found++;
                }
            }
            qsort(pieces, (size_t)found, sizeof *pieces, compare_piece);
            for (uint64_t i = 0; i < found && e->status == ZARR_OK;) {
                uint64_t j = i;
                while (j < found && pieces[j].object == pieces[i].object) j++;
                if (encoded_object(x, pieces[i].object))
                    write_encoded_object(c, p, x, pieces[i].object, pieces + i, (size_t)(j - i),
                                         stats, e);
                else
                    write_object(c, pieces + i, (size_t)(j - i), stats, e);
                i = j;
            }
            st = agree(c->comm, e, NULL);
        }
        free(sendbuf);
        free(recvbuf);
        free(pieces);
        free(boxes);
        encoded_free(coded, ncoded);
        if (st != ZARR_OK) break;
    }
    free(scounts);
    free(sfill);
    return st;
}

/* Plans and writes a block already checked on every rank. Collective. */
static zarr_status_t write_checked(context_t *c, const uint64_t *start, const uint64_t *count,
                                   zarr_order_t order, const void *buf, error_t_ *e) {
    const topology_t *t = NULL;
    zarr_status_t st = topology(c->comm, &t, e);
    if (st != ZARR_OK) return st;
    uint64_t n = c->aggregators_setting;
    if (n == 0) n = t->nodes > 1 ? (uint64_t)t->nodes : (uint64_t)c->size;
    if (n > (uint64_t)c->size) n = (uint64_t)c->size;
    c->naggregators = (int)n;
    c->aggregators = t->order;
    last_stats.aggregators = (uint32_t)n;
    plan_t p;
    encoding_t x;
    memset(&x, 0, sizeof x);
    st = make_plan(c, start, count, &p, e);
    if (st == ZARR_OK) st = plan_encoding(c, &p, start, count, &x, e);
    if (st == ZARR_OK) {
        last_stats.objects = p.nobjects;
        last_stats.rounds = (uint32_t)p.nrounds;
        st = exchange(c, &p, &x, start, count, order, buf, &last_stats, e);
    }
    encoding_free(&x);
    plan_free(&p);
    return st;
}

zarr_status_t zarr_mpi_write(MPI_Comm comm, const zarr_array_t *array, size_t ndim,
                             const uint64_t *start, const uint64_t *count,
                             zarr_dtype_t mem_dtype, zarr_order_t order, const void *buf,
                             size_t buf_bytes) {
    memset(&last_stats, 0, sizeof last_stats);
    error_t_ e = {ZARR_OK, {0}};
    context_t c;
    prepare(comm, array, &c, &e);
    check_block(&c, ndim, start, count, mem_dtype, order, buf, buf_bytes, SIZE_MAX, &e);
    zarr_status_t st = agree(comm, &e, NULL);
    if (st == ZARR_OK) st = write_checked(&c, start, count, order, buf, &e);
    context_free(&c);
    return st;
}

/* ---- append ------------------------------------------------------------------------ */

/* Rank 0 resizes to `shape`; the others refresh and check they see it. Collective.
 * `*resized` tells whether the stored shape changed (even when a refresh failed). */
static zarr_status_t grow(context_t *c, const uint64_t *shape, bool *resized, error_t_ *e) {
    zarr_status_t st = ZARR_OK;
    *resized = false;
    if (c->rank == 0 && (st = zarr_array_resize(c->array, c->ndim, shape)) != ZARR_OK)
        fail_zarr(e, st, "zarr_array_resize");
    if ((st = agree(c->comm, e, NULL)) != ZARR_OK) return st;
    *resized = true;
    if (c->rank != 0) {
        if ((st = zarr_array_refresh(c->array)) != ZARR_OK) {
            fail_zarr(e, st, "zarr_array_refresh");
        } else if ((st = zarr_array_shape(c->array, c->ndim, c->scratch)) != ZARR_OK) {
            fail_zarr(e, st, "zarr_array_shape");
        } else if (memcmp(c->scratch, shape, sizeof *shape * c->ndim) != 0) {
            fail(e, ZARR_ERR_STORAGE_IO,
                 "after rank 0 resized the array, this rank's refreshed handle does not see "
                 "the new shape: the ranks' stores do not reach the same storage (or are "
                 "sessions of an Icechunk repository, which see a resize only once committed)");
        }
    }
    st = agree(c->comm, e, NULL);
    if (st == ZARR_OK) memcpy(c->shape, shape, sizeof *shape * c->ndim);
    return st;
}

zarr_status_t zarr_mpi_append(MPI_Comm comm, const zarr_array_t *array, size_t axis,
                              size_t ndim, const uint64_t *start, const uint64_t *count,
                              zarr_dtype_t mem_dtype, zarr_order_t order, const void *buf,
                              size_t buf_bytes) {
    memset(&last_stats, 0, sizeof last_stats);
    error_t_ e = {ZARR_OK, {0}};
    context_t c;
    prepare(comm, array, &c, &e);
    if (e.status == ZARR_OK && axis >= c.ndim)
        fail(&e, ZARR_ERR_INVALID_ARG, "axis %zu is not below the array's %zu dimensions", axis,
             c.ndim);
    check_block(&c, ndim, start, count, mem_dtype, order, buf, buf_bytes, axis, &e);
    /* The step's extent along the axis: the largest end of the blocks. */
    uint64_t step = 0, elements = 0;
    if (e.status == ZARR_OK && volume(count, ndim, &elements) && elements > 0)
        step = start[axis] + count[axis];
    zarr_status_t st = agree(comm, &e, &step);
    uint64_t *old = NULL, *grown = NULL, *at = NULL;
    if (st == ZARR_OK && step > 0) {
        old = malloc(sizeof *old * c.ndim * 3);
        if (!old) fail(&e, ZARR_ERR_NO_MEMORY, "no memory for %zu dimensions", c.ndim);
        else if (c.shape[axis] > UINT64_MAX - step)
            fail(&e, ZARR_ERR_OVERFLOW, "the new extent of axis %zu overflows", axis);
        st = agree(comm, &e, NULL);
    }
    if (st == ZARR_OK && step > 0) {
        grown = old + c.ndim;
        at = old + 2 * c.ndim;
        memcpy(old, c.shape, sizeof *old * c.ndim);
        memcpy(grown, c.shape, sizeof *old * c.ndim);
        grown[axis] += step;
        memcpy(at, start, sizeof *at * c.ndim);
        at[axis] += old[axis];
        /* Grow, write, and on failure shrink back: after the call the array ends with its
         * last complete step. */
        bool resized = false, again = false;
        st = grow(&c, grown, &resized, &e);
        if (st == ZARR_OK) st = write_checked(&c, at, count, order, buf, &e);
        if (st != ZARR_OK && resized) {
            /* The step failed after the array grew: take the growth back (collectively, as
             * every rank has the same status). */
            error_t_ failed = e, back = {ZARR_OK, {0}};
            zarr_mpi_stats_t stats = last_stats;
            if (grow(&c, old, &again, &back) != ZARR_OK) {
                snprintf(e.message, sizeof e.message,
                         "%.900s; then shrinking the array back failed: %.900s",
                         failed.message, back.message);
                set_last_error(e.message);
            } else {
                set_last_error(failed.message);
            }
            last_stats = stats;
        }
    }
    free(old);
    context_free(&c);
    return st;
}

/* ---- one commit of an Icechunk repository from every rank -------------------------- */

/* Rank 0: gathers the other ranks' exported changes and merges them into `store`. Returns
 * the status every rank agreed on (a failed export, a count too large); a merge that fails
 * is rank 0's alone, left in `e` for the caller's agree(). */
static zarr_status_t gather_changes(MPI_Comm comm, int rank, int size,
                                    const zarr_store_t *store, error_t_ *e) {
    void *bytes = NULL;
    size_t len = 0;
    zarr_status_t st;
    if (rank != 0 && (st = zarr_store_changes_export(store, &bytes, &len)) != ZARR_OK)
        fail_zarr(e, st, "zarr_store_changes_export");
    if (e->status == ZARR_OK && len > INT_MAX)
        fail(e, ZARR_ERR_OVERFLOW, "the exported changes (%zu bytes) exceed what MPI counts",
             len);
    int *lens = rank == 0 ? calloc((size_t)size * 2, sizeof *lens) : NULL;
    if (rank == 0 && !lens) fail(e, ZARR_ERR_NO_MEMORY, "no memory for %d lengths", size);
    char *all = NULL;
    zarr_status_t agreed = agree(comm, e, NULL);
    if (agreed == ZARR_OK) {
        int mine = (int)len, *offsets = lens ? lens + size : NULL;
        MPI_Gather(&mine, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
        if (rank == 0) {
            uint64_t total = 0;
            for (int r = 0; r < size; r++) {
                offsets[r] = (int)(total <= INT_MAX ? total : 0);
                total += (uint64_t)lens[r];
            }
            if (total > INT_MAX)
                fail(e, ZARR_ERR_OVERFLOW, "the changes of all ranks (%llu bytes) exceed what "
                     "MPI counts", (unsigned long long)total);
            else if (!(all = malloc(total ? (size_t)total : 1)))
                fail(e, ZARR_ERR_NO_MEMORY, "no memory for %llu bytes of changes",
                     (unsigned long long)total);
        }
        if ((agreed = agree(comm, e, NULL)) == ZARR_OK) {
            MPI_Gatherv(bytes, mine, MPI_BYTE, all, lens, offsets, MPI_BYTE, 0, comm);
            for (int r = 1; rank == 0 && r < size && e->status == ZARR_OK; r++)
                if ((st = zarr_store_changes_merge(store, all + offsets[r], (size_t)lens[r])) !=
                    ZARR_OK) {
                    char what[64];
                    snprintf(what, sizeof what, "merging the changes of rank %d", r);
                    fail_zarr(e, st, what);
                }
        }
    }
    zarr_bytes_free(bytes);
    free(all);
    free(lens);
    return agreed;
}

zarr_status_t zarr_mpi_commit(MPI_Comm comm, const zarr_store_t *store, const char *message,
                              char *id_buf, size_t id_len) {
    error_t_ e = {ZARR_OK, {0}};
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (!store || !message) fail(&e, ZARR_ERR_NULL_ARG, "%s is NULL", store ? "message" : "store");
    else if (!id_buf && id_len > 0) fail(&e, ZARR_ERR_NULL_ARG, "id_buf is NULL");
    else if (id_buf && id_len < ZARR_SNAPSHOT_ID_BYTES)
        fail(&e, ZARR_ERR_BUFFER_SIZE, "id_len is %zu, below ZARR_SNAPSHOT_ID_BYTES (%d)",
             id_len, ZARR_SNAPSHOT_ID_BYTES);
    if (e.status == ZARR_OK && id_buf) id_buf[0] = 0;
    zarr_status_t st = agree(comm, &e, NULL);
    if (st != ZARR_OK) return st;
    if ((st = gather_changes(comm, rank, size, store, &e)) != ZARR_OK) return st;
    char id[ZARR_SNAPSHOT_ID_BYTES] = {0};
    if (rank == 0 && e.status == ZARR_OK) {
        st = zarr_store_commit(store, message, id, sizeof id);
        if (st == ZARR_ERR_CONFLICT) {
            /* Another writer moved the branch: rank 0's session, holding every rank's
             * changes, moves onto it (once) and commits again. */
            if ((st = zarr_store_rebase(store)) != ZARR_OK)
                fail_zarr(&e, st, "zarr_store_rebase (another commit moved the branch)");
            else
                st = zarr_store_commit(store, message, id, sizeof id);
        }
        if (e.status == ZARR_OK && st != ZARR_OK) fail_zarr(&e, st, "zarr_store_commit");
    }
    if ((st = agree(comm, &e, NULL)) != ZARR_OK) return st;
    /* Committed: every rank learns the id and goes on from the new snapshot. */
    MPI_Bcast(id, (int)sizeof id, MPI_CHAR, 0, comm);
    id[sizeof id - 1] = 0;
    if (id_buf) memcpy(id_buf, id, sizeof id);
    if (rank != 0 && (st = zarr_store_discard(store)) != ZARR_OK)
        fail_zarr(&e, st, "zarr_store_discard");
    else if (rank != 0 && (st = zarr_store_rebase(store)) != ZARR_OK)
        fail_zarr(&e, st, "zarr_store_rebase");
    return agree(comm, &e, NULL);
}

/* ---- create and open --------------------------------------------------------------- */

/* Turns the append lock off; on failure frees the handle. */
static void unlock(zarr_array_t **array, error_t_ *e) {
    zarr_status_t st;
    if (*array && (st = zarr_array_set_append_lock(*array, false)) != ZARR_OK)
        fail_zarr(e, st, "zarr_array_set_append_lock");
}

static zarr_status_t finish_open(MPI_Comm comm, zarr_array_t *array, zarr_array_t **out_array,
                                 error_t_ *e) {
    unlock(&array, e);
    zarr_status_t st = agree(comm, e, NULL);
    if (st != ZARR_OK) {
        zarr_array_free(array);
        array = NULL;
    }
    *out_array = array;
    return st;
}

zarr_status_t zarr_mpi_array_create(MPI_Comm comm, const zarr_array_builder_t *builder,
                                    const zarr_store_t *store, const char *path,
                                    zarr_mode_t mode, zarr_array_t **out_array) {
    error_t_ e = {ZARR_OK, {0}};
    zarr_array_t *array = NULL;
    int rank = 0;
    zarr_status_t st;
    MPI_Comm_rank(comm, &rank);
    if (!out_array) fail(&e, ZARR_ERR_NULL_ARG, "out_array is NULL");
    else *out_array = NULL;
    if (rank == 0 && e.status == ZARR_OK &&
        (st = zarr_array_create(builder, store, path, mode, &array)) != ZARR_OK)
        fail_zarr(&e, st, "zarr_array_create");
    if ((st = agree(comm, &e, NULL)) != ZARR_OK) {
        zarr_array_free(array);
        return st;
    }
    if (rank != 0 && (st = zarr_array_open(store, path, ZARR_MODE_R_PLUS, &array)) != ZARR_OK)
        fail_zarr(&e, st, "zarr_array_open");
    return finish_open(comm, array, out_array, &e);
}

zarr_status_t zarr_mpi_array_open(MPI_Comm comm, const zarr_store_t *store, const char *path,
                                  zarr_mode_t mode, zarr_array_t **out_array) {
    error_t_ e = {ZARR_OK, {0}};
    zarr_array_t *array = NULL;
    zarr_status_t st;
    if (!out_array) fail(&e, ZARR_ERR_NULL_ARG, "out_array is NULL");
    else *out_array = NULL;
    if (e.status == ZARR_OK && (st = zarr_array_open(store, path, mode, &array)) != ZARR_OK)
        fail_zarr(&e, st, "zarr_array_open");
    zarr_array_t *dummy = NULL;
    return finish_open(comm, array, out_array ? out_array : &dummy, &e);
}

/* ---- Fortran handles ---------------------------------------------------------------- */

zarr_status_t zarr_mpi_array_open_f(MPI_Fint comm, const zarr_store_t *store, const char *path,
                                    zarr_mode_t mode, zarr_array_t **out_array) {
    return zarr_mpi_array_open(MPI_Comm_f2c(comm), store, path, mode, out_array);
}

zarr_status_t zarr_mpi_write_f(MPI_Fint comm, const zarr_array_t *array, size_t ndim,
                               const uint64_t *start, const uint64_t *count,
                               zarr_dtype_t mem_dtype, zarr_order_t order, const void *buf,
                               size_t buf_bytes) {
    return zarr_mpi_write(MPI_Comm_f2c(comm), array, ndim, start, count, mem_dtype, order, buf,
                          buf_bytes);
}

zarr_status_t zarr_mpi_append_f(MPI_Fint comm, const zarr_array_t *array, size_t axis,
                                size_t ndim, const uint64_t *start, const uint64_t *count,
                                zarr_dtype_t mem_dtype, zarr_order_t order, const void *buf,
                                size_t buf_bytes) {
    return zarr_mpi_append(MPI_Comm_f2c(comm), array, axis, ndim, start, count, mem_dtype, order,
                           buf, buf_bytes);
}

zarr_status_t zarr_mpi_commit_f(MPI_Fint comm, const zarr_store_t *store, const char *message,
                                char *id_buf, size_t id_len) {
    return zarr_mpi_commit(MPI_Comm_f2c(comm), store, message, id_buf, id_len);
}
