/*
 * Concurrency: 8 threads and 4 processes writing one array at once.
 *
 * Each writer owns a set of rows and writes each row exactly once; the rows are not
 * aligned to the chunks, so writers share chunks and every write is a read-modify-write.
 * With synchronization (thread locks for threads, lock files for processes) no update may
 * be lost: the final array must hold every cell's value. Without synchronization,
 * chunk-aligned disjoint writes must be exact too. Every scenario runs several rounds.
 *
 * Locks belong to the array, not the handle: threads that each open their own store and
 * array handle, and processes that open the array through differently rooted stores
 * (directory X/s + "a", or X + "s/a"), increment counters in shared chunks without losing
 * one increment.
 */
#include "check.h"

#include <pthread.h>
#include <sys/wait.h>

enum { WRITERS = 8, ROWS_PER_WRITER = 13, COLS = 37, ROUNDS = 5 };
#define ROWS ((uint64_t)WRITERS * ROWS_PER_WRITER)

static uint32_t cell(uint64_t row, uint64_t col, int round) {
    return (uint32_t)(round * 1000000 + row * 1000 + col + 1);
}

struct job {
    zarr_array_t *array;
    int writer;
    int round;
    uint64_t rows_per_write; /* 1: unaligned single rows; 8: whole chunk rows */
    zarr_status_t status;
};

/* Writes the job's rows in slabs of rows_per_write rows. Unaligned writer w owns rows
 * [13w, 13w+13) of a 104-row array; aligned writer w owns the chunk rows [8w, 8w+8) of a
 * 64-row array. */
static void *write_rows(void *arg) {
    struct job *job = arg;
    uint64_t nrows = job->rows_per_write == 8 ? 8 : ROWS_PER_WRITER;
    uint64_t first = (uint64_t)job->writer * nrows;
    uint32_t values[8 * COLS];
    job->status = ZARR_OK;
    for (uint64_t r = first; r < first + nrows; r += job->rows_per_write) {
        for (uint64_t i = 0; i < job->rows_per_write; i++)
            for (uint64_t c = 0; c < COLS; c++) values[i * COLS + c] = cell(r + i, c, job->round);
        uint64_t start[2] = {r, 0}, count[2] = {job->rows_per_write, COLS};
        zarr_status_t st = zarr_array_write(job->array, 2, start, count, ZARR_DTYPE_UINT32,
                                            ZARR_ORDER_C, values,
                                            sizeof(uint32_t) * job->rows_per_write * COLS);
        if (st != ZARR_OK) job->status = st;
    }
    return NULL;
}

