/*
 * Zarr v3 from C: creating v3 arrays and groups, format detection on open, dimension
 * names, attributes inside zarr.json, and the errors v3 metadata can raise.
 */
#include "check.h"

static zarr_store_t *memory(void) {
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_new_memory(&s));
    return s;
}

/* Reads a key into a NUL-terminated static buffer ("" when missing). */
static const char *value_of(zarr_store_t *s, const char *key) {
    static char buf[4096];
    size_t needed = 0;
    buf[0] = '\0';
    if (zarr_store_get(s, key, buf, sizeof buf - 1, &needed) == ZARR_OK) buf[needed] = '\0';
    return buf;
}

static void arrays(void) {
    zarr_store_t *s = memory();
    const uint64_t shape[2] = {5, 7}, chunks[2] = {2, 3}, origin[2] = {0, 0};
    const char *names[2] = {"y", NULL};
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT32, 2, shape, &b));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, chunks));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 3));
    CHECK_OK(zarr_array_builder_set_dimension_names(b, 2, names));
    CHECK_OK(zarr_array_builder_set_attributes_json(b, "{\"units\": \"m\"}"));
    CHECK_OK(zarr_array_create(b, s, "g/a", ZARR_MODE_W_MINUS, &a));
    int32_t data[35], back[35];
    for (int i = 0; i < 35; i++) data[i] = i * 3 - 50;
    CHECK_OK(zarr_array_write(a, 2, origin, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, data, sizeof data));
    zarr_array_free(a);

    /* The documents are v3: zarr.json for the array (attributes inside) and its parents. */
    CHECK(strstr(value_of(s, "g/a/zarr.json"), "\"node_type\": \"array\"") != NULL);
    CHECK(strstr(value_of(s, "g/a/zarr.json"), "\"units\": \"m\"") != NULL);
    CHECK(strstr(value_of(s, "g/zarr.json"), "\"node_type\": \"group\"") != NULL);
    CHECK(strstr(value_of(s, "zarr.json"), "\"group\"") != NULL);
    bool exists = false;
    CHECK_OK(zarr_store_contains(s, "g/a/c/0/0", &exists));
    CHECK(exists);
    CHECK_OK(zarr_store_contains(s, "g/a/.zattrs", &exists));
    CHECK(!exists);

    /* Opening detects the format; attributes and dimension names come from zarr.json. */
    CHECK_OK(zarr_array_open(s, "g/a", ZARR_MODE_R_PLUS, &a));
    int32_t version = 0;
    CHECK_OK(zarr_array_zarr_format(a, &version));
    CHECK_EQ(version, 3);
    CHECK_OK(zarr_array_read(a, 2, origin, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, back, sizeof back));
    CHECK(memcmp(back, data, sizeof data) == 0);
    zarr_strings_t *dims = NULL;
    CHECK_OK(zarr_array_dimension_names(a, &dims));
    CHECK_EQ(zarr_strings_count(dims), 2);
    /* An unnamed dimension is a NULL item, distinct from the name "". */
    CHECK(strcmp(zarr_strings_get(dims, 0), "y") == 0 && zarr_strings_get(dims, 1) == NULL);
    CHECK(zarr_strings_get(dims, 2) == NULL);
    zarr_strings_free(dims);
    CHECK(strstr(value_of(s, "g/a/zarr.json"), "\"dimension_names\": [\n        \"y\",\n        null\n    ]") != NULL);
    const char *empty_and_unnamed[2] = {"", NULL};
    CHECK_OK(zarr_array_set_dimension_names(a, 2, empty_and_unnamed));
    CHECK(strstr(value_of(s, "g/a/zarr.json"), "\"dimension_names\": [\n        \"\",\n        null\n    ]") != NULL);
    CHECK_OK(zarr_array_dimension_names(a, &dims));
    CHECK(strcmp(zarr_strings_get(dims, 0), "") == 0 && zarr_strings_get(dims, 1) == NULL);
    zarr_strings_free(dims);
    CHECK_OK(zarr_array_attr_set(a, "scale", "2.5"));
    const char *renamed[2] = {"row", "column"};
    CHECK_OK(zarr_array_set_dimension_names(a, 2, renamed));
    CHECK(strstr(value_of(s, "g/a/zarr.json"), "\"scale\": 2.5") != NULL);
    CHECK(strstr(value_of(s, "g/a/zarr.json"), "\"column\"") != NULL);
    CHECK(strstr(value_of(s, "g/a/zarr.json"), "\"units\": \"m\"") != NULL);
    zarr_array_free(a);

    /* Dimension names in the builder are for v3 only. */
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_STATUS(zarr_array_create(b, s, "v2", ZARR_MODE_W, &a), ZARR_ERR_INVALID_ARG);
    CHECK(a == NULL);
    CHECK_STATUS(zarr_array_builder_set_zarr_format(b, 4), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_builder_set_dimension_names(b, 2, NULL), ZARR_ERR_NULL_ARG);
    zarr_array_builder_free(b);
    zarr_store_free(s);
}

