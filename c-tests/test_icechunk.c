/*
 * Icechunk repositories from C: arrays written through icechunk:/// stores, committed and
 * read back at the branch, a tag and a snapshot; discard; a second writer's conflict and
 * rebase; one writer's changes merged into another's commit; history as JSON; branches;
 * and the statuses of stores that keep no history.
 * Exits 77 (skipped) in builds without Icechunk.
 */
#include "check.h"

enum { N = 8 };

static char *url_of(const char *dir, const char *query) {
    size_t len = strlen("icechunk://") + strlen(dir) + strlen(query) + 1;
    char *url = malloc(len);
    CHECK(url != NULL);
    snprintf(url, len, "icechunk://%s%s", dir, query);
    return url;
}

static zarr_store_t *open_at(const char *dir, const char *query, zarr_mode_t mode) {
    zarr_store_t *s = NULL;
    char *url = url_of(dir, query);
    CHECK_OK(zarr_store_open_url(url, mode, NULL, &s));
    free(url);
    return s;
}

/* Writes `base + i` to the int32 array at `path` (created when missing). */
static void write_values(zarr_store_t *s, const char *path, int32_t base) {
    zarr_array_builder_t *b = NULL;
    zarr_array_t *a = NULL;
    const uint64_t shape[1] = {N}, chunks[1] = {4}, origin[1] = {0};
    int32_t data[N];
    for (int i = 0; i < N; i++) data[i] = base + i;
    if (zarr_array_open(s, path, ZARR_MODE_R_PLUS, &a) != ZARR_OK) {
        CHECK_OK(zarr_array_builder_new(ZARR_DTYPE_INT32, 1, shape, &b));
        CHECK_OK(zarr_array_builder_set_chunk_shape(b, 1, chunks));
        CHECK_OK(zarr_array_builder_set_zarr_format(b, 3));
        CHECK_OK(zarr_array_create(b, s, path, ZARR_MODE_W_MINUS, &a));
        zarr_array_builder_free(b);
    }
    CHECK_OK(zarr_array_write(a, 1, origin, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, data,
                              sizeof data));
    zarr_array_free(a);
}

/* Whether the array at `path` holds `base + i`. */
static void check_values(zarr_store_t *s, const char *path, int32_t base) {
    zarr_array_t *a = NULL;
    const uint64_t shape[1] = {N}, origin[1] = {0};
    int32_t back[N] = {0};
    CHECK_OK(zarr_array_open(s, path, ZARR_MODE_R, &a));
    CHECK_OK(zarr_array_read(a, 1, origin, shape, ZARR_DTYPE_INT32, ZARR_ORDER_C, back,
                             sizeof back));
    for (int i = 0; i < N; i++) CHECK_EQ(back[i], base + i);
    zarr_array_free(a);
}

