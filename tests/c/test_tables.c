#include "core/tables.h"
#include "core/defs.h"
#include "ctest.h"

static void test_u64map_grows_and_finds(void)
{
    sp_u64map map;
    CHECK(sp_u64map_init(&map, 4) == 0);
    for (uint64_t k = 1; k <= 10000; k++)
        CHECK(sp_u64map_put(&map, k * 7919, (uint32_t)k) == 0);
    CHECK_EQ_U64(map.count, 10000);
    CHECK_EQ_U64(sp_u64map_get(&map, 7919 * 5000), 5000);
    CHECK_EQ_U64(sp_u64map_get(&map, 3), SP_NO_ID);
    CHECK(sp_u64map_put(&map, 7919, 42) == 0); /* overwrite */
    CHECK_EQ_U64(sp_u64map_get(&map, 7919), 42);
    CHECK_EQ_U64(map.count, 10000);
    sp_u64map_free(&map);
}

static void test_strings_intern_dense_ids(void)
{
    sp_string_table t;
    CHECK(sp_strings_init(&t) == 0);
    CHECK_EQ_U64(sp_strings_intern(&t, "a"), 0);
    CHECK_EQ_U64(sp_strings_intern(&t, "b"), 1);
    CHECK_EQ_U64(sp_strings_intern(&t, "a"), 0);
    char name[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "region%d", i);
        CHECK_EQ_U64(sp_strings_intern(&t, name), (uint64_t)i + 2);
    }
    CHECK_EQ_U64(sp_strings_find(&t, "region4999"), 5001);
    CHECK_EQ_U64(sp_strings_find(&t, "absent"), SP_NO_ID);
    CHECK_STR(sp_strings_get(&t, 1), "b");
    CHECK_STR(sp_strings_get(&t, 999999), "");
    sp_strings_free(&t);
}

static void test_defs_named_regions_and_parameters(void)
{
    sp_defs defs;
    CHECK(sp_defs_init(&defs) == 0);
    CHECK_STR(sp_defs_str(&defs, 0), ""); /* string 0 is the empty string */
    uint32_t a = sp_defs_named_region(&defs, "user:a", "/x.py", 3, SP_PARADIGM_USER,
                                      SP_ROLE_FUNCTION, SP_REGION_USER);
    uint32_t again = sp_defs_named_region(&defs, "user:a", "/other.py", 9, SP_PARADIGM_USER,
                                          SP_ROLE_FUNCTION, SP_REGION_USER);
    CHECK_EQ_U64(a, again);
    /* the same name as another kind is another region */
    uint32_t mpi = sp_defs_named_region(&defs, "user:a", "", -1, SP_PARADIGM_MPI,
                                        SP_ROLE_POINT2POINT, SP_REGION_MPI);
    CHECK(mpi != a);
    /* code objects with the same name are distinct regions */
    uint32_t f1 = sp_defs_new_region(&defs, "__main__:f", NULL, "/x.py", 1, 1, SP_PARADIGM_USER,
                                     SP_ROLE_FUNCTION, SP_REGION_PYTHON);
    uint32_t f2 = sp_defs_new_region(&defs, "__main__:f", NULL, "/x.py", 9, 9, SP_PARADIGM_USER,
                                     SP_ROLE_FUNCTION, SP_REGION_PYTHON);
    CHECK(f1 != f2);
    CHECK_EQ_U64(defs.region_count, 4);
    CHECK_STR(sp_defs_str(&defs, defs.regions[a].file), "/x.py");
    CHECK_EQ_U64(defs.regions[a].begin_line, 3);
    CHECK_EQ_U64(sp_defs_find_named_region(&defs, "user:a", SP_REGION_USER, NULL), a);
    CHECK_EQ_U64(sp_defs_find_named_region(&defs, "user:b", SP_REGION_USER, NULL), SP_NO_ID);
    uint32_t p1 = sp_defs_parameter(&defs, "n", SP_PARAM_INT64);
    uint32_t p2 = sp_defs_parameter(&defs, "m", SP_PARAM_INT64);
    uint32_t p3 = sp_defs_parameter(&defs, "n", SP_PARAM_UINT64);
    CHECK(p1 != p2 && p1 != p3 && p2 != p3); /* every name and type its own parameter */
    CHECK_EQ_U64(sp_defs_parameter(&defs, "n", SP_PARAM_INT64), p1);
    sp_defs_free(&defs);
}

CTEST_MAIN(test_u64map_grows_and_finds, test_strings_intern_dense_ids,
           test_defs_named_regions_and_parameters)