static void groups(void) {
    zarr_store_t *s = memory();
    zarr_group_t *root = NULL, *child = NULL;
    CHECK_OK(zarr_group_create(s, "", ZARR_MODE_W, 3, &root));
    CHECK_OK(zarr_group_open_group(root, "x/y", ZARR_MODE_A, &child));
    CHECK(strstr(value_of(s, "x/y/zarr.json"), "\"group\"") != NULL);
    CHECK(strstr(value_of(s, "x/zarr.json"), "\"group\"") != NULL);
    CHECK_OK(zarr_group_attrs_set(child, "{\"title\": \"v3\"}"));
    CHECK(strstr(value_of(s, "x/y/zarr.json"), "\"title\": \"v3\"") != NULL);
    zarr_group_free(child);
    zarr_strings_t *names = NULL;
    CHECK_OK(zarr_group_members(root, ZARR_NODE_GROUP, &names));
    CHECK_EQ(zarr_strings_count(names), 1);
    CHECK(strcmp(zarr_strings_get(names, 0), "x") == 0);
    zarr_strings_free(names);
    CHECK_STATUS(zarr_group_create(s, "z", ZARR_MODE_A, 1, &child), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_group_create(s, "z", ZARR_MODE_A, 3, NULL), ZARR_ERR_NULL_ARG);
    zarr_group_free(root);
    zarr_store_free(s);
}

static void errors(void) {
    zarr_store_t *s = memory();
    zarr_array_t *a = NULL;
    zarr_group_t *g = NULL;
    const char *base = "{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [4], "
                       "\"data_type\": \"uint8\", \"chunk_grid\": {\"name\": \"regular\", "
                       "\"configuration\": {\"chunk_shape\": [2]}}, \"fill_value\": 0, "
                       "\"codecs\": [{\"name\": \"bytes\"}]";
    char doc[1024];
    snprintf(doc, sizeof doc, "%s, \"frobnicate\": {\"must_understand\": true}}", base);
    CHECK_OK(zarr_store_set(s, "ext/zarr.json", doc, strlen(doc)));
    CHECK_STATUS(zarr_array_open(s, "ext", ZARR_MODE_R, &a), ZARR_ERR_UNSUPPORTED);
    CHECK(strstr(check_last_error(), "frobnicate") != NULL);
    snprintf(doc, sizeof doc, "%s, \"frobnicate\": {\"must_understand\": false}}", base);
    CHECK_OK(zarr_store_set(s, "ok/zarr.json", doc, strlen(doc)));
    CHECK_OK(zarr_array_open(s, "ok", ZARR_MODE_R, &a));
    zarr_array_free(a);
    snprintf(doc, sizeof doc, "%s, \"storage_transformers\": [{\"name\": \"x\"}]}", base);
    CHECK_OK(zarr_store_set(s, "st/zarr.json", doc, strlen(doc)));
    CHECK_STATUS(zarr_array_open(s, "st", ZARR_MODE_R, &a), ZARR_ERR_UNSUPPORTED);
    CHECK_STATUS(zarr_group_open(s, "ok", ZARR_MODE_R, &g), ZARR_ERR_NODE_TYPE);
    const char *group = "{\"zarr_format\": 3, \"node_type\": \"group\"}";
    CHECK_OK(zarr_store_set(s, "grp/zarr.json", group, strlen(group)));
    CHECK_STATUS(zarr_array_open(s, "grp", ZARR_MODE_R, &a), ZARR_ERR_NODE_TYPE);
    const char *bad = "{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [4]}";
    CHECK_OK(zarr_store_set(s, "bad/zarr.json", bad, strlen(bad)));
    CHECK_STATUS(zarr_array_open(s, "bad", ZARR_MODE_R, &a), ZARR_ERR_METADATA);
    CHECK(strstr(check_last_error(), "data_type") != NULL);
    CHECK(a == NULL && g == NULL);
    zarr_store_free(s);
}

