/*
 * Hierarchy: groups (open modes, members, nested paths, delete, move, attributes),
 * node kinds, dimension names, consolidated metadata, copies between stores, v1 → v2
 * migration and zip stores.
 */
#include "check.h"

static int sentinel_storage;
#define SENTINEL ((void *)&sentinel_storage)

static zarr_store_t *memory_store(void) {
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_new_memory(&s));
    return s;
}

static const uint64_t SHAPE[2] = {5, 6};
static const uint64_t CHUNKS[2] = {2, 4};
static const uint64_t ORIGIN[2] = {0, 0};

static zarr_array_builder_t *builder(void) {
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT16, 2, SHAPE, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    CHECK_OK(zarr_array_builder_set_chunk_shape(b, 2, CHUNKS));
    return b;
}

/* 30 int16 values: seed * 100 + i. */
static void pattern(int16_t *v, int seed) {
    for (int i = 0; i < 30; i++)
        v[i] = (int16_t)(seed * 100 + i);
}

static void write_pattern(const zarr_array_t *a, int seed) {
    int16_t v[30];
    pattern(v, seed);
    CHECK_OK(zarr_array_write(a, 2, ORIGIN, SHAPE, ZARR_DTYPE_INT16, ZARR_ORDER_C, v, sizeof v));
}

static void expect_pattern(const zarr_array_t *a, int seed) {
    int16_t v[30], got[30];
    pattern(v, seed);
    memset(got, 0, sizeof got);
    CHECK_OK(zarr_array_read(a, 2, ORIGIN, SHAPE, ZARR_DTYPE_INT16, ZARR_ORDER_C, got, sizeof got));
    CHECK_MEM(got, v, sizeof v);
}

static const char *group_path(const zarr_group_t *g) {
    static char buf[256];
    buf[0] = '\0';
    CHECK_OK(zarr_group_path(g, buf, sizeof buf, NULL));
    return buf;
}

static bool members_are(const zarr_group_t *g, zarr_node_kind_t kind, const char *const *want,
                        size_t n) {
    zarr_strings_t *l = NULL;
    CHECK_OK(zarr_group_members(g, kind, &l));
    bool ok = check_strings_equal(l, want, n);
    if (!ok)
        check_print_strings("members", l);
    zarr_strings_free(l);
    return ok;
}

static zarr_node_kind_t kind_at(const zarr_store_t *s, const char *path) {
    zarr_node_kind_t k = -1;
    CHECK_OK(zarr_node_kind_at(s, path, &k));
    return k;
}