/* Creates the test array (zlib, 8x16 chunks) at `path`; rows = 104 or 64. */
static zarr_array_t *create(zarr_store_t *store, const char *path, uint64_t rows) {
    uint64_t shape[2] = {rows, COLS}, chunks[2] = {8, 16};
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_UINT32, 2, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, chunks));
    CHECK_OK(zarr_array_builder_set_compressor_json(b, "{\"id\": \"zlib\", \"level\": 1}"));
    CHECK_OK(zarr_array_create(b, store, path, ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    return a;
}

/* Counts cells that differ from their expected value. */
static uint64_t lost_cells(zarr_array_t *a, uint64_t rows, int round) {
    static uint32_t all[ROWS * COLS];
    uint64_t start[2] = {0, 0}, count[2] = {rows, COLS};
    CHECK_OK(zarr_array_read(a, 2, start, count, ZARR_DTYPE_UINT32, ZARR_ORDER_C, all,
                             sizeof(uint32_t) * rows * COLS));
    uint64_t lost = 0;
    for (uint64_t r = 0; r < rows; r++)
        for (uint64_t c = 0; c < COLS; c++) lost += all[r * COLS + c] != cell(r, c, round);
    return lost;
}

static void threads_with_thread_locks(zarr_store_t *store) {
    for (int round = 0; round < ROUNDS; round++) {
        zarr_array_t *a = create(store, "threads", ROWS);
        CHECK_OK(zarr_array_set_synchronizer(a, ZARR_SYNC_THREAD, NULL));
        pthread_t tids[WRITERS];
        struct job jobs[WRITERS];
        for (int w = 0; w < WRITERS; w++) {
            jobs[w] = (struct job){a, w, round, 1, ZARR_OK};
            CHECK(pthread_create(&tids[w], NULL, write_rows, &jobs[w]) == 0);
        }
        for (int w = 0; w < WRITERS; w++) {
            pthread_join(tids[w], NULL);
            CHECK_OK(jobs[w].status);
        }
        CHECK_EQ(lost_cells(a, ROWS, round), 0);
        zarr_array_free(a);
    }
}

static void threads_aligned_without_locks(zarr_store_t *store) {
    for (int round = 0; round < ROUNDS; round++) {
        zarr_array_t *a = create(store, "aligned", 64);
        pthread_t tids[WRITERS];
        struct job jobs[WRITERS];
        for (int w = 0; w < WRITERS; w++) {
            jobs[w] = (struct job){a, w, round, 8, ZARR_OK};
            CHECK(pthread_create(&tids[w], NULL, write_rows, &jobs[w]) == 0);
        }
        for (int w = 0; w < WRITERS; w++) {
            pthread_join(tids[w], NULL);
            CHECK_OK(jobs[w].status);
        }
        CHECK_EQ(lost_cells(a, 64, round), 0);
        zarr_array_free(a);
    }
}

/* 8 threads share chunks of a memory-store array with versioned writes and no locks; a
 * directory store refuses versioned writes. */
static void threads_with_versioned_writes(zarr_store_t *dir_store) {
    zarr_store_t *memory = NULL;
    CHECK_OK(zarr_store_new_memory(&memory));
    for (int round = 0; round < ROUNDS; round++) {
        zarr_array_t *a = create(memory, "versioned", ROWS);
        CHECK_OK(zarr_array_set_synchronizer(a, ZARR_SYNC_VERSIONED, NULL));
        pthread_t tids[WRITERS];
        struct job jobs[WRITERS];
        for (int w = 0; w < WRITERS; w++) {
            jobs[w] = (struct job){a, w, round, 1, ZARR_OK};
            CHECK(pthread_create(&tids[w], NULL, write_rows, &jobs[w]) == 0);
        }
        for (int w = 0; w < WRITERS; w++) {
            pthread_join(tids[w], NULL);
            CHECK_OK(jobs[w].status);
        }
        CHECK_EQ(lost_cells(a, ROWS, round), 0);
        zarr_array_free(a);
    }
    zarr_store_free(memory);
    zarr_array_t *a = create(dir_store, "unversioned", 8);
    CHECK_STATUS(zarr_array_set_synchronizer(a, ZARR_SYNC_VERSIONED, NULL),
                 ZARR_ERR_UNSUPPORTED);
    CHECK_CONTAINS(check_last_error(), "lock files");
    zarr_array_free(a);
}

/* 4 processes, each writing the rows of two writers, with lock files in `lock_dir`. */
static void processes_with_lock_files(const char *dir, const char *lock_dir) {
    for (int round = 0; round < ROUNDS; round++) {
        zarr_store_t *store = NULL;
        CHECK_OK(zarr_store_open_fs(dir, ZARR_MODE_A, &store));
        zarr_array_t *a = create(store, "processes", ROWS);
        zarr_array_free(a);
        zarr_store_free(store);
        pid_t pids[4];
        int fds[4][2];
        for (int p = 0; p < 4; p++) {
            CHECK(pipe(fds[p]) == 0);
            pids[p] = fork();
            if (pids[p] == 0) {
                close(fds[p][0]);
                /* Child: its own store and array handles, as another process would have. */
                zarr_store_t *s = NULL;
                zarr_array_t *arr = NULL;
                int ok = zarr_store_open_fs(dir, ZARR_MODE_R_PLUS, &s) == ZARR_OK &&
                         zarr_array_open(s, "processes", ZARR_MODE_R_PLUS, &arr) == ZARR_OK &&
                         zarr_array_set_synchronizer(arr, ZARR_SYNC_PROCESS, lock_dir) == ZARR_OK;
                for (int w = 2 * p; ok && w < 2 * p + 2; w++) {
                    struct job job = {arr, w, round, 1, ZARR_OK};
                    write_rows(&job);
                    ok = job.status == ZARR_OK;
                }
                if (!ok) fprintf(stderr, "child %d: %s\n", p, check_last_error());
                zarr_array_free(arr);
                zarr_store_free(s);
                check_child_report(fds[p][1], ok);
                _exit(ok ? 0 : 1);
            }
            close(fds[p][1]);
            CHECK(pids[p] > 0);
        }
        for (int p = 0; p < 4; p++) {
            int status = 0;
            waitpid(pids[p], &status, 0);
            CHECK(check_child_passed(fds[p][0], status));
        }
        CHECK_OK(zarr_store_open_fs(dir, ZARR_MODE_R, &store));
        CHECK_OK(zarr_array_open(store, "processes", ZARR_MODE_R, &a));
        CHECK_EQ(lost_cells(a, ROWS, round), 0);
        zarr_array_free(a);
        zarr_store_free(store);
    }
}

enum { COUNTERS = 64, INCREMENTS = 16 };

/* A writer incrementing counters through store and array handles of its own. */
struct incrementer {
    const char *root; /* the store directory it opens */
    const char *path; /* the array's path in that store */
    zarr_sync_t sync;
    const char *lock_dir;
    uint64_t writer, writers;
    bool ok;
};

/* Adds one to counter i with a one-element read and write: a read-modify-write of a chunk
 * every writer shares. */
static bool increment_one(const zarr_array_t *a, uint64_t i) {
    uint32_t v = 0;
    uint64_t start[1] = {i}, count[1] = {1};
    if (zarr_array_read(a, 1, start, count, ZARR_DTYPE_UINT32, ZARR_ORDER_C, &v, sizeof v) !=
        ZARR_OK)
        return false;
    v++;
    return zarr_array_write(a, 1, start, count, ZARR_DTYPE_UINT32, ZARR_ORDER_C, &v,
                            sizeof v) == ZARR_OK;
}

/* Opens its own handles and increments counters writer, writer + writers, ... INCREMENTS
 * times each. */
static void *increment(void *arg) {
    struct incrementer *job = arg;
    zarr_store_t *s = NULL;
    zarr_array_t *a = NULL;
    job->ok = zarr_store_open_fs(job->root, ZARR_MODE_R_PLUS, &s) == ZARR_OK &&
              zarr_array_open(s, job->path, ZARR_MODE_R_PLUS, &a) == ZARR_OK &&
              zarr_array_set_synchronizer(a, job->sync, job->lock_dir) == ZARR_OK;
    for (int round = 0; job->ok && round < INCREMENTS; round++)
        for (uint64_t i = job->writer; job->ok && i < COUNTERS; i += job->writers)
            job->ok = increment_one(a, i);
    if (!job->ok) fprintf(stderr, "writer %" PRIu64 ": %s\n", job->writer, check_last_error());
    zarr_array_free(a);
    zarr_store_free(s);
    return NULL;
}

/* Creates COUNTERS zeros in chunks of 16 (zlib) at `path` of the store at `root`. */
static void create_counters(const char *root, const char *path) {
    uint64_t shape[1] = {COUNTERS}, chunks[1] = {16};
    zarr_store_t *store = NULL;
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_store_open_fs(root, ZARR_MODE_A, &store));
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_UINT32, 1, shape, &b));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 1, chunks));
    CHECK_OK(zarr_array_builder_set_fill_value_json(b, "0"));
    CHECK_OK(zarr_array_builder_set_compressor_json(b, "{\"id\": \"zlib\", \"level\": 1}"));
    CHECK_OK(zarr_array_create(b, store, path, ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    zarr_array_free(a);
    zarr_store_free(store);
}

/* Increments missing from the counters at `path` of the store at `root`. */
static uint64_t lost_increments(const char *root, const char *path) {
    uint32_t v[COUNTERS];
    uint64_t start[1] = {0}, count[1] = {COUNTERS}, lost = 0;
    zarr_store_t *store = NULL;
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_store_open_fs(root, ZARR_MODE_R, &store));
    CHECK_OK(zarr_array_open(store, path, ZARR_MODE_R, &a));
    CHECK_OK(zarr_array_read(a, 1, start, count, ZARR_DTYPE_UINT32, ZARR_ORDER_C, v, sizeof v));
    for (int i = 0; i < COUNTERS; i++) lost += INCREMENTS - v[i];
    zarr_array_free(a);
    zarr_store_free(store);
    return lost;
}