static void commits_tags_and_snapshots(const char *repo) {
    char id[ZARR_SNAPSHOT_ID_BYTES], current[ZARR_SNAPSHOT_ID_BYTES], small[8];
    zarr_store_t *w = open_at(repo, "", ZARR_MODE_A);
    write_values(w, "temperature", 100);
    write_values(w, "pressure", 200);
    /* A buffer too small for the id is refused before anything is committed. */
    CHECK_STATUS(zarr_store_commit(w, "step 1", small, sizeof small), ZARR_ERR_BUFFER_SIZE);
    CHECK_OK(zarr_store_commit(w, "step 1", id, sizeof id));
    CHECK_EQ(strlen(id), 20);
    CHECK_OK(zarr_store_snapshot_id(w, current, sizeof current));
    CHECK_STR(current, id);
    CHECK_OK(zarr_store_create_tag(w, "v1"));
    CHECK_STATUS(zarr_store_create_tag(w, "v1"), ZARR_ERR_EXISTS);
    CHECK_STATUS(zarr_store_commit(w, "nothing new", NULL, 0), ZARR_ERR_INVALID_ARG);

    /* Step 2 is written, then discarded; step 3 is committed. */
    write_values(w, "temperature", 900);
    CHECK_OK(zarr_store_discard(w));
    check_values(w, "temperature", 100);
    write_values(w, "temperature", 300);
    CHECK_OK(zarr_store_commit(w, "step 3", NULL, 0));

    zarr_store_t *head = open_at(repo, "", ZARR_MODE_R);
    check_values(head, "temperature", 300);
    check_values(head, "pressure", 200);
    zarr_store_t *tag = open_at(repo, "?tag=v1", ZARR_MODE_R);
    check_values(tag, "temperature", 100);
    CHECK_STATUS(zarr_store_commit(tag, "no", NULL, 0), ZARR_ERR_READ_ONLY);
    char query[64];
    snprintf(query, sizeof query, "?snapshot=%s", id);
    zarr_store_t *snap = open_at(repo, query, ZARR_MODE_R);
    check_values(snap, "temperature", 100);

    /* History: newest first, with messages; the size is asked first. */
    size_t needed = 0;
    CHECK_STATUS(zarr_store_history_json(head, NULL, 0, &needed), ZARR_ERR_BUFFER_SIZE);
    char *history = malloc(needed);
    CHECK(history != NULL);
    CHECK_OK(zarr_store_history_json(head, history, needed, NULL));
    CHECK(strstr(history, "\"message\":\"step 3\"") < strstr(history, "\"message\":\"step 1\""));
    CHECK(strstr(history, id) != NULL);
    CHECK(strstr(history, "\"parent\":null") != NULL);
    free(history);

    /* A branch at the tag, written on its own. */
    CHECK_OK(zarr_store_create_branch(tag, "rerun"));
    zarr_store_t *rerun = open_at(repo, "?branch=rerun", ZARR_MODE_R_PLUS);
    check_values(rerun, "temperature", 100);
    write_values(rerun, "temperature", 700);
    CHECK_OK(zarr_store_commit(rerun, "rerun", NULL, 0));
    zarr_store_free(rerun);
    zarr_store_t *rerun_head = open_at(repo, "?branch=rerun", ZARR_MODE_R);
    check_values(rerun_head, "temperature", 700);
    check_values(head, "temperature", 300);

    zarr_store_free(rerun_head);
    zarr_store_free(snap);
    zarr_store_free(tag);
    zarr_store_free(head);
    zarr_store_free(w);
}

static void two_writers(const char *repo) {
    zarr_store_t *first = open_at(repo, "", ZARR_MODE_R_PLUS);
    zarr_store_t *second = open_at(repo, "", ZARR_MODE_R_PLUS);
    write_values(first, "temperature", 1000);
    write_values(second, "pressure", 2000);
    CHECK_OK(zarr_store_commit(first, "first", NULL, 0));
    CHECK_STATUS(zarr_store_commit(second, "second", NULL, 0), ZARR_ERR_CONFLICT);
    CHECK_STR(zarr_status_str(ZARR_ERR_CONFLICT), "ZARR_ERR_CONFLICT");
    CHECK_OK(zarr_store_rebase(second));
    CHECK_OK(zarr_store_commit(second, "second", NULL, 0));
    zarr_store_t *head = open_at(repo, "", ZARR_MODE_R);
    check_values(head, "temperature", 1000);
    check_values(head, "pressure", 2000);
    zarr_store_free(head);
    zarr_store_free(second);
    zarr_store_free(first);
}

/* The number of snapshots in the history `store` reads. */
static size_t history_length(zarr_store_t *store) {
    size_t needed = 0, count = 0;
    CHECK_STATUS(zarr_store_history_json(store, NULL, 0, &needed), ZARR_ERR_BUFFER_SIZE);
    char *history = malloc(needed);
    CHECK(history != NULL);
    CHECK_OK(zarr_store_history_json(store, history, needed, NULL));
    for (const char *at = history; (at = strstr(at, "\"id\":")) != NULL; at++) count++;
    free(history);
    return count;
}

/* Two writers on one branch: the second exports its changes, the first merges them and
 * commits both as one snapshot. Garbage bytes and read-only stores are refused. */
