/*
 * zarr_tree: runs a script of hierarchy operations through libzarr's public C API, for the
 * hierarchy interop tests (tests/interop/test_hierarchy_interop.py): building trees of
 * groups and arrays, walking them, copying between stores, consolidating, migrating v1
 * arrays, and error paths.
 *
 *   zarr_tree <script>
 *
 * The script has one operation a line, fields separated by TAB (empty fields are allowed:
 * "" is the root path). Stores are opened under a name and referred to by it:
 *
 *   store   NAME SPEC MODE        SPEC: dir:PATH | zip:PATH | zipd:PATH (deflate new
 *                                 entries) | url:URL (zarr_store_open_url with the JSON
 *                                 options in $ZARR_TOOL_STORE_OPTIONS) | mem; MODE: r r+ a w w-
 *   close   NAME                  zarr_store_close
 *   free    NAME                  frees the store's group handles, then zarr_store_free
 *   group   S PATH MODE           opens (creates, by mode) a group and keeps the handle for
 *                                 the operations below: zarr_group_open_group on the kept
 *                                 root handle if there is one and PATH is not "", else
 *                                 zarr_group_open
 *   cgroup  S PATH MODE FORMAT ATTRS   zarr_group_create_with_attrs (handle kept)
 *   gattrs  S PATH JSON           zarr_group_attrs_set   (kept handle, else opened r+)
 *   gattr   S PATH KEY JSON       zarr_group_attr_set    (kept handle, else opened r+)
 *   gattr-get S PATH KEY          prints {"value": <attribute JSON>} (group opened r)
 *   gattrs-get S PATH             prints {"attrs": <attributes JSON>} (group opened r)
 *   array   S GROUP NAME DTYPE SHAPE CHUNKS FILL ORDER SEP COMPRESSOR ATTRS DIMS DATA MODE
 *           creates an array with zarr_group_create_array(MODE) in the kept handle of
 *           GROUP (else GROUP is opened as by "group" with mode a; keeping handles lets a
 *           tree be built in a zip opened w, whose entries read back only after closing).
 *           DTYPE is a zarr_array_builder_set_dtype_name name; SHAPE and CHUNKS are
 *           comma-separated ("" for 0-d); FILL, COMPRESSOR and
 *           ATTRS are JSON or "-" (builder default); ORDER is C or F; SEP "." or "/";
 *           DIMS is "-" or names separated by "," ("~" unnamed; zarr_array_set_dimension_names after
 *           creation); DATA is "-" (nothing written) or a file holding the whole array in
 *           native byte order, C order.
 *   write   S PATH START COUNT DATA   zarr_array_open (r+) + zarr_array_write
 *   dump    S PATH OUT            zarr_array_open (r); prints the array's description and
 *                                 writes its data (native byte order, C order) to OUT
 *   walk    S PATH OUTDIR HOW     HOW: plain (zarr_group_open) | consolidated
 *                                 (zarr_group_open_consolidated); prints one line for
 *                                 every group and array below PATH (depth first, sorted)
 *                                 and dumps each array's data to OUTDIR/<n>.bin
 *   open-group S PATH MODE HOW    opens a group (HOW: plain or consolidated), frees it
 *   open-array S PATH MODE        opens an array and frees it
 *   kind    S PATH                prints {"kind": zarr_node_kind_at}
 *   consolidate S PATH            zarr_consolidate_metadata
 *   copy    S1 PATH1 S2 PATH2 COMPRESSOR MODE   zarr_copy (COMPRESSOR "-" is NULL)
 *   migrate S PATH                zarr_migrate_1to2
 *   delete  S GROUP MEMBER MODE HOW   group opened with MODE (HOW: plain or consolidated),
 *                                 then zarr_group_delete
 *   member  S PATH HOW MEMBER     group at PATH opened r (plain or consolidated);
 *                                 zarr_group_contains(MEMBER), then the member opened by
 *                                 its kind; prints {"member", "kind", "attrs"}
 *   move    S GROUP FROM TO       group opened r+, zarr_group_move
 *   set     S KEY DATA            zarr_store_set with the bytes of file DATA
 *
 * Output is a sequence of JSON objects, each with "op" and "line" (the script line number);
 * an object starts a line, and an array's "metadata" (embedded as libzarr renders it) spans
 * several lines. An operation prefixed with "!" may fail: its status is printed as
 * {"op": ..., "status": "ZARR_ERR_...", "message": "..."} ("ZARR_OK" on success) and the
 * script goes on. Any other failure prints the same line plus a message on stderr and
 * exits with status 1; usage and file errors exit with status 2.
 */
#include "zarr.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIMS 32
#define MAX_FIELDS 32
#define MAX_STORES 16

static int g_line = 0;
static const char *g_op = "";
static int g_may_fail = 0;

/* ------------------------------------------------------------------------------------ */
/* Output                                                                               */
/* ------------------------------------------------------------------------------------ */