static void test_groups(void) {
    zarr_store_t *s = memory_store();
    zarr_group_t *root = NULL, *g = NULL, *again = NULL;

    /* Open modes on a missing root: r and r+ fail, a creates. */
    CHECK_STATUS(zarr_group_open(s, "", ZARR_MODE_R, (root = SENTINEL, &root)), ZARR_ERR_NOT_FOUND);
    CHECK(root == NULL);
    CHECK_STATUS(zarr_group_open(s, "/", ZARR_MODE_R_PLUS, &root), ZARR_ERR_NOT_FOUND);
    CHECK_OK(zarr_group_create(s, "/", ZARR_MODE_A, 2, &root));
    CHECK_STR(group_path(root), "");
    CHECK_EQ(kind_at(s, ""), ZARR_NODE_GROUP);
    bool exists = false;
    CHECK_OK(zarr_store_contains(s, ".zgroup", &exists));
    CHECK(exists);
    CHECK_STATUS(zarr_group_open(s, "", ZARR_MODE_W_MINUS, (again = SENTINEL, &again)), ZARR_ERR_EXISTS);
    CHECK(again == NULL);

    /* Nested groups below a group; parents are created. */
    CHECK_OK(zarr_group_open_group(root, "a/b", ZARR_MODE_A, &g));
    CHECK_STR(group_path(g), "a/b");
    CHECK_EQ(kind_at(s, "a"), ZARR_NODE_GROUP);
    CHECK_EQ(kind_at(s, "a/b"), ZARR_NODE_GROUP);
    CHECK_EQ(kind_at(s, "a/b/c"), ZARR_NODE_NONE);
    CHECK_OK(zarr_group_open(s, "//a//b/", ZARR_MODE_R, &again)); /* normalised */
    CHECK_STR(group_path(again), "a/b");
    zarr_group_free(again);

    /* Arrays below groups. */
    zarr_array_builder_t *b = builder();
    zarr_array_t *x = NULL;
    CHECK_OK(zarr_group_create_array(g, b, "x", ZARR_MODE_W_MINUS, &x));
    write_pattern(x, 1);
    zarr_array_free(x);
    CHECK_STATUS(zarr_group_create_array(g, b, "x", ZARR_MODE_W_MINUS, (x = SENTINEL, &x)), ZARR_ERR_EXISTS);
    CHECK(x == NULL);
    CHECK_OK(zarr_group_open_array(g, "x", ZARR_MODE_R, &x));
    expect_pattern(x, 1);
    zarr_array_free(x);
    CHECK_OK(zarr_group_create_array(root, b, "top", ZARR_MODE_A, &x));
    zarr_array_free(x);
    CHECK_OK(zarr_group_open_array(root, "a/b/x", ZARR_MODE_R_PLUS, &x)); /* nested path */
    expect_pattern(x, 1);
    zarr_array_free(x);
    CHECK_EQ(kind_at(s, "a/b/x"), ZARR_NODE_ARRAY);

    /* Kinds and members. */
    zarr_node_kind_t k = -1;
    CHECK_OK(zarr_group_contains(root, "a/b/x", &k));
    CHECK_EQ(k, ZARR_NODE_ARRAY);
    CHECK_OK(zarr_group_contains(root, "a", &k));
    CHECK_EQ(k, ZARR_NODE_GROUP);
    CHECK_OK(zarr_group_contains(g, "nothing", &k));
    CHECK_EQ(k, ZARR_NODE_NONE);
    const char *all[] = {"a", "top"}, *arrays[] = {"top"}, *groups[] = {"a"};
    CHECK(members_are(root, ZARR_NODE_NONE, all, 2));
    CHECK(members_are(root, ZARR_NODE_ARRAY, arrays, 1));
    CHECK(members_are(root, ZARR_NODE_GROUP, groups, 1));
    const char *bx[] = {"x"};
    CHECK(members_are(g, ZARR_NODE_NONE, bx, 1));
    /* Keys that are not nodes are not members. */
    CHECK_OK(zarr_store_set(s, "stray/file", "1", 1));
    CHECK(members_are(root, ZARR_NODE_NONE, all, 2));
    zarr_strings_t *l = NULL;
    CHECK_STATUS(zarr_group_members(root, 99, (l = SENTINEL, &l)), ZARR_ERR_INVALID_ARG);
    CHECK(l == NULL);
    CHECK_STATUS(zarr_group_members(root, -1, &l), ZARR_ERR_INVALID_ARG);

    /* Node types: a group is not an array and the reverse. */
    CHECK_STATUS(zarr_group_open_array(root, "a", ZARR_MODE_R, (x = SENTINEL, &x)), ZARR_ERR_NODE_TYPE);
    CHECK(x == NULL);
    CHECK_STATUS(zarr_group_open_group(root, "top", ZARR_MODE_R, (again = SENTINEL, &again)), ZARR_ERR_NODE_TYPE);
    CHECK(again == NULL);
    CHECK_STATUS(zarr_group_open(s, "top", ZARR_MODE_A, &again), ZARR_ERR_NODE_TYPE);
    CHECK_STATUS(zarr_array_open(s, "a", ZARR_MODE_R, &x), ZARR_ERR_NODE_TYPE);
    CHECK_STATUS(zarr_group_create_array(root, b, "a", ZARR_MODE_W_MINUS, &x), ZARR_ERR_NODE_TYPE);
    /* Member paths must stay below the group. */
    CHECK_STATUS(zarr_group_open_group(g, "../escape", ZARR_MODE_A, &again), ZARR_ERR_INVALID_KEY);
    CHECK_STATUS(zarr_group_contains(g, "..", &k), ZARR_ERR_INVALID_KEY);
    CHECK_STATUS(zarr_group_open_group(g, "", ZARR_MODE_A, &again), ZARR_ERR_INVALID_ARG);
    /* Mode W replaces an array by a group. */
    CHECK_OK(zarr_group_open_group(root, "top", ZARR_MODE_W, &again));
    CHECK_EQ(kind_at(s, "top"), ZARR_NODE_GROUP);
    zarr_group_free(again);

    /* Group attributes. */
    char text[256];
    size_t needed = 0;
    CHECK_OK(zarr_group_attrs_get(g, text, sizeof text, &needed));
    CHECK_STR(text, "{}");
    CHECK_EQ(needed, 3);
    CHECK_OK(zarr_group_attrs_set(g, "{\"title\": \"Zürich\", \"n\": 3}"));
    CHECK_OK(zarr_group_attr_set(g, "list", "[1, [2]]"));
    CHECK_OK(zarr_group_attrs_get(g, text, sizeof text, NULL));
    CHECK_STR(text, "{\"title\":\"Zürich\",\"n\":3,\"list\":[1,[2]]}");
    CHECK_OK(zarr_group_attr_get(g, "list", text, sizeof text, NULL));
    CHECK_STR(text, "[1,[2]]");
    CHECK_STATUS(zarr_group_attr_get(g, "title", text, 4, &needed), ZARR_ERR_BUFFER_SIZE);
    CHECK_EQ(needed, strlen("\"Zürich\"") + 1);
    CHECK_OK(zarr_group_attr_delete(g, "n"));
    CHECK_STATUS(zarr_group_attr_delete(g, "n"), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_group_attr_get(g, "n", text, sizeof text, NULL), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_group_attrs_set(g, "[1]"), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_group_attr_set(g, "k", "{"), ZARR_ERR_INVALID_ARG);
    CHECK_OK(zarr_store_contains(s, "a/b/.zattrs", &exists));
    CHECK(exists);

    /* A read-only group: reads work, every write is refused. */
    zarr_group_t *ro = NULL;
    CHECK_OK(zarr_group_open(s, "a", ZARR_MODE_R, &ro));
    zarr_group_t *child = NULL;
    CHECK_OK(zarr_group_open_group(ro, "b", ZARR_MODE_R, &child));
    CHECK_OK(zarr_group_attr_get(child, "title", text, sizeof text, NULL));
    CHECK_STR(text, "\"Zürich\"");
    CHECK_STATUS(zarr_group_attr_set(child, "k", "1"), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_group_attrs_set(child, "{}"), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_group_attr_delete(child, "title"), ZARR_ERR_READ_ONLY);
    zarr_group_free(child);
    CHECK_STATUS(zarr_group_open_group(ro, "b", ZARR_MODE_A, &child), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_group_open_array(ro, "b/x", ZARR_MODE_R_PLUS, &x), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_group_create_array(ro, b, "new", ZARR_MODE_W, &x), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_group_delete(ro, "b"), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_group_move(ro, "b", "c"), ZARR_ERR_READ_ONLY);
    CHECK_OK(zarr_group_open_array(ro, "b/x", ZARR_MODE_R, &x));
    expect_pattern(x, 1);
    CHECK_STATUS(zarr_array_write(x, 2, ORIGIN, SHAPE, ZARR_DTYPE_INT16, ZARR_ORDER_C, text, 60), ZARR_ERR_READ_ONLY);
    zarr_array_free(x);
    zarr_group_free(ro);
    CHECK_EQ(kind_at(s, "a/b"), ZARR_NODE_GROUP);

    /* Move: data, attributes and sub-nodes go along; groups above the target appear. */
    CHECK_OK(zarr_group_move(root, "a/b", "moved/deep/b2"));
    CHECK_EQ(kind_at(s, "a/b"), ZARR_NODE_NONE);
    CHECK_EQ(kind_at(s, "a/b/x"), ZARR_NODE_NONE);
    CHECK_EQ(kind_at(s, "moved/deep"), ZARR_NODE_GROUP);
    CHECK_EQ(kind_at(s, "moved/deep/b2"), ZARR_NODE_GROUP);
    CHECK_OK(zarr_array_open(s, "moved/deep/b2/x", ZARR_MODE_R, &x));
    expect_pattern(x, 1);
    zarr_array_free(x);
    zarr_group_t *moved = NULL;
    CHECK_OK(zarr_group_open(s, "moved/deep/b2", ZARR_MODE_R, &moved));
    CHECK_OK(zarr_group_attr_get(moved, "title", text, sizeof text, NULL));
    CHECK_STR(text, "\"Zürich\"");
    zarr_group_free(moved);
    CHECK_OK(zarr_store_list(s, "a/", &l));
    bool none_left = true;
    for (size_t i = 0; i < zarr_strings_count(l); i++)
        none_left &= strncmp(zarr_strings_get(l, i), "a/b/", 4) != 0;
    CHECK(none_left);
    zarr_strings_free(l);
    /* ... but not onto something, not into itself, not from nothing. */
    CHECK_STATUS(zarr_group_move(root, "moved", "a"), ZARR_ERR_EXISTS);
    CHECK_STATUS(zarr_group_move(root, "moved", "moved/inner"), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_group_move(root, "ghost", "elsewhere"), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_group_move(root, "moved", "../out"), ZARR_ERR_INVALID_KEY);
    CHECK_EQ(kind_at(s, "moved/deep/b2/x"), ZARR_NODE_ARRAY);

    /* Delete: the member and everything below it. */
    CHECK_OK(zarr_group_delete(root, "moved/deep"));
    CHECK_EQ(kind_at(s, "moved/deep"), ZARR_NODE_NONE);
    CHECK_EQ(kind_at(s, "moved"), ZARR_NODE_GROUP);
    CHECK_OK(zarr_store_list(s, "moved/", &l));
    const char *left[] = {"moved/.zgroup"};
    CHECK(check_strings_equal(l, left, 1));
    zarr_strings_free(l);
    CHECK_STATUS(zarr_group_delete(root, "moved/deep"), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_group_delete(root, ""), ZARR_ERR_INVALID_ARG);

    /* Handles outlive their store and parent group, freed in any order. */
    zarr_group_t *kept = NULL;
    CHECK_OK(zarr_group_open_group(root, "moved", ZARR_MODE_R_PLUS, &kept));
    zarr_group_free(root);
    zarr_store_free(s);
    CHECK_OK(zarr_group_create_array(kept, b, "late", ZARR_MODE_W, &x));
    write_pattern(x, 7);
    zarr_group_free(kept);
    expect_pattern(x, 7);
    zarr_array_free(x);
    zarr_array_builder_free(b);
    zarr_group_free(NULL);
    zarr_group_free(g);
}

