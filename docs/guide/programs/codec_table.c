/*
 * codec_table.c — measures libzarr's codecs on real-looking data: smooth float32 and
 * float64 fields with noise at realistic precision, a packed int16 field and integer
 * arrays, each written to and read back from a memory store through zarr_array_write and
 * zarr_array_read, so the figures are those of the whole data path (chunking, encoding,
 * copying) with the disk left out. Prints one Markdown table per field (the compression
 * ratio and the speed of writing (compress) and reading (decompress) in MB/s of
 * uncompressed data, 1 MB = 10^6 bytes, the best of several runs) and a last table over
 * all fields together (their total bytes over their total stored bytes and times).
 *
 * Usage: codec_table [--quick] [--threads N] [--steps T] [--runs R]
 *   --quick      tiny fields and one run (the test suite uses it to check the program)
 *   --threads N  libzarr's worker threads (default 1: the speed of one core)
 *   --steps T    time steps of 512 x 512 values of the 3-D fields (default 16: 16 MiB
 *                of float32)
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

/* The codecs, as the compressor JSON of Zarr v3 arrays (a list chains bytes-to-bytes
 * codecs); `%d` is replaced by the field's item size (a shuffle's element size). Blosc's
 * zstd level is 2 clevel - 1 (clevel 1, 2, 3: zstd 1, 3, 5); a blocksize of 1 MiB makes
 * each 1 MiB chunk one block, where blosc's own choice at these levels is 32 to 128 KiB. */
static const struct {
    const char *name;
    const char *id; /* for zarr_codec_supported; NULL for none */
    const char *json;
} CODECS[] = {
    {"none", NULL, "null"},
    {"zstd 1", "zstd", "{\"id\": \"zstd\", \"level\": 1}"},
    {"zstd 3 (the v3 default before)", "zstd", "{\"id\": \"zstd\", \"level\": 3}"},
    {"zstd 5", "zstd", "{\"id\": \"zstd\", \"level\": 5}"},
    {"shuffle + zstd 3", "zstd",
     "[{\"id\": \"shuffle\", \"elementsize\": %d}, {\"id\": \"zstd\", \"level\": 3}]"},
    {"blosc zstd 1, shuffle, blosc's blocks", "blosc",
     "{\"id\": \"blosc\", \"cname\": \"zstd\", \"clevel\": 1, \"shuffle\": 1}"},
    {"blosc zstd 1, shuffle (the default)", "blosc",
     "{\"id\": \"blosc\", \"cname\": \"zstd\", \"clevel\": 1, \"shuffle\": 1, \"blocksize\": 1048576}"},
    {"blosc zstd 3, shuffle", "blosc",
     "{\"id\": \"blosc\", \"cname\": \"zstd\", \"clevel\": 2, \"shuffle\": 1, \"blocksize\": 1048576}"},
    {"blosc zstd 5, shuffle", "blosc",
     "{\"id\": \"blosc\", \"cname\": \"zstd\", \"clevel\": 3, \"shuffle\": 1, \"blocksize\": 1048576}"},
    {"blosc zstd 1, bitshuffle", "blosc",
     "{\"id\": \"blosc\", \"cname\": \"zstd\", \"clevel\": 1, \"shuffle\": 2, \"blocksize\": 1048576}"},
    {"blosc lz4, shuffle (the v2 default before)", "blosc",
     "{\"id\": \"blosc\", \"cname\": \"lz4\", \"clevel\": 5, \"shuffle\": 1}"},
    {"blosc lz4, bitshuffle", "blosc",
     "{\"id\": \"blosc\", \"cname\": \"lz4\", \"clevel\": 5, \"shuffle\": 2}"},
    {"shuffle + zlib 4 (netCDF's)", "zlib",
     "[{\"id\": \"shuffle\", \"elementsize\": %d}, {\"id\": \"zlib\", \"level\": 4}]"},
    {"gzip 6", "gzip", "{\"id\": \"gzip\", \"level\": 6}"},
};
enum { NCODECS = sizeof CODECS / sizeof CODECS[0] };

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
static double gaussian(void) {
    return sqrt(-2.0 * log(uniform())) * cos(6.283185307179586 * uniform());
}

/* A temperature in kelvin at (t, y, x): large smooth patterns drifting with time. */
static double temperature(size_t t, size_t y, size_t x) {
    const double two_pi = 6.283185307179586;
    return 280.0 +
           15.0 * sin(two_pi * ((double)x + 3.0 * (double)t) / 256.0) *
               cos(two_pi * (double)y / 192.0) +
           0.01 * (double)y + 2.0 * sin(two_pi * (double)t / 16.0);
}

/* The fields. Each fills `data` (`n` items of its type) from its shape. */
typedef void (*make_fn)(void *data, const uint64_t *shape);

