/*
 * The 2022 draft layout of Zarr v3 from C: creating arrays and groups in both key schemes
 * (ZARR_FORMAT_V3_DRAFT: meta/..., data/...; ZARR_FORMAT_V3_DRAFT_ZARR_PYTHON:
 * meta/root/..., data/root/...), detection of every format on open without the caller
 * saying which, and the errors the draft layout adds.
 */
#include "check.h"

static zarr_store_t *memory(void) {
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_new_memory(&s));
    return s;
}

static bool has(zarr_store_t *s, const char *key) {
    bool exists = false;
    CHECK_OK(zarr_store_contains(s, key, &exists));
    return exists;
}

static zarr_array_builder_t *builder(int32_t format) {
    const uint64_t shape[2] = {5, 7}, chunks[2] = {2, 3};
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT16, 2, shape, &b));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, chunks));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, format));
    return b;
}

/* Creates g/a in `format`, writes it, and checks its keys. */
static void create_and_check(int32_t format, const char *meta_key, const char *chunk_key) {
    zarr_store_t *s = memory();
    const uint64_t origin[2] = {0, 0}, shape[2] = {5, 7};
    int16_t data[35], back[35];
    for (int i = 0; i < 35; i++) data[i] = (int16_t)(i * 11 - 100);
    zarr_array_builder_t *b = builder(format);
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_create(b, s, "g/a", ZARR_MODE_W_MINUS, &a));
    CHECK_OK(zarr_array_write(a, 2, origin, shape, ZARR_DTYPE_INT16, ZARR_ORDER_C, data, sizeof data));
    CHECK_OK(zarr_array_attr_set(a, "units", "\"m\""));
    zarr_array_free(a);
    CHECK(has(s, "zarr.json"));
    CHECK(has(s, meta_key));
    CHECK(has(s, chunk_key));

    /* Opened without saying the format: detected from the root entry point. */
    int32_t version = 0;
    CHECK_OK(zarr_array_open(s, "g/a", ZARR_MODE_R, &a));
    CHECK_OK(zarr_array_zarr_format(a, &version));
    CHECK_EQ(version, format);
    CHECK_OK(zarr_array_read(a, 2, origin, shape, ZARR_DTYPE_INT16, ZARR_ORDER_C, back, sizeof back));
    CHECK(memcmp(back, data, sizeof data) == 0);
    zarr_array_free(a);

    /* The implicit group g lists its member and reports the layout. */
    zarr_group_t *g = NULL;
    CHECK_OK(zarr_group_open(s, "g", ZARR_MODE_R_PLUS, &g));
    CHECK_OK(zarr_group_zarr_format(g, &version));
    CHECK_EQ(version, format);
    zarr_strings_t *names = NULL;
    CHECK_OK(zarr_group_members(g, ZARR_NODE_ARRAY, &names));
    CHECK_EQ(zarr_strings_count(names), 1);
    CHECK(strcmp(zarr_strings_get(names, 0), "a") == 0);
    zarr_strings_free(names);
    CHECK_OK(zarr_group_attr_set(g, "title", "\"draft\""));
    /* Moving members is not supported in the draft layout. */
    CHECK_STATUS(zarr_group_move(g, "a", "b"), ZARR_ERR_UNSUPPORTED);
    CHECK(strstr(check_last_error(), "draft") != NULL);
    zarr_group_free(g);
    zarr_node_kind_t kind = ZARR_NODE_NONE;
    CHECK_OK(zarr_node_kind_at(s, "g", &kind));
    CHECK_EQ(kind, ZARR_NODE_GROUP);
    CHECK_OK(zarr_node_kind_at(s, "g/a", &kind));
    CHECK_EQ(kind, ZARR_NODE_ARRAY);

    /* Consolidated metadata is refused for draft hierarchies. */
    CHECK_STATUS(zarr_consolidate_metadata(s, ""), ZARR_ERR_UNSUPPORTED);
    CHECK(strstr(check_last_error(), "consolidated") != NULL);
    CHECK_STATUS(zarr_group_open_consolidated(s, "", ZARR_MODE_R, &g), ZARR_ERR_UNSUPPORTED);
    CHECK(g == NULL);
    zarr_array_builder_free(b);
    zarr_store_free(s);
}

/* Groups created in the draft layout, and the format reported for every version. */
static void groups_and_detection(void) {
    zarr_store_t *s = memory();
    zarr_group_t *g = NULL;
    int32_t version = 0;
    CHECK_OK(zarr_group_create(s, "x/y", ZARR_MODE_W_MINUS, ZARR_FORMAT_V3_DRAFT, &g));
    CHECK_OK(zarr_group_zarr_format(g, &version));
    CHECK_EQ(version, ZARR_FORMAT_V3_DRAFT);
    zarr_group_free(g);
    CHECK(has(s, "meta/x/y.group.json"));
    CHECK(!has(s, "meta/x.group.json")); /* parents are implicit */
    CHECK_OK(zarr_group_open(s, "x", ZARR_MODE_R, &g));
    CHECK_OK(zarr_group_zarr_format(g, &version));
    CHECK_EQ(version, ZARR_FORMAT_V3_DRAFT);
    zarr_group_free(g);
    zarr_store_free(s);

    s = memory();
    CHECK_OK(zarr_group_create(s, "", ZARR_MODE_W, ZARR_FORMAT_V3_DRAFT_ZARR_PYTHON, &g));
    zarr_group_free(g);
    CHECK(has(s, "meta/root.group.json"));
    zarr_store_free(s);

    /* v2 and v3 groups report 2 and 3. */
    const int32_t formats[2] = {2, 3};
    for (int i = 0; i < 2; i++) {
        s = memory();
        CHECK_OK(zarr_group_create(s, "p", ZARR_MODE_W, formats[i], &g));
        zarr_group_free(g);
        CHECK_OK(zarr_group_open(s, "p", ZARR_MODE_R, &g));
        CHECK_OK(zarr_group_zarr_format(g, &version));
        CHECK_EQ(version, formats[i]);
        zarr_group_free(g);
        zarr_store_free(s);
    }
    CHECK_STATUS(zarr_group_zarr_format(NULL, &version), ZARR_ERR_NULL_ARG);
}