static void test_dimension_names(void) {
    zarr_store_t *s = memory_store();
    zarr_array_builder_t *b = builder();
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_create(b, s, "d", ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    zarr_strings_t *names = NULL;
    CHECK_STATUS(zarr_array_dimension_names(a, (names = SENTINEL, &names)), ZARR_ERR_NOT_FOUND);
    CHECK(names == NULL);
    const char *yx[2] = {"y", "x (ß)"};
    CHECK_OK(zarr_array_set_dimension_names(a, 2, yx));
    CHECK_OK(zarr_array_dimension_names(a, &names));
    CHECK(check_strings_equal(names, yx, 2));
    zarr_strings_free(names);
    char text[128];
    CHECK_OK(zarr_array_attr_get(a, "_ARRAY_DIMENSIONS", text, sizeof text, NULL));
    CHECK_STR(text, "[\"y\",\"x (ß)\"]");
    /* One name per dimension. */
    CHECK_STATUS(zarr_array_set_dimension_names(a, 1, yx), ZARR_ERR_RANK_MISMATCH);
    CHECK_STATUS(zarr_array_set_dimension_names(a, 2, NULL), ZARR_ERR_NULL_ARG);
    /* v2 keeps them in _ARRAY_DIMENSIONS, where every dimension has a name. */
    const char *with_null[2] = {"y", NULL};
    CHECK_STATUS(zarr_array_set_dimension_names(a, 2, with_null), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("_ARRAY_DIMENSIONS");
    CHECK_STATUS(zarr_array_dimension_names(a, NULL), ZARR_ERR_NULL_ARG);
    /* A malformed attribute is a metadata error. */
    CHECK_OK(zarr_array_attr_set(a, "_ARRAY_DIMENSIONS", "[\"only one\"]"));
    CHECK_STATUS(zarr_array_dimension_names(a, &names), ZARR_ERR_METADATA);
    CHECK_ERROR_CONTAINS("_ARRAY_DIMENSIONS");
    CHECK_OK(zarr_array_attr_set(a, "_ARRAY_DIMENSIONS", "[1, 2]"));
    CHECK_STATUS(zarr_array_dimension_names(a, &names), ZARR_ERR_METADATA);
    zarr_array_free(a);
    zarr_store_free(s);
}

static void test_consolidated(void) {
    zarr_store_t *s = memory_store();
    zarr_group_t *root = NULL;
    CHECK_OK(zarr_group_create(s, "", ZARR_MODE_W, 2, &root));
    CHECK_OK(zarr_group_attr_set(root, "title", "\"c\""));
    zarr_array_builder_t *b = builder();
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_group_create_array(root, b, "g/arr", ZARR_MODE_W, &a));
    write_pattern(a, 3);
    zarr_array_free(a);
    zarr_group_t *cg = NULL;
    CHECK_STATUS(zarr_group_open_consolidated(s, "", ZARR_MODE_R, (cg = SENTINEL, &cg)), ZARR_ERR_NOT_FOUND);
    CHECK(cg == NULL);
    CHECK_OK(zarr_consolidate_metadata(s, ""));
    char doc[4096];
    size_t len = 0;
    CHECK_OK(zarr_store_get(s, ".zmetadata", doc, sizeof doc - 1, &len));
    doc[len] = '\0';
    CHECK_CONTAINS(doc, "\"zarr_consolidated_format\": 1");
    CHECK_CONTAINS(doc, "\"g/arr/.zarray\"");
    CHECK_CONTAINS(doc, "\"g/.zgroup\"");
    CHECK_CONTAINS(doc, "\".zattrs\"");

    /* Opened consolidated: the same tree and data. */
    CHECK_OK(zarr_group_open_consolidated(s, "", ZARR_MODE_R, &cg));
    const char *members[] = {"g"};
    CHECK(members_are(cg, ZARR_NODE_NONE, members, 1));
    char text[64];
    CHECK_OK(zarr_group_attr_get(cg, "title", text, sizeof text, NULL));
    CHECK_STR(text, "\"c\"");
    CHECK_OK(zarr_group_open_array(cg, "g/arr", ZARR_MODE_R, &a));
    expect_pattern(a, 3);
    zarr_array_free(a);
    zarr_group_free(cg);

    /* A node added after consolidation is still found (read from the store). */
    CHECK_OK(zarr_group_create_array(root, b, "g/later", ZARR_MODE_W, &a));
    write_pattern(a, 4);
    zarr_array_free(a);
    CHECK_OK(zarr_group_open_consolidated(s, "", ZARR_MODE_R, &cg));
    CHECK_OK(zarr_group_open_array(cg, "g/later", ZARR_MODE_R, &a));
    expect_pattern(a, 4);
    zarr_array_free(a);
    zarr_group_free(cg);

    /* A sub-group can be consolidated on its own; its keys are relative to it. */
    CHECK_OK(zarr_consolidate_metadata(s, "g"));
    CHECK_OK(zarr_store_get(s, "g/.zmetadata", doc, sizeof doc - 1, &len));
    doc[len] = '\0';
    CHECK_CONTAINS(doc, "\"arr/.zarray\"");
    CHECK(strstr(doc, "\"g/arr/.zarray\"") == NULL);
    /* Malformed .zmetadata. */
    CHECK_OK(zarr_store_set(s, ".zmetadata", "{\"metadata\": 5}", 15));
    CHECK_STATUS(zarr_group_open_consolidated(s, "", ZARR_MODE_R, &cg), ZARR_ERR_METADATA);
    CHECK_ERROR_CONTAINS(".zmetadata");
    CHECK_STATUS(zarr_consolidate_metadata(s, "../x"), ZARR_ERR_INVALID_KEY);
    zarr_array_builder_free(b);
    zarr_group_free(root);
    zarr_store_free(s);
}

static void test_copy(void) {
    zarr_store_t *src = memory_store();
    zarr_group_t *root = NULL;
    CHECK_OK(zarr_group_open(src, "tree", ZARR_MODE_W, &root));
    CHECK_OK(zarr_group_attr_set(root, "origin", "\"src\""));
    zarr_array_builder_t *b = builder();
    CHECK_OK(zarr_array_builder_set_compressor_json(b, "{\"id\": \"zlib\", \"level\": 1}"));
    CHECK_OK(zarr_array_builder_set_attributes_json(b, "{\"units\": \"K\"}"));
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_group_create_array(root, b, "sub/arr", ZARR_MODE_W, &a));
    write_pattern(a, 5);
    zarr_array_free(a);
    zarr_array_builder_free(b);

    /* To a filesystem store, chunks as stored. */
    char *tmp = check_mkdtemp();
    zarr_store_t *dst = NULL;
    CHECK_OK(zarr_store_open_fs(tmp, ZARR_MODE_R_PLUS, &dst));
    CHECK_OK(zarr_copy(src, "tree", dst, "copy", NULL, ZARR_MODE_W_MINUS));
    CHECK_OK(zarr_array_open(dst, "copy/sub/arr", ZARR_MODE_R, &a));
    expect_pattern(a, 5);
    char text[2048];
    CHECK_OK(zarr_array_attr_get(a, "units", text, sizeof text, NULL));
    CHECK_STR(text, "\"K\"");
    zarr_array_free(a);
    zarr_group_t *g = NULL;
    CHECK_OK(zarr_group_open(dst, "copy", ZARR_MODE_R, &g));
    CHECK_OK(zarr_group_attr_get(g, "origin", text, sizeof text, NULL));
    CHECK_STR(text, "\"src\"");
    zarr_group_free(g);
    unsigned char raw1[512], raw2[512];
    size_t n1 = 0, n2 = 0;
    CHECK_OK(zarr_store_get(src, "tree/sub/arr/1.1", raw1, sizeof raw1, &n1));
    CHECK_OK(zarr_store_get(dst, "copy/sub/arr/1.1", raw2, sizeof raw2, &n2));
    CHECK(n1 == n2 && memcmp(raw1, raw2, n1) == 0);
    /* W- onto an existing node fails; W replaces. */
    CHECK_STATUS(zarr_copy(src, "tree", dst, "copy", NULL, ZARR_MODE_W_MINUS), ZARR_ERR_EXISTS);
    /* Re-encoded with another compressor: new metadata, same data. */
    CHECK_OK(zarr_copy(src, "tree/sub/arr", dst, "copy/sub/arr", "{\"id\": \"zstd\", \"level\": 3}", ZARR_MODE_W));
    CHECK_OK(zarr_array_open(dst, "copy/sub/arr", ZARR_MODE_R, &a));
    expect_pattern(a, 5);
    CHECK_OK(zarr_array_metadata_json(a, text, sizeof text, NULL));
    CHECK_CONTAINS(text, "\"id\": \"zstd\"");
    zarr_array_free(a);
    CHECK_OK(zarr_copy(src, "tree/sub/arr", dst, "plain", "null", ZARR_MODE_W));
    CHECK_OK(zarr_store_get(dst, "plain/1.1", raw2, sizeof raw2, &n2));
    CHECK_EQ(n2, 2 * 4 * 2); /* an uncompressed chunk of 2 x 4 int16 */
    /* Mode A onto an existing array: the same layout takes the chunks; another layout is
     * refused and left as it was. */
    CHECK_OK(zarr_copy(src, "tree/sub/arr", dst, "again", NULL, ZARR_MODE_W));
    CHECK_OK(zarr_copy(src, "tree/sub/arr", dst, "again", NULL, ZARR_MODE_A));
    CHECK_OK(zarr_array_open(dst, "again", ZARR_MODE_R, &a));
    expect_pattern(a, 5);
    zarr_array_free(a);
    zarr_array_builder_t *other = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT16, 2, SHAPE, &other));
    CHECK_OK(zarr_array_builder_set_zarr_format(other, 2));
    const uint64_t other_chunks[2] = {5, 6};
    CHECK_OK(zarr_array_builder_set_chunk_shape(other, 2, other_chunks));
    CHECK_OK(zarr_array_create(other, dst, "layout", ZARR_MODE_W, &a));
    zarr_array_builder_free(other);
    write_pattern(a, 6);
    CHECK_STATUS(zarr_copy(src, "tree/sub/arr", dst, "layout", NULL, ZARR_MODE_A), ZARR_ERR_EXISTS);
    CHECK_ERROR_CONTAINS("layout");
    expect_pattern(a, 6);
    zarr_array_free(a);
    /* Not into itself (that would never end). */
    CHECK_STATUS(zarr_copy(src, "tree", src, "tree/sub/copy", NULL, ZARR_MODE_W), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("itself");
    CHECK_STATUS(zarr_copy(src, "tree", src, "tree", NULL, ZARR_MODE_A), ZARR_ERR_INVALID_ARG);
    CHECK_EQ(kind_at(src, "tree/sub/copy"), ZARR_NODE_NONE);
    /* Bad arguments. */
    CHECK_STATUS(zarr_copy(src, "nothing", dst, "x", NULL, ZARR_MODE_W), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_copy(src, "tree", dst, "x", NULL, ZARR_MODE_R), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_copy(src, "tree", dst, "x", NULL, 99), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_copy(src, "tree", dst, "x", "{", ZARR_MODE_W), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_copy(src, "tree", dst, "../x", NULL, ZARR_MODE_W), ZARR_ERR_INVALID_KEY);
    CHECK_STATUS(zarr_copy(NULL, "tree", dst, "x", NULL, ZARR_MODE_W), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_copy(src, "tree", NULL, "x", NULL, ZARR_MODE_W), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_copy(src, NULL, dst, "x", NULL, ZARR_MODE_W), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_copy(src, "tree", dst, NULL, NULL, ZARR_MODE_W), ZARR_ERR_NULL_ARG);
    CHECK(!check_path_exists(tmp, "x"));
    zarr_group_free(root);
    zarr_store_free(dst);
    zarr_store_free(src);
    check_rmtree(tmp);
}

