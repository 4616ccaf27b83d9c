/*
 * quickstart.c — write a 2-D field to a Zarr v3 array on local disk, read it back and
 * print a summary. The array is readable by zarr-python 3 and tensorstore as is:
 *
 *     python -c "import zarr; print(zarr.open('quickstart.zarr/temperature')[:2, :3])"
 *
 * Usage: quickstart [directory]   (default: quickstart.zarr)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <zarr.h>

/* Prints the failing call, its status and libzarr's message, then exits. */
static void check(zarr_status_t status, const char *what) {
    if (status != ZARR_OK) {
        char message[512];
        zarr_last_error(message, sizeof message, NULL);
        fprintf(stderr, "%s failed: %s: %s\n", what, zarr_status_str(status), message);
        exit(1);
    }
}

/* Prints what this build of libzarr has beyond the core (zarr_features()). */
static void print_features(void) {
    static const struct {
        uint32_t bit;
        const char *name;
    } features[] = {{ZARR_HAS_S3, "s3"},         {ZARR_HAS_GCS, "gcs"},
                    {ZARR_HAS_AZURE, "azure"},   {ZARR_HAS_HTTP, "http"},
                    {ZARR_HAS_ZFP, "zfp"},       {ZARR_HAS_PCODEC, "pcodec"},
                    {ZARR_HAS_ICECHUNK, "icechunk"}};
    uint32_t have = zarr_features();
    printf("  built with");
    for (size_t i = 0; i < sizeof features / sizeof features[0]; i++)
        if (have & features[i].bit) printf(" %s", features[i].name);
    printf("\n");
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "quickstart.zarr";
    enum { NY = 1000, NX = 1200 };
    const uint64_t shape[2] = {NY, NX};
    const uint64_t chunks[2] = {250, 300};

    /* A smooth temperature field, row-major. */
    double *field = malloc(sizeof(double) * NY * NX);
    double *back = malloc(sizeof(double) * NY * NX);
    if (!field || !back) return 1;
    for (int y = 0; y < NY; y++)
        for (int x = 0; x < NX; x++)
            field[(size_t)y * NX + x] = 15.0 + 10.0 * sin(y / 80.0) * cos(x / 120.0);

    zarr_store_t *store = NULL;
    check(zarr_store_open_fs(dir, ZARR_MODE_A, &store), "zarr_store_open_fs");

    zarr_array_builder_t *builder = NULL;
    check(zarr_array_builder_new(ZARR_DTYPE_FLOAT64, 2, shape, &builder), "zarr_array_builder_new");
    check(zarr_array_builder_set_chunk_shape(builder, 2, chunks), "set_chunk_shape");
    check(zarr_array_builder_set_compressor_json(
              builder, "{\"id\": \"blosc\", \"cname\": \"zstd\", \"clevel\": 5, \"shuffle\": 2}"),
          "set_compressor_json");
    check(zarr_array_builder_set_fill_value_json(builder, "\"NaN\""), "set_fill_value_json");
    check(zarr_array_builder_set_attributes_json(
              builder, "{\"units\": \"degC\", \"long_name\": \"air temperature\"}"),
          "set_attributes_json");

    zarr_array_t *array = NULL;
    check(zarr_array_create(builder, store, "temperature", ZARR_MODE_W, &array), "zarr_array_create");
    zarr_array_builder_free(builder);

    const uint64_t start[2] = {0, 0};
    check(zarr_array_write(array, 2, start, shape, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, field,
                           sizeof(double) * NY * NX),
          "zarr_array_write");
    zarr_array_free(array);

    /* Reopen read-only and read everything back. */
    check(zarr_array_open(store, "temperature", ZARR_MODE_R, &array), "zarr_array_open");
    check(zarr_array_read(array, 2, start, shape, ZARR_DTYPE_FLOAT64, ZARR_ORDER_C, back,
                          sizeof(double) * NY * NX),
          "zarr_array_read");
    size_t mismatches = 0;
    for (size_t i = 0; i < (size_t)NY * NX; i++) mismatches += field[i] != back[i];

    uint64_t nbytes = 0, stored = 0, nchunks = 0, initialized = 0;
    check(zarr_array_nbytes(array, &nbytes), "zarr_array_nbytes");
    check(zarr_array_nbytes_stored(array, &stored), "zarr_array_nbytes_stored");
    check(zarr_array_nchunks(array, &nchunks), "zarr_array_nchunks");
    check(zarr_array_nchunks_initialized(array, &initialized), "zarr_array_nchunks_initialized");
    char dtype[32], attrs[256];
    check(zarr_array_dtype_name(array, dtype, sizeof dtype, NULL), "zarr_array_dtype_name");
    check(zarr_array_attrs_get(array, attrs, sizeof attrs, NULL), "zarr_array_attrs_get");

    printf("libzarr %s quickstart\n", zarr_version_string());
    print_features();
    printf("  array       %s/temperature\n", dir);
    printf("  shape       %d x %d, chunks %llu x %llu, dtype %s\n", NY, NX,
           (unsigned long long)chunks[0], (unsigned long long)chunks[1], dtype);
    printf("  chunks      %llu stored of %llu\n", (unsigned long long)initialized,
           (unsigned long long)nchunks);
    printf("  bytes       %llu in memory, %llu stored (ratio %.2f)\n", (unsigned long long)nbytes,
           (unsigned long long)stored, (double)nbytes / (double)stored);
    printf("  attributes  %s\n", attrs);
    printf("  sample      [0,0]=%.4f [500,600]=%.4f\n", back[0], back[(size_t)500 * NX + 600]);
    printf("  read back   %s\n", mismatches == 0 ? "identical" : "MISMATCH");

    zarr_array_free(array);
    zarr_store_free(store);
    free(field);
    free(back);
    return mismatches == 0 ? 0 : 1;
}
