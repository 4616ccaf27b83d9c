/*
 * Stores: keys set, read, tested, erased and listed on the memory and filesystem stores;
 * hostile keys refused without touching anything outside the root; read-only stores.
 */
#include "check.h"

/* Expects `list` to hold exactly `expected`; prints the list otherwise. */
#define CHECK_LIST(list, ...)                                                              \
    do {                                                                                   \
        const char *const want_[] = {__VA_ARGS__};                                         \
        size_t n_ = sizeof want_ / sizeof want_[0];                                        \
        bool ok_ = check_strings_equal(list, want_, n_);                                   \
        CHECK(ok_);                                                                        \
        if (!ok_)                                                                          \
            check_print_strings(#list, list);                                              \
    } while (0)

static void expect_value(const zarr_store_t *s, const char *key, const char *value) {
    char buf[256];
    size_t needed = 12345;
    CHECK_OK(zarr_store_get(s, key, buf, sizeof buf, &needed));
    CHECK_EQ(needed, strlen(value));
    CHECK_MEM(buf, value, strlen(value));
}

static void test_keys(zarr_store_t *s) {
    CHECK_OK(zarr_store_set(s, "a/b/c", "hello", 5));
    CHECK_OK(zarr_store_set(s, "a/bc", "x", 1));
    CHECK_OK(zarr_store_set(s, "a/b-c/y", "y", 1));
    CHECK_OK(zarr_store_set(s, "top", "t", 1));
    CHECK_OK(zarr_store_set(s, "empty", NULL, 0));
    expect_value(s, "a/b/c", "hello");
    expect_value(s, "empty", "");

    /* Replacing a value. */
    CHECK_OK(zarr_store_set(s, "top", "longer value", 12));
    expect_value(s, "top", "longer value");
    CHECK_OK(zarr_store_set(s, "top", "t", 1));
    expect_value(s, "top", "t");

    /* Binary values with NUL bytes. */
    const unsigned char bin[6] = {0, 1, 0, 255, 0, 7};
    CHECK_OK(zarr_store_set(s, "bin", bin, sizeof bin));
    unsigned char back[6];
    size_t needed = 0;
    CHECK_OK(zarr_store_get(s, "bin", back, sizeof back, &needed));
    CHECK_EQ(needed, 6);
    CHECK_MEM(back, bin, 6);

    /* Size query and a too-small buffer: nothing copied, needed set. */
    needed = 0;
    CHECK_STATUS(zarr_store_get(s, "a/b/c", NULL, 0, &needed), ZARR_ERR_BUFFER_SIZE);
    CHECK_EQ(needed, 5);
    char small[4] = {'Z', 'Z', 'Z', 'Z'};
    needed = 0;
    CHECK_STATUS(zarr_store_get(s, "a/b/c", small, sizeof small, &needed), ZARR_ERR_BUFFER_SIZE);
    CHECK_EQ(needed, 5);
    CHECK(small[0] == 'Z' && small[3] == 'Z');
    CHECK_OK(zarr_store_get(s, "empty", NULL, 0, &needed));
    CHECK_EQ(needed, 0);
    /* needed may be NULL. */
    char five[5];
    CHECK_OK(zarr_store_get(s, "a/b/c", five, sizeof five, NULL));
    CHECK_MEM(five, "hello", 5);
    /* Missing key. */
    CHECK_STATUS(zarr_store_get(s, "a/b/missing", five, sizeof five, &needed), ZARR_ERR_NOT_FOUND);
    CHECK_ERROR_CONTAINS("a/b/missing");

    /* Contains: values only, not prefixes. */
    bool exists = false;
    CHECK_OK(zarr_store_contains(s, "a/b/c", &exists));
    CHECK(exists);
    CHECK_OK(zarr_store_contains(s, "a/b", &exists));
    CHECK(!exists);
    CHECK_OK(zarr_store_contains(s, "nope", &exists));
    CHECK(!exists);

    /* Keys are normalised: repeated and trailing slashes, backslashes. */
    CHECK_OK(zarr_store_contains(s, "a//b/c/", &exists));
    CHECK(exists);
    CHECK_OK(zarr_store_set(s, "x\\y", "bs", 2));
    expect_value(s, "x/y", "bs");

    /* Listing everything, sorted. */
    zarr_strings_t *l = NULL;
    CHECK_OK(zarr_store_list(s, "", &l));
    CHECK_LIST(l, "a/b-c/y", "a/b/c", "a/bc", "bin", "empty", "top", "x/y");
    CHECK_EQ(zarr_strings_count(l), 7);
    CHECK_STR(zarr_strings_get(l, 0), "a/b-c/y");
    CHECK(zarr_strings_get(l, 7) == NULL);
    CHECK(zarr_strings_get(l, (size_t)-1) == NULL);
    zarr_strings_free(l);
    /* By prefix: a directory prefix, and a plain string prefix. */
    CHECK_OK(zarr_store_list(s, "a/", &l));
    CHECK_LIST(l, "a/b-c/y", "a/b/c", "a/bc");
    zarr_strings_free(l);
    CHECK_OK(zarr_store_list(s, "a/b", &l));
    CHECK_LIST(l, "a/b-c/y", "a/b/c", "a/bc");
    zarr_strings_free(l);
    CHECK_OK(zarr_store_list(s, "a/b/", &l));
    CHECK_LIST(l, "a/b/c");
    zarr_strings_free(l);
    CHECK_OK(zarr_store_list(s, "zzz/", &l));
    CHECK_EQ(zarr_strings_count(l), 0);
    CHECK(zarr_strings_get(l, 0) == NULL);
    zarr_strings_free(l);

    /* One level: keys and child prefixes, each sorted. */
    zarr_strings_t *keys = NULL, *prefixes = NULL;
    CHECK_OK(zarr_store_list_dir(s, "", &keys, &prefixes));
    CHECK_LIST(keys, "bin", "empty", "top");
    CHECK_LIST(prefixes, "a", "x");
    zarr_strings_free(keys);
    zarr_strings_free(prefixes);
    CHECK_OK(zarr_store_list_dir(s, "a/", &keys, &prefixes));
    CHECK_LIST(keys, "bc");
    CHECK_LIST(prefixes, "b", "b-c"); /* sorted, not in key order ("b-c/y" < "b/c") */
    zarr_strings_free(keys);
    zarr_strings_free(prefixes);
    CHECK_OK(zarr_store_list_dir(s, "a/b/", &keys, &prefixes));
    CHECK_LIST(keys, "c");
    CHECK_EQ(zarr_strings_count(prefixes), 0);
    zarr_strings_free(keys);
    zarr_strings_free(prefixes);
    /* A listing prefix is "" or ends in "/". */
    keys = prefixes = (zarr_strings_t *)&keys;
    CHECK_STATUS(zarr_store_list_dir(s, "a", &keys, &prefixes), ZARR_ERR_INVALID_KEY);
    CHECK(keys == NULL && prefixes == NULL);
    CHECK_ERROR_CONTAINS("end with");
    CHECK_OK(zarr_store_list_dir(s, "missing/", &keys, &prefixes));
    CHECK_EQ(zarr_strings_count(keys), 0);
    CHECK_EQ(zarr_strings_count(prefixes), 0);
    zarr_strings_free(keys);
    zarr_strings_free(prefixes);

    /* Erase one key, then a missing key. */
    CHECK_OK(zarr_store_erase(s, "a/bc"));
    CHECK_OK(zarr_store_contains(s, "a/bc", &exists));
    CHECK(!exists);
    CHECK_STATUS(zarr_store_erase(s, "a/bc"), ZARR_ERR_NOT_FOUND);
    CHECK_ERROR_CONTAINS("a/bc");
    /* Erase a prefix: everything below "a/", nothing else. */
    CHECK_OK(zarr_store_erase_prefix(s, "a/"));
    CHECK_OK(zarr_store_list(s, "", &l));
    CHECK_LIST(l, "bin", "empty", "top", "x/y");
    zarr_strings_free(l);
    CHECK_OK(zarr_store_erase_prefix(s, "nothing/here/"));
    /* A plain prefix erases keys starting with it. */
    CHECK_OK(zarr_store_erase_prefix(s, "e"));
    CHECK_OK(zarr_store_list(s, "", &l));
    CHECK_LIST(l, "bin", "top", "x/y");
    zarr_strings_free(l);
    /* "" erases everything. */
    CHECK_OK(zarr_store_erase_prefix(s, ""));
    CHECK_OK(zarr_store_list(s, "", &l));
    CHECK_EQ(zarr_strings_count(l), 0);
    zarr_strings_free(l);

    /* NULL lists. */
    CHECK_EQ(zarr_strings_count(NULL), 0);
    CHECK(zarr_strings_get(NULL, 0) == NULL);
    zarr_strings_free(NULL);
}

/* Hostile keys are refused for every key operation; nothing is created. */
static void test_hostile_keys(zarr_store_t *s) {
    static const char *const hostile[] = {
        "../x", "/abs", "a/./b", "a\\..\\b", "..", ".", "a/../../x", "\\abs", "x/..",
        "C:/x", "", "/", "//",
    };
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        const char *k = hostile[i];
        CHECK_STATUS(zarr_store_set(s, k, "v", 1), ZARR_ERR_INVALID_KEY);
        char buf[4];
        CHECK_STATUS(zarr_store_get(s, k, buf, sizeof buf, NULL), ZARR_ERR_INVALID_KEY);
        bool exists = true;
        CHECK_STATUS(zarr_store_contains(s, k, &exists), ZARR_ERR_INVALID_KEY);
        CHECK(exists == true); /* output untouched */
        CHECK_STATUS(zarr_store_erase(s, k), ZARR_ERR_INVALID_KEY);
    }
    /* Prefixes are checked too ("" and "/"-ended paths are fine). */
    static const char *const bad_prefixes[] = {"../", "/abs/", "a/../", "..\\"};
    for (size_t i = 0; i < sizeof bad_prefixes / sizeof bad_prefixes[0]; i++) {
        zarr_strings_t *l = (zarr_strings_t *)&l, *p = (zarr_strings_t *)&p;
        CHECK_STATUS(zarr_store_list(s, bad_prefixes[i], &l), ZARR_ERR_INVALID_KEY);
        CHECK(l == NULL);
        l = (zarr_strings_t *)&l;
        CHECK_STATUS(zarr_store_list_dir(s, bad_prefixes[i], &l, &p), ZARR_ERR_INVALID_KEY);
        CHECK(l == NULL && p == NULL);
        CHECK_STATUS(zarr_store_erase_prefix(s, bad_prefixes[i]), ZARR_ERR_INVALID_KEY);
    }
    /* Array paths too. */
    const uint64_t shape[1] = {2};
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT8, 1, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    zarr_array_t *a = (zarr_array_t *)&a;
    CHECK_STATUS(zarr_array_create(b, s, "../outside", ZARR_MODE_W, &a), ZARR_ERR_INVALID_KEY);
    CHECK(a == NULL);
    CHECK_STATUS(zarr_array_open(s, "a/../../b", ZARR_MODE_R, &a), ZARR_ERR_INVALID_KEY);
    zarr_array_builder_free(b);
    zarr_strings_t *l = NULL;
    CHECK_OK(zarr_store_list(s, "", &l));
    CHECK_EQ(zarr_strings_count(l), 0);
    zarr_strings_free(l);
}

