/*
 * codec_table.c — measures libzarr's codecs on real-looking data: a smooth float32 field
 * (time, y, x) plus noise, written to and read back from a memory store through
 * zarr_array_write and zarr_array_read, so the figures are those of the whole data path
 * (chunking, encoding, copying) with the disk left out. Prints a Markdown table: the
 * compression ratio and the speed of writing (compress) and reading (decompress) in MB/s
 * of uncompressed data (1 MB = 10^6 bytes), the best of several runs.
 *
 * Usage: codec_table [--quick] [--threads N] [--steps T] [--runs R]
 *   --quick      a tiny array and one run (the test suite uses it to check the program)
 *   --threads N  libzarr's worker threads (default 1: the speed of one core)
 *   --steps T    time steps of 512 x 512 values (default 16: 16 MiB)
 *   --runs R     runs per codec, of which the fastest counts (default 3)
 *
 * Build: cc -std=c11 -O2 codec_table.c $(pkg-config --cflags --libs zarr) -lm
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zarr.h>

static const struct {
    const char *name;
    const char *id; /* for zarr_codec_supported; NULL for none */
    const char *json;
} CODECS[] = {
    {"none", NULL, "null"},
    {"blosc lz4, shuffle", "blosc", "{\"id\": \"blosc\", \"cname\": \"lz4\", \"clevel\": 5, \"shuffle\": 1}"},
    {"blosc lz4, bitshuffle", "blosc", "{\"id\": \"blosc\", \"cname\": \"lz4\", \"clevel\": 5, \"shuffle\": 2}"},
    {"blosc zstd, shuffle", "blosc", "{\"id\": \"blosc\", \"cname\": \"zstd\", \"clevel\": 5, \"shuffle\": 1}"},
    {"blosc zstd, bitshuffle", "blosc", "{\"id\": \"blosc\", \"cname\": \"zstd\", \"clevel\": 5, \"shuffle\": 2}"},
    {"zstd 1", "zstd", "{\"id\": \"zstd\", \"level\": 1}"},
    {"zstd 3", "zstd", "{\"id\": \"zstd\", \"level\": 3}"},
    {"zstd 9", "zstd", "{\"id\": \"zstd\", \"level\": 9}"},
    {"zstd 19", "zstd", "{\"id\": \"zstd\", \"level\": 19}"},
    {"gzip 1", "gzip", "{\"id\": \"gzip\", \"level\": 1}"},
    {"gzip 6", "gzip", "{\"id\": \"gzip\", \"level\": 6}"},
    {"lz4", "lz4", "{\"id\": \"lz4\", \"acceleration\": 1}"},
};

static void check(zarr_status_t status, const char *what) {
    if (status != ZARR_OK) {
        char message[1024];
        zarr_last_error(message, sizeof message, NULL);
        fprintf(stderr, "codec_table: %s: %s: %s\n", what, zarr_status_str(status), message);
        exit(1);
    }
}

