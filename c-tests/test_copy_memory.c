/*
 * test_copy_memory.c — zarr_copy works in bounded memory on an array larger than it may
 * hold: a 1 GiB float32 array (1024 x 1024 x 256, chunks 64 x 64 x 64, blosc lz4 with
 * shuffle) is written slab by slab (64 MiB at a time), then copied
 *
 *   1. directory -> directory, re-encoded with zstd level 1;
 *   2. directory -> zip (stored entries), chunks copied as they are;
 *
 * while the process's peak resident set (VmHWM in /proc/self/status) is watched: each copy
 * may grow it by less than 300 MiB. Sampled slabs (aligned and unaligned) of both copies are
 * then compared with the data byte for byte.
 *
 * Usage: test_copy_memory [directory]   (default: a new directory from mkdtemp in $TMPDIR
 * or /tmp, removed at the end; given a directory, the stores are made and removed in it).
 * Needs about 2 GiB of free disk space; with less, or without /proc/self/status, it prints
 * SKIP and exits with 77. Worker threads are capped at 8 (zarr_set_num_threads) so the
 * bound does not depend on the machine's core count. Exits 0 when every check passes.
 */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw */
#endif

#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "zarr.h"

#define NX 1024u
#define NY 1024u
#define NZ 256u
#define CHUNK 64u
#define SLAB 64u /* rows of the first dimension written or compared at a time */
#define LIMIT_MIB 300.0
#define MAX_THREADS 8u

static int failures = 0;

static void fail_status(zarr_status_t st, const char *call, int line) {
    char msg[2048];
    zarr_last_error(msg, sizeof msg, NULL);
    fprintf(stderr, "test_copy_memory.c:%d: %s failed: %s: %s\n", line, call,
            zarr_status_str(st), msg);
    exit(1);
}

#define OK(call)                                                                           \
    do {                                                                                   \
        zarr_status_t st_ = (call);                                                        \
        if (st_ != ZARR_OK) fail_status(st_, #call, __LINE__);                             \
    } while (0)

#define EXPECT(cond)                                                                       \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "test_copy_memory.c:%d: FAILED: %s\n", __LINE__, #cond);       \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

/* The element at (i, j, k): a smooth field plus 8 bits of hashed noise in the low
 * mantissa, so blosc's shuffle compresses it moderately (about 2:1), never 0 (the fill). */
static float value_at(uint32_t i, uint32_t j, uint32_t k) {
    uint32_t h = i * 73856093u ^ j * 19349663u ^ k * 83492791u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return 1000.0f + (float)i * 0.5f + (float)j * 0.25f + (float)k * 0.125f +
           (float)(h & 0xffu) * (1.0f / 4096.0f);
}

static void fill_region(float *buf, const uint64_t *start, const uint64_t *count) {
    size_t n = 0;
    for (uint64_t i = 0; i < count[0]; i++)
        for (uint64_t j = 0; j < count[1]; j++)
            for (uint64_t k = 0; k < count[2]; k++)
                buf[n++] = value_at((uint32_t)(start[0] + i), (uint32_t)(start[1] + j),
                                    (uint32_t)(start[2] + k));
}

/* A field of /proc/self/status in MiB ("VmHWM", "VmRSS"); negative when unavailable. */
static double status_mib(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1.0;
    char line[256];
    size_t len = strlen(field);
    double mib = -1.0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, field, len) == 0 && line[len] == ':') {
            mib = strtod(line + len + 1, NULL) / 1024.0; /* reported in kB */
            break;
        }
    }
    fclose(f);
    return mib;
}

/* Resets VmHWM to the current resident set (Linux: "5" to /proc/self/clear_refs). */
static bool reset_peak(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return false;
    bool ok = fputs("5", f) >= 0;
    if (fclose(f) != 0) ok = false;
    return ok;
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_tree(const char *path) {
    struct stat sb;
    if (stat(path, &sb) == 0) nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static uint64_t du_bytes;
static int du_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)path;
    (void)ftw;
    if (flag == FTW_F) du_bytes += (uint64_t)sb->st_size;
    return 0;
}

static double size_mib(const char *path) {
    du_bytes = 0;
    nftw(path, du_entry, 16, FTW_PHYS);
    return (double)du_bytes / (1024.0 * 1024.0);
}