/* float32 with Gaussian noise of 0.05 K: every mantissa bit in use, as raw model output. */
static void make_t_noisy(void *data, const uint64_t *s) {
    float *out = data;
    for (size_t t = 0; t < s[0]; t++)
        for (size_t y = 0; y < s[1]; y++)
            for (size_t x = 0; x < s[2]; x++)
                *out++ = (float)(temperature(t, y, x) + 0.05 * gaussian());
}

/* The same kept to 0.01 K, the precision such data is archived at (ERA5's 2 m
 * temperature, unpacked, has about 0.002 K steps). */
static void make_t_rounded(void *data, const uint64_t *s) {
    float *out = data;
    for (size_t t = 0; t < s[0]; t++)
        for (size_t y = 0; y < s[1]; y++)
            for (size_t x = 0; x < s[2]; x++)
                *out++ = (float)(round((temperature(t, y, x) + 0.05 * gaussian()) * 100.0) /
                                 100.0);
}

/* float64 surface pressure in Pa on a 2-D grid, noise of 20 Pa kept to 0.1 Pa. */
static void make_pressure(void *data, const uint64_t *s) {
    const double two_pi = 6.283185307179586;
    double *out = data;
    for (size_t y = 0; y < s[0]; y++)
        for (size_t x = 0; x < s[1]; x++) {
            double p = 101325.0 + 1500.0 * sin(two_pi * (double)x / 700.0) *
                                      cos(two_pi * (double)y / 500.0) -
                       3.0 * (double)y + 20.0 * gaussian();
            *out++ = round(p * 10.0) / 10.0;
        }
}

/* The temperature packed as netCDF packs it: int16 with scale 0.002 K, offset 280 K. */
static void make_packed(void *data, const uint64_t *s) {
    int16_t *out = data;
    for (size_t t = 0; t < s[0]; t++)
        for (size_t y = 0; y < s[1]; y++)
            for (size_t x = 0; x < s[2]; x++)
                *out++ = (int16_t)lround((temperature(t, y, x) + 0.05 * gaussian() - 280.0) /
                                         0.002);
}

/* int32 classes 0 to 15 (a land-cover map): regions of one value. */
static void make_classes(void *data, const uint64_t *s) {
    int32_t *out = data;
    for (size_t t = 0; t < s[0]; t++)
        for (size_t y = 0; y < s[1]; y++)
            for (size_t x = 0; x < s[2]; x++)
                *out++ = (int32_t)((temperature(0, y, x) - 260.0) / 40.0 * 16.0) & 15;
}

/* int64 indices: hourly time stamps in seconds since 1970, as a time coordinate. */
static void make_indices(void *data, const uint64_t *s) {
    int64_t *out = data;
    for (size_t i = 0; i < s[0]; i++)
        *out++ = 946684800 + 3600 * (int64_t)i;
}

typedef struct {
    const char *name;
    zarr_dtype_t dtype;
    int item_size;
    size_t ndim;
    uint64_t shape[3], chunks[3];
    make_fn make;
} field_t;

static double total_raw = 0, total_stored[NCODECS], total_write[NCODECS], total_read[NCODECS];

