/*
 * Non-blocking writes and appends: requests from several threads waited for in any order,
 * submission order of overlapping writes and of appends, a store that fails on one chunk
 * (the error at wait, no chunk torn, later requests unaffected), the budget of bytes in
 * flight (its peak measured), converting writes (a value that does not fit fails at the
 * wait), requests freed before waiting, flush and close waiting.
 */
#include "check.h"

#include <pthread.h>

enum { ROWS = 40, COLS = 4, THREADS = 4 };

/* A v3 int32 array of ROWS x COLS in chunks of 10 rows, fill value -1, at `path`. */
static zarr_array_t *create(zarr_store_t *store, const char *path, uint64_t rows) {
    uint64_t shape[2] = {rows, COLS}, chunks[2] = {10, COLS};
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT32, 2, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 3));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, chunks));
    CHECK_OK(zarr_array_builder_set_fill_value_json(b, "-1"));
    CHECK_OK(zarr_array_create(b, store, path, ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    return a;
}

static void read_all(zarr_array_t *a, uint64_t rows, int32_t *out) {
    uint64_t start[2] = {0, 0}, count[2] = {rows, COLS};
    CHECK_OK(zarr_array_read(a, 2, start, count, ZARR_DTYPE_INT32, ZARR_ORDER_C, out,
                             sizeof(int32_t) * rows * COLS));
}

/* Submits `rows` rows from row `first`, value row * 100 + col + base. */
static zarr_request_t *submit_rows(zarr_array_t *a, uint64_t first, uint64_t rows, int32_t base,
                                   int32_t *buf, uint32_t flags) {
    for (uint64_t r = 0; r < rows; r++)
        for (uint64_t c = 0; c < COLS; c++)
            buf[r * COLS + c] = (int32_t)((first + r) * 100 + c) + base;
    uint64_t start[2] = {first, 0}, count[2] = {rows, COLS};
    zarr_request_t *req = NULL;
    CHECK_OK(zarr_array_write_async(a, 2, start, count, ZARR_DTYPE_INT32, ZARR_ORDER_C, buf,
                                    sizeof(int32_t) * rows * COLS, flags, &req));
    return req;
}

struct submitter {
    zarr_array_t *array;
    int thread;
    int32_t rows[ROWS / THREADS][COLS]; /* lent to the requests without ZARR_ASYNC_COPY */
    zarr_request_t *requests[ROWS / THREADS];
};

/* Thread t submits its rows t, t + THREADS, ... one request each; odd rows are copied, even
 * rows lent. */
static void *submit(void *arg) {
    struct submitter *s = arg;
    for (int k = 0; k < ROWS / THREADS; k++) {
        uint64_t row = (uint64_t)(k * THREADS + s->thread);
        uint32_t flags = row % 2 ? ZARR_ASYNC_COPY : 0;
        s->requests[k] = submit_rows(s->array, row, 1, 0, s->rows[k], flags);
    }
    return NULL;
}

static void threads_waited_in_any_order(zarr_store_t *store) {
    zarr_array_t *a = create(store, "threads", ROWS);
    static struct submitter subs[THREADS];
    pthread_t tids[THREADS];
    for (int t = 0; t < THREADS; t++) {
        subs[t].array = a;
        subs[t].thread = t;
        CHECK(pthread_create(&tids[t], NULL, submit, &subs[t]) == 0);
    }
    for (int t = 0; t < THREADS; t++) pthread_join(tids[t], NULL);
    /* The last thread's requests one by one from the last, then all at once. */
    for (int k = ROWS / THREADS - 1; k >= 0; k--)
        CHECK_OK(zarr_request_wait(subs[THREADS - 1].requests[k]));
    zarr_request_t *all[ROWS];
    for (int t = 0; t < THREADS; t++)
        for (int k = 0; k < ROWS / THREADS; k++)
            all[t * (ROWS / THREADS) + k] = subs[t].requests[k];
    CHECK_OK(zarr_request_wait_all(all, ROWS));
    for (int i = 0; i < ROWS; i++) {
        bool done = false;
        CHECK_OK(zarr_request_test(all[i], &done));
        CHECK(done);
        zarr_request_free(all[i]);
    }
    static int32_t got[ROWS * COLS];
    read_all(a, ROWS, got);
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++) CHECK_EQ(got[r * COLS + c], r * 100 + c);
    zarr_array_free(a);
}