static void test_memory(void) {
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_new_memory(&s));
    test_keys(s);
    test_hostile_keys(s);
    zarr_store_free(s);
}

/* Lists the names in a directory into `out` (sorted, comma-separated). */
static void dir_names(const char *dir, char *out, size_t len) {
    zarr_store_t *s = NULL;
    out[0] = '\0';
    if (zarr_store_open_fs(dir, ZARR_MODE_R, &s) != ZARR_OK)
        return;
    zarr_strings_t *keys = NULL, *prefixes = NULL;
    if (zarr_store_list_dir(s, "", &keys, &prefixes) == ZARR_OK) {
        for (size_t i = 0; i < zarr_strings_count(prefixes); i++) {
            strncat(out, zarr_strings_get(prefixes, i), len - strlen(out) - 1);
            strncat(out, "/,", len - strlen(out) - 1);
        }
        for (size_t i = 0; i < zarr_strings_count(keys); i++) {
            strncat(out, zarr_strings_get(keys, i), len - strlen(out) - 1);
            strncat(out, ",", len - strlen(out) - 1);
        }
    }
    zarr_strings_free(keys);
    zarr_strings_free(prefixes);
    zarr_store_free(s);
}

static void test_filesystem(void) {
    char *tmp = check_mkdtemp();
    char *root = check_join(tmp, "root");
    char *deeper = check_join(tmp, "made/sub");

    /* Missing directory: R and R+ fail with NOT_FOUND; A creates it. */
    zarr_store_t *s = (zarr_store_t *)&s;
    CHECK_STATUS(zarr_store_open_fs(root, ZARR_MODE_R, &s), ZARR_ERR_NOT_FOUND);
    CHECK(s == NULL);
    CHECK_ERROR_CONTAINS("root");
    s = (zarr_store_t *)&s;
    CHECK_STATUS(zarr_store_open_fs(root, ZARR_MODE_R_PLUS, &s), ZARR_ERR_NOT_FOUND);
    CHECK(s == NULL);
    CHECK(!check_path_exists(tmp, "root"));
    CHECK_OK(zarr_store_open_fs(deeper, ZARR_MODE_W_MINUS, &s)); /* parents made too */
    CHECK(check_path_exists(tmp, "made/sub"));
    zarr_store_free(s);
    CHECK_OK(zarr_store_open_fs(root, ZARR_MODE_A, &s));

    test_keys(s);
    /* Values are files, "/" makes directories. */
    CHECK_OK(zarr_store_set(s, "d1/d2/file", "abc", 3));
    char *path = check_join(root, "d1/d2/file");
    size_t len = 0;
    char *text = check_read_file(path, &len);
    CHECK(text != NULL && len == 3 && memcmp(text, "abc", 3) == 0);
    free(text);
    free(path);
    CHECK_OK(zarr_store_erase_prefix(s, "d1/"));
    CHECK(!check_path_exists(root, "d1/d2/file"));

    /* Names starting with the store's temporary-file prefix are reserved. */
    CHECK_STATUS(zarr_store_set(s, ".zarr-tmp.1", "v", 1), ZARR_ERR_INVALID_KEY);
    CHECK_ERROR_CONTAINS(".zarr-tmp.");
    CHECK_STATUS(zarr_store_set(s, "d/.zarr-tmp.x", "v", 1), ZARR_ERR_INVALID_KEY);
    CHECK(!check_path_exists(root, "d"));
    /* Directories left empty by erasing are pruned: no empty child prefixes. */
    CHECK_OK(zarr_store_set(s, "d/e/x", "1", 1));
    CHECK_OK(zarr_store_erase(s, "d/e/x"));
    CHECK(!check_path_exists(root, "d/e"));
    zarr_strings_t *keys = NULL, *prefixes = NULL;
    CHECK_OK(zarr_store_list_dir(s, "", &keys, &prefixes));
    CHECK_EQ(zarr_strings_count(prefixes), 0);
    zarr_strings_free(keys);
    zarr_strings_free(prefixes);

    /* Hostile keys write nothing outside (or inside) the root. */
    char before[1024], after[1024];
    dir_names(tmp, before, sizeof before);
    test_hostile_keys(s);
    dir_names(tmp, after, sizeof after);
    CHECK_STR(after, before);
    CHECK_STR(before, "made/,root/,");
    CHECK(!check_path_exists(tmp, "x"));
    CHECK(!check_path_exists(tmp, "outside"));
    CHECK(!check_path_exists(root, "abs"));

    /* A read-only store refuses writes and leaves the files unchanged. */
    CHECK_OK(zarr_store_set(s, "k", "v1", 2));
    CHECK_OK(zarr_store_set(s, "dir/k2", "v2", 2));
    zarr_store_free(s);
    CHECK_OK(zarr_store_open_fs(root, ZARR_MODE_R, &s));
    CHECK_STATUS(zarr_store_set(s, "k", "v3", 2), ZARR_ERR_READ_ONLY);
    CHECK_ERROR_CONTAINS("read-only");
    CHECK_STATUS(zarr_store_set(s, "new", "v3", 2), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_store_erase(s, "k"), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_store_erase_prefix(s, "dir/"), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_store_erase_prefix(s, ""), ZARR_ERR_READ_ONLY);
    expect_value(s, "k", "v1");
    expect_value(s, "dir/k2", "v2");
    zarr_strings_t *l = NULL;
    CHECK_OK(zarr_store_list(s, "", &l));
    CHECK_LIST(l, "dir/k2", "k");
    zarr_strings_free(l);
    path = check_join(root, "k");
    text = check_read_file(path, &len);
    CHECK(text != NULL && len == 2 && memcmp(text, "v1", 2) == 0);
    free(text);
    free(path);
    CHECK(!check_path_exists(root, "new"));
    /* Arrays cannot be created in it, nor opened for writing. */
    const uint64_t shape[1] = {2};
    zarr_array_builder_t *b = NULL;
    CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT8, 1, shape, &b));
    CHECK_OK(zarr_array_builder_set_zarr_format(b, 2));
    zarr_array_t *a = (zarr_array_t *)&a;
    CHECK_STATUS(zarr_array_create(b, s, "arr", ZARR_MODE_W, &a), ZARR_ERR_READ_ONLY);
    CHECK(a == NULL);
    CHECK(!check_path_exists(root, "arr"));
    CHECK(!check_path_exists(root, ".zgroup"));
    zarr_array_builder_free(b);
    zarr_store_free(s);

    free(deeper);
    free(root);
    check_rmtree(tmp);
}