static void shards(void) {
    zarr_store_t *s = memory();
    const uint64_t shape[2] = {10, 12}, chunks[2] = {2, 3}, shard[2] = {4, 6}, origin[2] = {0, 0};
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_UINT16, 2, shape, &b));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, chunks));
    CHECK_OK(zarr_array_builder_set_shard_shape(b, 2, shard));
    /* Sharding is v3 only. */
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_STATUS(zarr_array_create(b, s, "v2", ZARR_MODE_W, &a), ZARR_ERR_INVALID_ARG);
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 3));
    CHECK_OK(zarr_array_create(b, s, "sh", ZARR_MODE_W, &a));
    uint16_t data[120], back[120];
    for (int i = 0; i < 120; i++) data[i] = (uint16_t)(i * 7 + 1);
    CHECK_OK(zarr_array_write(a, 2, origin, shape, ZARR_DTYPE_UINT16, ZARR_ORDER_C, data, sizeof data));
    CHECK_OK(zarr_array_read(a, 2, origin, shape, ZARR_DTYPE_UINT16, ZARR_ORDER_F, back, sizeof back));
    for (int r = 0; r < 10; r++)
        for (int c = 0; c < 12; c++) CHECK_EQ(back[c * 10 + r], data[r * 12 + c]);
    uint64_t got[2] = {0, 0}, nchunks = 0;
    CHECK_OK(zarr_array_shard_shape(a, 2, got));
    CHECK(got[0] == 4 && got[1] == 6);
    CHECK_OK(zarr_array_chunk_shape(a, 2, got));
    CHECK(got[0] == 2 && got[1] == 3);
    CHECK_OK(zarr_array_nchunks(a, &nchunks));
    CHECK_EQ(nchunks, 6); /* shards: 3 x 2 */
    bool exists = false;
    CHECK_OK(zarr_store_contains(s, "sh/c/2/1", &exists));
    CHECK(exists);
    CHECK_STATUS(zarr_array_shard_shape(a, 1, got), ZARR_ERR_RANK_MISMATCH);
    zarr_array_free(a);
    /* An array without shards has no shard shape. */
    zarr_array_builder_free(b);
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_UINT16, 2, shape, &b));
    CHECK_OK(zarr_array_create(b, s, "plain", ZARR_MODE_W, &a));
    CHECK_STATUS(zarr_array_shard_shape(a, 2, got), ZARR_ERR_NOT_FOUND);
    size_t levels = 9;
    CHECK_OK(zarr_array_shard_levels(a, &levels));
    CHECK_EQ(levels, 0);
    CHECK_STATUS(zarr_array_shard_level_shape(a, 0, 2, got), ZARR_ERR_NOT_FOUND);
    zarr_array_free(a);
    zarr_array_builder_free(b);
    zarr_store_free(s);
}