static void overlapping_writes_in_order(zarr_store_t *store) {
    zarr_array_t *a = create(store, "overlap", ROWS);
    static int32_t bufs[20][ROWS * COLS];
    zarr_request_t *reqs[20];
    /* Write k covers rows [k, k + 20) with base 1000 * k. */
    for (int k = 0; k < 20; k++) reqs[k] = submit_rows(a, (uint64_t)k, 20, 1000 * k, bufs[k], 0);
    CHECK_OK(zarr_request_wait(reqs[19]));
    for (int k = 0; k < 20; k++) {
        bool done = false;
        CHECK_OK(zarr_request_test(reqs[k], &done));
        CHECK(done); /* run in order: the last done means all are */
        zarr_request_free(reqs[k]);
    }
    static int32_t got[ROWS * COLS];
    read_all(a, ROWS, got);
    for (int r = 0; r < ROWS; r++) {
        int last = r < 19 ? r : 19; /* the last write covering row r */
        for (int c = 0; c < COLS; c++)
            CHECK_EQ(got[r * COLS + c], r < 39 ? r * 100 + c + 1000 * last : -1);
    }
    zarr_array_free(a);
}

/* A file where chunk row 2's directory belongs: storing that chunk fails. */
static void failing_chunk(zarr_store_t *store, const char *dir) {
    zarr_array_t *a = create(store, "f", ROWS);
    char *c_dir = check_join(dir, "f/c");
    CHECK(mkdir(c_dir, 0755) == 0);
    char *blocker = check_join(c_dir, "2");
    FILE *f = fopen(blocker, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    static int32_t whole[ROWS * COLS], first[10 * COLS];
    zarr_request_t *failing = submit_rows(a, 0, ROWS, 5000, whole, ZARR_ASYNC_COPY);
    zarr_request_t *later = submit_rows(a, 0, 10, 0, first, ZARR_ASYNC_COPY);
    CHECK_OK(zarr_request_wait(later));
    zarr_status_t st = zarr_request_wait(failing);
    CHECK(st != ZARR_OK);
    CHECK_ERROR_CONTAINS("c/2/0");
    CHECK_EQ(zarr_request_wait(failing), st); /* the same outcome again */
    bool done = false;
    CHECK_EQ(zarr_request_test(failing, &done), st);
    CHECK(done);
    zarr_request_free(failing);
    zarr_request_free(later);
    remove(blocker);
    static int32_t got[ROWS * COLS];
    read_all(a, ROWS, got);
    for (int r = 0; r < 10; r++)
        for (int c = 0; c < COLS; c++) CHECK_EQ(got[r * COLS + c], r * 100 + c);
    for (int i = 20 * COLS; i < 30 * COLS; i++) CHECK_EQ(got[i], -1);
    /* Chunks 1 and 3: stored whole by the failing write, or not at all; never a mix. */
    for (int chunk = 1; chunk < 4; chunk += 2) {
        int stored = 0, unstored = 0;
        for (int r = chunk * 10; r < chunk * 10 + 10; r++)
            for (int c = 0; c < COLS; c++) {
                stored += got[r * COLS + c] == r * 100 + c + 5000;
                unstored += got[r * COLS + c] == -1;
            }
        CHECK(stored == 10 * COLS || unstored == 10 * COLS);
    }
    free(blocker);
    free(c_dir);
    zarr_array_free(a);
}

static void budget_and_flags(zarr_store_t *store) {
    zarr_array_t *a = create(store, "budget", ROWS);
    size_t row_bytes = sizeof(int32_t) * COLS;
    CHECK_OK(zarr_set_async_budget(3 * row_bytes));
    CHECK_OK(zarr_async_in_flight(true, NULL, NULL));
    static int32_t bufs[ROWS][COLS];
    zarr_request_t *reqs[ROWS];
    for (int r = 0; r < ROWS; r++) reqs[r] = submit_rows(a, (uint64_t)r, 1, 0, bufs[r], 0);
    CHECK_OK(zarr_request_wait_all(reqs, ROWS));
    size_t now = 1, peak = 0;
    CHECK_OK(zarr_async_in_flight(false, &now, &peak));
    CHECK_EQ(now, 0);
    CHECK(peak >= row_bytes && peak <= 3 * row_bytes);
    for (int r = 0; r < ROWS; r++) zarr_request_free(reqs[r]);
    /* Larger than the whole budget: refused at once. */
    static int32_t big[ROWS * COLS];
    uint64_t start[2] = {0, 0}, count[2] = {4, COLS};
    zarr_request_t *req = (zarr_request_t *)&req;
    CHECK_STATUS(zarr_array_write_async(a, 2, start, count, ZARR_DTYPE_INT32, ZARR_ORDER_C, big,
                                        4 * row_bytes, 0, &req),
                 ZARR_ERR_INVALID_ARG);
    CHECK(req == NULL);
    CHECK_OK(zarr_set_async_budget(0));
    CHECK_STATUS(zarr_array_write_async(a, 2, start, count, ZARR_DTYPE_INT32, ZARR_ORDER_C, big,
                                        4 * row_bytes, 2, &req),
                 ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("ZARR_ASYNC_COPY");
    /* Strided: rows 0..4 from every other row of a buffer of 8. */
    for (int i = 0; i < 8 * COLS; i++) big[i] = 7000 + i;
    int64_t strides[2] = {2 * COLS, 1};
    CHECK_OK(zarr_array_write_strided_async(a, 2, start, count, strides, ZARR_DTYPE_INT32, big,
                                            8 * row_bytes, ZARR_ASYNC_COPY, &req));
    CHECK_OK(zarr_request_wait(req));
    zarr_request_free(req);
    static int32_t got[ROWS * COLS];
    read_all(a, ROWS, got);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < COLS; c++) CHECK_EQ(got[r * COLS + c], 7000 + 2 * r * COLS + c);
    zarr_array_free(a);
}

/* Converting writes: doubles into the int32 array, truncated when the request runs; a
 * value that does not fit fails at the wait and stores nothing; the next request runs. */
static void converting_writes(zarr_store_t *store) {
    zarr_array_t *a = create(store, "converted", ROWS);
    static const double fits[COLS] = {1.9, -2.9, 3.0, 40000.5};
    static const double too_big[COLS] = {5.0, 3e9, 7.0, 8.0};
    static const double after[COLS] = {-6.5, 7.25, 0.0, 9.0};
    const double *bufs[3] = {fits, too_big, after};
    zarr_request_t *reqs[3];
    for (int i = 0; i < 3; i++) {
        uint64_t start[2] = {(uint64_t)i, 0}, count[2] = {1, COLS};
        CHECK_OK(zarr_array_write_from_async(a, 2, start, count, ZARR_DTYPE_FLOAT64,
                                             ZARR_ORDER_C, bufs[i], sizeof fits, 0, &reqs[i]));
    }
    CHECK_OK(zarr_request_wait(reqs[0]));
    CHECK_STATUS(zarr_request_wait(reqs[1]), ZARR_ERR_RANGE);
    CHECK_OK(zarr_request_wait(reqs[2]));
    for (int i = 0; i < 3; i++) zarr_request_free(reqs[i]);
    static int32_t got[ROWS * COLS];
    read_all(a, ROWS, got);
    const int32_t want[3][COLS] = {{1, -2, 3, 40000}, {-1, -1, -1, -1}, {-6, 7, 0, 9}};
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < COLS; c++) CHECK_EQ(got[r * COLS + c], want[r][c]);
    zarr_array_free(a);
}

