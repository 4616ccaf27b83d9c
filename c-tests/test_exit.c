/*
 * A program that ends without freeing its handles loses nothing that exit() can save, as
 * C's stdio and HDF5 flush at exit. Each case runs in a child process that appends a time
 * series (sharded in shards of 10 steps, as the time-series guide recommends, and not),
 * the last steps non-blocking and never waited for, then calls exit(0) without freeing
 * anything; the parent then finds every step stored exactly, no temporary file and no
 * append lock left. A zip archive never closed is written at exit too. A child that
 * _exit()s loses its buffered steps (documented), and a fork child's exit() leaves its
 * parent's buffers alone.
 */
#include "check.h"

#include <dirent.h>

enum { STEPS = 25, ASYNC_STEPS = 5, NX = 8 };

/* Where a child reports its own checks before it ends (check_child_report): under valgrind
 * or LeakSanitizer its exit status also counts the handles it leaves unfreed on purpose. */
static int report_fd = -1;

/* Reports the child's checks, then ends it with exit() or, if `quick`, _exit(). */
static void end_child(bool quick) {
    check_child_report(report_fd, check_failed == 0);
    fflush(NULL);
    if (quick)
        _exit(0);
    exit(0);
}

/* The value of element x of step t. */
static int32_t value(uint64_t t, int x) { return (int32_t)(t * 100 + (uint64_t)x); }

static zarr_array_t *create_series(zarr_store_t *store, bool sharded) {
    const uint64_t shape[2] = {0, NX}, chunks[2] = {1, NX}, shards[2] = {10, NX};
    zarr_array_builder_t *b = NULL;
    zarr_array_t *array = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT32, 2, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 3));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, chunks));
    if (sharded)
        CHECK_OK(zarr_array_builder_set_shard_shape(b, 2, shards));
    CHECK_OK(zarr_array_create(b, store, "t", ZARR_MODE_W, &array));
    zarr_array_builder_free(b);
    return array;
}

/* Appends the steps, the last ASYNC_STEPS without waiting, and ends the process as `how`
 * says, freeing nothing. */
static void append_and_end(zarr_store_t *store, bool sharded, bool quick_exit_after) {
    zarr_array_t *array = create_series(store, sharded);
    const uint64_t count[2] = {1, NX};
    static int32_t steps[STEPS][NX];
    for (uint64_t t = 0; t < STEPS; t++) {
        for (int x = 0; x < NX; x++)
            steps[t][x] = value(t, x);
        if (t < STEPS - ASYNC_STEPS) {
            CHECK_OK(zarr_array_append(array, 0, 2, count, ZARR_DTYPE_INT32, ZARR_ORDER_C,
                                       steps[t], sizeof steps[t]));
        } else {
            zarr_request_t *request = NULL;
            CHECK_OK(zarr_array_append_async(array, 0, 2, count, ZARR_DTYPE_INT32,
                                             ZARR_ORDER_C, steps[t], sizeof steps[t], 0,
                                             &request));
        }
    }
    end_child(quick_exit_after);
}

/* Whether any file under `dir` (recursively) has `needle` in its name. */
static bool tree_has(const char *dir, const char *needle) {
    DIR *d = opendir(dir);
    if (d == NULL)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (strstr(e->d_name, needle) != NULL) {
            found = true;
            break;
        }
        char *path = check_join(dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            found = tree_has(path, needle);
        free(path);
    }
    closedir(d);
    return found;
}

/* Runs `child` in a forked process; whether its own checks passed. */
static bool in_child(void (*child)(const char *, bool, bool), const char *where, bool sharded,
                     bool quick) {
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        return false;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        report_fd = fds[1];
        check_failed = 0; /* the child reports its own failures */
        child(where, sharded, quick);
        _exit(3); /* not reached */
    }
    close(fds[1]);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    return check_child_passed(fds[0], status);
}

static void directory_child(const char *dir, bool sharded, bool quick) {
    zarr_store_t *store = NULL;
    CHECK_OK(zarr_store_open_fs(dir, ZARR_MODE_W, &store));
    append_and_end(store, sharded, quick);
}

/* A zip archive is written whole (its entries cannot be rewritten, so a zip array is
 * written, not appended to): the series is written in one region, then the process ends
 * without closing the archive. */
static void zip_child(const char *zip, bool sharded, bool quick) {
    (void)quick;
    zarr_store_t *store = NULL;
    CHECK_OK(zarr_store_open_zip(zip, ZARR_MODE_W, false, &store));
    const uint64_t shape[2] = {STEPS, NX}, chunks[2] = {5, NX}, start[2] = {0, 0};
    zarr_array_builder_t *b = NULL;
    zarr_array_t *array = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT32, 2, shape, &b));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, chunks));
    if (sharded)
        CHECK_OK(zarr_array_builder_set_shard_shape(b, 2, shape));
    CHECK_OK(zarr_array_create(b, store, "t", ZARR_MODE_W, &array));
    zarr_array_builder_free(b);
    static int32_t steps[STEPS][NX];
    for (uint64_t t = 0; t < STEPS; t++)
        for (int x = 0; x < NX; x++)
            steps[t][x] = value(t, x);
    CHECK_OK(zarr_array_write(array, 2, start, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, steps,
                              sizeof steps));
    end_child(false);
}

