/*
 * zarr_tool: a small command-line front end to libzarr's public C API, used by the interop
 * tests (tests/interop/test_v2_interop.py) to write and read arrays that zarr-python and
 * tensorstore then read or have written.
 *
 *   zarr_tool dump        <store> <path> <out.bin> <C|F>
 *   zarr_tool read-region <store> <path> <start> <count> <out.bin> <C|F>
 *   zarr_tool create      <store> <path> <zarray.json> <data.bin> <C|F>
 *   zarr_tool build       <store> <path> <dtype> <shape> <chunks> <fill> <order> <sep>
 *                         <compressor> <data.bin> <C|F>
 *   zarr_tool write-region <store> <path> <start> <count> <data.bin> <C|F>
 *   zarr_tool resize      <store> <path> <shape>
 *   zarr_tool append      <store> <path> <axis> <count> <data.bin> <C|F>
 *   zarr_tool group       <store> <path> <attributes.json>
 *   zarr_tool tag         <store> <name>
 *   zarr_tool history     <store>
 *   zarr_tool attrs       <store> <group path>
 *
 * Icechunk repositories (icechunk:///PATH): when ZARR_TOOL_COMMIT is set, create,
 * write-region and group commit what they wrote with that message and print
 * {"snapshot": ID}; `tag` tags the snapshot the store URL reads and `history` prints
 * zarr_store_history_json; `attrs` prints a group's attributes (JSON).
 *
 * Lists (<shape>, <chunks>, <start>, <count>) are comma-separated integers; an empty
 * string is a list of length 0 (a 0-d array). For `build`, every setting may be "-" to
 * keep the builder's default; <dtype> is a name for zarr_array_builder_set_dtype_name
 * ("<f8", ">i2", "|u1", "<M8[ns]"); <fill> is metadata JSON ("0", "\"NaN\"", "null",
 * "[1.0,2.0]") or "hex:<bytes>" (one element in native byte order, given to
 * zarr_array_builder_set_fill_value); <order> is C or F; <sep> is "." or "/";
 * <compressor> is numcodecs JSON or "null"; ZARR_TOOL_MISSING sets the CF missing value and
 * ZARR_TOOL_DIMS the dimension names (see cmd_build). Data files hold the elements in this
 * machine's byte order, laid out in the last argument's order. Variable-length arrays
 * (strings, bytes, `|O`) use a data file of items instead: for each element, its length as
 * a little-endian uint64 then its bytes. Fixed-size non-numeric types (S, U, V, r*,
 * structured) move as raw items.
 *
 * <store> is a directory, or a store URL (s3://bucket/prefix, ...) opened with
 * zarr_store_open_url and the JSON options in the environment variable
 * ZARR_TOOL_STORE_OPTIONS.
 *
 * `dump` and `read-region` print one line of JSON describing the array to stdout. On any
 * libzarr error the tool prints the status name and zarr_last_error() to stderr and exits
 * with status 1; usage and file errors exit with status 2.
 */
#include "zarr.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIMS 32

static const char *g_what = "";

static void fail_status(zarr_status_t st, const char *call) {
    char msg[4096];
    zarr_last_error(msg, sizeof msg, NULL);
    fprintf(stderr, "zarr_tool %s: %s failed: %s: %s\n", g_what, call, zarr_status_str(st), msg);
    exit(1);
}