/* Appends freed unwaited still run, in order; flush waits for them. */
static void appends_in_order_and_flush(zarr_store_t *store) {
    zarr_array_t *a = create(store, "grow", 0);
    for (int t = 0; t < 25; t++) {
        int32_t step[COLS];
        for (int c = 0; c < COLS; c++) step[c] = t * 10 + c;
        uint64_t count[2] = {1, COLS};
        zarr_request_t *req = NULL;
        CHECK_OK(zarr_array_append_async(a, 0, 2, count, ZARR_DTYPE_INT32, ZARR_ORDER_C, step,
                                         sizeof step, ZARR_ASYNC_COPY, &req));
        zarr_request_free(req);
    }
    CHECK_OK(zarr_array_flush(a));
    zarr_array_t *other = NULL;
    CHECK_OK(zarr_array_open(store, "grow", ZARR_MODE_R, &other));
    uint64_t shape[2] = {0, 0};
    CHECK_OK(zarr_array_shape(other, 2, shape));
    CHECK_EQ(shape[0], 25);
    static int32_t got[25 * COLS];
    read_all(other, 25, got);
    for (int t = 0; t < 25; t++)
        for (int c = 0; c < COLS; c++) CHECK_EQ(got[t * COLS + c], t * 10 + c);
    zarr_array_free(other);
    /* Freeing the array waits for its requests. */
    static int32_t row[COLS];
    zarr_request_t *req = submit_rows(a, 3, 1, 9000, row, 0);
    zarr_request_free(req);
    zarr_array_free(a);
    CHECK_OK(zarr_array_open(store, "grow", ZARR_MODE_R, &other));
    read_all(other, 25, got);
    CHECK_EQ(got[3 * COLS], 300 + 9000);
    zarr_array_free(other);
}