/* Copies whose target overlaps the source through differently rooted directory stores are
 * refused before anything is erased; a copy beside the source still works. */
static void test_copy_overlap(void) {
    char *top = check_mkdtemp();
    char *sub = check_join(top, "sub");
    zarr_store_t *outer = NULL, *inner = NULL, *deeper = NULL;
    CHECK_OK(zarr_store_open_fs(top, ZARR_MODE_R_PLUS, &outer));
    zarr_array_builder_t *b = builder();
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_create(b, outer, "sub/arr", ZARR_MODE_W, &a));
    zarr_array_builder_free(b);
    write_pattern(a, 7);
    unsigned char chunk[512], after[512];
    size_t n = 0, n_after = 0;
    CHECK_OK(zarr_store_get(outer, "sub/arr/1.1", chunk, sizeof chunk, &n));
    CHECK_OK(zarr_store_open_fs(sub, ZARR_MODE_R_PLUS, &inner));
    char *arr_dir = check_join(sub, "arr");
    CHECK_OK(zarr_store_open_fs(arr_dir, ZARR_MODE_R_PLUS, &deeper));
    /* The source store is rooted at top/sub; the target top + "sub" is the same place. */
    CHECK_STATUS(zarr_copy(inner, "", outer, "sub", NULL, ZARR_MODE_W), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("overlap");
    CHECK_ERROR_CONTAINS("/sub");
    CHECK_STATUS(zarr_copy(inner, "", outer, "sub", NULL, ZARR_MODE_A), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_copy(inner, "arr", outer, "sub/arr", NULL, ZARR_MODE_W), ZARR_ERR_INVALID_ARG);
    /* The target store is rooted inside the source node, or holds it. */
    CHECK_STATUS(zarr_copy(outer, "sub", deeper, "", NULL, ZARR_MODE_W), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_copy(deeper, "", outer, "sub", NULL, ZARR_MODE_W), ZARR_ERR_INVALID_ARG);
    /* The source is intact, byte for byte. */
    CHECK_OK(zarr_store_get(outer, "sub/arr/1.1", after, sizeof after, &n_after));
    CHECK(n == n_after && memcmp(chunk, after, n) == 0);
    expect_pattern(a, 7);
    /* Beside the source: fine. */
    CHECK_OK(zarr_copy(inner, "", outer, "sub2", NULL, ZARR_MODE_W));
    zarr_array_t *copied = NULL;
    CHECK_OK(zarr_array_open(outer, "sub2/arr", ZARR_MODE_R, &copied));
    expect_pattern(copied, 7);
    zarr_array_free(copied);
    zarr_array_free(a);
    zarr_store_free(deeper);
    zarr_store_free(inner);
    zarr_store_free(outer);
    free(arr_dir);
    free(sub);
    check_rmtree(top);
}