/* Compares the region start/count of `array` with value_at. */
static void verify_region(const zarr_array_t *array, const uint64_t *start, const uint64_t *count,
                          const char *what) {
    size_t n = (size_t)(count[0] * count[1] * count[2]);
    float *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
    if (!got || !want) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    OK(zarr_array_read(array, 3, start, count, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, got,
                       n * sizeof *got));
    fill_region(want, start, count);
    if (memcmp(got, want, n * sizeof *got) != 0) {
        size_t first = 0;
        while (first < n && memcmp(&got[first], &want[first], sizeof *got) == 0) first++;
        fprintf(stderr, "test_copy_memory.c: FAILED: %s region [%" PRIu64 ",%" PRIu64 ",%" PRIu64
                        "]+[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "] differs at element %zu\n",
                what, start[0], start[1], start[2], count[0], count[1], count[2], first);
        failures++;
    }
    free(got);
    free(want);
}

static void verify_copy(const zarr_store_t *store, const char *what, const char *codec_id) {
    zarr_array_t *array = NULL;
    OK(zarr_array_open(store, "data", ZARR_MODE_R, &array));
    uint64_t shape[3], chunks[3], stored = 0;
    OK(zarr_array_shape(array, 3, shape));
    OK(zarr_array_chunk_shape(array, 3, chunks));
    OK(zarr_array_nchunks_initialized(array, &stored));
    EXPECT(shape[0] == NX && shape[1] == NY && shape[2] == NZ);
    EXPECT(chunks[0] == CHUNK && chunks[1] == CHUNK && chunks[2] == CHUNK);
    EXPECT(stored == (uint64_t)(NX / CHUNK) * (NY / CHUNK) * (NZ / CHUNK));
    char meta[4096];
    OK(zarr_array_metadata_json(array, meta, sizeof meta, NULL));
    char needle[64];
    snprintf(needle, sizeof needle, "\"%s\"", codec_id);
    EXPECT(strstr(meta, needle) != NULL);
    /* Whole slabs at both ends and in the middle, and an unaligned block. */
    const uint64_t slabs[] = {0, 7 * SLAB, NX - SLAB};
    for (size_t s = 0; s < sizeof slabs / sizeof slabs[0]; s++) {
        uint64_t start[3] = {slabs[s], 0, 0}, count[3] = {SLAB, NY, NZ};
        verify_region(array, start, count, what);
    }
    uint64_t start[3] = {100, 301, 37}, count[3] = {70, 509, 200};
    verify_region(array, start, count, what);
    zarr_array_free(array);
}

/* Runs one copy, returning the growth of the peak resident set over the resident set
 * before it, in MiB. */
static double measured_copy(const char *label, const zarr_store_t *source,
                            const zarr_store_t *target, const char *compressor, bool reset_ok) {
    if (reset_ok) reset_peak();
    double rss_before = status_mib("VmRSS"), hwm_before = status_mib("VmHWM");
    double t0 = now_seconds();
    OK(zarr_copy(source, "data", target, "data", compressor, ZARR_MODE_W));
    OK(zarr_store_close(target));
    double secs = now_seconds() - t0;
    double hwm_after = status_mib("VmHWM");
    double growth = hwm_after - rss_before;
    printf("copy %-36s VmRSS before %7.1f MiB, VmHWM before %7.1f MiB, after %7.1f MiB: "
           "growth %6.1f MiB (%.1f s)\n",
           label, rss_before, hwm_before, hwm_after, growth, secs);
    return growth;
}

static char *join(const char *dir, const char *name) {
    size_t len = strlen(dir) + strlen(name) + 2;
    char *out = malloc(len);
    if (!out) exit(1);
    snprintf(out, len, "%s/%s", dir, name);
    return out;
}

