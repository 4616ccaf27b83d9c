/*
 * driver.c — the operations of the crash-state checker (tests/crashstate/run.sh) and the
 * check of each state a power cut may leave.
 *
 *   driver SCENARIO setup TARGET       makes the state before the operation (not recorded)
 *   driver SCENARIO run TARGET         the operation, recorded under strace
 *   driver SCENARIO check TARGET...    one line per TARGET: what it holds, item by item
 *   driver SCENARIO supported .        exits 77 if the library cannot run the scenario
 *
 * `run` announces its steps on stderr with raw write(2) calls, which strace records in
 * order with the file-system calls: "@@crashstate begin K" before the call that may lead
 * to known-good state K, "@@crashstate durable K" once a call that promises state K after
 * a power loss has returned. crashstate.py knows the states; `check` only reports.
 *
 * Every value written is gen * 100000 + index + 1, so a read tells which generation a
 * chunk (or append step) holds and whether it mixes generations.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zarr.h"

enum { LEN = 1024, CHUNK = 256, STEP = 16, STEPS = 10 };

static void die(const char *what) {
    char msg[1024] = "";
    zarr_last_error(msg, sizeof msg, NULL);
    fprintf(stderr, "driver: %s failed: %s\n", what, msg);
    exit(2);
}

#define OK(call)                                                                             \
    do {                                                                                     \
        if ((call) != ZARR_OK) die(#call);                                                   \
    } while (0)

/* One raw write(2), so the marker sits between the recorded calls it separates. */
static void mark(const char *what, int k) {
    char line[64];
    int n = snprintf(line, sizeof line, "@@crashstate %s %d\n", what, k);
    if (write(2, line, (size_t)n) != n) exit(2);
}

static void fill(int32_t *buf, size_t start, size_t n, int gen) {
    for (size_t i = 0; i < n; i++) buf[i] = (int32_t)(gen * 100000 + (int)(start + i) + 1);
}

/* The generation `buf` holds (elements start..start+n), -1 for the fill value, -2 mixed. */
static int generation(const int32_t *buf, size_t start, size_t n) {
    if (buf[0] == 0) {
        for (size_t i = 0; i < n; i++)
            if (buf[i] != 0) return -2;
        return -1;
    }
    int gen = (buf[0] - (int32_t)start - 1) / 100000;
    if (gen < 0) return -2;
    for (size_t i = 0; i < n; i++)
        if (buf[i] != (int32_t)(gen * 100000 + (int)(start + i) + 1)) return -2;
    return gen;
}

static void write_gen(zarr_array_t *a, size_t start, size_t n, int gen) {
    int32_t buf[LEN];
    uint64_t origin[1] = {start}, shape[1] = {n};
    fill(buf, start, n, gen);
    OK(zarr_array_write(a, 1, origin, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, buf,
                        n * sizeof *buf));
}


/* A 1-D int32 array of `len` elements in zstd-compressed chunks of CHUNK at `path`, with
 * the attributes `attrs` (JSON) unless NULL. */