/* Nested shards: shards of 8x12 holding inner shards of 4x6 holding chunks of 2x3. */
static void nested_shards(void) {
    zarr_store_t *s = memory();
    const uint64_t shape[2] = {10, 12}, chunks[2] = {2, 3}, outer[2] = {8, 12}, inner[2] = {4, 6};
    const uint64_t origin[2] = {0, 0}, bad[2] = {3, 6}, one_at[2] = {9, 11}, one[2] = {1, 1};
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT32, 2, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 3));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, chunks));
    CHECK_OK(zarr_array_builder_set_shard_shape(b, 2, outer));
    /* An inner shard shape that does not divide the outer one, or is not a multiple of
       the chunks, is refused when the array is created. */
    CHECK_OK(zarr_array_builder_add_inner_shard_shape(b, 2, bad));
    CHECK_STATUS(zarr_array_create(b, s, "n", ZARR_MODE_W, &a), ZARR_ERR_INVALID_ARG);
    CHECK(strstr(check_last_error(), "not a multiple") != NULL);
    CHECK_STATUS(zarr_array_builder_add_inner_shard_shape(b, 2, NULL), ZARR_ERR_NULL_ARG);
    CHECK_OK(zarr_array_builder_set_shard_shape(b, 2, outer)); /* drops the nested level */
    CHECK_OK(zarr_array_builder_add_inner_shard_shape(b, 2, inner));
    CHECK_OK(zarr_array_create(b, s, "n", ZARR_MODE_W, &a));
    int32_t data[120], back[120], last = 0;
    for (int i = 0; i < 120; i++) data[i] = i * 3 - 7;
    CHECK_OK(zarr_array_write(a, 2, origin, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, data, sizeof data));
    zarr_array_free(a);
    const char *doc = value_of(s, "n/zarr.json");
    const char *first = strstr(doc, "sharding_indexed");
    CHECK(first != NULL && strstr(first + 1, "sharding_indexed") != NULL);
    CHECK_OK(zarr_array_open(s, "n", ZARR_MODE_R, &a));
    CHECK_OK(zarr_array_read(a, 2, origin, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, back, sizeof back));
    CHECK(memcmp(back, data, sizeof data) == 0);
    CHECK_OK(zarr_array_read(a, 2, one_at, one, ZARR_DTYPE_INT32, ZARR_ORDER_C, &last, sizeof last));
    CHECK_EQ(last, data[119]);
    uint64_t got[2] = {0, 0};
    CHECK_OK(zarr_array_shard_shape(a, 2, got));
    CHECK(got[0] == 8 && got[1] == 12);
    size_t levels = 0;
    CHECK_OK(zarr_array_shard_levels(a, &levels));
    CHECK_EQ(levels, 2);
    CHECK_OK(zarr_array_shard_level_shape(a, 0, 2, got));
    CHECK(got[0] == 8 && got[1] == 12);
    CHECK_OK(zarr_array_shard_level_shape(a, 1, 2, got));
    CHECK(got[0] == 4 && got[1] == 6);
    CHECK_STATUS(zarr_array_shard_level_shape(a, 2, 2, got), ZARR_ERR_NOT_FOUND);
    CHECK(strstr(check_last_error(), "2 sharding levels") != NULL);
    CHECK_STATUS(zarr_array_shard_level_shape(a, 1, 1, got), ZARR_ERR_RANK_MISMATCH);
    CHECK_STATUS(zarr_array_shard_levels(a, NULL), ZARR_ERR_NULL_ARG);
    zarr_array_free(a);
    zarr_array_builder_free(b);
    zarr_store_free(s);
}

/* What zarr.json can say, set from the builder: the chunk key encoding, the shard index's
 * place and checksum, and several bytes-to-bytes codecs. */