/* The zip store lists like the others (it cannot erase, so test_keys does not apply). */
static void test_zip_listing(void) {
    char *tmp = check_mkdtemp();
    char *path = check_join(tmp, "l.zip");
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_open_zip(path, ZARR_MODE_W, true, &s));
    CHECK_OK(zarr_store_set(s, "p/b/x", "1", 1));
    CHECK_OK(zarr_store_set(s, "p/b-c/y", "22", 2));
    CHECK_OK(zarr_store_set(s, "p/k", "333", 3));
    CHECK_STATUS(zarr_store_set(s, "../x", "v", 1), ZARR_ERR_INVALID_KEY);
    CHECK_OK(zarr_store_close(s));
    zarr_strings_t *keys = NULL, *prefixes = NULL;
    CHECK_OK(zarr_store_list_dir(s, "p/", &keys, &prefixes));
    CHECK_LIST(keys, "k");
    CHECK_LIST(prefixes, "b", "b-c");
    zarr_strings_free(keys);
    zarr_strings_free(prefixes);
    CHECK_STATUS(zarr_store_list_dir(s, "p", &keys, &prefixes), ZARR_ERR_INVALID_KEY);
    zarr_strings_t *l = NULL;
    CHECK_OK(zarr_store_list(s, "", &l));
    CHECK_LIST(l, "p/b-c/y", "p/b/x", "p/k");
    zarr_strings_free(l);
    expect_value(s, "p/k", "333");
    bool exists = false;
    CHECK_OK(zarr_store_contains(s, "p/b-c/y", &exists));
    CHECK(exists);
    zarr_store_free(s);
    CHECK(!check_path_exists(tmp, "x"));
    free(path);
    check_rmtree(tmp);
}

