/*
 * Attributes: the whole document and single keys, unicode and nested values, attributes
 * from the builder, and the string output convention (too-small buffers, `needed`), which
 * zarr_last_error follows too.
 */
#include "check.h"

static zarr_array_t *new_array(zarr_store_t *s, const char *path, const char *attrs_json) {
    const uint64_t shape[1] = {8};
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_UINT8, 1, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    if (attrs_json)
        CHECK_OK(zarr_array_builder_set_attributes_json(b, attrs_json));
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_create(b, s, path, ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    return a;
}

/* Copies the attributes into a static buffer ("" on failure). */
static const char *attrs(const zarr_array_t *a) {
    static char buf[4096];
    buf[0] = '\0';
    CHECK_OK(zarr_array_attrs_get(a, buf, sizeof buf, NULL));
    return buf;
}

static const char *attr(const zarr_array_t *a, const char *key) {
    static char buf[4096];
    buf[0] = '\0';
    CHECK_OK(zarr_array_attr_get(a, key, buf, sizeof buf, NULL));
    return buf;
}

static void test_documents_and_keys(zarr_store_t *s) {
    zarr_array_t *a = new_array(s, "a", NULL);
    CHECK_STR(attrs(a), "{}");
    bool exists = true;
    CHECK_OK(zarr_store_contains(s, "a/.zattrs", &exists));
    CHECK(!exists); /* no attributes, no document */

    CHECK_OK(zarr_array_attrs_set(a, "{\"a\": 1, \"b\": \"x\"}"));
    CHECK_STR(attrs(a), "{\"a\":1,\"b\":\"x\"}");
    CHECK_OK(zarr_store_contains(s, "a/.zattrs", &exists));
    CHECK(exists);
    CHECK_STR(attr(a, "a"), "1");
    CHECK_STR(attr(a, "b"), "\"x\"");

    /* One key set, the others kept, insertion order preserved. */
    CHECK_OK(zarr_array_attr_set(a, "c", "[1, 2, {\"d\": null, \"e\": [true, false]}]"));
    CHECK_STR(attr(a, "c"), "[1,2,{\"d\":null,\"e\":[true,false]}]");
    CHECK_STR(attrs(a), "{\"a\":1,\"b\":\"x\",\"c\":[1,2,{\"d\":null,\"e\":[true,false]}]}");
    CHECK_OK(zarr_array_attr_set(a, "a", "2.5"));
    CHECK_STR(attrs(a), "{\"a\":2.5,\"b\":\"x\",\"c\":[1,2,{\"d\":null,\"e\":[true,false]}]}");

    /* Delete: gone, the rest kept; deleting again is NOT_FOUND. */
    CHECK_OK(zarr_array_attr_delete(a, "b"));
    CHECK_STR(attrs(a), "{\"a\":2.5,\"c\":[1,2,{\"d\":null,\"e\":[true,false]}]}");
    CHECK_STATUS(zarr_array_attr_delete(a, "b"), ZARR_ERR_NOT_FOUND);
    CHECK_ERROR_CONTAINS("b");
    char buf[16] = "untouched";
    CHECK_STATUS(zarr_array_attr_get(a, "b", buf, sizeof buf, NULL), ZARR_ERR_NOT_FOUND);
    CHECK_STR(buf, "untouched");

    /* Replacing the whole document drops the old keys. */
    CHECK_OK(zarr_array_attrs_set(a, "{\"only\": {}}"));
    CHECK_STR(attrs(a), "{\"only\":{}}");
    CHECK_OK(zarr_array_attrs_set(a, "{}"));
    CHECK_STR(attrs(a), "{}");

    /* Unicode keys and values, raw and escaped. */
    CHECK_OK(zarr_array_attr_set(a, "名前", "\"Zürich ☃ 😀\""));
    CHECK_STR(attr(a, "名前"), "\"Zürich ☃ 😀\"");
    CHECK_OK(zarr_array_attr_set(a, "esc", "\"\\u00e9\\ud83d\\ude00 \\\"q\\\" \\n\""));
    CHECK_STR(attr(a, "esc"), "\"é😀 \\\"q\\\" \\n\"");
    CHECK_STR(attrs(a), "{\"名前\":\"Zürich ☃ 😀\",\"esc\":\"é😀 \\\"q\\\" \\n\"}");

    /* Deeply nested values and numbers keep their form. */
    const char *deep = "{\"l1\":{\"l2\":{\"l3\":{\"l4\":[[[1,-2,3.5e-7]],{\"big\":18446744073709551615}]}}}}";
    CHECK_OK(zarr_array_attr_set(a, "deep", deep));
    CHECK_STR(attr(a, "deep"), "{\"l1\":{\"l2\":{\"l3\":{\"l4\":[[[1,-2,3.5e-7]],{\"big\":18446744073709551615}]}}}}");

    /* Another handle on the same array sees the stored attributes. */
    zarr_array_t *r = NULL;
    CHECK_OK(zarr_array_open(s, "a", ZARR_MODE_R, &r));
    CHECK_STR(attr(r, "名前"), "\"Zürich ☃ 😀\"");
    zarr_array_free(r);
    zarr_array_free(a);
}

static void test_builder_attributes(zarr_store_t *s) {
    zarr_array_t *a = new_array(s, "b", "{\"units\": \"m\", \"scale\": 0.5, \"tags\": [\"x\", \"y\"]}");
    CHECK_STR(attrs(a), "{\"units\":\"m\",\"scale\":0.5,\"tags\":[\"x\",\"y\"]}");
    bool exists = false;
    CHECK_OK(zarr_store_contains(s, "b/.zattrs", &exists));
    CHECK(exists);
    zarr_array_free(a);
    zarr_array_t *r = NULL;
    CHECK_OK(zarr_array_open(s, "b", ZARR_MODE_R, &r));
    CHECK_STR(attr(r, "units"), "\"m\"");
    zarr_array_free(r);
    /* Non-objects are refused by the builder. */
    zarr_array_builder_t *b = NULL;
    const uint64_t shape[1] = {1};
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_UINT8, 1, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_STATUS(zarr_array_builder_set_attributes_json(b, "[1]"), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_array_builder_set_attributes_json(b, "{"), ZARR_ERR_INVALID_ARG);
    zarr_array_builder_free(b);
}

/* The (buf, len, needed) convention, on attrs_get, attr_get and the other string outputs. */
static void test_string_outputs(zarr_store_t *s) {
    zarr_array_t *a = new_array(s, "c", "{\"key\": \"value\"}");
    const char *full = "{\"key\":\"value\"}"; /* 15 characters + NUL */
    size_t needed = 0;

    /* Size query: buf NULL, len 0. */
    CHECK_STATUS(zarr_array_attrs_get(a, NULL, 0, &needed), ZARR_ERR_BUFFER_SIZE);
    CHECK_EQ(needed, 16);
    /* Too small: truncated, NUL-terminated, needed still the full size. */
    char buf[32];
    memset(buf, 'Z', sizeof buf);
    needed = 0;
    CHECK_STATUS(zarr_array_attrs_get(a, buf, 5, &needed), ZARR_ERR_BUFFER_SIZE);
    CHECK_EQ(needed, 16);
    CHECK_STR(buf, "{\"ke");
    CHECK(buf[5] == 'Z'); /* nothing written past len */
    memset(buf, 'Z', sizeof buf);
    CHECK_STATUS(zarr_array_attrs_get(a, buf, 1, &needed), ZARR_ERR_BUFFER_SIZE);
    CHECK(buf[0] == '\0' && buf[1] == 'Z');
    /* One byte short: all but the last character. */
    memset(buf, 'Z', sizeof buf);
    CHECK_STATUS(zarr_array_attrs_get(a, buf, 15, &needed), ZARR_ERR_BUFFER_SIZE);
    CHECK_STR(buf, "{\"key\":\"value\"");
    /* Exactly the size, and larger; needed may be NULL. */
    memset(buf, 'Z', sizeof buf);
    CHECK_OK(zarr_array_attrs_get(a, buf, 16, &needed));
    CHECK_STR(buf, full);
    CHECK(buf[16] == 'Z');
    CHECK_OK(zarr_array_attrs_get(a, buf, sizeof buf, NULL));
    CHECK_STR(buf, full);
    /* The failure left a message naming the sizes. */
    CHECK_STATUS(zarr_array_attrs_get(a, buf, 3, NULL), ZARR_ERR_BUFFER_SIZE);
    CHECK_ERROR_CONTAINS("16");

    /* attr_get, dtype_name, fill_value_json and metadata_json follow the same rules. */
    CHECK_STATUS(zarr_array_attr_get(a, "key", buf, 4, &needed), ZARR_ERR_BUFFER_SIZE);
    CHECK_EQ(needed, 8);
    CHECK_STR(buf, "\"va");
    CHECK_STATUS(zarr_array_dtype_name(a, buf, 2, &needed), ZARR_ERR_BUFFER_SIZE);
    CHECK_EQ(needed, 4);
    CHECK_STR(buf, "|");
    /* A v2 integer array made without a fill value has "null" (nothing masked). */
    CHECK_STATUS(zarr_array_fill_value_json(a, NULL, 0, &needed), ZARR_ERR_BUFFER_SIZE);
    CHECK_EQ(needed, 5);
    char meta[4096];
    size_t meta_needed = 0;
    CHECK_STATUS(zarr_array_metadata_json(a, NULL, 0, &meta_needed), ZARR_ERR_BUFFER_SIZE);
    CHECK_OK(zarr_array_metadata_json(a, meta, sizeof meta, &needed));
    CHECK_EQ(needed, meta_needed);
    CHECK_EQ(strlen(meta) + 1, meta_needed);
    CHECK_STATUS(zarr_array_metadata_json(a, buf, 10, NULL), ZARR_ERR_BUFFER_SIZE);
    CHECK_EQ(strlen(buf), 9);
    CHECK(strncmp(buf, meta, 9) == 0);
    zarr_array_free(a);
}

/* zarr_last_error follows the same convention and does not change the message. */
static void test_last_error(zarr_store_t *s) {
    zarr_array_t *a = NULL;
    CHECK_STATUS(zarr_array_open(s, "no/such/array", ZARR_MODE_R, &a), ZARR_ERR_NOT_FOUND);
    size_t needed = 0;
    CHECK_STATUS(zarr_last_error(NULL, 0, &needed), ZARR_ERR_BUFFER_SIZE);
    CHECK(needed > 10);
    char *full = (char *)malloc(needed);
    size_t again = 0;
    CHECK_OK(zarr_last_error(full, needed, &again));
    CHECK_EQ(again, needed);
    CHECK_EQ(strlen(full) + 1, needed);
    CHECK_CONTAINS(full, "no/such/array");
    char small[8];
    memset(small, 'Z', sizeof small);
    CHECK_STATUS(zarr_last_error(small, 6, &again), ZARR_ERR_BUFFER_SIZE);
    CHECK_EQ(again, needed);
    CHECK_EQ(strlen(small), 5);
    CHECK(strncmp(small, full, 5) == 0);
    CHECK(small[6] == 'Z');
    CHECK_STATUS(zarr_last_error(small, 1, NULL), ZARR_ERR_BUFFER_SIZE);
    CHECK(small[0] == '\0');
    /* Reading it repeatedly gives the same text. */
    char second[512];
    CHECK_OK(zarr_last_error(second, sizeof second, NULL));
    CHECK_STR(second, full);
    /* A buffer length without a buffer is a NULL argument. */
    CHECK_STATUS(zarr_last_error(NULL, 10, NULL), ZARR_ERR_NULL_ARG);
    free(full);
}

int main(void) {
    zarr_store_t *mem = NULL;
    CHECK_OK(zarr_store_new_memory(&mem));
    test_documents_and_keys(mem);
    test_builder_attributes(mem);
    test_string_outputs(mem);
    test_last_error(mem);
    zarr_store_free(mem);

    /* The same on disk; .zattrs holds UTF-8 text. */
    char *tmp = check_mkdtemp();
    zarr_store_t *fs = NULL;
    CHECK_OK(zarr_store_open_fs(tmp, ZARR_MODE_R_PLUS, &fs));
    test_documents_and_keys(fs);
    test_builder_attributes(fs);
    char *path = check_join(tmp, "a/.zattrs");
    char *text = check_read_file(path, NULL);
    CHECK(text != NULL);
    if (text) {
        CHECK_CONTAINS(text, "\"名前\": \"Zürich ☃ 😀\"");
        CHECK_CONTAINS(text, "\n    \"deep\": {"); /* 4-space indentation, as zarr-python */
    }
    free(text);
    free(path);
    zarr_store_free(fs);
    check_rmtree(tmp);
    return CHECK_DONE();
}