static void test_migrate(void) {
    zarr_store_t *s = memory_store();
    /* A v1 array: "meta", "attrs" and v2-style chunk keys; raw chunks. */
    const char *meta = "{\"zarr_format\": 1, \"shape\": [5], \"chunks\": [2], \"dtype\": \"<i4\","
                       " \"compression\": \"none\", \"compression_opts\": null,"
                       " \"fill_value\": -1, \"order\": \"C\"}";
    CHECK_OK(zarr_store_set(s, "old/meta", meta, strlen(meta)));
    CHECK_OK(zarr_store_set(s, "old/attrs", "{\"v\": 1}", 8));
    const unsigned char c0[8] = {1, 0, 0, 0, 2, 0, 0, 0}; /* little-endian 1, 2 */
    CHECK_OK(zarr_store_set(s, "old/0", c0, sizeof c0));
    CHECK_EQ(kind_at(s, "old"), ZARR_NODE_ARRAY);
    CHECK_OK(zarr_migrate_1to2(s, "old"));
    bool exists = true;
    CHECK_OK(zarr_store_contains(s, "old/meta", &exists));
    CHECK(!exists);
    CHECK_OK(zarr_store_contains(s, "old/attrs", &exists));
    CHECK(!exists);
    CHECK_OK(zarr_store_contains(s, "old/.zarray", &exists));
    CHECK(exists);
    zarr_array_t *a = NULL;
    CHECK_OK(zarr_array_open(s, "old", ZARR_MODE_R, &a));
    int32_t v[5];
    const uint64_t start[1] = {0}, count[1] = {5};
    CHECK_OK(zarr_array_read(a, 1, start, count, ZARR_DTYPE_INT32, ZARR_ORDER_C, v, sizeof v));
    CHECK(v[0] == 1 && v[1] == 2 && v[2] == -1 && v[4] == -1);
    char text[64];
    CHECK_OK(zarr_array_attr_get(a, "v", text, sizeof text, NULL));
    CHECK_STR(text, "1");
    char v2doc[1024];
    CHECK_OK(zarr_array_metadata_json(a, v2doc, sizeof v2doc, NULL));
    CHECK_CONTAINS(v2doc, "\"zarr_format\": 2");
    CHECK_CONTAINS(v2doc, "\"compressor\": null");
    CHECK_CONTAINS(v2doc, "\"fill_value\": -1");
    zarr_array_free(a);
    /* Nothing to migrate, a bad path, a malformed v1 document. */
    CHECK_STATUS(zarr_migrate_1to2(s, "old"), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_migrate_1to2(s, "../x"), ZARR_ERR_INVALID_KEY);
    CHECK_OK(zarr_store_set(s, "bad/meta", "{\"zarr_format\": 2}", 18));
    CHECK_STATUS(zarr_migrate_1to2(s, "bad"), ZARR_ERR_METADATA);
    CHECK_ERROR_CONTAINS("zarr_format");
    CHECK_OK(zarr_store_contains(s, "bad/.zarray", &exists));
    CHECK(!exists);
    CHECK_STATUS(zarr_migrate_1to2(NULL, "old"), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_migrate_1to2(s, NULL), ZARR_ERR_NULL_ARG);
    zarr_store_free(s);
}

