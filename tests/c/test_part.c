/* The one part codec (core/part.h): what a child process hands over to its root and what a
 * spawned MPI process writes into .spawned/ are encoded and read by the same functions. A
 * part of each kind goes through them and comes back field by field; a cut-off part and
 * another file are refused; a spawned process's part is written to disk and collected at
 * the root with its rank and location ids. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/part.h"
#include "ctest.h"

static const unsigned char REPORT[] = "definitions";
static const unsigned char PROFILE[] = {1, 2, 3, 4, 5};
static const unsigned char TRACE[] = {9, 8, 7};

static sp_part_contents child_part(void)
{
    sp_part_contents c;
    memset(&c, 0, sizeof c);
    c.number = 3;
    c.report = REPORT;
    c.report_size = sizeof REPORT;
    for (int k = 0; k < SP_PART_COUNTERS; k++)
        c.counters[k] = 100 + (uint64_t)k;
    c.section[0] = PROFILE;
    c.section_size[0] = sizeof PROFILE;
    c.section[2] = TRACE;
    c.section_size[2] = sizeof TRACE;
    return c;
}

static void test_child_part_round_trip(void)
{
    sp_part_contents c = child_part(), back;
    sp_buffer b;
    sp_buffer_init(&b);
    sp_part_encode(&c, &b);
    CHECK(!b.failed);
    CHECK(sp_part_decode(b.data, b.size, &back));
    CHECK_EQ_U64(back.world, 0);
    CHECK_EQ_U64(back.number, 3);
    CHECK_EQ_U64(back.location_count, 0);
    CHECK_EQ_U64(back.report_size, sizeof REPORT);
    CHECK(back.report && memcmp(back.report, REPORT, sizeof REPORT) == 0);
    for (int k = 0; k < SP_PART_COUNTERS; k++)
        CHECK_EQ_U64(back.counters[k], 100 + (uint64_t)k);
    CHECK_EQ_U64(back.section_size[0], sizeof PROFILE);
    CHECK(back.section[0] && memcmp(back.section[0], PROFILE, sizeof PROFILE) == 0);
    CHECK(back.section[1] == NULL);
    CHECK_EQ_U64(back.section_size[2], sizeof TRACE);
    CHECK(back.section[2] && memcmp(back.section[2], TRACE, sizeof TRACE) == 0);
    /* Any cut-off part is refused (a process that died while writing). */
    for (uint64_t size = 0; size < b.size; size++) {
        sp_part_contents cut;
        CHECK(!sp_part_decode(b.data, size, &cut));
    }
    /* So is another file. */
    b.data[0] = 'X';
    CHECK(!sp_part_decode(b.data, b.size, &back));
    sp_buffer_free(&b);
}

static void test_spawned_part_written_and_collected(void)
{
    char dir[] = "/tmp/sp_test_part_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char err[512] = "";
    uint32_t world = 0xabcd, threads[2] = {0, 5};
    CHECK(sp_part_announce(dir, world, 1, err, sizeof err) == 0);
    sp_part_contents c = child_part();
    memset(c.counters, 0, sizeof c.counters);
    c.world = world;
    c.number = 0;
    c.clock = (sp_part_clock){-7, 11, 1000, 2000, 123, 456};
    c.location_count = 2;
    c.locations = (const unsigned char *)threads;
    CHECK(sp_part_write(dir, &c, err, sizeof err) == 0);
    sp_part *parts = NULL;
    uint32_t count = 0;
    char missing[256];
    CHECK(sp_parts_collect(dir, 5.0, 4, &parts, &count, missing, sizeof missing) == 0);
    CHECK_EQ_U64(count, 1);
    CHECK_STR(missing, "");
    if (count == 1) {
        const sp_part *p = &parts[0];
        CHECK_EQ_U64(p->c.world, world);
        CHECK_EQ_U64(p->c.number, 0);
        CHECK_EQ_U64(p->world_index, 1);
        CHECK_EQ_U64(p->rank, 4);
        CHECK_EQ_U64((uint64_t)p->c.clock.offset_begin_ns, (uint64_t)-7);
        CHECK_EQ_U64(p->c.clock.offset_end_ns, 11);
        CHECK_EQ_U64(p->c.clock.sync_begin_ns, 1000);
        CHECK_EQ_U64(p->c.clock.sync_end_ns, 2000);
        CHECK_EQ_U64(p->c.clock.first_ns, 123);
        CHECK_EQ_U64(p->c.clock.last_ns, 456);
        CHECK_EQ_U64(p->c.location_count, 2);
        CHECK_EQ_U64(p->location_ids[0], (0ull << 32) | 4);
        CHECK_EQ_U64(p->location_ids[1], (5ull << 32) | 4);
        CHECK(p->c.report && memcmp(p->c.report, REPORT, sizeof REPORT) == 0);
        CHECK_EQ_U64(p->c.section_size[2], sizeof TRACE);
    }
    sp_parts_free(dir, parts, count, true);
    CHECK(rmdir(dir) == 0);
}

CTEST_MAIN(test_child_part_round_trip, test_spawned_part_written_and_collected)