/* Prints `s` as a JSON string (UTF-8 passed through, control characters escaped). */
static void json_str(const char *s) {
    if (s == NULL) { /* a null item: an unnamed dimension */
        fputs("null", stdout);
        return;
    }
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", stdout); break;
        case '\\': fputs("\\\\", stdout); break;
        case '\n': fputs("\\n", stdout); break;
        case '\r': fputs("\\r", stdout); break;
        case '\t': fputs("\\t", stdout); break;
        default:
            if (*p < 0x20) printf("\\u%04x", *p);
            else putchar(*p);
        }
    }
    putchar('"');
}

static void line_start(void) {
    printf("{\"op\":");
    json_str(g_op);
    printf(",\"line\":%d", g_line);
}

static void die(const char *fmt, const char *arg) {
    fprintf(stderr, "zarr_tree line %d (%s): ", g_line, g_op);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(2);
}

/* Reports a failed call: prints its status line, then either lets the script go on ("!")
 * or exits. */
static int report(zarr_status_t st, const char *call) {
    char msg[8192];
    zarr_last_error(msg, sizeof msg, NULL);
    line_start();
    printf(",\"status\":");
    json_str(zarr_status_str(st));
    printf(",\"call\":");
    json_str(call);
    printf(",\"message\":");
    json_str(msg);
    printf("}\n");
    fflush(stdout);
    if (!g_may_fail) {
        fprintf(stderr, "zarr_tree line %d (%s): %s failed: %s: %s\n", g_line, g_op, call,
                zarr_status_str(st), msg);
        exit(1);
    }
    return 1;
}