/* A fork while requests run waits for them (the request thread is inside the fork gate):
 * the child finds no queue busy and no lock held, and uses the library at once. */
static void fork_with_requests_in_flight(zarr_store_t *store) {
    zarr_array_t *a = create(store, "forked", ROWS);
    static int32_t bufs[ROWS][COLS];
    zarr_request_t *reqs[ROWS];
    for (int r = 0; r < ROWS; r++)
        reqs[r] = submit_rows(a, (uint64_t)r, 1, 0, bufs[r], ZARR_ASYNC_COPY);
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        int32_t row[COLS] = {0};
        zarr_request_t *req = NULL;
        uint64_t start[2] = {0, 0}, count[2] = {1, COLS};
        bool done = false; /* the fork waited for the parent's queue to empty */
        int ok = zarr_request_test(reqs[ROWS - 1], &done) == ZARR_OK && done &&
                 zarr_array_write_async(a, 2, start, count, ZARR_DTYPE_INT32, ZARR_ORDER_C, row,
                                        sizeof row, ZARR_ASYNC_COPY, &req) == ZARR_OK &&
                 zarr_request_wait(req) == ZARR_OK;
        check_child_report(fds[1], ok);
        _exit(0);
    }
    close(fds[1]);
    CHECK(pid > 0);
    int status = -1;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(check_child_passed(fds[0], status));
    CHECK_OK(zarr_request_wait_all(reqs, ROWS));
    for (int r = 0; r < ROWS; r++) zarr_request_free(reqs[r]);
    zarr_array_free(a);
}

int main(void) {
    char *dir = check_mkdtemp();
    zarr_store_t *store = NULL;
    CHECK_OK(zarr_store_open_fs(dir, ZARR_MODE_W, &store));
    threads_waited_in_any_order(store);
    overlapping_writes_in_order(store);
    failing_chunk(store, dir);
    budget_and_flags(store);
    converting_writes(store);
    appends_in_order_and_flush(store);
    fork_with_requests_in_flight(store);
    CHECK_OK(zarr_store_close(store));
    zarr_store_free(store);
    check_rmtree(dir);
    return CHECK_DONE();
}