static void errors(void) {
    zarr_store_t *s = memory();
    zarr_group_t *g = NULL;
    zarr_array_t *a = NULL;
    /* A v3 root zarr.json leaves no room for a draft hierarchy. */
    CHECK_OK(zarr_group_create(s, "", ZARR_MODE_W, 3, &g));
    zarr_group_free(g);
    zarr_array_builder_t *b = builder(ZARR_FORMAT_V3_DRAFT);
    CHECK_STATUS(zarr_array_create(b, s, "a", ZARR_MODE_W, &a), ZARR_ERR_EXISTS);
    CHECK(strstr(check_last_error(), "entry point") != NULL);
    CHECK(a == NULL);
    zarr_store_free(s);

    /* Unknown formats on creation. */
    CHECK_STATUS(zarr_array_builder_set_zarr_format(b, 32), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_builder_set_zarr_format(b, 0), ZARR_ERR_INVALID_ARG);
    s = memory();
    CHECK_STATUS(zarr_group_create(s, "g", ZARR_MODE_W, 29, &g), ZARR_ERR_INVALID_ARG);
    CHECK(strstr(check_last_error(), "ZARR_FORMAT_V3_DRAFT") != NULL);

    /* Sharding has no draft form. */
    const uint64_t shard[2] = {4, 6};
    CHECK_OK(zarr_array_builder_set_shard_shape(b, 2, shard));
    CHECK_STATUS(zarr_array_create(b, s, "a", ZARR_MODE_W, &a), ZARR_ERR_INVALID_ARG);
    zarr_array_builder_free(b);

    zarr_store_free(s);

    /* A root zarr.json naming an unknown specification, or an extension that must be
       understood. */
    s = memory();
    const char *future = "{\"zarr_format\": \"https://purl.org/zarr/spec/core/4.0\"}";
    CHECK_OK(zarr_store_set(s, "zarr.json", future, strlen(future)));
    CHECK_STATUS(zarr_array_open(s, "a", ZARR_MODE_R, &a), ZARR_ERR_UNSUPPORTED);
    CHECK(strstr(check_last_error(), "core/4.0") != NULL);
    CHECK_STATUS(zarr_group_open(s, "", ZARR_MODE_R, &g), ZARR_ERR_UNSUPPORTED);
    const char *ext = "{\"zarr_format\": \"https://purl.org/zarr/spec/core/3.0\", "
                      "\"extensions\": [{\"extension\": \"x\", \"must_understand\": true}]}";
    CHECK_OK(zarr_store_set(s, "zarr.json", ext, strlen(ext)));
    CHECK_STATUS(zarr_group_open(s, "", ZARR_MODE_R, &g), ZARR_ERR_UNSUPPORTED);
    CHECK(strstr(check_last_error(), "must be understood") != NULL);

    /* A missing array in a draft hierarchy; a bad document. */
    const char *entry = "{\"zarr_format\": \"https://purl.org/zarr/spec/core/3.0\"}";
    CHECK_OK(zarr_store_set(s, "zarr.json", entry, strlen(entry)));
    CHECK_STATUS(zarr_array_open(s, "nothing", ZARR_MODE_R, &a), ZARR_ERR_NOT_FOUND);
    const char *doc = "{\"shape\": [4], \"data_type\": \"int8\", \"chunk_memory_layout\": \"C\", "
                      "\"chunk_grid\": {\"type\": \"regular\", \"chunk_shape\": [2]}, "
                      "\"fill_value\": 0, \"codecs\": [{\"type\": \"https://example.org/magic/1.0\"}]}";
    CHECK_OK(zarr_store_set(s, "meta/m.array.json", doc, strlen(doc)));
    CHECK_STATUS(zarr_array_open(s, "m", ZARR_MODE_R, &a), ZARR_ERR_CODEC_UNSUPPORTED);
    CHECK(strstr(check_last_error(), "magic") != NULL);
    const char *no_layout = "{\"shape\": [4], \"data_type\": \"int8\", "
                            "\"chunk_grid\": {\"type\": \"regular\", \"chunk_shape\": [2]}, \"fill_value\": 0}";
    CHECK_OK(zarr_store_set(s, "meta/n.array.json", no_layout, strlen(no_layout)));
    CHECK_STATUS(zarr_array_open(s, "n", ZARR_MODE_R, &a), ZARR_ERR_METADATA);
    CHECK(strstr(check_last_error(), "chunk_memory_layout") != NULL);
    CHECK(a == NULL && g == NULL);
    zarr_store_free(s);
}

int main(void) {
    create_and_check(ZARR_FORMAT_V3_DRAFT, "meta/g/a.array.json", "data/g/a/c2/2");
    create_and_check(ZARR_FORMAT_V3_DRAFT_ZARR_PYTHON, "meta/root/g/a.array.json",
                     "data/root/g/a/c2/2");
    groups_and_detection();
    errors();
    return CHECK_DONE();
}