/* Runs a libzarr call; on failure reports it and leaves the operation (returns 1). */
#define TRY(call)                                                                          \
    do {                                                                                   \
        zarr_status_t st_ = (call);                                                        \
        if (st_ != ZARR_OK) {                                                              \
            report(st_, #call);                                                            \
            goto fail;                                                                     \
        }                                                                                  \
    } while (0)

/* ------------------------------------------------------------------------------------ */
/* Helpers                                                                              */
/* ------------------------------------------------------------------------------------ */

#include "tool_common.h"

static zarr_mode_t parse_mode(const char *text) {
    if (strcmp(text, "r") == 0) return ZARR_MODE_R;
    if (strcmp(text, "r+") == 0) return ZARR_MODE_R_PLUS;
    if (strcmp(text, "a") == 0) return ZARR_MODE_A;
    if (strcmp(text, "w") == 0) return ZARR_MODE_W;
    if (strcmp(text, "w-") == 0) return ZARR_MODE_W_MINUS;
    die("bad mode %s", text);
    return ZARR_MODE_R;
}

/* String outputs of the (buf, len, needed) convention, malloc'd; NULL after a failure. */
typedef zarr_status_t (*array_string_fn)(const zarr_array_t *, char *, size_t, size_t *);
typedef zarr_status_t (*group_string_fn)(const zarr_group_t *, char *, size_t, size_t *);

static char *array_string(const zarr_array_t *array, array_string_fn get, const char *name) {
    size_t needed = 0;
    zarr_status_t st = get(array, NULL, 0, &needed);
    if (st != ZARR_OK && st != ZARR_ERR_BUFFER_SIZE) {
        report(st, name);
        return NULL;
    }
    char *buf = malloc(needed ? needed : 1);
    if (!buf) die("out of memory for %s", name);
    st = get(array, buf, needed, &needed);
    if (st != ZARR_OK) {
        free(buf);
        report(st, name);
        return NULL;
    }
    return buf;
}

static char *group_string(const zarr_group_t *group, group_string_fn get, const char *name) {
    size_t needed = 0;
    zarr_status_t st = get(group, NULL, 0, &needed);
    if (st != ZARR_OK && st != ZARR_ERR_BUFFER_SIZE) {
        report(st, name);
        return NULL;
    }
    char *buf = malloc(needed ? needed : 1);
    if (!buf) die("out of memory for %s", name);
    st = get(group, buf, needed, &needed);
    if (st != ZARR_OK) {
        free(buf);
        report(st, name);
        return NULL;
    }
    return buf;
}

static char *group_attr_string(const zarr_group_t *group, const char *key) {
    size_t needed = 0;
    zarr_status_t st = zarr_group_attr_get(group, key, NULL, 0, &needed);
    if (st != ZARR_OK && st != ZARR_ERR_BUFFER_SIZE) {
        report(st, "zarr_group_attr_get");
        return NULL;
    }
    char *buf = malloc(needed ? needed : 1);
    if (!buf) die("out of memory for %s", key);
    st = zarr_group_attr_get(group, key, buf, needed, &needed);
    if (st != ZARR_OK) {
        free(buf);
        report(st, "zarr_group_attr_get");
        return NULL;
    }
    return buf;
}

static char *join_path(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    char *out = malloc(la + lb + 2);
    if (!out) die("out of memory%s", "");
    if (la == 0) {
        memcpy(out, b, lb + 1);
    } else {
        memcpy(out, a, la);
        out[la] = '/';
        memcpy(out + la + 1, b, lb + 1);
    }
    return out;
}

/* The format of groups the script creates: $ZARR_TREE_FORMAT, else 2 (the tests build v2
 * trees unless they ask; arrays take the format of their group). */
static int tree_format(void) {
    const char *format = getenv("ZARR_TREE_FORMAT");
    return format ? atoi(format) : 2;
}

/* Opens the group at `path` plainly or through its consolidated metadata. */
static zarr_status_t open_group_how(zarr_store_t *store, const char *path, zarr_mode_t mode,
                                    const char *how, zarr_group_t **out) {
    if (strcmp(how, "consolidated") == 0)
        return zarr_group_open_consolidated(store, path, mode, out);
    if (strcmp(how, "plain") == 0) return zarr_group_create(store, path, mode, tree_format(), out);
    die("bad group opening %s (plain or consolidated)", how);
    return ZARR_ERR_INVALID_ARG;
}

static const char *kind_name(zarr_node_kind_t kind) {
    switch (kind) {
    case ZARR_NODE_ARRAY: return "array";
    case ZARR_NODE_GROUP: return "group";
    case ZARR_NODE_NONE: return "none";
    default: return "invalid";
    }
}

/* ------------------------------------------------------------------------------------ */
/* Named stores                                                                         */
/* ------------------------------------------------------------------------------------ */

static struct {
    char name[64];
    zarr_store_t *store;
} g_stores[MAX_STORES];

static int store_index(const char *name) {
    for (int i = 0; i < MAX_STORES; i++)
        if (g_stores[i].store && strcmp(g_stores[i].name, name) == 0) return i;
    die("no store named %s", name);
    return -1;
}

static zarr_store_t *store_named(const char *name) {
    return g_stores[store_index(name)].store;
}

/* Group handles kept by "group" (and "array"), by store and path. */
#define MAX_GROUPS 256
static struct {
    int store;
    char *path;
    zarr_group_t *group;
} g_groups[MAX_GROUPS];

static zarr_group_t *kept_group(int store, const char *path) {
    for (int i = 0; i < MAX_GROUPS; i++)
        if (g_groups[i].group && g_groups[i].store == store && strcmp(g_groups[i].path, path) == 0)
            return g_groups[i].group;
    return NULL;
}

static void drop_group(int store, const char *path) {
    for (int i = 0; i < MAX_GROUPS; i++) {
        if (g_groups[i].group && g_groups[i].store == store &&
            (path == NULL || strcmp(g_groups[i].path, path) == 0)) {
            zarr_group_free(g_groups[i].group);
            free(g_groups[i].path);
            g_groups[i].group = NULL;
            g_groups[i].path = NULL;
        }
    }
}

static void keep_group(int store, const char *path, zarr_group_t *group) {
    drop_group(store, path);
    for (int i = 0; i < MAX_GROUPS; i++) {
        if (!g_groups[i].group) {
            g_groups[i].store = store;
            g_groups[i].path = malloc(strlen(path) + 1);
            if (!g_groups[i].path) die("out of memory%s", "");
            strcpy(g_groups[i].path, path);
            g_groups[i].group = group;
            return;
        }
    }
    die("too many groups%s", "");
}

/* Opens the group at `path` (through the kept root handle when there is one) and keeps
 * it. Returns NULL after a reported failure. */
static zarr_group_t *open_kept_group(int store, const char *path, zarr_mode_t mode) {
    zarr_group_t *group = NULL;
    zarr_group_t *root = *path ? kept_group(store, "") : NULL;
    if (root)
        TRY(zarr_group_open_group(root, path, mode, &group));
    else
        TRY(zarr_group_create(g_stores[store].store, path, mode, tree_format(), &group));
    keep_group(store, path, group);
    return group;
fail:
    return NULL;
}

/* The kept handle of the group at `path`, else the group opened with `mode` (and kept). */
static zarr_group_t *group_for_update(const char *store_name, const char *path, zarr_mode_t mode) {
    int store = store_index(store_name);
    zarr_group_t *group = kept_group(store, path);
    return group ? group : open_kept_group(store, path, mode);
}

static int op_store(char **f) {
    zarr_store_t *store = NULL;
    zarr_mode_t mode = parse_mode(f[2]);
    if (strncmp(f[1], "dir:", 4) == 0) {
        TRY(zarr_store_open_fs(f[1] + 4, mode, &store));
    } else if (strncmp(f[1], "zip:", 4) == 0) {
        TRY(zarr_store_open_zip(f[1] + 4, mode, false, &store));
    } else if (strncmp(f[1], "zipd:", 5) == 0) {
        TRY(zarr_store_open_zip(f[1] + 5, mode, true, &store));
    } else if (strncmp(f[1], "url:", 4) == 0) {
        TRY(zarr_store_open_url(f[1] + 4, mode, getenv("ZARR_TOOL_STORE_OPTIONS"), &store));
    } else if (strcmp(f[1], "mem") == 0) {
        TRY(zarr_store_new_memory(&store));
    } else {
        die("bad store spec %s", f[1]);
    }
    for (int i = 0; i < MAX_STORES; i++) {
        if (!g_stores[i].store) {
            snprintf(g_stores[i].name, sizeof g_stores[i].name, "%s", f[0]);
            g_stores[i].store = store;
            return 0;
        }
    }
    die("too many stores%s", "");
fail:
    return 1;
}

static int op_close(char **f) {
    TRY(zarr_store_close(store_named(f[0])));
    return 0;
fail:
    return 1;
}

static int op_free(char **f) {
    for (int i = 0; i < MAX_STORES; i++) {
        if (g_stores[i].store && strcmp(g_stores[i].name, f[0]) == 0) {
            drop_group(i, NULL);
            zarr_store_free(g_stores[i].store);
            g_stores[i].store = NULL;
            return 0;
        }
    }
    die("no store named %s", f[0]);
    return 1;
}

/* ------------------------------------------------------------------------------------ */
/* Groups and attributes                                                                */
/* ------------------------------------------------------------------------------------ */

static int op_group(char **f) {
    return open_kept_group(store_index(f[0]), f[1], parse_mode(f[2])) ? 0 : 1;
}

static int op_cgroup(char **f) {
    zarr_group_t *group = NULL;
    TRY(zarr_group_create_with_attrs(store_named(f[0]), f[1], parse_mode(f[2]), atoi(f[3]), f[4],
                                     &group));
    keep_group(store_index(f[0]), f[1], group);
    return 0;
fail:
    return 1;
}

static int op_gattrs(char **f) {
    zarr_group_t *group = group_for_update(f[0], f[1], ZARR_MODE_R_PLUS);
    if (!group) return 1;
    TRY(zarr_group_attrs_set(group, f[2]));
    return 0;
fail:
    return 1;
}

static int op_gattr(char **f) {
    zarr_group_t *group = group_for_update(f[0], f[1], ZARR_MODE_R_PLUS);
    if (!group) return 1;
    TRY(zarr_group_attr_set(group, f[2], f[3]));
    return 0;
fail:
    return 1;
}

static int op_gattr_get(char **f) {
    zarr_group_t *group = NULL;
    TRY(zarr_group_open(store_named(f[0]), f[1], ZARR_MODE_R, &group));
    char *value = group_attr_string(group, f[2]);
    if (!value) goto fail;
    line_start();
    printf(",\"value\":%s}\n", value);
    free(value);
    zarr_group_free(group);
    return 0;
fail:
    zarr_group_free(group);
    return 1;
}

static int op_gattrs_get(char **f) {
    zarr_group_t *group = NULL;
    TRY(zarr_group_open(store_named(f[0]), f[1], ZARR_MODE_R, &group));
    char *attrs = group_string(group, zarr_group_attrs_get, "zarr_group_attrs_get");
    if (!attrs) goto fail;
    line_start();
    printf(",\"attrs\":%s}\n", attrs);
    free(attrs);
    zarr_group_free(group);
    return 0;
fail:
    zarr_group_free(group);
    return 1;
}

static int op_open_group(char **f) {
    zarr_group_t *group = NULL;
    TRY(open_group_how(store_named(f[0]), f[1], parse_mode(f[2]), f[3], &group));
    zarr_group_free(group);
    return 0;
fail:
    return 1;
}

/* member S PATH HOW MEMBER: zarr_group_contains(MEMBER) on the group at PATH, then the
 * member opened by its kind (zarr_group_open_group / zarr_group_open_array, mode r). */
static int op_member(char **f) {
    zarr_group_t *group = NULL, *child = NULL;
    zarr_array_t *array = NULL;
    zarr_node_kind_t kind = -1;
    char *attrs = NULL;
    TRY(open_group_how(store_named(f[0]), f[1], ZARR_MODE_R, f[2], &group));
    TRY(zarr_group_contains(group, f[3], &kind));
    if (kind == ZARR_NODE_GROUP) {
        TRY(zarr_group_open_group(group, f[3], ZARR_MODE_R, &child));
        attrs = group_string(child, zarr_group_attrs_get, "zarr_group_attrs_get");
    } else if (kind == ZARR_NODE_ARRAY) {
        TRY(zarr_group_open_array(group, f[3], ZARR_MODE_R, &array));
        attrs = array_string(array, zarr_array_attrs_get, "zarr_array_attrs_get");
    }
    if (kind != ZARR_NODE_NONE && !attrs) goto fail;
    line_start();
    printf(",\"member\":");
    json_str(f[3]);
    printf(",\"kind\":\"%s\",\"attrs\":%s}\n", kind_name(kind), attrs ? attrs : "null");
    free(attrs);
    zarr_array_free(array);
    zarr_group_free(child);
    zarr_group_free(group);
    return 0;
fail:
    free(attrs);
    zarr_array_free(array);
    zarr_group_free(child);
    zarr_group_free(group);
    return 1;
}

static int op_open_array(char **f) {
    zarr_array_t *array = NULL;
    TRY(zarr_array_open(store_named(f[0]), f[1], parse_mode(f[2]), &array));
    zarr_array_free(array);
    return 0;
fail:
    return 1;
}

static int op_kind(char **f) {
    zarr_node_kind_t kind = -1;
    TRY(zarr_node_kind_at(store_named(f[0]), f[1], &kind));
    line_start();
    printf(",\"kind\":\"%s\"}\n", kind_name(kind));
    return 0;
fail:
    return 1;
}

static int op_consolidate(char **f) {
    TRY(zarr_consolidate_metadata(store_named(f[0]), f[1]));
    return 0;
fail:
    return 1;
}

static int op_copy(char **f) {
    const char *compressor = strcmp(f[4], "-") == 0 ? NULL : f[4];
    TRY(zarr_copy(store_named(f[0]), f[1], store_named(f[2]), f[3], compressor, parse_mode(f[5])));
    return 0;
fail:
    return 1;
}

static int op_migrate(char **f) {
    TRY(zarr_migrate_1to2(store_named(f[0]), f[1]));
    return 0;
fail:
    return 1;
}

static int op_delete(char **f) {
    zarr_group_t *group = NULL;
    TRY(open_group_how(store_named(f[0]), f[1], parse_mode(f[3]), f[4], &group));
    TRY(zarr_group_delete(group, f[2]));
    zarr_group_free(group);
    return 0;
fail:
    zarr_group_free(group);
    return 1;
}

static int op_move(char **f) {
    zarr_group_t *group = NULL;
    TRY(zarr_group_open(store_named(f[0]), f[1], ZARR_MODE_R_PLUS, &group));
    TRY(zarr_group_move(group, f[2], f[3]));
    zarr_group_free(group);
    return 0;
fail:
    zarr_group_free(group);
    return 1;
}

static int op_set(char **f) {
    size_t len = 0;
    unsigned char *data = read_file(f[2], &len);
    zarr_status_t st = zarr_store_set(store_named(f[0]), f[1], data, len);
    free(data);
    TRY(st);
    return 0;
fail:
    return 1;
}

/* ------------------------------------------------------------------------------------ */
/* Arrays                                                                               */
/* ------------------------------------------------------------------------------------ */

static uint64_t region_bytes(const zarr_array_t *array, size_t ndim, const uint64_t *count) {
    size_t item = 0;
    if (zarr_array_item_size(array, &item) != ZARR_OK) return 0;
    uint64_t n = item;
    for (size_t i = 0; i < ndim; i++) n *= count[i];
    return n;
}

/* Creates the dims list for zarr_array_set_dimension_names from "a,b,c" (in place); a name
   "~" is NULL (an unnamed dimension). */
static size_t split_names(char *text, const char **names) {
    size_t n = 0;
    if (*text == '\0') return 0;
    for (char *p = text;;) {
        if (n == MAX_DIMS) die("too many dimension names in %s", text);
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        names[n++] = strcmp(p, "~") == 0 ? NULL : p;
        if (!comma) break;
        p = comma + 1;
    }
    return n;
}

static int write_whole(const zarr_array_t *array, const char *data_path) {
    unsigned char *data = NULL;
    size_t rank = 0;
    uint64_t start[MAX_DIMS] = {0}, shape[MAX_DIMS] = {0};
    zarr_dtype_t dtype = 0;
    TRY(zarr_array_rank(array, &rank));
    TRY(zarr_array_shape(array, rank, shape));
    TRY(zarr_array_dtype(array, &dtype));
    size_t len = 0;
    data = read_file(data_path, &len);
    if (len != region_bytes(array, rank, shape)) die("%s has the wrong size", data_path);
    TRY(zarr_array_write(array, rank, start, shape, dtype, ZARR_ORDER_C, data, len));
    free(data);
    return 0;
fail:
    free(data);
    return 1;
}

static int op_array(char **f) {
    const char *group_path = f[1], *name = f[2], *dtype_name = f[3];
    const char *fill = f[6], *order = f[7], *sep = f[8], *compressor = f[9], *attrs = f[10];
    char *dims = f[11];
    const char *data = f[12];
    zarr_mode_t mode = parse_mode(f[13]);
    zarr_array_builder_t *builder = NULL;
    zarr_array_t *array = NULL;
    uint64_t shape[MAX_DIMS] = {0}, chunks[MAX_DIMS] = {0};
    size_t rank = parse_list(f[4], shape);
    zarr_dtype_t dtype = 0;

    zarr_group_t *group = group_for_update(f[0], group_path, ZARR_MODE_A);
    if (!group) return 1;
    TRY(zarr_dtype_from_name(dtype_name, &dtype));
    TRY(zarr_array_builder_new(dtype, rank, shape, &builder));
    TRY(zarr_array_builder_set_dtype_name(builder, dtype_name));
    if (strcmp(f[5], "-") != 0) {
        size_t n = parse_list(f[5], chunks);
        TRY(zarr_array_builder_set_chunk_shape(builder, n, chunks));
    }
    if (strcmp(fill, "-") != 0) TRY(zarr_array_builder_set_fill_value_json(builder, fill));
    if (strcmp(order, "-") != 0)
        TRY(zarr_array_builder_set_order(builder,
                                         strcmp(order, "F") == 0 ? ZARR_ORDER_F : ZARR_ORDER_C));
    if (strcmp(sep, "-") != 0) TRY(zarr_array_builder_set_dimension_separator(builder, sep));
    if (strcmp(compressor, "-") != 0)
        TRY(zarr_array_builder_set_compressor_json(builder, compressor));
    if (strcmp(attrs, "-") != 0) TRY(zarr_array_builder_set_attributes_json(builder, attrs));
    TRY(zarr_group_create_array(group, builder, name, mode, &array));
    if (strcmp(dims, "-") != 0) {
        const char *names[MAX_DIMS];
        size_t n = split_names(dims, names);
        TRY(zarr_array_set_dimension_names(array, n, names));
    }
    if (strcmp(data, "-") != 0 && write_whole(array, data) != 0) goto fail;
    zarr_array_free(array);
    zarr_array_builder_free(builder);
    return 0;
fail:
    zarr_array_free(array);
    zarr_array_builder_free(builder);
    return 1;
}

static int op_write(char **f) {
    zarr_array_t *array = NULL;
    unsigned char *data = NULL;
    uint64_t start[MAX_DIMS] = {0}, count[MAX_DIMS] = {0};
    size_t n1 = parse_list(f[2], start), n2 = parse_list(f[3], count);
    if (n1 != n2) die("start and count differ in length (%s)", f[2]);
    zarr_dtype_t dtype = 0;
    TRY(zarr_array_open(store_named(f[0]), f[1], ZARR_MODE_R_PLUS, &array));
    TRY(zarr_array_dtype(array, &dtype));
    size_t len = 0;
    data = read_file(f[4], &len);
    TRY(zarr_array_write(array, n1, start, count, dtype, ZARR_ORDER_C, data, len));
    free(data);
    zarr_array_free(array);
    return 0;
fail:
    free(data);
    zarr_array_free(array);
    return 1;
}

static void print_u64_list(const uint64_t *v, size_t n) {
    putchar('[');
    for (size_t i = 0; i < n; i++) printf("%s%" PRIu64, i ? "," : "", v[i]);
    putchar(']');
}

/* Reads the array's description and data (written to out_path), then prints one line
 * for the array at `path` (nothing is printed before every call has succeeded). Returns
 * 0, or 1 after a reported failure. */
static int describe_array(const zarr_array_t *array, const char *path, const char *out_path) {
    char *dtype_name = NULL, *fill_json = NULL, *meta = NULL, *attrs = NULL;
    zarr_strings_t *dims = NULL;
    void *buf = NULL;
    size_t rank = 0, item = 0;
    uint64_t shape[MAX_DIMS] = {0}, chunks[MAX_DIMS] = {0}, start[MAX_DIMS] = {0};
    uint64_t nchunks = 0, ninit = 0;
    zarr_dtype_t dtype = 0;
    zarr_order_t order = 0;
    int32_t format = 0;
    TRY(zarr_array_rank(array, &rank));
    if (rank > MAX_DIMS) die("rank too large%s", "");
    TRY(zarr_array_shape(array, rank, shape));
    TRY(zarr_array_chunk_shape(array, rank, chunks));
    TRY(zarr_array_dtype(array, &dtype));
    TRY(zarr_array_item_size(array, &item));
    TRY(zarr_array_order(array, &order));
    TRY(zarr_array_zarr_format(array, &format));
    TRY(zarr_array_nchunks(array, &nchunks));
    TRY(zarr_array_nchunks_initialized(array, &ninit));
    dtype_name = array_string(array, zarr_array_dtype_name, "zarr_array_dtype_name");
    if (!dtype_name) goto fail;
    fill_json = array_string(array, zarr_array_fill_value_json, "zarr_array_fill_value_json");
    if (!fill_json) goto fail;
    meta = array_string(array, zarr_array_metadata_json, "zarr_array_metadata_json");
    if (!meta) goto fail;
    if (!(attrs = array_string(array, zarr_array_attrs_get, "zarr_array_attrs_get"))) goto fail;
    zarr_status_t st = zarr_array_dimension_names(array, &dims);
    if (st != ZARR_OK && st != ZARR_ERR_NOT_FOUND) TRY(st);
    uint64_t bytes = region_bytes(array, rank, shape);
    buf = malloc(bytes ? (size_t)bytes : 1);
    if (!buf) die("out of memory for %s", out_path);
    TRY(zarr_array_read(array, rank, start, shape, dtype, ZARR_ORDER_C, buf, (size_t)bytes));
    write_file(out_path, buf, (size_t)bytes);

    line_start();
    printf(",\"kind\":\"array\",\"path\":");
    json_str(path);
    printf(",\"shape\":");
    print_u64_list(shape, rank);
    printf(",\"chunks\":");
    print_u64_list(chunks, rank);
    printf(",\"dtype_name\":");
    json_str(dtype_name);
    printf(",\"mem_dtype\":\"%s\",\"item_size\":%zu,\"order\":\"%s\",\"zarr_format\":%d",
           zarr_dtype_name(dtype), item, order == ZARR_ORDER_F ? "F" : "C", (int)format);
    printf(",\"nchunks\":%" PRIu64 ",\"nchunks_initialized\":%" PRIu64, nchunks, ninit);
    printf(",\"fill_value\":%s,\"metadata\":%s,\"attrs\":%s,\"dims\":", fill_json, meta, attrs);
    if (dims) {
        putchar('[');
        for (size_t i = 0; i < zarr_strings_count(dims); i++) {
            if (i) putchar(',');
            json_str(zarr_strings_get(dims, i));
        }
        putchar(']');
    } else {
        printf("null");
    }
    printf(",\"data\":");
    json_str(out_path);
    printf("}\n");
    free(dtype_name);
    free(fill_json);
    free(meta);
    free(attrs);
    free(buf);
    zarr_strings_free(dims);
    return 0;
fail:
    free(dtype_name);
    free(fill_json);
    free(meta);
    free(attrs);
    free(buf);
    zarr_strings_free(dims);
    return 1;
}

static int op_dump(char **f) {
    zarr_array_t *array = NULL;
    TRY(zarr_array_open(store_named(f[0]), f[1], ZARR_MODE_R, &array));
    if (describe_array(array, f[1], f[2]) != 0) goto fail;
    zarr_array_free(array);
    return 0;
fail:
    zarr_array_free(array);
    return 1;
}

/* ------------------------------------------------------------------------------------ */
/* Walking a tree                                                                       */
/* ------------------------------------------------------------------------------------ */

static int g_walk_files = 0;

static void print_strings(const zarr_strings_t *list) {
    putchar('[');
    for (size_t i = 0; i < zarr_strings_count(list); i++) {
        if (i) putchar(',');
        json_str(zarr_strings_get(list, i));
    }
    putchar(']');
}

/* Walks `group` (at store path `path`): one line for the group, then its arrays, then its
 * subgroups recursively. Checks zarr_group_contains and zarr_node_kind_at on every member
 * and reports them. */
static int walk_group(zarr_store_t *store, const zarr_group_t *group, const char *path,
                      const char *outdir) {
    zarr_strings_t *groups = NULL, *arrays = NULL, *all = NULL;
    char *attrs = NULL, *gpath = NULL;
    TRY(zarr_group_members(group, ZARR_NODE_GROUP, &groups));
    TRY(zarr_group_members(group, ZARR_NODE_ARRAY, &arrays));
    TRY(zarr_group_members(group, ZARR_NODE_NONE, &all));
    if (!(attrs = group_string(group, zarr_group_attrs_get, "zarr_group_attrs_get"))) goto fail;
    if (!(gpath = group_string(group, zarr_group_path, "zarr_group_path"))) goto fail;
    line_start();
    printf(",\"kind\":\"group\",\"path\":");
    json_str(path);
    printf(",\"group_path\":");
    json_str(gpath);
    printf(",\"groups\":");
    print_strings(groups);
    printf(",\"arrays\":");
    print_strings(arrays);
    printf(",\"members\":");
    print_strings(all);
    printf(",\"attrs\":%s,\"contains\":{", attrs);
    /* The kind of every member, as the group and as the store see it. */
    for (size_t i = 0; i < zarr_strings_count(all); i++) {
        const char *name = zarr_strings_get(all, i);
        zarr_node_kind_t in_group = -1, in_store = -1;
        char *full = join_path(path, name);
        zarr_status_t st1 = zarr_group_contains(group, name, &in_group);
        zarr_status_t st2 = zarr_node_kind_at(store, full, &in_store);
        free(full);
        if (i) putchar(',');
        json_str(name);
        printf(":[\"%s\",\"%s\"]", st1 == ZARR_OK ? kind_name(in_group) : zarr_status_str(st1),
               st2 == ZARR_OK ? kind_name(in_store) : zarr_status_str(st2));
    }
    printf("}}\n");

    for (size_t i = 0; i < zarr_strings_count(arrays); i++) {
        const char *name = zarr_strings_get(arrays, i);
        char *full = join_path(path, name);
        char out[4096];
        snprintf(out, sizeof out, "%s/%d.bin", outdir, g_walk_files++);
        zarr_array_t *array = NULL;
        zarr_status_t st = zarr_group_open_array(group, name, ZARR_MODE_R, &array);
        if (st != ZARR_OK) {
            free(full);
            TRY(st);
        }
        int bad = describe_array(array, full, out);
        free(full);
        zarr_array_free(array);
        if (bad) goto fail;
    }
    for (size_t i = 0; i < zarr_strings_count(groups); i++) {
        const char *name = zarr_strings_get(groups, i);
        zarr_group_t *child = NULL;
        TRY(zarr_group_open_group(group, name, ZARR_MODE_R, &child));
        char *full = join_path(path, name);
        int bad = walk_group(store, child, full, outdir);
        free(full);
        zarr_group_free(child);
        if (bad) goto fail;
    }
    zarr_strings_free(groups);
    zarr_strings_free(arrays);
    zarr_strings_free(all);
    free(attrs);
    free(gpath);
    return 0;
fail:
    zarr_strings_free(groups);
    zarr_strings_free(arrays);
    zarr_strings_free(all);
    free(attrs);
    free(gpath);
    return 1;
}

static int op_walk(char **f) {
    zarr_store_t *store = store_named(f[0]);
    zarr_group_t *group = NULL;
    TRY(open_group_how(store, f[1], ZARR_MODE_R, f[3], &group));
    int bad = walk_group(store, group, f[1], f[2]);
    zarr_group_free(group);
    return bad;
fail:
    return 1;
}

/* ------------------------------------------------------------------------------------ */
/* The script                                                                           */
/* ------------------------------------------------------------------------------------ */

static const struct {
    const char *name;
    int nargs;
    int (*run)(char **f);
} OPS[] = {
    {"store", 3, op_store},
    {"close", 1, op_close},
    {"free", 1, op_free},
    {"group", 3, op_group},
    {"cgroup", 5, op_cgroup},
    {"gattrs", 3, op_gattrs},
    {"gattr", 4, op_gattr},
    {"gattr-get", 3, op_gattr_get},
    {"gattrs-get", 2, op_gattrs_get},
    {"array", 14, op_array},
    {"write", 5, op_write},
    {"dump", 3, op_dump},
    {"walk", 4, op_walk},
    {"open-group", 4, op_open_group},
    {"open-array", 3, op_open_array},
    {"kind", 2, op_kind},
    {"consolidate", 2, op_consolidate},
    {"copy", 6, op_copy},
    {"migrate", 2, op_migrate},
    {"delete", 5, op_delete},
    {"member", 4, op_member},
    {"move", 4, op_move},
    {"set", 3, op_set},
};

int main(int argc, char **argv) {
    if (zarr_version_number() != ZARR_VERSION_NUMBER) {
        fprintf(stderr, "zarr_tree: header version %d does not match library %s\n",
                ZARR_VERSION_NUMBER, zarr_version_string());
        return 2;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: zarr_tree <script> (see zarr_tree.c)\n");
        return 2;
    }
    size_t len = 0;
    char *script = (char *)read_file(argv[1], &len);
    char *next = script;
    while (next && *next) {
        char *line = next;
        char *nl = strchr(line, '\n');
        if (nl) {
            *nl = '\0';
            next = nl + 1;
        } else {
            next = NULL;
        }
        g_line++;
        if (*line == '\0' || *line == '#') continue;
        char *fields[MAX_FIELDS + 1];
        int n = 0;
        for (char *p = line;;) {
            if (n == MAX_FIELDS + 1) die("too many fields%s", "");
            fields[n++] = p;
            char *tab = strchr(p, '\t');
            if (!tab) break;
            *tab = '\0';
            p = tab + 1;
        }
        const char *op = fields[0];
        g_may_fail = op[0] == '!';
        if (g_may_fail) op++;
        g_op = op;
        size_t i = 0;
        for (; i < sizeof OPS / sizeof OPS[0]; i++)
            if (strcmp(op, OPS[i].name) == 0) break;
        if (i == sizeof OPS / sizeof OPS[0]) die("unknown operation %s", op);
        if (n - 1 != OPS[i].nargs) {
            fprintf(stderr, "zarr_tree line %d: %s expects %d fields, got %d\n", g_line, op,
                    OPS[i].nargs, n - 1);
            return 2;
        }
        int bad = OPS[i].run(fields + 1);
        if (g_may_fail && !bad) {
            line_start();
            printf(",\"status\":\"ZARR_OK\"}\n");
        }
        fflush(stdout);
    }
    for (int i = 0; i < MAX_STORES; i++) {
        drop_group(i, NULL);
        zarr_store_free(g_stores[i].store);
    }
    free(script);
    return 0;
}