static void changes_merged_into_one_commit(const char *repo) {
    zarr_store_t *first = open_at(repo, "", ZARR_MODE_R_PLUS);
    zarr_store_t *second = open_at(repo, "", ZARR_MODE_R_PLUS);
    size_t before = history_length(first);
    write_values(first, "temperature", 3000);
    write_values(second, "pressure", 4000);
    void *bytes = (void *)1;
    size_t len = 1;
    CHECK_OK(zarr_store_changes_export(second, &bytes, &len));
    CHECK(bytes != NULL);
    CHECK(len > 0);

    /* Garbage, a truncated export and NULL are refused, and merge nothing. */
    const char garbage[] = "not the changes of a store";
    CHECK_STATUS(zarr_store_changes_merge(first, garbage, sizeof garbage), ZARR_ERR_INVALID_ARG);
    CHECK_ERROR_CONTAINS("not the changes");
    CHECK_STATUS(zarr_store_changes_merge(first, bytes, len / 2), ZARR_ERR_INVALID_ARG);
    CHECK_STATUS(zarr_store_changes_merge(first, NULL, 8), ZARR_ERR_NULL_ARG);
    zarr_store_t *reader = open_at(repo, "", ZARR_MODE_R);
    CHECK_STATUS(zarr_store_changes_merge(reader, bytes, len), ZARR_ERR_READ_ONLY);
    void *none = (void *)1;
    size_t none_len = 1;
    CHECK_STATUS(zarr_store_changes_export(reader, &none, &none_len), ZARR_ERR_READ_ONLY);
    CHECK(none == NULL);
    CHECK_EQ(none_len, 0);
    none_len = 1;
    CHECK_STATUS(zarr_store_changes_export(second, NULL, &none_len), ZARR_ERR_NULL_ARG);
    CHECK_EQ(none_len, 0);
    check_values(first, "pressure", 2000); /* nothing of the refused merges reached it */

    CHECK_OK(zarr_store_changes_merge(first, bytes, len));
    zarr_bytes_free(bytes);
    zarr_bytes_free(NULL);
    CHECK_OK(zarr_store_commit(first, "both writers", NULL, 0));
    zarr_store_t *head = open_at(repo, "", ZARR_MODE_R);
    check_values(head, "temperature", 3000);
    check_values(head, "pressure", 4000);
    CHECK_EQ(history_length(head), before + 1);

    /* The second writer goes on at that commit: discard, rebase. */
    CHECK_OK(zarr_store_discard(second));
    CHECK_OK(zarr_store_rebase(second));
    check_values(second, "temperature", 3000);
    zarr_store_free(head);
    zarr_store_free(reader);
    zarr_store_free(second);
    zarr_store_free(first);
}

static void missing_and_plain(const char *dir) {
    zarr_store_t *s = NULL;
    char *missing = check_join(dir, "missing");
    char *url = url_of(missing, "");
    CHECK_STATUS(zarr_store_open_url(url, ZARR_MODE_R, NULL, &s), ZARR_ERR_NOT_FOUND);
    CHECK(s == NULL);
    free(url);
    free(missing);
    char *repo = check_join(dir, "repo");
    url = url_of(repo, "?tag=never");
    CHECK_STATUS(zarr_store_open_url(url, ZARR_MODE_R, NULL, &s), ZARR_ERR_NOT_FOUND);
    free(url);
    free(repo);
    /* Stores that keep no history. */
    CHECK_OK(zarr_store_new_memory(&s));
    CHECK_STATUS(zarr_store_commit(s, "m", NULL, 0), ZARR_ERR_UNSUPPORTED);
    CHECK_STATUS(zarr_store_discard(s), ZARR_ERR_UNSUPPORTED);
    CHECK_STATUS(zarr_store_rebase(s), ZARR_ERR_UNSUPPORTED);
    CHECK_STATUS(zarr_store_create_tag(s, "t"), ZARR_ERR_UNSUPPORTED);
    CHECK_STATUS(zarr_store_create_branch(s, "b"), ZARR_ERR_UNSUPPORTED);
    CHECK_STATUS(zarr_store_history_json(s, NULL, 0, NULL), ZARR_ERR_UNSUPPORTED);
    void *bytes = NULL;
    size_t len = 0;
    CHECK_STATUS(zarr_store_changes_export(s, &bytes, &len), ZARR_ERR_UNSUPPORTED);
    CHECK_STATUS(zarr_store_changes_merge(s, "x", 1), ZARR_ERR_UNSUPPORTED);
    zarr_store_free(s);
}

int main(void) {
    if ((zarr_features() & ZARR_HAS_ICECHUNK) == 0) {
        printf("test_icechunk: built without Icechunk, skipped\n");
        return 77;
    }
    char *dir = check_mkdtemp();
    char *repo = check_join(dir, "repo");
    commits_tags_and_snapshots(repo);
    two_writers(repo);
    changes_merged_into_one_commit(repo);
    missing_and_plain(dir);
    free(repo);
    check_rmtree(dir);
    return CHECK_DONE();
}
