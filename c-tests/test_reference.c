/*
 * Kerchunk reference files through zarr_store_open_url ("reference:///PATH"): an array
 * whose chunks are byte ranges of another file reads back exactly; keys list; writes are
 * refused; a reference outside the reference file's directory is refused until the
 * option allowed_targets names its directory; a relative reference URL is refused.
 */
#include "check.h"

static void write_file(const char *path, const void *bytes, size_t len) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f == NULL)
        return;
    CHECK_EQ(fwrite(bytes, 1, len, f), len);
    fclose(f);
}

/* 2 x 4 little-endian int32 in chunks of 1 x 4, after an 8-byte header. */
static void write_data(const char *path) {
    unsigned char bytes[8 + 32];
    memset(bytes, 0xEE, 8);
    for (int i = 0; i < 8; i++) {
        uint32_t v = (uint32_t)(i * 1000 - 3000);
        for (int b = 0; b < 4; b++)
            bytes[8 + 4 * i + b] = (unsigned char)(v >> (8 * b));
    }
    write_file(path, bytes, sizeof bytes);
}

static void write_refs(const char *refs, const char *data) {
    char text[2048];
    int n = snprintf(text, sizeof text,
                     "{\"version\": 1, \"templates\": {\"data\": \"%s\"},\n"
                     " \"refs\": {\".zgroup\": \"{\\\"zarr_format\\\": 2}\",\n"
                     "  \"v/.zarray\": {\"zarr_format\": 2, \"shape\": [2, 4], \"chunks\": [1, 4],"
                     " \"dtype\": \"<i4\", \"compressor\": null, \"fill_value\": 0,"
                     " \"filters\": null, \"order\": \"C\"},\n"
                     "  \"v/0.0\": [\"{{data}}\", 8, 16], \"v/1.0\": [\"{{data}}\", 24, 16]}}",
                     data);
    CHECK(n > 0 && (size_t)n < sizeof text);
    write_file(refs, text, (size_t)n);
}

static void read_back(zarr_store_t *store) {
    zarr_array_t *array = NULL;
    CHECK_OK(zarr_array_open(store, "v", ZARR_MODE_R, &array));
    int32_t got[8] = {0};
    const uint64_t start[2] = {0, 0}, count[2] = {2, 4};
    CHECK_OK(zarr_array_read(array, 2, start, count, ZARR_DTYPE_INT32, ZARR_ORDER_C, got,
                             sizeof got));
    for (int i = 0; i < 8; i++)
        CHECK_EQ(got[i], i * 1000 - 3000);
    zarr_array_free(array);
}

int main(void) {
    char *tmp = check_mkdtemp();
    char *refs_dir = check_join(tmp, "refs");
    char *data_dir = check_join(tmp, "data");
    CHECK_EQ(mkdir(refs_dir, 0700), 0);
    CHECK_EQ(mkdir(data_dir, 0700), 0);

    /* Beside the reference file: read back exactly. */
    char *data = check_join(refs_dir, "data.bin");
    char *refs = check_join(refs_dir, "refs.json");
    write_data(data);
    write_refs(refs, data);
    char url[1024];
    snprintf(url, sizeof url, "reference://%s", refs);
    zarr_store_t *store = NULL;
    CHECK_OK(zarr_store_open_url(url, ZARR_MODE_R, NULL, &store));
    read_back(store);
    zarr_strings_t *keys = NULL;
    CHECK_OK(zarr_store_list(store, "v/", &keys));
    const char *const want[] = {"v/.zarray", "v/0.0", "v/1.0"};
    CHECK(check_strings_equal(keys, want, 3));
    zarr_strings_free(keys);
    CHECK_STATUS(zarr_store_set(store, "v/0.0", "x", 1), ZARR_ERR_READ_ONLY);
    zarr_store_free(store);
    store = NULL;
    CHECK_STATUS(zarr_store_open_url(url, ZARR_MODE_A, NULL, &store), ZARR_ERR_READ_ONLY);
    CHECK(store == NULL);

    /* The data elsewhere: refused, naming the key, until the option allows its directory. */
    char *far_data = check_join(data_dir, "data.bin");
    write_data(far_data);
    write_refs(refs, far_data);
    CHECK_OK(zarr_store_open_url(url, ZARR_MODE_R, NULL, &store));
    char buf[64];
    CHECK_STATUS(zarr_store_get(store, "v/0.0", buf, sizeof buf, NULL), ZARR_ERR_INVALID_KEY);
    CHECK_ERROR_CONTAINS("\"v/0.0\"");
    CHECK_ERROR_CONTAINS("outside");
    zarr_store_free(store);
    char options[1024];
    snprintf(options, sizeof options, "{\"allowed_targets\": [\"%s\"]}", data_dir);
    CHECK_OK(zarr_store_open_url(url, ZARR_MODE_R, options, &store));
    read_back(store);
    zarr_store_free(store);
    store = NULL;
    CHECK_STATUS(zarr_store_open_url(url, ZARR_MODE_R, "{\"allowed\": []}", &store),
                 ZARR_ERR_INVALID_ARG);

    /* The reference file's path must be absolute. */
    CHECK_STATUS(zarr_store_open_url("reference:refs.json", ZARR_MODE_R, NULL, &store),
                 ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("must be absolute");

    free(far_data);
    free(refs);
    free(data);
    free(data_dir);
    free(refs_dir);
    check_rmtree(tmp);
    return CHECK_DONE();
}
