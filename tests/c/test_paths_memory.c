#include <string.h>

#include "core/memory.h"
#include "core/paths.h"
#include "ctest.h"

static void check_abs(const char *cwd, const char *path, const char *expected)
{
    char out[256];
    CHECK(sp_path_absolute(cwd, path, out, sizeof out));
    CHECK_STR(out, expected);
}

static void test_path_absolute(void)
{
    check_abs("/home/u", "x.py", "/home/u/x.py");
    check_abs("/home/u", "./a/../b/./c.py", "/home/u/b/c.py");
    check_abs("/home/u", "../../../x.py", "/x.py");
    check_abs("/home/u/", "/abs//dir///f.py", "/abs/dir/f.py");
    check_abs("/", "f.py", "/f.py");
    check_abs("/home/u", "<frozen importlib._bootstrap>", "<frozen importlib._bootstrap>");
    check_abs("/home/u", "<string>", "<string>");
    char small[8];
    CHECK(!sp_path_absolute("/home/user", "file.py", small, sizeof small));
}

static void test_path_is_within(void)
{
    CHECK(sp_path_is_within("/a/scorep/user.py", "/a/scorep"));
    CHECK(sp_path_is_within("/a/scorep/user.py", "/a/scorep/"));
    CHECK(sp_path_is_within("/a/scorep", "/a/scorep"));
    CHECK(!sp_path_is_within("/a/scorep_x/user.py", "/a/scorep"));
    CHECK(!sp_path_is_within("/a/sco", "/a/scorep"));
}

static void test_chunk_pool_budget(void)
{
    sp_chunk_pool pool;
    CHECK(sp_chunk_pool_init(&pool, 4 * 1024 + 100, 1024) == 0);
    CHECK_EQ_U64(pool.budget_chunks, 4);
    void *c[6];
    for (int i = 0; i < 4; i++)
        CHECK((c[i] = sp_chunk_pool_get(&pool, false)) != NULL);
    CHECK(sp_chunk_pool_get(&pool, false) == NULL); /* budget used up */
    CHECK((c[4] = sp_chunk_pool_get(&pool, true)) != NULL); /* progress guaranteed */
    CHECK_EQ_U64(pool.over_budget_chunks, 1);
    CHECK_EQ_U64(pool.peak_chunks, 5);
    sp_chunk_pool_put(&pool, c[4]);
    sp_chunk_pool_put(&pool, c[0]);
    CHECK((c[5] = sp_chunk_pool_get(&pool, false)) != NULL); /* a returned chunk is reused */
    CHECK(c[5] == c[0] || c[5] == c[4]);
    for (int i = 1; i < 4; i++)
        sp_chunk_pool_put(&pool, c[i]);
    sp_chunk_pool_put(&pool, c[5]);
    CHECK_EQ_U64(pool.used_chunks, 0);
    sp_chunk_pool_destroy(&pool);
}

/* Page-sized chunks are mapped in slabs: more than one chunk per mapping, never more held
 * than the budget allows, each chunk whole and writable. */
static void test_chunk_pool_slabs(void)
{
    sp_chunk_pool pool;
    CHECK(sp_chunk_pool_init(&pool, 11 * (uint64_t)SP_CHUNK_SIZE, SP_CHUNK_SIZE) == 0);
    CHECK(pool.mapped);
    void *c[12];
    for (int i = 0; i < 11; i++) {
        CHECK((c[i] = sp_chunk_pool_get(&pool, false)) != NULL);
        memset(c[i], i + 1, SP_CHUNK_SIZE);
        CHECK(pool.used_chunks + pool.free_count <= pool.budget_chunks);
    }
    CHECK_EQ_U64(pool.free_count, 0); /* the second slab was cut to the 3 chunks left */
    CHECK(sp_chunk_pool_get(&pool, false) == NULL);
    CHECK((c[11] = sp_chunk_pool_get(&pool, true)) != NULL);
    memset(c[11], 12, SP_CHUNK_SIZE);
    for (int i = 0; i < 11; i++) {
        const unsigned char *bytes = c[i];
        CHECK(bytes[0] == i + 1 && bytes[SP_CHUNK_SIZE - 1] == i + 1);
    }
    for (int i = 0; i < 12; i++)
        sp_chunk_pool_put(&pool, c[i]);
    CHECK_EQ_U64(pool.used_chunks, 0);
    CHECK_EQ_U64(pool.free_count, 11);
    CHECK((c[0] = sp_chunk_pool_get(&pool, false)) != NULL);
    sp_chunk_pool_put(&pool, c[0]);
    sp_chunk_pool_destroy(&pool);
}

CTEST_MAIN(test_path_absolute, test_path_is_within, test_chunk_pool_budget, test_chunk_pool_slabs)