static zarr_array_t *create_array(zarr_store_t *s, const char *path, size_t len,
                                  const char *attrs) {
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL;
    const uint64_t shape[1] = {len}, chunks[1] = {CHUNK};
    OK(zarr_array_builder_new(ZARR_DTYPE_INT32, 1, shape, &b));
    OK(zarr_array_builder_set_chunk_shape(b, 1, chunks));
    OK(zarr_array_builder_set_zarr_format(b, 3));
    OK(zarr_array_builder_set_compressor_json(b, "{\"id\": \"zstd\", \"level\": 1}"));
    if (attrs) OK(zarr_array_builder_set_attributes_json(b, attrs));
    OK(zarr_array_create(b, s, path, ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    return a;
}

/* Prints " name=G" (generation), "-" (fill value), "X" (mixed) or "E" (error, whose
 * message is appended to `errors`). */
static void put(const char *name, int gen, char *errors, size_t cap) {
    if (gen >= 0)
        printf(" %s=%d", name, gen);
    else if (gen == -1)
        printf(" %s=-", name);
    else if (gen == -2)
        printf(" %s=X", name);
    else {
        char msg[512] = "";
        zarr_last_error(msg, sizeof msg, NULL);
        for (char *c = msg; *c; c++)
            if (*c == '\n' || *c == '|') *c = ' ';
        printf(" %s=E", name);
        size_t used = strlen(errors);
        snprintf(errors + used, cap - used, "%s%s: %s", used ? "; " : "", name, msg);
    }
}

enum { ERROR = -3 };

/* Reads the attribute "gen" and each chunk of the array at `path` (n elements) as items
 * named `prefix` + "attr", "c0", "c1", ...; an array that is not there has no items. */
static void report_array(zarr_store_t *s, const char *path, const char *prefix, size_t n,
                         char *errors, size_t cap) {
    zarr_array_t *a = NULL;
    zarr_status_t st = zarr_array_open(s, path, ZARR_MODE_R, &a);
    char name[32];
    if (st == ZARR_ERR_NOT_FOUND) return;
    snprintf(name, sizeof name, "%sattr", prefix);
    int32_t v = 0;
    put(name,
        st == ZARR_OK && zarr_array_attr_get_number(a, "gen", ZARR_DTYPE_INT32, &v) == ZARR_OK
            ? v
            : ERROR,
        errors, cap);
    for (size_t c = 0; c < n / CHUNK; c++) {
        int32_t buf[CHUNK];
        uint64_t origin[1] = {c * CHUNK}, shape[1] = {CHUNK};
        snprintf(name, sizeof name, "%sc%zu", prefix, c);
        if (st != ZARR_OK || zarr_array_read(a, 1, origin, shape, ZARR_DTYPE_INT32,
                                             ZARR_ORDER_C, buf, sizeof buf) != ZARR_OK)
            put(name, ERROR, errors, cap);
        else
            put(name, generation(buf, c * CHUNK, CHUNK), errors, cap);
    }
    zarr_array_free(a);
}

/* Directory store at a durability level: chunks 0-2 and attribute gen 0 before; then
 * gen 1 over all four chunks (chunk 3 is new), gen 2 over chunks 0-1, attribute gen 3, a
 * new array g/n (new directories) at gen 4. */
static void fs_setup(const char *dir) {
    zarr_store_t *s = NULL;
    OK(zarr_store_open_fs(dir, ZARR_MODE_W, &s));
    zarr_array_t *a = create_array(s, "a", LEN, "{\"gen\": 0}");
    write_gen(a, 0, 3 * CHUNK, 0);
    zarr_array_free(a);
    OK(zarr_store_close(s));
    zarr_store_free(s);
}

/* `claimed`: the level whose markers are written (the control scenario claims EACH_WRITE
 * while writing at NONE). */
static void fs_run(const char *dir, zarr_durability level, zarr_durability claimed) {
    zarr_store_t *s = NULL;
    zarr_array_t *a = NULL;
    OK(zarr_store_open_fs(dir, ZARR_MODE_R_PLUS, &s));
    OK(zarr_store_set_durability(s, level));
    OK(zarr_array_open(s, "a", ZARR_MODE_R_PLUS, &a));
    for (int k = 1; k <= 4; k++) {
        mark("begin", k);
        if (k == 1) write_gen(a, 0, LEN, 1);
        if (k == 2) write_gen(a, 0, 2 * CHUNK, 2);
        if (k == 3) {
            const int32_t gen = 3;
            OK(zarr_array_attr_set_number(a, "gen", ZARR_DTYPE_INT32, &gen));
        }
        if (k == 4) {
            zarr_array_t *n = create_array(s, "g/n", 2 * CHUNK, "{\"gen\": 4}");
            write_gen(n, 0, 2 * CHUNK, 4);
            zarr_array_free(n);
        }
        if (claimed == ZARR_DURABILITY_EACH_WRITE) mark("durable", k);
        if (claimed == ZARR_DURABILITY_FLUSH) {
            OK(zarr_store_flush(s));
            mark("durable", k);
        }
    }
    zarr_array_free(a);
    OK(zarr_store_close(s));
    zarr_store_free(s);
}

static void fs_check(const char *dir, char *errors, size_t cap) {
    zarr_store_t *s = NULL;
    if (zarr_store_open_fs(dir, ZARR_MODE_R, &s) != ZARR_OK) {
        put("open", ERROR, errors, cap);
        return;
    }
    report_array(s, "a", "", LEN, errors, cap);
    report_array(s, "g/n", "n.", 2 * CHUNK, errors, cap);
    zarr_store_free(s);
}

/* Streaming appends to a sharded array (shards of 4 steps) at the default level: ten
 * steps, zarr_array_flush after steps 3, 7 and 10. */
static void append_setup(const char *dir) {
    zarr_store_t *s = NULL;
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL;
    const uint64_t shape[2] = {0, STEP}, chunks[2] = {1, STEP}, shards[2] = {4, STEP};
    OK(zarr_store_open_fs(dir, ZARR_MODE_W, &s));
    OK(zarr_array_builder_new(ZARR_DTYPE_INT32, 2, shape, &b));
    OK(zarr_array_builder_set_zarr_format(b, 3));
    OK(zarr_array_builder_set_chunk_shape(b, 2, chunks));
    OK(zarr_array_builder_set_shard_shape(b, 2, shards));
    OK(zarr_array_builder_set_compressor_json(b, "{\"id\": \"zstd\", \"level\": 1}"));
    OK(zarr_array_create(b, s, "a", ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    zarr_array_free(a);
    OK(zarr_store_close(s));
    zarr_store_free(s);
}

static void append_run(const char *dir) {
    zarr_store_t *s = NULL;
    zarr_array_t *a = NULL;
    OK(zarr_store_open_fs(dir, ZARR_MODE_R_PLUS, &s));
    OK(zarr_array_open(s, "a", ZARR_MODE_R_PLUS, &a));
    for (int t = 1; t <= STEPS; t++) {
        int32_t step[STEP];
        const uint64_t count[2] = {1, STEP};
        fill(step, (size_t)(t - 1) * STEP, STEP, 0);
        mark("begin", t);
        OK(zarr_array_append(a, 0, 2, count, ZARR_DTYPE_INT32, ZARR_ORDER_C, step,
                             sizeof step));
        if (t == 3 || t == 7 || t == STEPS) {
            OK(zarr_array_flush(a));
            mark("durable", t);
        }
    }
    zarr_array_free(a);
    OK(zarr_store_close(s));
    zarr_store_free(s);
}

/* Items: "steps" (the stored length) and s<t> for each stored step: 0 when exact. */
static void append_check(const char *dir, char *errors, size_t cap) {
    zarr_store_t *s = NULL;
    zarr_array_t *a = NULL;
    uint64_t shape[2];
    if (zarr_store_open_fs(dir, ZARR_MODE_R, &s) != ZARR_OK) {
        put("open", ERROR, errors, cap);
        return;
    }
    if (zarr_array_open(s, "a", ZARR_MODE_R, &a) != ZARR_OK ||
        zarr_array_shape(a, 2, shape) != ZARR_OK) {
        put("open", ERROR, errors, cap);
        zarr_array_free(a);
        zarr_store_free(s);
        return;
    }
    printf(" steps=%" PRIu64, shape[0]);
    for (uint64_t t = 0; t < shape[0]; t++) {
        int32_t step[STEP];
        const uint64_t origin[2] = {t, 0}, count[2] = {1, STEP};
        char name[24];
        snprintf(name, sizeof name, "s%" PRIu64, t + 1);
        if (zarr_array_read(a, 2, origin, count, ZARR_DTYPE_INT32, ZARR_ORDER_C, step,
                            sizeof step) != ZARR_OK)
            put(name, ERROR, errors, cap);
        else
            put(name, generation(step, (size_t)t * STEP, STEP), errors, cap);
    }
    zarr_array_free(a);
    zarr_store_free(s);
}

/* Zip close. "zip": a zip written whole at gen 0, then replaced by one at gen 1
 * (ZARR_MODE_W). "zip-append": array "b" at gen 1 added to it (ZARR_MODE_A). */
static void zip_write(const char *path, zarr_mode_t mode, const char *array, int gen) {
    zarr_store_t *s = NULL;
    OK(zarr_store_open_zip(path, mode, false, &s));
    char attrs[32];
    snprintf(attrs, sizeof attrs, "{\"gen\": %d}", gen);
    zarr_array_t *a = create_array(s, array, 2 * CHUNK, attrs);
    write_gen(a, 0, 2 * CHUNK, gen);
    zarr_array_free(a);
    OK(zarr_store_close(s));
    zarr_store_free(s);
}

static void zip_run(const char *path, bool append) {
    mark("begin", 1);
    zip_write(path, append ? ZARR_MODE_A : ZARR_MODE_W, append ? "b" : "a", 1);
    mark("durable", 1);
}

static void zip_check(const char *path, char *errors, size_t cap) {
    zarr_store_t *s = NULL;
    if (access(path, F_OK) != 0) {
        printf(" zip=-");
        return;
    }
    if (zarr_store_open_zip(path, ZARR_MODE_R, false, &s) != ZARR_OK) {
        put("open", ERROR, errors, cap);
        return;
    }
    report_array(s, "a", "", 2 * CHUNK, errors, cap);
    report_array(s, "b", "b.", 2 * CHUNK, errors, cap);
    zarr_store_free(s);
}

/* An Icechunk repository: gen 0 committed before; then commit gen 1, tag it "t1", commit
 * gen 2, branch "b2" from it. Items: main, tag, branch (the generation each reads). */
static zarr_store_t *open_repo(const char *dir, const char *query, zarr_mode_t mode,
                               zarr_status_t *status) {
    char url[4096];
    zarr_store_t *s = NULL;
    snprintf(url, sizeof url, "icechunk://%s%s", dir, query);
    *status = zarr_store_open_url(url, mode, NULL, &s);
    return s;
}

static void icechunk_write(zarr_store_t *s, int gen) {
    zarr_array_t *a = NULL;
    if (zarr_array_open(s, "a", ZARR_MODE_R_PLUS, &a) != ZARR_OK)
        a = create_array(s, "a", 2 * CHUNK, NULL);
    write_gen(a, 0, 2 * CHUNK, gen);
    zarr_array_free(a);
    OK(zarr_store_commit(s, gen ? "next generation" : "first generation", NULL, 0));
}

static void icechunk_setup(const char *dir) {
    zarr_status_t st;
    zarr_store_t *s = open_repo(dir, "", ZARR_MODE_A, &st);
    if (st != ZARR_OK) die("opening the repository");
    icechunk_write(s, 0);
    zarr_store_free(s);
}

static void icechunk_run(const char *dir) {
    zarr_status_t st;
    zarr_store_t *s = open_repo(dir, "", ZARR_MODE_R_PLUS, &st);
    if (st != ZARR_OK) die("opening the repository");
    mark("begin", 1);
    icechunk_write(s, 1);
    mark("durable", 1);
    mark("begin", 2);
    OK(zarr_store_create_tag(s, "t1"));
    mark("durable", 2);
    mark("begin", 3);
    icechunk_write(s, 2);
    mark("durable", 3);
    mark("begin", 4);
    OK(zarr_store_create_branch(s, "b2"));
    mark("durable", 4);
    zarr_store_free(s);
}

static void icechunk_item(const char *dir, const char *name, const char *query, char *errors,
                          size_t cap) {
    zarr_status_t st;
    zarr_store_t *s = open_repo(dir, query, ZARR_MODE_R, &st);
    zarr_array_t *a = NULL;
    int32_t buf[2 * CHUNK];
    const uint64_t origin[1] = {0}, shape[1] = {2 * CHUNK};
    if (st == ZARR_ERR_NOT_FOUND && *query) {
        printf(" %s=-", name);
    } else if (st != ZARR_OK || zarr_array_open(s, "a", ZARR_MODE_R, &a) != ZARR_OK ||
               zarr_array_read(a, 1, origin, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, buf,
                               sizeof buf) != ZARR_OK) {
        put(name, ERROR, errors, cap);
    } else {
        put(name, generation(buf, 0, 2 * CHUNK), errors, cap);
    }
    zarr_array_free(a);
    zarr_store_free(s);
}

static void icechunk_check(const char *dir, char *errors, size_t cap) {
    icechunk_item(dir, "main", "", errors, cap);
    icechunk_item(dir, "tag", "?tag=t1", errors, cap);
    icechunk_item(dir, "branch", "?branch=b2", errors, cap);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s SCENARIO setup|run|check|supported TARGET...\n", argv[0]);
        return 2;
    }
    const char *scenario = argv[1], *action = argv[2];
    static const struct {
        const char *name;
        zarr_durability level, claimed;
    } levels[] = {{"fs-none", ZARR_DURABILITY_NONE, ZARR_DURABILITY_NONE},
                  {"fs-flush", ZARR_DURABILITY_FLUSH, ZARR_DURABILITY_FLUSH},
                  {"fs-each-write", ZARR_DURABILITY_EACH_WRITE, ZARR_DURABILITY_EACH_WRITE},
                  {"control", ZARR_DURABILITY_NONE, ZARR_DURABILITY_EACH_WRITE}};
    int level = -1;
    for (size_t i = 0; i < sizeof levels / sizeof *levels; i++)
        if (strcmp(scenario, levels[i].name) == 0) level = (int)i;
    bool append = strcmp(scenario, "append") == 0, zip_append = strcmp(scenario, "zip-append") == 0,
         zip = zip_append || strcmp(scenario, "zip") == 0,
         icechunk = strcmp(scenario, "icechunk") == 0;
    if (level < 0 && !append && !zip && !icechunk) {
        fprintf(stderr, "driver: unknown scenario %s\n", scenario);
        return 2;
    }
    if (strcmp(action, "supported") == 0) {
        return icechunk && !(zarr_features() & ZARR_HAS_ICECHUNK) ? 77 : 0;
    } else if (strcmp(action, "setup") == 0) {
        if (level >= 0) fs_setup(argv[3]);
        if (append) append_setup(argv[3]);
        if (zip) zip_write(argv[3], ZARR_MODE_W, "a", 0);
        if (icechunk) icechunk_setup(argv[3]);
    } else if (strcmp(action, "run") == 0) {
        if (level >= 0) fs_run(argv[3], levels[level].level, levels[level].claimed);
        if (append) append_run(argv[3]);
        if (zip) zip_run(argv[3], zip_append);
        if (icechunk) icechunk_run(argv[3]);
    } else if (strcmp(action, "check") == 0) {
        for (int i = 3; i < argc; i++) {
            static char errors[8192];
            errors[0] = '\0';
            printf("%d", i - 3);
            if (level >= 0) fs_check(argv[i], errors, sizeof errors);
            if (append) append_check(argv[i], errors, sizeof errors);
            if (zip) zip_check(argv[i], errors, sizeof errors);
            if (icechunk) icechunk_check(argv[i], errors, sizeof errors);
            printf(" |%s\n", errors);
        }
    } else {
        fprintf(stderr, "driver: unknown action %s\n", action);
        return 2;
    }
    return 0;
}