static void test_zip(void) {
    char *tmp = check_mkdtemp();
    char *path = check_join(tmp, "data.zip");
    zarr_store_t *z = NULL;
    CHECK_STATUS(zarr_store_open_zip(path, ZARR_MODE_R, false, (z = SENTINEL, &z)), ZARR_ERR_NOT_FOUND);
    CHECK(z == NULL);
    CHECK_STATUS(zarr_store_open_zip(path, 99, false, &z), ZARR_ERR_INVALID_ARG);

    /* Written whole chunks at a time, then closed. */
    for (int deflate = 0; deflate < 2; deflate++) {
        CHECK_OK(zarr_store_open_zip(path, ZARR_MODE_W, deflate == 1, &z));
        zarr_array_builder_t *b = builder();
        zarr_array_t *a = NULL;
        CHECK_OK(zarr_array_create(b, z, "g/arr", ZARR_MODE_W_MINUS, &a));
        zarr_array_builder_free(b);
        write_pattern(a, 8 + deflate);
        CHECK_OK(zarr_store_set(z, "extra", "hello", 5));
        CHECK_STATUS(zarr_store_set(z, "extra", "again", 5), ZARR_ERR_EXISTS);
        CHECK_STATUS(zarr_store_erase(z, "extra"), ZARR_ERR_UNSUPPORTED);
        CHECK_OK(zarr_store_close(z));
        /* After closing, the same handle reads. */
        expect_pattern(a, 8 + deflate);
        zarr_array_free(a);
        zarr_store_free(z);

        CHECK_OK(zarr_store_open_zip(path, ZARR_MODE_R, false, &z));
        CHECK_OK(zarr_array_open(z, "g/arr", ZARR_MODE_R, &a));
        expect_pattern(a, 8 + deflate);
        zarr_array_free(a);
        char buf[8];
        size_t n = 0;
        CHECK_OK(zarr_store_get(z, "extra", buf, sizeof buf, &n));
        CHECK(n == 5 && memcmp(buf, "hello", 5) == 0);
        zarr_strings_t *l = NULL;
        CHECK_OK(zarr_store_list(z, "g/arr/", &l));
        CHECK(check_strings_contain(l, "g/arr/.zarray") && check_strings_contain(l, "g/arr/2.1"));
        CHECK_EQ(zarr_strings_count(l), 7); /* .zarray and 3 x 2 chunks */
        zarr_strings_free(l);
        CHECK_STATUS(zarr_store_set(z, "new", "x", 1), ZARR_ERR_READ_ONLY);
        CHECK_STATUS(zarr_array_open(z, "g/arr", ZARR_MODE_R_PLUS, &a), ZARR_ERR_READ_ONLY);
        CHECK_OK(zarr_store_close(z)); /* nothing pending */
        zarr_store_free(z);
    }
    /* A v3 group with attributes goes into a zip in one document write (each key is
     * written once there), and so do its parent groups. */
    char *groups_zip = check_join(tmp, "groups.zip");
    CHECK_OK(zarr_store_open_zip(groups_zip, ZARR_MODE_W, false, &z));
    zarr_group_t *g = NULL;
    CHECK_OK(zarr_group_create_with_attrs(z, "top/sub", ZARR_MODE_W_MINUS, 3,
                                          "{\"title\": \"run 7\", \"levels\": [1, 2]}", &g));
    zarr_group_free(g);
    CHECK_OK(zarr_group_create_with_attrs(z, "v2", ZARR_MODE_W_MINUS, 2, "{\"n\": 1}", &g));
    zarr_group_free(g);
    CHECK_OK(zarr_store_close(z));
    zarr_store_free(z);
    CHECK_OK(zarr_store_open_zip(groups_zip, ZARR_MODE_R, false, &z));
    CHECK_OK(zarr_group_open(z, "top/sub", ZARR_MODE_R, &g));
    char attrs[128];
    CHECK_OK(zarr_group_attrs_get(g, attrs, sizeof attrs, NULL));
    CHECK_STR(attrs, "{\"title\":\"run 7\",\"levels\":[1,2]}");
    zarr_group_free(g);
    CHECK_OK(zarr_group_open(z, "v2", ZARR_MODE_R, &g));
    CHECK_OK(zarr_group_attrs_get(g, attrs, sizeof attrs, NULL));
    CHECK_STR(attrs, "{\"n\":1}");
    zarr_group_free(g);
    zarr_store_free(z);
    free(groups_zip);

    /* Appending entries to an existing zip; existing keys cannot be rewritten. */
    CHECK_OK(zarr_store_open_zip(path, ZARR_MODE_A, false, &z));
    CHECK_OK(zarr_store_set(z, "more", "m", 1));
    CHECK_STATUS(zarr_store_set(z, "extra", "x", 1), ZARR_ERR_EXISTS);
    CHECK_OK(zarr_store_close(z));
    zarr_store_free(z);
    CHECK_OK(zarr_store_open_zip(path, ZARR_MODE_R_PLUS, false, &z));
    char buf[8];
    size_t n = 0;
    CHECK_OK(zarr_store_get(z, "more", buf, sizeof buf, &n));
    CHECK(n == 1 && buf[0] == 'm');
    CHECK_OK(zarr_store_get(z, "extra", buf, sizeof buf, &n));
    CHECK_EQ(n, 5);
    zarr_store_free(z); /* freeing closes too */
    CHECK_STATUS(zarr_store_open_zip(path, ZARR_MODE_W_MINUS, false, (z = SENTINEL, &z)), ZARR_ERR_EXISTS);
    CHECK(z == NULL);
    /* Not a zip file. */
    char *junk = check_join(tmp, "junk.zip");
    FILE *f = fopen(junk, "wb");
    if (f) {
        fputs("this is not a zip archive", f);
        fclose(f);
    }
    CHECK_STATUS(zarr_store_open_zip(junk, ZARR_MODE_R, false, &z), ZARR_ERR_STORAGE_IO);
    CHECK_ERROR_CONTAINS("junk.zip");
    /* Close on other stores is a no-op; arguments. */
    zarr_store_t *m = memory_store();
    CHECK_OK(zarr_store_close(m));
    zarr_store_free(m);
    CHECK_STATUS(zarr_store_close(NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_store_open_zip(NULL, ZARR_MODE_R, false, &z), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_store_open_zip(path, ZARR_MODE_R, false, NULL), ZARR_ERR_NULL_ARG);
    free(junk);
    free(path);
    check_rmtree(tmp);
}

/* Groups given attributes as they are opened or created. */
static void test_group_attributes_at_creation(void) {
    zarr_store_t *s = memory_store();
    zarr_group_t *g = NULL;
    char attrs[64];
    /* NULL attributes: as zarr_group_create. */
    CHECK_OK(zarr_group_create_with_attrs(s, "a", ZARR_MODE_W, 3, NULL, &g));
    CHECK_OK(zarr_group_attrs_get(g, attrs, sizeof attrs, NULL));
    CHECK_STR(attrs, "{}");
    zarr_group_free(g);
    /* An existing group opened for writing gets them set; read-only cannot. */
    CHECK_OK(zarr_group_create_with_attrs(s, "a", ZARR_MODE_A, 3, "{\"k\": true}", &g));
    zarr_group_free(g);
    CHECK_OK(zarr_group_open(s, "a", ZARR_MODE_R, &g));
    CHECK_OK(zarr_group_attrs_get(g, attrs, sizeof attrs, NULL));
    CHECK_STR(attrs, "{\"k\":true}");
    zarr_group_free(g);
    CHECK_STATUS(zarr_group_create_with_attrs(s, "a", ZARR_MODE_R, 3, "{\"k\": 1}", (g = SENTINEL, &g)),
                 ZARR_ERR_READ_ONLY);
    CHECK(g == NULL);
    CHECK_OK(zarr_group_create_with_attrs(s, "a", ZARR_MODE_R, 3, "{}", &g));
    zarr_group_free(g);
    /* Bad arguments name what was wrong and write nothing. */
    CHECK_STATUS(zarr_group_create_with_attrs(s, "b", ZARR_MODE_W, 3, "[1]", &g), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("attributes_json");
    CHECK_STATUS(zarr_group_create_with_attrs(s, "b", ZARR_MODE_W, 3, "{oops", &g), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_group_create_with_attrs(s, "b", ZARR_MODE_W, 1, "{}", &g), ZARR_ERR_INVALID_ARG);
    bool exists = true;
    CHECK_OK(zarr_store_contains(s, "b/zarr.json", &exists));
    CHECK(!exists);
    CHECK_STATUS(zarr_group_create_with_attrs(NULL, "b", ZARR_MODE_W, 3, "{}", &g), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_create_with_attrs(s, "b", ZARR_MODE_W, 3, "{}", NULL), ZARR_ERR_NULL_ARG);
    zarr_store_free(s);
}

static void test_null_args(void) {
    zarr_store_t *s = memory_store();
    zarr_group_t *g = NULL;
    CHECK_OK(zarr_group_open(s, "", ZARR_MODE_A, &g));
    zarr_group_t *og = NULL;
    zarr_array_t *oa = NULL;
    zarr_strings_t *ol = NULL;
    zarr_node_kind_t k;
    char text[16];
    zarr_array_builder_t *b = builder();
    CHECK_STATUS(zarr_group_open(NULL, "", ZARR_MODE_R, &og), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_open(s, NULL, ZARR_MODE_R, &og), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_open(s, "", ZARR_MODE_R, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_open(s, "", 99, &og), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_group_open_consolidated(NULL, "", ZARR_MODE_R, &og), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_open_consolidated(s, "", ZARR_MODE_R, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_consolidate_metadata(NULL, ""), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_consolidate_metadata(s, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_path(NULL, text, sizeof text, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_node_kind_at(NULL, "", &k), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_node_kind_at(s, NULL, &k), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_node_kind_at(s, "", NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_contains(NULL, "a", &k), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_contains(g, NULL, &k), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_contains(g, "a", NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_members(NULL, ZARR_NODE_NONE, &ol), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_members(g, ZARR_NODE_NONE, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_open_group(NULL, "a", ZARR_MODE_A, &og), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_open_group(g, NULL, ZARR_MODE_A, &og), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_open_group(g, "a", ZARR_MODE_A, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_open_array(NULL, "a", ZARR_MODE_R, &oa), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_open_array(g, NULL, ZARR_MODE_R, &oa), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_open_array(g, "a", ZARR_MODE_R, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_create_array(NULL, b, "a", ZARR_MODE_W, &oa), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_create_array(g, NULL, "a", ZARR_MODE_W, &oa), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_create_array(g, b, NULL, ZARR_MODE_W, &oa), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_create_array(g, b, "a", ZARR_MODE_W, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_delete(NULL, "a"), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_delete(g, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_move(NULL, "a", "b"), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_move(g, NULL, "b"), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_move(g, "a", NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_attrs_get(NULL, text, sizeof text, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_attrs_set(NULL, "{}"), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_attrs_set(g, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_attr_get(NULL, "k", text, sizeof text, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_attr_get(g, NULL, text, sizeof text, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_attr_set(NULL, "k", "1"), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_attr_set(g, NULL, "1"), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_attr_set(g, "k", NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_attr_delete(NULL, "k"), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_group_attr_delete(g, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_set_dimension_names(NULL, 0, NULL), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_array_dimension_names(NULL, &ol), ZARR_ERR_NULL_ARG);
    zarr_array_builder_free(b);
    zarr_group_free(g);
    zarr_store_free(s);
}

int main(void) {
    test_groups();
    test_dimension_names();
    test_group_attributes_at_creation();
    test_consolidated();
    test_copy();
    test_copy_overlap();
    test_migrate();
    test_zip();
    test_null_args();
    return CHECK_DONE();
}