/* Every durability level is accepted by a directory store and writes stay correct under
   each; flush and close report success; stores that cannot sync accept only NONE. */
static void test_durability(void) {
    char *tmp = check_mkdtemp();
    zarr_store_t *s = NULL;
    CHECK_OK(zarr_store_open_fs(tmp, ZARR_MODE_A, &s));
    CHECK_OK(zarr_store_set(s, "default/x", "0", 1)); /* ZARR_DURABILITY_FLUSH */
    CHECK_OK(zarr_store_flush(s));
    const zarr_durability_t levels[3] = {ZARR_DURABILITY_NONE, ZARR_DURABILITY_FLUSH,
                                         ZARR_DURABILITY_EACH_WRITE};
    const char *keys[3] = {"n/a/x", "f/a/x", "e/a/x"};
    for (size_t i = 0; i < 3; i++) {
        CHECK_OK(zarr_store_set_durability(s, levels[i]));
        CHECK_OK(zarr_store_set(s, keys[i], "v1", 2));
        CHECK_OK(zarr_store_set(s, keys[i], "v2", 2));
        CHECK_OK(zarr_store_set(s, "gone/x", "g", 1));
        CHECK_OK(zarr_store_erase(s, "gone/x"));
        CHECK_OK(zarr_store_flush(s));
        expect_value(s, keys[i], "v2");
    }
    CHECK_STATUS(zarr_store_set_durability(s, 3), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("zarr_durability_t");
    CHECK_STATUS(zarr_store_set_durability(s, -1), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_store_set_durability(NULL, ZARR_DURABILITY_NONE), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_store_flush(NULL), ZARR_ERR_NULL_ARG);
    CHECK_OK(zarr_store_set_durability(s, ZARR_DURABILITY_FLUSH));
    CHECK_OK(zarr_store_set(s, "last", "L", 1));
    CHECK_OK(zarr_store_close(s)); /* flushes; the handle stays usable */
    CHECK_OK(zarr_store_set(s, "after_close", "A", 1));
    zarr_store_free(s); /* flushes silently */
    CHECK_OK(zarr_store_open_fs(tmp, ZARR_MODE_R, &s));
    zarr_strings_t *l = NULL;
    CHECK_OK(zarr_store_list(s, "", &l));
    CHECK_LIST(l, "after_close", "default/x", "e/a/x", "f/a/x", "last", "n/a/x");
    zarr_strings_free(l);
    zarr_store_free(s);
    check_rmtree(tmp);

    CHECK_OK(zarr_store_new_memory(&s));
    CHECK_OK(zarr_store_set_durability(s, ZARR_DURABILITY_NONE));
    CHECK_STATUS(zarr_store_set_durability(s, ZARR_DURABILITY_FLUSH), ZARR_ERR_UNSUPPORTED);
    CHECK_STATUS(zarr_store_set_durability(s, ZARR_DURABILITY_EACH_WRITE),
                 ZARR_ERR_UNSUPPORTED);
    CHECK_OK(zarr_store_flush(s));
    CHECK_OK(zarr_store_close(s));
    zarr_store_free(s);
}

/* Stores opened by URL: every local kind, options checked, bad URLs refused with a clear
 * status and message (object stores themselves are tested against servers in Rust). */
static void test_open_url(void) {
    char *tmp = check_mkdtemp();
    char *dir = check_join(tmp, "d.zarr");
    char *zip = check_join(tmp, "z.zip");
    char url[4096];
    zarr_store_t *s = NULL;

    CHECK((zarr_features() & ZARR_HAS_ZIP) != 0);

    CHECK_OK(zarr_store_open_url("memory://", ZARR_MODE_A, NULL, &s));
    test_keys(s);
    zarr_store_free(s);

    /* A plain path and a file:// URL name the same directory. */
    CHECK_OK(zarr_store_open_url(dir, ZARR_MODE_A, "{}", &s));
    CHECK_OK(zarr_store_set(s, "k", "via path", 8));
    zarr_store_free(s);
    snprintf(url, sizeof url, "file://%s", dir);
    CHECK_OK(zarr_store_open_url(url, ZARR_MODE_R, NULL, &s));
    expect_value(s, "k", "via path");
    CHECK_STATUS(zarr_store_set(s, "k", "x", 1), ZARR_ERR_READ_ONLY);
    zarr_store_free(s);

    snprintf(url, sizeof url, "zip://%s", zip);
    CHECK_OK(zarr_store_open_url(url, ZARR_MODE_W_MINUS, "{\"deflate\": true}", &s));
    CHECK_OK(zarr_store_set(s, "z/k", "zipped", 6));
    CHECK_OK(zarr_store_close(s));
    zarr_store_free(s);
    CHECK_OK(zarr_store_open_url(url, ZARR_MODE_R, NULL, &s));
    expect_value(s, "z/k", "zipped");
    zarr_store_free(s);

    s = (zarr_store_t *)1;
    CHECK_STATUS(zarr_store_open_url("ftp://host/x", ZARR_MODE_R, NULL, &s),
                 ZARR_ERR_INVALID_ARG);
    CHECK(s == NULL);
    CHECK_ERROR_CONTAINS("unknown URL scheme");
    CHECK_STATUS(zarr_store_open_url("memory://", ZARR_MODE_R, "{\"region\": 1}", &s),
                 ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("region");
    CHECK_STATUS(zarr_store_open_url("memory://", ZARR_MODE_R, "{oops", &s),
                 ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_store_open_url(NULL, ZARR_MODE_R, NULL, &s), ZARR_ERR_NULL_ARG);
    CHECK_STATUS(zarr_store_open_url("memory://", 99, NULL, &s), ZARR_ERR_INVALID_ARG);

    if (zarr_features() & ZARR_HAS_S3) {
        CHECK_STATUS(zarr_store_open_url("s3://", ZARR_MODE_R, NULL, &s), ZARR_ERR_INVALID_ARG);
        CHECK_ERROR_CONTAINS("names no bucket");
        CHECK_STATUS(zarr_store_open_url("s3://bucket/p", ZARR_MODE_R, "{\"regio\": \"x\"}", &s),
                     ZARR_ERR_INVALID_ARG);
        CHECK_ERROR_CONTAINS("unknown option");
        /* Opening sends no request; a key with ".." is refused before any. */
        CHECK_OK(zarr_store_open_url("s3://bucket/p", ZARR_MODE_R,
                                     "{\"endpoint\": \"http://127.0.0.1:9\"}", &s));
        char buf[8];
        CHECK_STATUS(zarr_store_get(s, "../x", buf, sizeof buf, NULL), ZARR_ERR_INVALID_KEY);
        zarr_store_free(s);
    }
    if (zarr_features() & ZARR_HAS_HTTP) {
        CHECK_STATUS(zarr_store_open_url("https://example.invalid/x", ZARR_MODE_A, NULL, &s),
                     ZARR_ERR_READ_ONLY);
    } else {
        CHECK_STATUS(zarr_store_open_url("https://example.invalid/x", ZARR_MODE_R, NULL, &s),
                     ZARR_ERR_UNSUPPORTED);
    }

    free(zip);
    free(dir);
    check_rmtree(tmp);
}

int main(void) {
    test_memory();
    test_filesystem();
    test_zip_listing();
    test_durability();
    test_open_url();
    return CHECK_DONE();
}