static double now(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A small xorshift generator, so every run and machine sees the same data. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static double uniform(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return ((double)(rng_state >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
}

/* A temperature-like field in kelvin: large smooth patterns that drift with time, plus
 * Gaussian noise of 0.05 K (Box-Muller), as a model's output or a sensor's has. */
static void make_field(float *data, size_t steps, size_t ny, size_t nx) {
    const double two_pi = 6.283185307179586;
    for (size_t t = 0; t < steps; t++)
        for (size_t y = 0; y < ny; y++)
            for (size_t x = 0; x < nx; x++) {
                double smooth = 280.0 + 15.0 * sin(two_pi * ((double)x + 3.0 * (double)t) / 256.0) *
                                            cos(two_pi * (double)y / 192.0) +
                                0.01 * (double)y + 2.0 * sin(two_pi * (double)t / 16.0);
                double noise = sqrt(-2.0 * log(uniform())) * cos(two_pi * uniform());
                data[(t * ny + y) * nx + x] = (float)(smooth + 0.05 * noise);
            }
}

int main(int argc, char **argv) {
    int quick = 0;
    size_t threads = 1, steps = 16;
    int runs = 3;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = (size_t)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
            steps = (size_t)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: codec_table [--quick] [--threads N] [--steps T] [--runs R]\n");
            return 2;
        }
    }
    const size_t ny = quick ? 64 : 512, nx = quick ? 64 : 512;
    if (quick) {
        steps = 2;
        runs = 1;
    }
    if (steps == 0 || runs < 1) {
        fprintf(stderr, "codec_table: --steps and --runs must be positive\n");
        return 2;
    }
    const uint64_t shape[3] = {steps, ny, nx};
    const uint64_t chunks[3] = {quick ? 1 : 4, quick ? 32 : 256, quick ? 32 : 256}; /* 1 MiB */
    const uint64_t origin[3] = {0, 0, 0};
    const size_t n = steps * ny * nx, bytes = n * sizeof(float);

    float *data = malloc(bytes), *back = malloc(bytes);
    if (!data || !back) {
        fprintf(stderr, "codec_table: out of memory\n");
        return 1;
    }
    make_field(data, steps, ny, nx);
    check(zarr_set_num_threads(threads), "zarr_set_num_threads");

    printf("libzarr %s, %zu x %zu x %zu float32 (%.1f MiB), chunks %llu x %llu x %llu, "
           "%zu worker thread(s), best of %d\n\n",
           zarr_version_string(), steps, ny, nx, (double)bytes / 1048576.0,
           (unsigned long long)chunks[0], (unsigned long long)chunks[1],
           (unsigned long long)chunks[2], zarr_get_num_threads(), runs);
    printf("| codec | ratio | compress MB/s | decompress MB/s |\n");
    printf("| --- | ---: | ---: | ---: |\n");
    for (size_t c = 0; c < sizeof CODECS / sizeof CODECS[0]; c++) {
        if (CODECS[c].id && !zarr_codec_supported(CODECS[c].id)) {
            printf("| %s | not in this build | | |\n", CODECS[c].name);
            continue;
        }
        zarr_store_t *store = NULL;
        zarr_array_builder_t *builder = NULL;
        zarr_array_t *array = NULL;
        check(zarr_store_new_memory(&store), "zarr_store_new_memory");
        check(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 3, shape, &builder), "builder");
        check(zarr_array_builder_set_chunk_shape(builder, 3, chunks), "chunks");
        check(zarr_array_builder_set_compressor_json(builder, CODECS[c].json), CODECS[c].name);
        check(zarr_array_create(builder, store, "field", ZARR_MODE_W, &array), CODECS[c].name);
        zarr_array_builder_free(builder);

        double best_write = 1e300, best_read = 1e300;
        for (int r = 0; r < runs; r++) {
            double t0 = now();
            check(zarr_array_write(array, 3, origin, shape, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C,
                                   data, bytes),
                  "zarr_array_write");
            double t1 = now();
            memset(back, 0, bytes);
            double t2 = now();
            check(zarr_array_read(array, 3, origin, shape, ZARR_DTYPE_FLOAT32, ZARR_ORDER_C,
                                  back, bytes),
                  "zarr_array_read");
            double t3 = now();
            if (memcmp(data, back, bytes) != 0) {
                fprintf(stderr, "codec_table: %s did not give the data back\n", CODECS[c].name);
                return 1;
            }
            if (t1 - t0 < best_write) best_write = t1 - t0;
            if (t3 - t2 < best_read) best_read = t3 - t2;
        }
        uint64_t stored = 0;
        check(zarr_array_nbytes_stored(array, &stored), "zarr_array_nbytes_stored");
        printf("| %s | %.2f | %.0f | %.0f |\n", CODECS[c].name, (double)bytes / (double)stored,
               (double)bytes / 1e6 / best_write, (double)bytes / 1e6 / best_read);
        fflush(stdout);
        zarr_array_free(array);
        zarr_store_free(store);
    }
    free(data);
    free(back);
    return 0;
}
