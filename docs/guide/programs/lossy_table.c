/*
 * lossy_table.c — measures libzarr's lossy codecs (zfp, bitround, quantize) against
 * lossless ones (zstd, blosc, pcodec, zfp's reversible mode) on a realistic float32 field:
 * a smooth temperature-like pattern (time, y, x) plus sensor-like noise, written to and
 * read back from a memory store through zarr_array_write and zarr_array_read. Prints a
 * Markdown table: the compression ratio, the speed of writing (encode) and reading
 * (decode) in MB/s of uncompressed data (1 MB = 10^6 bytes, best of several runs), and the
 * largest and the root-mean-square error of what was read back.
 *
 * Usage: lossy_table [--quick] [--threads N] [--steps T] [--runs R]
 *   --quick      a tiny array and one run (the test suite uses it to check the program)
 *   --threads N  libzarr's worker threads (default 1: the speed of one core)
 *   --steps T    time steps of 256 x 256 values (default 64: 16 MiB)
 *   --runs R     runs per codec, of which the fastest counts (default 3)
 *
 * Build: cc -std=c11 -O2 lossy_table.c $(pkg-config --cflags --libs zarr) -lm
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zarr.h>

static const struct {
    const char *name;
    const char *id;      /* for zarr_codec_supported */
    const char *filters; /* array filters before the compressor, or "null" */
    const char *codec;   /* the compressor (for zfp and pcodec: the codec of the numbers) */
    double bound;        /* the largest error the settings allow; 0: lossless; -1: none stated */
} CODECS[] = {
    {"zstd 3", "zstd", "null", "{\"id\": \"zstd\", \"level\": 3}", 0},
    {"blosc zstd, shuffle", "blosc", "null",
     "{\"id\": \"blosc\", \"cname\": \"zstd\", \"clevel\": 5, \"shuffle\": 1}", 0},
    {"blosc lz4, shuffle", "blosc", "null",
     "{\"id\": \"blosc\", \"cname\": \"lz4\", \"clevel\": 5, \"shuffle\": 1}", 0},
    {"pcodec 8", "pcodec", "null", "{\"id\": \"pcodec\", \"level\": 8}", 0},
    {"zfp reversible", "zfp", "null",
     "{\"name\": \"zfp\", \"configuration\": {\"mode\": \"reversible\"}}", 0},
    {"zfp accuracy 0.1", "zfp", "null",
     "{\"name\": \"zfp\", \"configuration\": {\"mode\": \"fixed_accuracy\", \"tolerance\": 0.1}}",
     0.1},
    {"zfp accuracy 0.01", "zfp", "null",
     "{\"name\": \"zfp\", \"configuration\": {\"mode\": \"fixed_accuracy\", \"tolerance\": 0.01}}",
     0.01},
    {"zfp accuracy 0.001", "zfp", "null",
     "{\"name\": \"zfp\", \"configuration\": {\"mode\": \"fixed_accuracy\", \"tolerance\": 0.001}}",
     0.001},
    {"zfp precision 16", "zfp", "null",
     "{\"name\": \"zfp\", \"configuration\": {\"mode\": \"fixed_precision\", \"precision\": 16}}",
     -1},
    {"zfp rate 8", "zfp", "null",
     "{\"name\": \"zfp\", \"configuration\": {\"mode\": \"fixed_rate\", \"rate\": 8}}", -1},
    {"bitround 7 + zstd", "bitround", "[{\"id\": \"bitround\", \"keepbits\": 7}]",
     "{\"id\": \"zstd\", \"level\": 3}", -1},
    {"bitround 10 + zstd", "bitround", "[{\"id\": \"bitround\", \"keepbits\": 10}]",
     "{\"id\": \"zstd\", \"level\": 3}", -1},
    {"bitround 14 + zstd", "bitround", "[{\"id\": \"bitround\", \"keepbits\": 14}]",
     "{\"id\": \"zstd\", \"level\": 3}", -1},
    {"quantize 2 digits + zstd", "quantize",
     "[{\"id\": \"quantize\", \"digits\": 2, \"dtype\": \"<f4\"}]",
     "{\"id\": \"zstd\", \"level\": 3}", -1},
};