static void builder_settings(void) {
    zarr_store_t *s = memory();
    const uint64_t shape[2] = {4, 6}, chunks[2] = {2, 3}, shard[2] = {4, 6}, origin[2] = {0, 0};
    int32_t data[24], back[24];
    for (int i = 0; i < 24; i++) data[i] = i * 11 - 7;
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL;
    bool exists = false;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT32, 2, shape, &b));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, chunks));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 3));

    /* The v2 key encoding: "." by default, "/" when asked; then back to "default". */
    CHECK_OK(zarr_array_builder_set_chunk_key_encoding(b, "v2", NULL));
    CHECK_OK(zarr_array_create(b, s, "k1", ZARR_MODE_W, &a));
    CHECK_OK(zarr_array_write(a, 2, origin, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, data, sizeof data));
    CHECK_OK(zarr_store_contains(s, "k1/1.1", &exists));
    CHECK(exists);
    CHECK(strstr(value_of(s, "k1/zarr.json"), "\"name\": \"v2\"") != NULL);
    CHECK_OK(zarr_array_read(a, 2, origin, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, back, sizeof back));
    CHECK(memcmp(back, data, sizeof data) == 0);
    zarr_array_free(a);
    CHECK_OK(zarr_array_builder_set_chunk_key_encoding(b, "v2", "/"));
    CHECK_OK(zarr_array_create(b, s, "k2", ZARR_MODE_W, &a));
    CHECK_OK(zarr_array_write(a, 2, origin, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, data, sizeof data));
    CHECK_OK(zarr_store_contains(s, "k2/1/1", &exists));
    CHECK(exists);
    zarr_array_free(a);
    CHECK_OK(zarr_array_builder_set_chunk_key_encoding(b, "default", NULL));
    CHECK_OK(zarr_array_create(b, s, "k3", ZARR_MODE_W, &a));
    CHECK_OK(zarr_array_write(a, 2, origin, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, data, sizeof data));
    CHECK_OK(zarr_store_contains(s, "k3/c/1/1", &exists));
    CHECK(exists);
    zarr_array_free(a);
    CHECK_STATUS(zarr_array_builder_set_chunk_key_encoding(b, "c", NULL), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_builder_set_chunk_key_encoding(b, "v2", "-"), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_builder_set_chunk_key_encoding(b, NULL, NULL), ZARR_ERR_NULL_ARG);
    /* v2 arrays have their own keys: asking for the v2 encoding there is refused. */
    CHECK_OK(zarr_array_builder_set_chunk_key_encoding(b, "v2", NULL));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_STATUS(zarr_array_create(b, s, "k4", ZARR_MODE_W, &a), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("chunk key encoding");
    CHECK_OK(zarr_array_builder_set_chunk_key_encoding(b, "default", NULL));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 3));

    /* Shard index at the start without a checksum; zstd then crc32c on each chunk. */
    CHECK_OK(zarr_array_builder_set_shard_shape(b, 2, shard));
    CHECK_OK(zarr_array_builder_set_shard_index(b, true, false));
    CHECK_OK(zarr_array_builder_set_compressor_json(b, "[{\"id\": \"zstd\", \"level\": 1}, {\"id\": \"crc32c\"}]"));
    CHECK_OK(zarr_array_create(b, s, "sh", ZARR_MODE_W, &a));
    CHECK_OK(zarr_array_write(a, 2, origin, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, data, sizeof data));
    const char *doc = value_of(s, "sh/zarr.json");
    CHECK(strstr(doc, "\"index_location\": \"start\"") != NULL);
    const char *index_codecs = strstr(doc, "\"index_codecs\"");
    CHECK(index_codecs != NULL && strstr(index_codecs, "crc32c") == NULL);
    const char *zstd = strstr(doc, "\"zstd\""), *crc = strstr(doc, "\"crc32c\"");
    CHECK(zstd != NULL && crc != NULL && zstd < crc);
    /* The index (2 x 2 chunks, 16 bytes each, no checksum) is the first 64 bytes: chunk
     * (0, 0) starts right after it. */
    unsigned char shard_bytes[1024];
    size_t n = 0;
    CHECK_OK(zarr_store_get(s, "sh/c/0/0", shard_bytes, sizeof shard_bytes, &n));
    uint64_t first_offset = 0;
    memcpy(&first_offset, shard_bytes, 8); /* little-endian, as the index is stored */
    const uint16_t probe = 1;
    if (*(const unsigned char *)&probe == 1) CHECK_EQ(first_offset, 64);
    CHECK_OK(zarr_array_read(a, 2, origin, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, back, sizeof back));
    CHECK(memcmp(back, data, sizeof data) == 0);
    zarr_array_free(a);
    /* A v2 array holds one compressor: a list of two is refused there. */
    zarr_array_builder_free(b);
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT32, 2, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_OK(zarr_array_builder_set_compressor_json(b, "[{\"id\": \"zstd\"}, {\"id\": \"crc32c\"}]"));
    CHECK_STATUS(zarr_array_create(b, s, "v2list", ZARR_MODE_W, &a), ZARR_ERR_INVALID_ARG);
    CHECK(a == NULL);
    CHECK_OK(zarr_array_builder_set_compressor_json(b, "[{\"id\": \"zstd\"}]"));
    CHECK_OK(zarr_array_create(b, s, "v2list", ZARR_MODE_W, &a));
    CHECK(strstr(value_of(s, "v2list/.zarray"), "\"id\": \"zstd\"") != NULL);
    zarr_array_free(a);
    zarr_array_builder_free(b);
    zarr_store_free(s);
}