/* The writer job `w` of `writers`: odd writers open the array through the store rooted at
 * `sub` (X/s, path "a"), even ones through `top` (X, path "s/a"). */
static struct incrementer incrementer(const char *top, const char *sub, uint64_t w,
                                      uint64_t writers, zarr_sync_t sync, const char *lock_dir) {
    return (struct incrementer){w % 2 ? sub : top, w % 2 ? "a" : "s/a", sync, lock_dir,
                                w, writers, false};
}

/* 8 threads, each with its own store and array handle, with thread locks: 8192 increments. */
static void threads_with_their_own_handles(const char *top, const char *sub) {
    create_counters(top, "s/a");
    pthread_t tids[WRITERS];
    struct incrementer jobs[WRITERS];
    for (uint64_t w = 0; w < WRITERS; w++) {
        jobs[w] = incrementer(top, sub, w, WRITERS, ZARR_SYNC_THREAD, NULL);
        CHECK(pthread_create(&tids[w], NULL, increment, &jobs[w]) == 0);
    }
    for (int w = 0; w < WRITERS; w++) {
        pthread_join(tids[w], NULL);
        CHECK(jobs[w].ok);
    }
    CHECK_EQ(lost_increments(top, "s/a"), 0);
}

/* 4 processes, alternating between the two roots, with lock files: 1024 increments. */
static void processes_through_differently_rooted_stores(const char *top, const char *sub,
                                                        const char *lock_dir) {
    create_counters(top, "s/a");
    pid_t pids[4];
    int fds[4][2];
    for (uint64_t p = 0; p < 4; p++) {
        CHECK(pipe(fds[p]) == 0);
        pids[p] = fork();
        if (pids[p] == 0) {
            close(fds[p][0]);
            struct incrementer job = incrementer(top, sub, p, 4, ZARR_SYNC_PROCESS, lock_dir);
            increment(&job);
            check_child_report(fds[p][1], job.ok);
            _exit(job.ok ? 0 : 1);
        }
        close(fds[p][1]);
        CHECK(pids[p] > 0);
    }
    for (int p = 0; p < 4; p++) {
        int status = 0;
        waitpid(pids[p], &status, 0);
        CHECK(check_child_passed(fds[p][0], status));
    }
    CHECK_EQ(lost_increments(top, "s/a"), 0);
}