#define CHECK(call)                                                                        \
    do {                                                                                   \
        zarr_status_t st_ = (call);                                                        \
        if (st_ != ZARR_OK) fail_status(st_, #call);                                       \
    } while (0)

static void die(const char *fmt, const char *arg) {
    fprintf(stderr, "zarr_tool %s: ", g_what);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(2);
}

#include "tool_common.h"

static zarr_order_t parse_order(const char *text) {
    if (strcmp(text, "C") == 0) return ZARR_ORDER_C;
    if (strcmp(text, "F") == 0) return ZARR_ORDER_F;
    die("order must be C or F, not %s", text);
    return ZARR_ORDER_C;
}

/* A string output of the (buf, len, needed) convention, malloc'd. */
typedef zarr_status_t (*string_getter)(const zarr_array_t *, char *, size_t, size_t *);

static char *get_string(const zarr_array_t *array, string_getter get, const char *name) {
    size_t needed = 0;
    zarr_status_t st = get(array, NULL, 0, &needed);
    if (st != ZARR_OK && st != ZARR_ERR_BUFFER_SIZE) fail_status(st, name);
    char *buf = malloc(needed ? needed : 1);
    if (!buf) die("out of memory for %s", name);
    st = get(array, buf, needed, &needed);
    if (st != ZARR_OK) fail_status(st, name);
    return buf;
}

static void print_list(const char *key, const uint64_t *v, size_t n) {
    printf("\"%s\":[", key);
    for (size_t i = 0; i < n; i++) printf("%s%" PRIu64, i ? "," : "", v[i]);
    printf("]");
}

static void print_info(const zarr_array_t *array) {
    size_t rank = 0;
    CHECK(zarr_array_rank(array, &rank));
    if (rank > MAX_DIMS) die("rank too large%s", "");
    uint64_t shape[MAX_DIMS], chunks[MAX_DIMS];
    CHECK(zarr_array_shape(array, rank, shape));
    CHECK(zarr_array_chunk_shape(array, rank, chunks));
    zarr_dtype_t dtype = 0;
    CHECK(zarr_array_dtype(array, &dtype));
    size_t item = 0;
    CHECK(zarr_array_item_size(array, &item));
    zarr_order_t order = 0;
    CHECK(zarr_array_order(array, &order));
    int32_t format = 0;
    CHECK(zarr_array_zarr_format(array, &format));
    uint64_t nchunks = 0, ninit = 0, nbytes = 0;
    CHECK(zarr_array_nchunks(array, &nchunks));
    CHECK(zarr_array_nchunks_initialized(array, &ninit));
    CHECK(zarr_array_nbytes(array, &nbytes));
    unsigned char *fill = calloc(item ? item : 1, 1);
    if (!fill) die("out of memory%s", "");
    bool fill_null = false;
    bool variable = dtype == ZARR_DTYPE_STRING || dtype == ZARR_DTYPE_BYTES;
    if (!variable) CHECK(zarr_array_fill_value(array, fill, item, &fill_null));
    char *dtype_name = get_string(array, zarr_array_dtype_name, "zarr_array_dtype_name");
    char *fill_json = get_string(array, zarr_array_fill_value_json, "zarr_array_fill_value_json");

    printf("{");
    print_list("shape", shape, rank);
    printf(",");
    print_list("chunks", chunks, rank);
    /* A structured type's name is its JSON field list: printed as JSON, not as a string. */
    const char *quote = dtype_name[0] == '[' ? "" : "\"";
    printf(",\"dtype_name\":%s%s%s,\"mem_dtype\":\"%s\",\"item_size\":%zu", quote, dtype_name,
           quote, zarr_dtype_name(dtype), item);
    printf(",\"fill_value_json\":%s,\"fill_is_null\":%s,\"fill_hex\":\"", fill_json,
           fill_null ? "true" : "false");
    for (size_t i = 0; i < item; i++) printf("%02x", fill[i]);
    printf("\",\"order\":\"%s\",\"zarr_format\":%d", order == ZARR_ORDER_F ? "F" : "C", (int)format);
    printf(",\"nchunks\":%" PRIu64 ",\"nchunks_initialized\":%" PRIu64 ",\"nbytes\":%" PRIu64,
           nchunks, ninit, nbytes);
    if (variable) {
        zarr_dtype_t item_dtype = 0;
        size_t item_size = 0;
        CHECK(zarr_array_vlen_item_dtype(array, &item_dtype, &item_size));
        printf(",\"vlen_item_dtype\":\"%s\",\"vlen_item_size\":%zu", zarr_dtype_name(item_dtype),
               item_size);
    }
    printf("}\n");
    free(dtype_name);
    free(fill_json);
    free(fill);
}

static bool is_variable(const zarr_array_t *array) {
    zarr_dtype_t dtype = 0;
    CHECK(zarr_array_dtype(array, &dtype));
    return dtype == ZARR_DTYPE_STRING || dtype == ZARR_DTYPE_BYTES;
}

static size_t element_count(size_t ndim, const uint64_t *count) {
    uint64_t n = 1;
    for (size_t i = 0; i < ndim; i++) n *= count[i];
    return (size_t)n;
}

/* Reads variable-length items into an items file (uint64 length, bytes per item). */
static void read_vlen(const zarr_array_t *array, size_t ndim, const uint64_t *start,
                      const uint64_t *count, const char *out_path, zarr_order_t order) {
    size_t n = element_count(ndim, count), needed = 0;
    uint64_t *offsets = malloc((n + 1) * sizeof *offsets);
    if (!offsets) die("out of memory for %s", out_path);
    zarr_status_t st = zarr_array_read_vlen(array, ndim, start, count, order, offsets, n + 1, NULL, 0, &needed);
    if (st != ZARR_OK && st != ZARR_ERR_BUFFER_SIZE) fail_status(st, "zarr_array_read_vlen");
    unsigned char *data = malloc(needed ? needed : 1);
    if (!data) die("out of memory for %s", out_path);
    CHECK(zarr_array_read_vlen(array, ndim, start, count, order, offsets, n + 1, data, needed, &needed));
    FILE *f = fopen(out_path, "wb");
    if (!f) die("cannot create %s", out_path);
    for (size_t i = 0; i < n; i++) {
        uint64_t len = offsets[i + 1] - offsets[i];
        unsigned char le[8];
        for (int b = 0; b < 8; b++) le[b] = (unsigned char)(len >> (8 * b));
        if (fwrite(le, 1, 8, f) != 8 || (len && fwrite(data + offsets[i], 1, len, f) != len))
            die("cannot write %s", out_path);
    }
    if (fclose(f) != 0) die("cannot close %s", out_path);
    free(data);
    free(offsets);
}

/* Writes variable-length items from an items file. */
static void write_vlen(const zarr_array_t *array, size_t ndim, const uint64_t *start,
                       const uint64_t *count, const char *data_path, zarr_order_t order) {
    size_t len = 0, n = element_count(ndim, count), at = 0;
    unsigned char *data = read_file(data_path, &len);
    const void **items = malloc((n ? n : 1) * sizeof *items);
    size_t *lengths = malloc((n ? n : 1) * sizeof *lengths);
    if (!items || !lengths) die("out of memory for %s", data_path);
    for (size_t i = 0; i < n; i++) {
        if (len - at < 8) die("%s holds too few items", data_path);
        uint64_t item = 0;
        for (int b = 0; b < 8; b++) item |= (uint64_t)data[at + b] << (8 * b);
        at += 8;
        if (len - at < item) die("%s: an item runs past the end", data_path);
        items[i] = data + at;
        lengths[i] = (size_t)item;
        at += (size_t)item;
    }
    if (at != len) die("%s holds more items than the region", data_path);
    CHECK(zarr_array_write_vlen(array, ndim, start, count, order, items, lengths));
    free(items);
    free(lengths);
    free(data);
}

/* Size in bytes of a region of `count` elements of the array's type. */
static size_t region_bytes(const zarr_array_t *array, size_t ndim, const uint64_t *count) {
    size_t item = 0;
    CHECK(zarr_array_item_size(array, &item));
    uint64_t n = item;
    for (size_t i = 0; i < ndim; i++) n *= count[i];
    return (size_t)n;
}

static void read_region(const zarr_array_t *array, size_t ndim, const uint64_t *start,
                        const uint64_t *count, const char *out_path, zarr_order_t order) {
    if (is_variable(array)) {
        read_vlen(array, ndim, start, count, out_path, order);
        return;
    }
    zarr_dtype_t dtype = 0;
    CHECK(zarr_array_dtype(array, &dtype));
    size_t bytes = region_bytes(array, ndim, count);
    void *buf = malloc(bytes ? bytes : 1);
    if (!buf) die("out of memory for %s", out_path);
    CHECK(zarr_array_read(array, ndim, start, count, dtype, order, buf, bytes));
    /* Records in this machine's byte order on request (ZARR_TOOL_RECORDS_NATIVE). */
    if (dtype == ZARR_DTYPE_RAW && getenv("ZARR_TOOL_RECORDS_NATIVE"))
        CHECK(zarr_array_records_to_native(array, buf, bytes));
    write_file(out_path, buf, bytes);
    free(buf);
}

static void write_region(const zarr_array_t *array, size_t ndim, const uint64_t *start,
                         const uint64_t *count, const char *data_path, zarr_order_t order) {
    if (is_variable(array)) {
        write_vlen(array, ndim, start, count, data_path, order);
        return;
    }
    zarr_dtype_t dtype = 0;
    CHECK(zarr_array_dtype(array, &dtype));
    size_t len = 0;
    unsigned char *data = read_file(data_path, &len);
    size_t bytes = region_bytes(array, ndim, count);
    if (len != bytes) {
        fprintf(stderr, "zarr_tool %s: %s holds %zu bytes, the region needs %zu\n", g_what,
                data_path, len, bytes);
        exit(2);
    }
    CHECK(zarr_array_write(array, ndim, start, count, dtype, order, data, len));
    free(data);
}

/* Writes the whole array from a data file. */
static void write_all(const zarr_array_t *array, const char *data_path, zarr_order_t order) {
    size_t rank = 0;
    CHECK(zarr_array_rank(array, &rank));
    if (rank > MAX_DIMS) die("rank too large%s", "");
    uint64_t start[MAX_DIMS] = {0}, shape[MAX_DIMS] = {0};
    CHECK(zarr_array_shape(array, rank, shape));
    write_region(array, rank, start, shape, data_path, order);
}

/* A directory, or any store URL (s3://, zip://, ...) with the JSON options in
   ZARR_TOOL_STORE_OPTIONS. */
static zarr_store_t *open_store(const char *dir, zarr_mode_t mode) {
    zarr_store_t *store = NULL;
    if (strstr(dir, "://") != NULL)
        CHECK(zarr_store_open_url(dir, mode, getenv("ZARR_TOOL_STORE_OPTIONS"), &store));
    else
        CHECK(zarr_store_open_fs(dir, mode, &store));
    return store;
}

/* With ZARR_TOOL_COMMIT set, commits what was written through `store` (an Icechunk
   repository) with that message and prints the new snapshot's id as JSON. */
static void commit_if_asked(zarr_store_t *store) {
    const char *message = getenv("ZARR_TOOL_COMMIT");
    if (message == NULL) return;
    char id[ZARR_SNAPSHOT_ID_BYTES];
    CHECK(zarr_store_commit(store, message, id, sizeof id));
    printf("{\"snapshot\": \"%s\"}\n", id);
}

static int cmd_group(char **argv) {
    size_t len = 0;
    char *attrs = (char *)read_file(argv[2], &len);
    zarr_store_t *store = open_store(argv[0], ZARR_MODE_A);
    zarr_group_t *group = NULL;
    CHECK(zarr_group_create_with_attrs(store, argv[1], ZARR_MODE_W, 3, attrs, &group));
    free(attrs);
    zarr_group_free(group);
    commit_if_asked(store);
    zarr_store_free(store);
    return 0;
}

static int cmd_tag(char **argv) {
    zarr_store_t *store = open_store(argv[0], ZARR_MODE_R);
    CHECK(zarr_store_create_tag(store, argv[1]));
    zarr_store_free(store);
    return 0;
}

static int cmd_history(char **argv) {
    zarr_store_t *store = open_store(argv[0], ZARR_MODE_R);
    size_t needed = 0;
    zarr_status_t st = zarr_store_history_json(store, NULL, 0, &needed);
    if (st != ZARR_OK && st != ZARR_ERR_BUFFER_SIZE) fail_status(st, "zarr_store_history_json");
    char *text = malloc(needed);
    if (text == NULL) die("out of memory for %s", "the history");
    CHECK(zarr_store_history_json(store, text, needed, NULL));
    printf("%s\n", text);
    free(text);
    zarr_store_free(store);
    return 0;
}

static int cmd_attrs(char **argv) {
    zarr_store_t *store = open_store(argv[0], ZARR_MODE_R);
    zarr_group_t *group = NULL;
    CHECK(zarr_group_open(store, argv[1], ZARR_MODE_R, &group));
    size_t needed = 0;
    zarr_status_t st = zarr_group_attrs_get(group, NULL, 0, &needed);
    if (st != ZARR_OK && st != ZARR_ERR_BUFFER_SIZE) fail_status(st, "zarr_group_attrs_get");
    char *text = malloc(needed);
    if (text == NULL) die("out of memory for %s", "the attributes");
    CHECK(zarr_group_attrs_get(group, text, needed, NULL));
    printf("%s\n", text);
    free(text);
    zarr_group_free(group);
    zarr_store_free(store);
    return 0;
}

static int cmd_dump(char **argv) {
    zarr_store_t *store = open_store(argv[0], ZARR_MODE_R);
    zarr_array_t *array = NULL;
    CHECK(zarr_array_open(store, argv[1], ZARR_MODE_R, &array));
    zarr_order_t order = parse_order(argv[3]);
    size_t rank = 0;
    CHECK(zarr_array_rank(array, &rank));
    if (rank > MAX_DIMS) die("rank too large%s", "");
    uint64_t start[MAX_DIMS] = {0}, shape[MAX_DIMS] = {0};
    CHECK(zarr_array_shape(array, rank, shape));
    read_region(array, rank, start, shape, argv[2], order);
    print_info(array);
    zarr_array_free(array);
    zarr_store_free(store);
    return 0;
}

static int cmd_read_region(char **argv) {
    zarr_store_t *store = open_store(argv[0], ZARR_MODE_R);
    zarr_array_t *array = NULL;
    CHECK(zarr_array_open(store, argv[1], ZARR_MODE_R, &array));
    uint64_t start[MAX_DIMS] = {0}, count[MAX_DIMS] = {0};
    size_t n1 = parse_list(argv[2], start), n2 = parse_list(argv[3], count);
    if (n1 != n2) die("start and count differ in length (%s)", argv[2]);
    read_region(array, n1, start, count, argv[4], parse_order(argv[5]));
    print_info(array);
    zarr_array_free(array);
    zarr_store_free(store);
    return 0;
}

static int cmd_create(char **argv) {
    zarr_order_t order = parse_order(argv[4]);
    size_t len = 0;
    char *json = (char *)read_file(argv[2], &len);
    zarr_store_t *store = open_store(argv[0], ZARR_MODE_A);
    zarr_array_t *array = NULL;
    CHECK(zarr_array_create_json(store, argv[1], json, ZARR_MODE_W, &array));
    free(json);
    write_all(array, argv[3], order);
    zarr_array_free(array);
    commit_if_asked(store);
    zarr_store_free(store);
    return 0;
}

static unsigned char hex_nibble(char c, const char *text) {
    if (c >= '0' && c <= '9') return (unsigned char)(c - '0');
    if (c >= 'a' && c <= 'f') return (unsigned char)(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') return (unsigned char)(c - 'A' + 10);
    die("bad hex fill value %s", text);
    return 0;
}

static int cmd_build(char **argv) {
    const char *dtype_name = argv[2], *shape_s = argv[3], *chunks_s = argv[4];
    const char *fill = argv[5], *order_s = argv[6], *sep = argv[7], *compressor = argv[8];
    zarr_order_t buf_order = parse_order(argv[10]);

    uint64_t shape[MAX_DIMS] = {0}, chunks[MAX_DIMS] = {0};
    size_t rank = parse_list(shape_s, shape);
    zarr_dtype_t dtype = 0;
    CHECK(zarr_dtype_from_name(dtype_name, &dtype));

    zarr_array_builder_t *builder = NULL;
    CHECK(zarr_array_builder_new(dtype, rank, shape, &builder));
    CHECK(zarr_array_builder_set_dtype_name(builder, dtype_name));
    /* ZARR_TOOL_FORMAT=3 builds a Zarr v3 array; the tests build v2 arrays unless they ask. */
    const char *format = getenv("ZARR_TOOL_FORMAT");
    CHECK(zarr_array_builder_set_zarr_format(builder, format ? atoi(format) : 2));
    /* ZARR_TOOL_SHARDS="4,6" groups chunks into shards of that shape (v3 only);
       "8,12;4,6" nests shards of 4x6 inside shards of 8x12 (one ';' per extra level). */
    const char *shards = getenv("ZARR_TOOL_SHARDS");
    for (int level = 0; shards && *shards; level++) {
        char part[256];
        const char *end = strchr(shards, ';');
        size_t len = end ? (size_t)(end - shards) : strlen(shards);
        if (len >= sizeof part) die("ZARR_TOOL_SHARDS level %s is too long", shards);
        memcpy(part, shards, len);
        part[len] = '\0';
        uint64_t shard_shape[32];
        size_t n = parse_list(part, shard_shape);
        if (level == 0)
            CHECK(zarr_array_builder_set_shard_shape(builder, n, shard_shape));
        else
            CHECK(zarr_array_builder_add_inner_shard_shape(builder, n, shard_shape));
        shards = end ? end + 1 : NULL;
    }
    if (strcmp(chunks_s, "-") != 0) {
        size_t n = parse_list(chunks_s, chunks);
        CHECK(zarr_array_builder_set_chunk_shape(builder, n, chunks));
    }
    if (strncmp(fill, "hex:", 4) == 0) {
        const char *hex = fill + 4;
        size_t n = strlen(hex);
        unsigned char bytes[16];
        if (n % 2 != 0 || n / 2 > sizeof bytes) die("bad hex fill value %s", fill);
        for (size_t i = 0; i < n / 2; i++)
            bytes[i] = (unsigned char)(hex_nibble(hex[2 * i], fill) << 4 | hex_nibble(hex[2 * i + 1], fill));
        CHECK(zarr_array_builder_set_fill_value(builder, dtype, bytes, n / 2));
    } else if (strcmp(fill, "-") != 0) {
        CHECK(zarr_array_builder_set_fill_value_json(builder, fill));
    }
    if (strcmp(order_s, "-") != 0) CHECK(zarr_array_builder_set_order(builder, parse_order(order_s)));
    if (strcmp(sep, "-") != 0) CHECK(zarr_array_builder_set_dimension_separator(builder, sep));
    if (strcmp(compressor, "-") != 0) CHECK(zarr_array_builder_set_compressor_json(builder, compressor));
    /* ZARR_TOOL_KEY_ENCODING="v2" or "default" sets a v3 array's chunk key encoding (with
       the separator given above, or the encoding's own). */
    const char *key_encoding = getenv("ZARR_TOOL_KEY_ENCODING");
    if (key_encoding)
        CHECK(zarr_array_builder_set_chunk_key_encoding(builder, key_encoding,
                                                        strcmp(sep, "-") != 0 ? sep : NULL));
    /* ZARR_TOOL_SHARD_INDEX="start" or "end", with ",nocrc" for an index without checksum. */
    const char *shard_index = getenv("ZARR_TOOL_SHARD_INDEX");
    if (shard_index)
        CHECK(zarr_array_builder_set_shard_index(builder, strncmp(shard_index, "start", 5) == 0,
                                                 strstr(shard_index, "nocrc") == NULL));
    /* ZARR_TOOL_PERMUTATION="1,2,0" sets the order of the dimensions inside chunks. */
    const char *permutation = getenv("ZARR_TOOL_PERMUTATION");
    if (permutation) {
        uint64_t values[MAX_DIMS];
        size_t perm[MAX_DIMS], n = parse_list(permutation, values);
        for (size_t i = 0; i < n; i++) perm[i] = (size_t)values[i];
        CHECK(zarr_array_builder_set_chunk_permutation(builder, n, perm));
    }
    /* ZARR_TOOL_FILTERS='[{"id": "delta", "dtype": "<i4"}]' sets the filter list. */
    const char *filters = getenv("ZARR_TOOL_FILTERS");
    if (filters) CHECK(zarr_array_builder_set_filters_json(builder, filters));
    /* ZARR_TOOL_MISSING="-9999" sets the CF missing value (a double). */
    const char *missing = getenv("ZARR_TOOL_MISSING");
    if (missing) CHECK(zarr_array_builder_set_missing_value(builder, strtod(missing, NULL)));

    zarr_store_t *store = open_store(argv[0], ZARR_MODE_A);
    zarr_array_t *array = NULL;
    CHECK(zarr_array_create(builder, store, argv[1], ZARR_MODE_W, &array));
    zarr_array_builder_free(builder);
    /* ZARR_TOOL_DIMS="time,x" sets the dimension names ("" for none: a 0-d array). */
    const char *dims = getenv("ZARR_TOOL_DIMS");
    if (dims) {
        char copy[256];
        const char *names[MAX_DIMS];
        size_t n = 0;
        if (strlen(dims) >= sizeof copy) die("ZARR_TOOL_DIMS %s is too long", dims);
        strcpy(copy, dims);
        for (char *name = strtok(copy, ","); name && n < MAX_DIMS; name = strtok(NULL, ","))
            names[n++] = name;
        CHECK(zarr_array_set_dimension_names(array, n, names));
    }
    write_all(array, argv[9], buf_order);
    zarr_array_free(array);
    zarr_store_free(store);
    return 0;
}

static int cmd_write_region(char **argv) {
    zarr_store_t *store = open_store(argv[0], ZARR_MODE_R_PLUS);
    zarr_array_t *array = NULL;
    CHECK(zarr_array_open(store, argv[1], ZARR_MODE_R_PLUS, &array));
    uint64_t start[MAX_DIMS] = {0}, count[MAX_DIMS] = {0};
    size_t n1 = parse_list(argv[2], start), n2 = parse_list(argv[3], count);
    if (n1 != n2) die("start and count differ in length (%s)", argv[2]);
    write_region(array, n1, start, count, argv[4], parse_order(argv[5]));
    zarr_array_free(array);
    commit_if_asked(store);
    zarr_store_free(store);
    return 0;
}

static int cmd_resize(char **argv) {
    zarr_store_t *store = open_store(argv[0], ZARR_MODE_R_PLUS);
    zarr_array_t *array = NULL;
    CHECK(zarr_array_open(store, argv[1], ZARR_MODE_R_PLUS, &array));
    uint64_t shape[MAX_DIMS] = {0};
    size_t n = parse_list(argv[2], shape);
    CHECK(zarr_array_resize(array, n, shape));
    zarr_array_free(array);
    zarr_store_free(store);
    return 0;
}

static int cmd_append(char **argv) {
    zarr_store_t *store = open_store(argv[0], ZARR_MODE_R_PLUS);
    zarr_array_t *array = NULL;
    CHECK(zarr_array_open(store, argv[1], ZARR_MODE_R_PLUS, &array));
    uint64_t axis[1] = {0}, count[MAX_DIMS] = {0};
    if (parse_list(argv[2], axis) != 1) die("bad axis %s", argv[2]);
    size_t n = parse_list(argv[3], count);
    zarr_dtype_t dtype = 0;
    CHECK(zarr_array_dtype(array, &dtype));
    size_t len = 0;
    unsigned char *data = read_file(argv[4], &len);
    CHECK(zarr_array_append(array, (size_t)axis[0], n, count, dtype, parse_order(argv[5]), data, len));
    free(data);
    zarr_array_free(array);
    zarr_store_free(store);
    return 0;
}

static const struct {
    const char *name;
    int nargs;
    int (*run)(char **argv);
} COMMANDS[] = {
    {"dump", 4, cmd_dump},
    {"read-region", 6, cmd_read_region},
    {"create", 5, cmd_create},
    {"build", 11, cmd_build},
    {"write-region", 6, cmd_write_region},
    {"resize", 3, cmd_resize},
    {"append", 6, cmd_append},
    {"group", 3, cmd_group},
    {"tag", 2, cmd_tag},
    {"history", 1, cmd_history},
    {"attrs", 2, cmd_attrs},
};

int main(int argc, char **argv) {
    if (zarr_version_number() != ZARR_VERSION_NUMBER) {
        fprintf(stderr, "zarr_tool: header version %d does not match library %s\n",
                ZARR_VERSION_NUMBER, zarr_version_string());
        return 2;
    }
    if (argc >= 2) {
        for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++) {
            if (strcmp(argv[1], COMMANDS[i].name) == 0) {
                g_what = COMMANDS[i].name;
                if (argc - 2 != COMMANDS[i].nargs) {
                    fprintf(stderr, "zarr_tool %s: expects %d arguments, got %d\n", g_what,
                            COMMANDS[i].nargs, argc - 2);
                    return 2;
                }
                return COMMANDS[i].run(argv + 2);
            }
        }
    }
    fprintf(stderr, "usage: zarr_tool dump|read-region|create|build|write-region|resize|append|group|tag|"
                    "history|attrs ... "
                    "(see zarr_tool.c)\n");
    return 2;
}