int main(int argc, char **argv) {
    char template_buf[4096];
    const char *dir = NULL;
    bool made_dir = false;
    if (argc > 1) {
        dir = argv[1];
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
            perror(dir);
            return 1;
        }
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(template_buf, sizeof template_buf, "%s/zarr-copy-memory-XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(template_buf)) {
            perror("mkdtemp");
            return 1;
        }
        dir = template_buf;
        made_dir = true;
    }
    if (status_mib("VmHWM") < 0) {
        printf("SKIP: /proc/self/status has no VmHWM\n");
        if (made_dir) remove_tree(dir);
        return 77;
    }
    struct statvfs vfs;
    if (statvfs(dir, &vfs) == 0) {
        double free_gib = (double)vfs.f_bavail * (double)vfs.f_frsize / (1024.0 * 1024.0 * 1024.0);
        if (free_gib < 2.5) {
            printf("SKIP: only %.1f GiB free in the temporary directory (2.5 GiB needed)\n",
                   free_gib);
            if (made_dir) remove_tree(dir);
            return 77;
        }
    }
    size_t threads = zarr_get_num_threads();
    if (threads > MAX_THREADS) OK(zarr_set_num_threads(MAX_THREADS));
    threads = zarr_get_num_threads();

    char *src_path = join(dir, "source.zarr");
    char *dst_path = join(dir, "copy-zstd.zarr");
    char *zip_path = join(dir, "copy.zip");
    remove_tree(src_path);
    remove_tree(dst_path);
    remove(zip_path);

    /* 1. The source array, written in 64 MiB slabs. */
    double t0 = now_seconds();
    zarr_store_t *source = NULL;
    OK(zarr_store_open_fs(src_path, ZARR_MODE_W, &source));
    const uint64_t shape[3] = {NX, NY, NZ}, chunks[3] = {CHUNK, CHUNK, CHUNK};
    zarr_array_builder_t *builder = NULL;
    OK(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 3, shape, &builder));
    OK(zarr_array_builder_set_chunk_shape(builder, 3, chunks));
    OK(zarr_array_builder_set_compressor_json(
        builder, "{\"id\": \"blosc\", \"cname\": \"lz4\", \"clevel\": 5, \"shuffle\": 1, "
                 "\"blocksize\": 0}"));
    OK(zarr_array_builder_set_fill_value_json(builder, "0"));
    zarr_array_t *array = NULL;
    OK(zarr_array_create(builder, source, "data", ZARR_MODE_W, &array));
    zarr_array_builder_free(builder);
    size_t slab_elems = (size_t)SLAB * NY * NZ;
    float *slab = malloc(slab_elems * sizeof *slab);
    if (!slab) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (uint64_t x = 0; x < NX; x += SLAB) {
        uint64_t start[3] = {x, 0, 0}, count[3] = {SLAB, NY, NZ};
        fill_region(slab, start, count);
        OK(zarr_array_write(array, 3, start, count, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C, slab,
                            slab_elems * sizeof *slab));
    }
    free(slab);
    zarr_array_free(array);
    uint64_t nbytes = (uint64_t)NX * NY * NZ * sizeof(float);
    printf("source: %" PRIu64 " MiB of float32 (%ux%ux%u, chunks %u^3, blosc lz4 shuffle), "
           "stored in %.1f MiB, written in %.1f s with %zu worker threads (VmHWM %.1f MiB "
           "with the 64 MiB slab buffer)\n",
           nbytes >> 20, NX, NY, NZ, CHUNK, size_mib(src_path), now_seconds() - t0, threads,
           status_mib("VmHWM"));

    /* 2. The copies, with the peak resident set watched. */
    bool reset_ok = reset_peak();
    if (!reset_ok)
        printf("note: /proc/self/clear_refs cannot reset VmHWM here; each growth below is "
               "measured against the peak so far (an upper bound)\n");
    zarr_store_t *copy_dir = NULL, *copy_zip = NULL;
    OK(zarr_store_open_fs(dst_path, ZARR_MODE_W, &copy_dir));
    OK(zarr_store_open_zip(zip_path, ZARR_MODE_W, false, &copy_zip));
    double g1 = measured_copy("directory -> directory (zstd level 1):", source, copy_dir,
                              "{\"id\": \"zstd\", \"level\": 1}", reset_ok);
    double g2 = measured_copy("directory -> zip (as stored):", source, copy_zip, NULL, reset_ok);
    printf("copies stored in %.1f MiB (zstd directory) and %.1f MiB (zip)\n", size_mib(dst_path),
           size_mib(zip_path));
    EXPECT(g1 < LIMIT_MIB);
    EXPECT(g2 < LIMIT_MIB);

    /* 3. The copies hold the data. */
    zarr_store_t *zip_read = NULL;
    OK(zarr_store_open_zip(zip_path, ZARR_MODE_R, false, &zip_read));
    verify_copy(copy_dir, "zstd directory copy", "zstd");
    verify_copy(zip_read, "zip copy", "blosc");

    zarr_store_free(zip_read);
    zarr_store_free(copy_zip);
    zarr_store_free(copy_dir);
    zarr_store_free(source);
    remove_tree(src_path);
    remove_tree(dst_path);
    remove(zip_path);
    if (made_dir) remove_tree(dir);
    free(src_path);
    free(dst_path);
    free(zip_path);
    if (failures) {
        printf("test_copy_memory: %d check(s) FAILED (limit %.0f MiB of growth)\n", failures,
               LIMIT_MIB);
        return 1;
    }
    printf("test_copy_memory: passed (growth %.1f and %.1f MiB, limit %.0f MiB)\n", g1, g2,
           LIMIT_MIB);
    return 0;
}