int main(void) {
    char dir[] = "/tmp/zarr-concurrency-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char store_dir[512], lock_dir[512];
    snprintf(store_dir, sizeof store_dir, "%s/store", dir);
    snprintf(lock_dir, sizeof lock_dir, "%s/locks", dir);

    zarr_store_t *store = NULL;
    CHECK_OK(zarr_store_open_fs(store_dir, ZARR_MODE_A, &store));
    threads_with_thread_locks(store);
    threads_aligned_without_locks(store);
    threads_with_versioned_writes(store);
    zarr_store_free(store);
    processes_with_lock_files(store_dir, lock_dir);
    char top[512], sub[512];
    snprintf(top, sizeof top, "%s/counters", dir);
    snprintf(sub, sizeof sub, "%s/counters/s", dir);
    threads_with_their_own_handles(top, sub);
    processes_through_differently_rooted_stores(top, sub, lock_dir);

    /* An unknown kind and a process synchronizer without a directory are refused. */
    CHECK_OK(zarr_store_open_fs(store_dir, ZARR_MODE_R_PLUS, &store));
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_open(store, "threads", ZARR_MODE_R_PLUS, &a));
    CHECK_STATUS(zarr_array_set_synchronizer(a, 7, NULL), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_set_synchronizer(a, ZARR_SYNC_PROCESS, NULL), ZARR_ERR_NULL_ARG);
    CHECK_OK(zarr_array_set_synchronizer(a, ZARR_SYNC_NONE, NULL));
    zarr_array_free(a);
    zarr_store_free(store);

    char command[600];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    CHECK(system(command) == 0);
    return CHECK_DONE();
}