/* Writes and reads `field` with every codec; prints its table. */
static void measure(const field_t *field, int runs) {
    size_t n = 1;
    for (size_t d = 0; d < field->ndim; d++) n *= (size_t)field->shape[d];
    const size_t bytes = n * (size_t)field->item_size;
    const uint64_t origin[3] = {0, 0, 0};
    void *data = malloc(bytes), *back = malloc(bytes);
    if (!data || !back) {
        fprintf(stderr, "codec_table: out of memory\n");
        exit(1);
    }
    field->make(data, field->shape);
    total_raw += (double)bytes;
    printf("\n%s: %.1f MiB, shape", field->name, (double)bytes / 1048576.0);
    for (size_t d = 0; d < field->ndim; d++)
        printf("%s%llu", d ? " x " : " ", (unsigned long long)field->shape[d]);
    printf(", chunks");
    for (size_t d = 0; d < field->ndim; d++)
        printf("%s%llu", d ? " x " : " ", (unsigned long long)field->chunks[d]);
    printf("\n\n| codec | ratio | compress MB/s | decompress MB/s |\n");
    printf("| --- | ---: | ---: | ---: |\n");
    for (size_t c = 0; c < NCODECS; c++) {
        if (CODECS[c].id && !zarr_codec_supported(CODECS[c].id)) {
            printf("| %s | not in this build | | |\n", CODECS[c].name);
            continue;
        }
        char json[256];
        snprintf(json, sizeof json, CODECS[c].json, field->item_size);
        zarr_store_t *store = NULL;
        zarr_array_builder_t *builder = NULL;
        zarr_array_t *array = NULL;
        check(zarr_store_new_memory(&store), "zarr_store_new_memory");
        check(zarr_array_builder_new(field->dtype, field->ndim, field->shape, &builder),
              "builder");
        check(zarr_array_builder_set_chunk_shape(builder, field->ndim, field->chunks),
              "chunks");
        check(zarr_array_builder_set_compressor_json(builder, json), CODECS[c].name);
        check(zarr_array_create(builder, store, "field", ZARR_MODE_W, &array), CODECS[c].name);
        zarr_array_builder_free(builder);

        double best_write = 1e300, best_read = 1e300;
        for (int r = 0; r < runs; r++) {
            double t0 = now();
            check(zarr_array_write(array, field->ndim, origin, field->shape, field->dtype,
                                   ZARR_ORDER_C, data, bytes),
                  "zarr_array_write");
            double t1 = now();
            memset(back, 0, bytes);
            double t2 = now();
            check(zarr_array_read(array, field->ndim, origin, field->shape, field->dtype,
                                  ZARR_ORDER_C, back, bytes),
                  "zarr_array_read");
            double t3 = now();
            if (memcmp(data, back, bytes) != 0) {
                fprintf(stderr, "codec_table: %s did not give %s back\n", CODECS[c].name,
                        field->name);
                exit(1);
            }
            if (t1 - t0 < best_write) best_write = t1 - t0;
            if (t3 - t2 < best_read) best_read = t3 - t2;
        }
        uint64_t stored = 0;
        check(zarr_array_nbytes_stored(array, &stored), "zarr_array_nbytes_stored");
        total_stored[c] += (double)stored;
        total_write[c] += best_write;
        total_read[c] += best_read;
        printf("| %s | %.2f | %.0f | %.0f |\n", CODECS[c].name, (double)bytes / (double)stored,
               (double)bytes / 1e6 / best_write, (double)bytes / 1e6 / best_read);
        fflush(stdout);
        zarr_array_free(array);
        zarr_store_free(store);
    }
    free(data);
    free(back);
}

int main(int argc, char **argv) {
    int quick = 0;
    size_t threads = 1;
    uint64_t steps = 16;
    int runs = 3;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = (size_t)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
            steps = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: codec_table [--quick] [--threads N] [--steps T] [--runs R]\n");
            return 2;
        }
    }
    const uint64_t side = quick ? 64 : 512, tile = quick ? 32 : 256, plane = quick ? 1 : 4;
    if (quick) {
        steps = 2;
        runs = 1;
    }
    if (steps == 0 || runs < 1) {
        fprintf(stderr, "codec_table: --steps and --runs must be positive\n");
        return 2;
    }
    /* The 2-D and 1-D fields have 16 MiB (the 3-D ones with 16 steps). Chunks: 3-D of
     * 4 x 256 x 256 items, 2-D of 256 x 512, 1-D of 131072 (1 MiB of float32, float64 or
     * int64). */
    const uint64_t grid = quick ? 64 : 1024, row = quick ? 64 : 512;
    const uint64_t stamps = quick ? 4096 : 2097152;
    const field_t fields[] = {
        {"temperature, float32, noise 0.05 K", ZARR_DTYPE_FLOAT32, 4, 3,
         {steps, side, side}, {plane, tile, tile}, make_t_noisy},
        {"temperature, float32, kept to 0.01 K", ZARR_DTYPE_FLOAT32, 4, 3,
         {steps, side, side}, {plane, tile, tile}, make_t_rounded},
        {"surface pressure, float64 2-D, kept to 0.1 Pa", ZARR_DTYPE_FLOAT64, 8, 2,
         {grid, 2 * grid}, {tile, row}, make_pressure},
        {"temperature packed as int16 (scale 0.002 K)", ZARR_DTYPE_INT16, 2, 3,
         {steps, side, side}, {plane, tile, tile}, make_packed},
        {"land-cover classes, int32", ZARR_DTYPE_INT32, 4, 3, {steps, side, side},
         {plane, tile, tile}, make_classes},
        {"hourly time stamps, int64", ZARR_DTYPE_INT64, 8, 1, {stamps}, {quick ? 1024 : 131072},
         make_indices},
    };
    check(zarr_set_num_threads(threads), "zarr_set_num_threads");
    printf("libzarr %s, %zu worker thread(s), best of %d runs\n", zarr_version_string(),
           zarr_get_num_threads(), runs);
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) measure(&fields[f], runs);

    printf("\nall fields together: %.1f MiB\n\n", total_raw / 1048576.0);
    printf("| codec | ratio | compress MB/s | decompress MB/s |\n");
    printf("| --- | ---: | ---: | ---: |\n");
    for (size_t c = 0; c < NCODECS; c++) {
        if (total_stored[c] == 0) continue;
        printf("| %s | %.2f | %.0f | %.0f |\n", CODECS[c].name, total_raw / total_stored[c],
               total_raw / 1e6 / total_write[c], total_raw / 1e6 / total_read[c]);
    }
    return 0;
}