/* Time steps appended to a sharded array: buffered on the handle, seen by other handles
 * after zarr_array_flush, exactly. */
static void streaming_appends(void) {
    zarr_store_t *s = memory();
    const uint64_t shape[2] = {0, 6}, chunks[2] = {1, 3}, shard[2] = {4, 6}, origin[2] = {0, 0};
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL, *other = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT32, 2, shape, &b));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, chunks));
    CHECK_OK(zarr_array_builder_set_shard_shape(b, 2, shard));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 3));
    CHECK_OK(zarr_array_create(b, s, "t", ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    int32_t steps[5][6], back[5][6];
    const uint64_t one[2] = {1, 6};
    for (int t = 0; t < 5; t++) {
        for (int i = 0; i < 6; i++) steps[t][i] = t * 100 + i;
        CHECK_OK(zarr_array_append(a, 0, 2, one, ZARR_DTYPE_INT32, ZARR_ORDER_C, steps[t], sizeof steps[t]));
        if (t == 2) {
            /* Three steps in one incomplete shard: not stored yet, then stored by a flush. */
            CHECK_OK(zarr_array_open(s, "t", ZARR_MODE_R, &other));
            uint64_t seen[2] = {9, 9};
            CHECK_OK(zarr_array_shape(other, 2, seen));
            CHECK_EQ(seen[0], 0);
            zarr_array_free(other);
            CHECK_OK(zarr_array_flush(a));
            CHECK_OK(zarr_array_open(s, "t", ZARR_MODE_R, &other));
            CHECK_OK(zarr_array_shape(other, 2, seen));
            CHECK_EQ(seen[0], 3);
            const uint64_t three[2] = {3, 6};
            CHECK_OK(zarr_array_read(other, 2, origin, three, ZARR_DTYPE_INT32, ZARR_ORDER_C, back, 3 * sizeof steps[0]));
            CHECK(memcmp(back, steps, 3 * sizeof steps[0]) == 0);
            CHECK_STATUS(zarr_array_flush(other), ZARR_ERR_READ_ONLY);
            zarr_array_free(other);
        }
    }
    /* The appending handle reads every step; a new handle after the flush too. */
    const uint64_t five[2] = {5, 6};
    CHECK_OK(zarr_array_read(a, 2, origin, five, ZARR_DTYPE_INT32, ZARR_ORDER_C, back, sizeof back));
    CHECK(memcmp(back, steps, sizeof steps) == 0);
    CHECK_OK(zarr_array_flush(a));
    CHECK_OK(zarr_array_flush(a)); /* nothing left: not an error */
    CHECK_OK(zarr_array_open(s, "t", ZARR_MODE_R, &other));
    memset(back, 0, sizeof back);
    CHECK_OK(zarr_array_read(other, 2, origin, five, ZARR_DTYPE_INT32, ZARR_ORDER_C, back, sizeof back));
    CHECK(memcmp(back, steps, sizeof steps) == 0);
    zarr_array_free(other);
    /* A wrong step is refused and changes nothing. */
    CHECK_STATUS(zarr_array_append(a, 0, 2, one, ZARR_DTYPE_INT32, ZARR_ORDER_C, steps[0], 4), ZARR_ERR_BUFFER_SIZE);
    uint64_t now[2] = {0, 0};
    CHECK_OK(zarr_array_shape(a, 2, now));
    CHECK_EQ(now[0], 5);
    CHECK_STATUS(zarr_array_flush(NULL), ZARR_ERR_NULL_ARG);
    zarr_array_free(a);
    zarr_store_free(s);
}

int main(void) {
    arrays();
    streaming_appends();
    builder_settings();
    shards();
    nested_shards();
    groups();
    errors();
    return CHECK_DONE();
}