/* The stored series holds exactly `expected` steps, each exact. */
static void check_series(zarr_store_t *store, uint64_t expected) {
    zarr_array_t *array = NULL;
    CHECK_OK(zarr_array_open(store, "t", ZARR_MODE_R, &array));
    if (array == NULL)
        return;
    uint64_t shape[2] = {0, 0};
    CHECK_OK(zarr_array_shape(array, 2, shape));
    CHECK_EQ(shape[0], expected);
    static int32_t back[STEPS][NX];
    const uint64_t start[2] = {0, 0}, count[2] = {expected, NX};
    if (expected > 0) {
        CHECK_OK(zarr_array_read(array, 2, start, count, ZARR_DTYPE_INT32, ZARR_ORDER_C, back,
                                 (size_t)expected * sizeof back[0]));
        int wrong = 0;
        for (uint64_t t = 0; t < expected; t++)
            for (int x = 0; x < NX; x++)
                wrong += back[t][x] != value(t, x);
        CHECK_EQ(wrong, 0);
    }
    zarr_array_free(array);
}

static void test_directory(bool sharded) {
    char *dir = check_mkdtemp();
    CHECK(in_child(directory_child, dir, sharded, false));
    zarr_store_t *store = NULL;
    CHECK_OK(zarr_store_open_fs(dir, ZARR_MODE_R, &store));
    check_series(store, STEPS);
    zarr_store_free(store);
    CHECK(!tree_has(dir, ".zarr-tmp"));
    CHECK(!tree_has(dir, ".zarr-append.lock"));
    check_rmtree(dir);
}

static void test_zip(void) {
    char *dir = check_mkdtemp();
    char *zip = check_join(dir, "series.zip");
    CHECK(in_child(zip_child, zip, true, false));
    zarr_store_t *store = NULL;
    CHECK_OK(zarr_store_open_zip(zip, ZARR_MODE_R, false, &store));
    check_series(store, STEPS);
    zarr_store_free(store);
    free(zip);
    check_rmtree(dir);
}

/* _exit() runs no exit handler: what was buffered since the last stored shard is lost,
 * but what is stored is consistent (the shape never names a step that is not there). */
static void test_quick_exit_loses_the_buffer(void) {
    char *dir = check_mkdtemp();
    CHECK(in_child(directory_child, dir, true, true));
    zarr_store_t *store = NULL;
    CHECK_OK(zarr_store_open_fs(dir, ZARR_MODE_R, &store));
    zarr_array_t *array = NULL;
    CHECK_OK(zarr_array_open(store, "t", ZARR_MODE_R, &array));
    uint64_t shape[2] = {0, 0};
    CHECK_OK(zarr_array_shape(array, 2, shape));
    CHECK(shape[0] < STEPS);
    zarr_array_free(array);
    check_series(store, shape[0]);
    zarr_store_free(store);
    check_rmtree(dir);
}

/* A fork child that calls exit() leaves its parent's buffered steps to the parent. */
static void test_fork_child_leaves_the_parent_alone(void) {
    char *dir = check_mkdtemp();
    zarr_store_t *store = NULL;
    CHECK_OK(zarr_store_open_fs(dir, ZARR_MODE_W, &store));
    zarr_array_t *array = create_series(store, true);
    const uint64_t count[2] = {1, NX};
    int32_t step[NX];
    for (uint64_t t = 0; t < 3; t++) {
        for (int x = 0; x < NX; x++)
            step[x] = value(t, x);
        CHECK_OK(zarr_array_append(array, 0, 2, count, ZARR_DTYPE_INT32, ZARR_ORDER_C, step,
                                   sizeof step));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        exit(0);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    /* The child stored nothing: the three steps are still only in the parent's buffer. */
    zarr_store_t *reader_store = NULL;
    zarr_array_t *reader = NULL;
    CHECK_OK(zarr_store_open_fs(dir, ZARR_MODE_R, &reader_store));
    CHECK_OK(zarr_array_open(reader_store, "t", ZARR_MODE_R, &reader));
    uint64_t shape[2] = {9, 9};
    CHECK_OK(zarr_array_shape(reader, 2, shape));
    CHECK_EQ(shape[0], 0);
    zarr_array_free(reader);
    zarr_store_free(reader_store);
    zarr_array_free(array);
    zarr_store_free(store);
    check_rmtree(dir);
}

int main(void) {
    test_directory(true);
    test_directory(false);
    test_zip();
    test_quick_exit_loses_the_buffer();
    test_fork_child_leaves_the_parent_alone();
    return CHECK_DONE();
}