static void check(zarr_status_t status, const char *what) {
    if (status != ZARR_OK) {
        char message[1024];
        zarr_last_error(message, sizeof message, NULL);
        fprintf(stderr, "lossy_table: %s: %s: %s\n", what, zarr_status_str(status), message);
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
                                0.01 * (double)y + 2.0 * sin(two_pi * (double)t / 64.0);
                double noise = sqrt(-2.0 * log(uniform())) * cos(two_pi * uniform());
                data[(t * ny + y) * nx + x] = (float)(smooth + 0.05 * noise);
            }
}

int main(int argc, char **argv) {
    int quick = 0;
    size_t threads = 1, steps = 64;
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
            fprintf(stderr, "usage: lossy_table [--quick] [--threads N] [--steps T] [--runs R]\n");
            return 2;
        }
    }
    const size_t ny = quick ? 32 : 256, nx = quick ? 32 : 256;
    if (quick) {
        steps = 8;
        runs = 1;
    }
    if (steps == 0 || runs < 1) {
        fprintf(stderr, "lossy_table: --steps and --runs must be positive\n");
        return 2;
    }
    const uint64_t shape[3] = {steps, ny, nx};
    const uint64_t chunks[3] = {quick ? 4 : 16, quick ? 16 : 128, quick ? 16 : 128}; /* 1 MiB */
    const uint64_t origin[3] = {0, 0, 0};
    const size_t n = steps * ny * nx, bytes = n * sizeof(float);

    float *data = malloc(bytes), *back = malloc(bytes);
    if (!data || !back) {
        fprintf(stderr, "lossy_table: out of memory\n");
        return 1;
    }
    make_field(data, steps, ny, nx);
    check(zarr_set_num_threads(threads), "zarr_set_num_threads");

    printf("libzarr %s, %zu x %zu x %zu float32 (%.1f MiB), chunks %llu x %llu x %llu, "
           "%zu worker thread(s), best of %d\n\n",
           zarr_version_string(), steps, ny, nx, (double)bytes / 1048576.0,
           (unsigned long long)chunks[0], (unsigned long long)chunks[1],
           (unsigned long long)chunks[2], zarr_get_num_threads(), runs);
    printf("| codec | ratio | encode MB/s | decode MB/s | max error (K) | RMS error (K) |\n");
    printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (size_t c = 0; c < sizeof CODECS / sizeof CODECS[0]; c++) {
        if (!zarr_codec_supported(CODECS[c].id)) {
            printf("| %s | not in this build | | | | |\n", CODECS[c].name);
            continue;
        }
        zarr_store_t *store = NULL;
        zarr_array_builder_t *builder = NULL;
        zarr_array_t *array = NULL;
        check(zarr_store_new_memory(&store), "zarr_store_new_memory");
        check(zarr_array_builder_new(ZARR_DTYPE_FLOAT32, 3, shape, &builder), "builder");
        check(zarr_array_builder_set_chunk_shape(builder, 3, chunks), "chunks");
        check(zarr_array_builder_set_filters_json(builder, CODECS[c].filters), CODECS[c].name);
        check(zarr_array_builder_set_compressor_json(builder, CODECS[c].codec), CODECS[c].name);
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
            if (t1 - t0 < best_write) best_write = t1 - t0;
            if (t3 - t2 < best_read) best_read = t3 - t2;
        }
        double worst = 0.0, squares = 0.0;
        for (size_t i = 0; i < n; i++) {
            double e = fabs((double)back[i] - (double)data[i]);
            worst = e > worst ? e : worst;
            squares += e * e;
        }
        if ((CODECS[c].bound == 0 && worst != 0) || (CODECS[c].bound > 0 && worst > CODECS[c].bound)) {
            fprintf(stderr, "lossy_table: %s: error %g past its bound %g\n", CODECS[c].name, worst,
                    CODECS[c].bound);
            return 1;
        }
        uint64_t stored = 0;
        check(zarr_array_nbytes_stored(array, &stored), "zarr_array_nbytes_stored");
        printf("| %s | %.2f | %.0f | %.0f | %.2g | %.2g |\n", CODECS[c].name,
               (double)bytes / (double)stored, (double)bytes / 1e6 / best_write,
               (double)bytes / 1e6 / best_read, worst, sqrt(squares / (double)n));
        fflush(stdout);
        zarr_array_free(array);
        zarr_store_free(store);
    }
    free(data);
    free(back);
    return 0;
}
