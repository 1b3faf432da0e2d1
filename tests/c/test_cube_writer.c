/* Unit tests of the CUBE4 writer: row orders, tar framing, the exact bytes of index and data
 * files, the anchor.xml text, escaping and input validation. The Python round trip
 * (tests/test_cube_writer_roundtrip.py) then reads real files back with scorep.cube.
 *
 *   gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Isrc/scorep/_native -Itests/c \
 *       tests/c/test_cube_writer.c src/scorep/_native/substrates/profile/cube_writer.c -o /tmp/t && /tmp/t
 */
#include "substrates/profile/cube_writer.h"
#include "ctest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------------------- */

typedef struct {
    unsigned char *bytes;
    size_t size;
} blob;

static blob slurp(const char *path)
{
    blob b = {NULL, 0};
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return b;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    b.bytes = malloc(size > 0 ? (size_t)size : 1);
    if (b.bytes != NULL && fread(b.bytes, 1, (size_t)size, f) == (size_t)size)
        b.size = (size_t)size;
    fclose(f);
    return b;
}

static uint64_t parse_octal(const unsigned char *field, size_t width)
{
    uint64_t v = 0;
    for (size_t i = 0; i < width && field[i] >= '0' && field[i] <= '7'; i++)
        v = v * 8 + (uint64_t)(field[i] - '0');
    return v;
}

static unsigned header_sum(const unsigned char *h)
{
    unsigned sum = 0;
    for (size_t i = 0; i < 512; i++)
        sum += (i >= 148 && i < 156) ? ' ' : h[i];
    return sum;
}

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return 0;
    return 1;
}

#define MAX_MEMBERS 16

typedef struct {
    char name[101];
    const unsigned char *data;
    size_t size;
} member;

/* Walks the archive, checking every header and the padding; returns the member count or -1. */
static int list_members(const blob *b, member *out, int max)
{
    size_t off = 0;
    int n = 0;
    CHECK(b->size % 512 == 0);
    while (off + 512 <= b->size) {
        const unsigned char *h = b->bytes + off;
        if (all_zero(h, 512)) {
            /* The end: exactly two zero blocks and nothing after them. */
            CHECK_EQ_U64(b->size - off, 1024);
            CHECK(all_zero(h, 1024));
            return n;
        }
        CHECK(memcmp(h + 257, "ustar\0" "00", 8) == 0);
        CHECK(h[156] == '0');
        CHECK_EQ_U64(parse_octal(h + 148, 8), header_sum(h));
        CHECK(h[154] == '\0' && h[155] == ' ');
        uint64_t size = parse_octal(h + 124, 12);
        CHECK(h[135] == '\0');
        size_t padded = (size_t)((size + 511) / 512 * 512);
        if (n >= max || off + 512 + padded > b->size) {
            CHECK(!"member runs past the end of the archive");
            return -1;
        }
        memcpy(out[n].name, h, 100);
        out[n].name[100] = '\0';
        out[n].data = h + 512;
        out[n].size = (size_t)size;
        CHECK(all_zero(h + 512 + size, padded - (size_t)size)); /* zero padding */
        n++;
        off += 512 + padded;
    }
    CHECK(!"no end-of-archive blocks");
    return -1;
}

static const member *find(const member *m, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(m[i].name, name) == 0)
            return &m[i];
    return NULL;
}

static char tmpdir[64];

/* Every test removes its files, so the directory is empty at exit. */
static void remove_tmpdir(void) { rmdir(tmpdir); }

static const char *tmp_path(const char *name)
{
    static char path[128];
    if (tmpdir[0] == '\0') {
        strcpy(tmpdir, "/tmp/test_cube_writer.XXXXXX");
        if (mkdtemp(tmpdir) == NULL) {
            perror("mkdtemp");
            exit(2);
        }
        atexit(remove_tmpdir);
    }
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return path;
}

/* ---- the small profile used by several tests ------------------------------------------ */

/* main{a{c}, b{c}}, created in preorder: indexes 0 main, 1 a, 2 a/c, 3 b, 4 b/c. */
static const cube_cnode tree_preorder[] = {
    {0, -1, CUBE_PARAM_NONE, NULL, 0, NULL}, {1, 0, CUBE_PARAM_NONE, NULL, 0, NULL},
    {3, 1, CUBE_PARAM_NONE, NULL, 0, NULL},  {2, 0, CUBE_PARAM_NONE, NULL, 0, NULL},
    {3, 3, CUBE_PARAM_NONE, NULL, 0, NULL},
};

static const cube_region small_regions[] = {
    {"main", NULL, NULL, -1, -1, "measurement", "artificial", NULL, NULL, 0},
    {"a", "mod:a", "/src/m.py", 10, 20, "user", "function", NULL, NULL, 0},
    {"b<&>\"'", NULL, "/src/m.py", 30, -1, NULL, NULL, "desc & more", NULL, 0},
    {"c", NULL, "", -1, -1, "user", "function", NULL, NULL, 0},
};

static const cube_metric small_metrics[] = {
    {"visits", "Visits", "occ", "", "Number of visits", CUBE_DTYPE_UINT64, CUBE_EXCLUSIVE, 0},
    {"time", "Time", "sec", NULL, NULL, CUBE_DTYPE_DOUBLE, CUBE_INCLUSIVE, 0},
};

static const cube_system_node small_nodes[] = {{"node host1"}};
static const cube_location_group small_groups[] = {{"MPI Rank 0", 0, 0}, {"MPI Rank 1", 1, 0}};
static const cube_location small_locations[] = {{"Master thread", 0}, {"Master thread", 1}};

typedef struct {
    int calls;
    uint32_t seen_metric[16], seen_cnode[16];
    int fail_at; /* call number that returns an error, -1 = never */
} row_log;

/* value = 1000 * metric + 10 * cnode index + location: every byte in the file is traceable. */
static int small_row(void *user, uint32_t metric, uint32_t cnode, void *out)
{
    row_log *log = user;
    if (log->calls < 16) {
        log->seen_metric[log->calls] = metric;
        log->seen_cnode[log->calls] = cnode;
    }
    if (log->calls++ == log->fail_at)
        return -1;
    for (uint32_t loc = 0; loc < 2; loc++) {
        uint64_t v = 1000u * metric + 10u * cnode + loc;
        if (small_metrics[metric].dtype == CUBE_DTYPE_UINT64)
            ((uint64_t *)out)[loc] = v;
        else
            ((double *)out)[loc] = (double)v + 0.5;
    }
    return 0;
}

static cube_profile small_profile(const cube_cnode *cnodes, size_t ncnodes, row_log *log)
{
    cube_profile p;
    memset(&p, 0, sizeof p);
    p.creator = "test";
    p.regions = small_regions;
    p.nregions = 4;
    p.cnodes = cnodes;
    p.ncnodes = ncnodes;
    p.metrics = small_metrics;
    p.nmetrics = 2;
    p.nodes = small_nodes;
    p.nnodes = 1;
    p.groups = small_groups;
    p.ngroups = 2;
    p.locations = small_locations;
    p.nlocations = 2;
    p.row = small_row;
    p.row_user = log;
    return p;
}

/* ---- tests ---------------------------------------------------------------------------- */

static void test_row_orders(void)
{
    uint32_t deep[6], wide[6];
    char err[256];
    CHECK(cube_row_orders(tree_preorder, 5, deep, wide, err, sizeof err) == 0);
    const uint32_t deep_want[] = {0, 1, 2, 3, 4}, wide_want[] = {0, 1, 3, 2, 4};
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_U64(deep[i], deep_want[i]);
        CHECK_EQ_U64(wide[i], wide_want[i]);
    }

    /* Created out of preorder, and deep enough that "wide" differs from breadth-first:
     * 0 main, 1 a, 2 b, 3 a/x, 4 a/x/y, 5 b/z. BFS would give 0 1 2 3 5 4. */
    const cube_cnode t[] = {
        {0, -1, CUBE_PARAM_NONE, NULL, 0, NULL}, {0, 0, CUBE_PARAM_NONE, NULL, 0, NULL},
        {0, 0, CUBE_PARAM_NONE, NULL, 0, NULL},  {0, 1, CUBE_PARAM_NONE, NULL, 0, NULL},
        {0, 3, CUBE_PARAM_NONE, NULL, 0, NULL},  {0, 2, CUBE_PARAM_NONE, NULL, 0, NULL},
    };
    CHECK(cube_row_orders(t, 6, deep, wide, err, sizeof err) == 0);
    const uint32_t deep2[] = {0, 1, 3, 4, 2, 5}, wide2[] = {0, 1, 2, 3, 4, 5};
    for (int i = 0; i < 6; i++) {
        CHECK_EQ_U64(deep[i], deep2[i]);
        CHECK_EQ_U64(wide[i], wide2[i]);
    }

    /* Either output may be omitted; an empty tree is fine. */
    memset(wide, 0xff, sizeof wide);
    CHECK(cube_row_orders(t, 6, NULL, wide, err, sizeof err) == 0);
    CHECK_EQ_U64(wide[5], 5);
    CHECK(cube_row_orders(NULL, 0, deep, wide, err, sizeof err) == 0);

    /* Several roots: each root with its subtree, roots in index order. */
    const cube_cnode forest[] = {
        {0, -1, CUBE_PARAM_NONE, NULL, 0, NULL},
        {0, -1, CUBE_PARAM_NONE, NULL, 0, NULL},
        {0, 0, CUBE_PARAM_NONE, NULL, 0, NULL},
    };
    CHECK(cube_row_orders(forest, 3, deep, wide, err, sizeof err) == 0);
    CHECK(deep[0] == 0 && deep[1] == 2 && deep[2] == 1);
    CHECK(wide[0] == 0 && wide[1] == 2 && wide[2] == 1);
}

static void test_bad_parent(void)
{
    char err[256] = "";
    uint32_t deep[3];
    cube_cnode t[] = {
        {0, -1, CUBE_PARAM_NONE, NULL, 0, NULL},
        {0, 0, CUBE_PARAM_NONE, NULL, 0, NULL},
        {0, 2, CUBE_PARAM_NONE, NULL, 0, NULL}, /* its own parent */
    };
    CHECK(cube_row_orders(t, 3, deep, NULL, err, sizeof err) == -1);
    CHECK_STR(err, "cnode 2 has parent 2, which is neither -1 nor an earlier cnode");
    t[2].parent = -7;
    CHECK(cube_row_orders(t, 3, deep, NULL, err, sizeof err) == -1);
    CHECK(strstr(err, "parent -7") != NULL);
    CHECK(cube_row_orders(t, 3, deep, NULL, NULL, 0) == -1); /* no message buffer: no crash */

    /* cube_write refuses too, names the file, and creates nothing. */
    t[2].parent = 5;
    row_log log = {0, {0}, {0}, -1};
    cube_profile p = small_profile(t, 3, &log);
    const char *path = tmp_path("bad_parent.cubex");
    CHECK(cube_write(path, &p, err, sizeof err) == -1);
    CHECK(strstr(err, path) == err);
    CHECK(strstr(err, "cnode 2 has parent 5") != NULL);
    CHECK(access(path, F_OK) != 0);
    CHECK_EQ_U64(log.calls, 0);
}

static void test_tar_header(void)
{
    unsigned char h[512];
    CHECK(cube_tar_header(h, "12.index", 0123, 1700000000) == 0);
    CHECK_STR((const char *)h, "12.index");
    CHECK(all_zero(h + 8, 92));
    CHECK(memcmp(h + 100, "0000644\0", 8) == 0);
    CHECK(memcmp(h + 124, "00000000123\0", 12) == 0);
    CHECK(memcmp(h + 136, "14524770400\0", 12) == 0); /* 1700000000 in octal */
    CHECK(h[156] == '0');
    CHECK(memcmp(h + 257, "ustar\0" "00", 8) == 0);
    CHECK(all_zero(h + 345, 167)); /* prefix and the tail stay empty */
    CHECK_EQ_U64(parse_octal(h + 148, 8), header_sum(h));
    CHECK(h[154] == '\0' && h[155] == ' ');

    /* 9 GiB does not fit 11 octal digits: base-256 with the top bit set. */
    uint64_t big = UINT64_C(9) << 30;
    CHECK(cube_tar_header(h, "0.data", big, 0) == 0);
    CHECK(h[124] == 0x80);
    uint64_t decoded = 0;
    for (int i = 125; i < 136; i++)
        decoded = (decoded << 8) | h[i];
    CHECK_EQ_U64(decoded, big);
    CHECK_EQ_U64(parse_octal(h + 148, 8), header_sum(h));

    char longname[101];
    memset(longname, 'x', 100);
    longname[100] = '\0';
    CHECK(cube_tar_header(h, longname, 1, 0) == -1);
    CHECK(cube_tar_header(h, "", 1, 0) == -1);
}

static void test_xml_escape(void)
{
    char out[128];
    CHECK_EQ_U64(cube_xml_escape("a<b>&\"'", out, sizeof out), 27);
    CHECK_STR(out, "a&lt;b&gt;&amp;&quot;&apos;");
    cube_xml_escape("tab\there\nnl\rcr", out, sizeof out);
    CHECK_STR(out, "tab&#9;here&#10;nl&#13;cr");
    /* Bytes XML 1.0 cannot carry become '?': controls, stray continuation bytes, invalid
     * lead bytes, truncated sequences, surrogates, U+FFFF. Valid UTF-8 passes unchanged. */
    cube_xml_escape("\x01x\x7fy", out, sizeof out);
    CHECK_STR(out, "?x\x7fy");
    cube_xml_escape("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x8d", out, sizeof out);
    CHECK_STR(out, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x8d");
    cube_xml_escape("\xff\x80" "a\xe2\x82", out, sizeof out);
    CHECK_STR(out, "??a??");
    cube_xml_escape("\xed\xa0\x80|\xef\xbf\xbf|\xc0\xaf", out, sizeof out);
    CHECK_STR(out, "???|???|??");
    /* Truncation: like snprintf, the full length comes back and the output is terminated. */
    char small[6];
    CHECK_EQ_U64(cube_xml_escape("<<<", small, sizeof small), 12);
    CHECK_STR(small, "&lt;&");
    CHECK_EQ_U64(cube_xml_escape(NULL, out, sizeof out), 0);
    CHECK_STR(out, "");
}

static const char expected_program[] =
    "<program>\n"
    "<region id=\"0\" mod=\"\" begin=\"-1\" end=\"-1\">\n<name>main</name>\n"
    "<mangled_name>main</mangled_name>\n<paradigm>measurement</paradigm>\n"
    "<role>artificial</role>\n<url></url>\n<descr></descr>\n</region>\n"
    "<region id=\"1\" mod=\"/src/m.py\" begin=\"10\" end=\"20\">\n<name>a</name>\n"
    "<mangled_name>mod:a</mangled_name>\n<paradigm>user</paradigm>\n"
    "<role>function</role>\n<url></url>\n<descr></descr>\n</region>\n"
    "<region id=\"2\" mod=\"/src/m.py\" begin=\"30\" end=\"-1\">\n"
    "<name>b&lt;&amp;&gt;&quot;&apos;</name>\n"
    "<mangled_name>b&lt;&amp;&gt;&quot;&apos;</mangled_name>\n<paradigm>user</paradigm>\n"
    "<role>function</role>\n<url></url>\n<descr>desc &amp; more</descr>\n</region>\n"
    "<region id=\"3\" mod=\"\" begin=\"-1\" end=\"-1\">\n<name>c</name>\n"
    "<mangled_name>c</mangled_name>\n<paradigm>user</paradigm>\n"
    "<role>function</role>\n<url></url>\n<descr></descr>\n</region>\n"
    "<cnode id=\"0\" calleeId=\"0\">\n"
    "<cnode id=\"1\" calleeId=\"1\">\n"
    "<cnode id=\"2\" calleeId=\"3\">\n</cnode>\n"
    "</cnode>\n"
    "<cnode id=\"3\" calleeId=\"2\">\n"
    "<cnode id=\"4\" calleeId=\"3\">\n</cnode>\n"
    "</cnode>\n"
    "</cnode>\n"
    "</program>\n";

static const char expected_system[] =
    "<system>\n"
    "<systemtreenode Id=\"0\">\n<name>machine Linux</name>\n<class>machine</class>\n"
    "<systemtreenode Id=\"1\">\n<name>node host1</name>\n<class>node</class>\n"
    "<locationgroup Id=\"0\">\n<name>MPI Rank 0</name>\n<rank>0</rank>\n<type>process</type>\n"
    "<location Id=\"0\">\n<name>Master thread</name>\n<rank>0</rank>\n<type>thread</type>\n"
    "</location>\n</locationgroup>\n"
    "<locationgroup Id=\"1\">\n<name>MPI Rank 1</name>\n<rank>1</rank>\n<type>process</type>\n"
    "<location Id=\"1\">\n<name>Master thread</name>\n<rank>0</rank>\n<type>thread</type>\n"
    "</location>\n</locationgroup>\n"
    "</systemtreenode>\n</systemtreenode>\n</system>\n</cube>\n";

static const char expected_head[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\n<cube version=\"4.4\">\n"
    "<attr key=\"Cube anchor.xml syntax version\" value=\"4.4\"/>\n"
    "<attr key=\"Creator\" value=\"test\"/>\n"
    "<attr key=\"CUBE_CT_AGGR\" value=\"SUM\"/>\n"
    "<metrics>\n"
    "<metric id=\"0\" type=\"EXCLUSIVE\">\n<disp_name>Visits</disp_name>\n"
    "<uniq_name>visits</uniq_name>\n<dtype>UINT64</dtype>\n<uom>occ</uom>\n<url></url>\n"
    "<descr>Number of visits</descr>\n</metric>\n"
    "<metric id=\"1\" type=\"INCLUSIVE\">\n<disp_name>Time</disp_name>\n"
    "<uniq_name>time</uniq_name>\n<dtype>DOUBLE</dtype>\n<uom>sec</uom>\n<url></url>\n"
    "<descr></descr>\n</metric>\n"
    "</metrics>\n";

static void check_index(const member *m, uint32_t nrows)
{
    CHECK(m != NULL);
    if (m == NULL)
        return;
    CHECK_EQ_U64(m->size, 22 + 4 * nrows);
    CHECK(memcmp(m->data, "CUBEX.INDEX", 11) == 0);
    uint32_t endian, n, pos;
    uint16_t version;
    memcpy(&endian, m->data + 11, 4);
    memcpy(&version, m->data + 15, 2);
    memcpy(&n, m->data + 18, 4);
    CHECK_EQ_U64(endian, 1);
    CHECK_EQ_U64(version, 0);
    CHECK_EQ_U64(m->data[17], 1); /* SPARSE */
    CHECK_EQ_U64(n, nrows);
    for (uint32_t k = 0; k < nrows; k++) {
        memcpy(&pos, m->data + 22 + 4 * k, 4);
        CHECK_EQ_U64(pos, k);
    }
}

static void test_small_profile_bytes(void)
{
    row_log log = {0, {0}, {0}, -1};
    cube_profile p = small_profile(tree_preorder, 5, &log);
    char err[256] = "";
    const char *path = tmp_path("small.cubex");
    CHECK(cube_write(path, &p, err, sizeof err) == 0);
    CHECK_STR(err, "");

    /* The callback saw each (metric, cnode) once, in file order: preorder for the
     * EXCLUSIVE visits, wide order for the INCLUSIVE time. */
    const uint32_t want_m[] = {0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
    const uint32_t want_c[] = {0, 1, 2, 3, 4, 0, 1, 3, 2, 4};
    CHECK_EQ_U64(log.calls, 10);
    for (int i = 0; i < 10; i++) {
        CHECK_EQ_U64(log.seen_metric[i], want_m[i]);
        CHECK_EQ_U64(log.seen_cnode[i], want_c[i]);
    }

    blob b = slurp(path);
    member m[MAX_MEMBERS];
    int n = list_members(&b, m, MAX_MEMBERS);
    CHECK_EQ_U64(n, 5);
    if (n == 5) {
        CHECK_STR(m[0].name, "0.data");
        CHECK_STR(m[1].name, "0.index");
        CHECK_STR(m[2].name, "1.data");
        CHECK_STR(m[3].name, "1.index");
        CHECK_STR(m[4].name, "anchor.xml"); /* last, like CubeW */
    }
    check_index(find(m, n, "0.index"), 5);
    check_index(find(m, n, "1.index"), 5);

    const member *d0 = find(m, n, "0.data");
    CHECK(d0 != NULL && d0->size == 10 + 5 * 2 * 8);
    if (d0 != NULL && d0->size == 90) {
        CHECK(memcmp(d0->data, "CUBEX.DATA", 10) == 0);
        for (uint32_t k = 0; k < 5; k++)
            for (uint32_t loc = 0; loc < 2; loc++) {
                uint64_t v;
                memcpy(&v, d0->data + 10 + 16 * k + 8 * loc, 8);
                CHECK_EQ_U64(v, 10 * k + loc); /* preorder: row k is cnode k */
            }
    }
    const member *d1 = find(m, n, "1.data");
    CHECK(d1 != NULL && d1->size == 90);
    if (d1 != NULL && d1->size == 90) {
        const uint32_t wide[] = {0, 1, 3, 2, 4};
        for (uint32_t k = 0; k < 5; k++)
            for (uint32_t loc = 0; loc < 2; loc++) {
                double v;
                memcpy(&v, d1->data + 10 + 16 * k + 8 * loc, 8);
                CHECK(v == 1000.0 + 10.0 * wide[k] + loc + 0.5);
            }
    }

    const member *a = find(m, n, "anchor.xml");
    CHECK(a != NULL);
    if (a != NULL) {
        char *xml = malloc(a->size + 1);
        memcpy(xml, a->data, a->size);
        xml[a->size] = '\0';
        CHECK(strncmp(xml, expected_head, strlen(expected_head)) == 0);
        const char *prog = strstr(xml, "<program>");
        CHECK(prog != NULL && strncmp(prog, expected_program, strlen(expected_program)) == 0);
        const char *sys = strstr(xml, "<system>");
        CHECK_STR(sys, expected_system);
        free(xml);
    }
    free(b.bytes);
    remove(path);
}

/* The same tree created in another order (main, b, a, b/c, a/c) gets ids by document order
 * and rows still follow the tree. */
static void test_ids_follow_document_order(void)
{
    const cube_cnode t[] = {
        {0, -1, CUBE_PARAM_NONE, NULL, 0, NULL},
        {1, 0, CUBE_PARAM_NONE, NULL, 0, NULL},                  /* a */
        {2, 0, CUBE_PARAM_STRING, "kind", 0, "x<y"},             /* b, a string parameter */
        {3, 2, CUBE_PARAM_INT, "n", -9007199254740993LL, NULL},  /* b/c, exact int64 */
        {3, 1, CUBE_PARAM_NONE, NULL, 0, NULL},                  /* a/c */
    };
    row_log log = {0, {0}, {0}, -1};
    cube_profile p = small_profile(t, 5, &log);
    char err[256] = "";
    const char *path = tmp_path("order.cubex");
    CHECK(cube_write(path, &p, err, sizeof err) == 0);
    /* preorder 0 1 4 2 3; wide 0 1 2 4 3 */
    const uint32_t want_c[] = {0, 1, 4, 2, 3, 0, 1, 2, 4, 3};
    for (int i = 0; i < 10; i++)
        CHECK_EQ_U64(log.seen_cnode[i], want_c[i]);
    blob b = slurp(path);
    member m[MAX_MEMBERS];
    int n = list_members(&b, m, MAX_MEMBERS);
    const member *a = find(m, n, "anchor.xml");
    if (a != NULL) {
        char *xml = malloc(a->size + 1);
        memcpy(xml, a->data, a->size);
        xml[a->size] = '\0';
        const char *want =
            "<cnode id=\"0\" calleeId=\"0\">\n"
            "<cnode id=\"1\" calleeId=\"1\">\n"
            "<cnode id=\"2\" calleeId=\"3\">\n</cnode>\n"
            "</cnode>\n"
            "<cnode id=\"3\" calleeId=\"2\">\n"
            "<parameter partype=\"string\" parkey=\"kind\" parvalue=\"x&lt;y\"/>\n"
            "<cnode id=\"4\" calleeId=\"3\">\n"
            "<parameter partype=\"numeric\" parkey=\"n\" parvalue=\"-9007199254740993\"/>\n"
            "</cnode>\n</cnode>\n</cnode>\n</program>\n";
        CHECK(strstr(xml, want) != NULL);
        free(xml);
    } else {
        CHECK(!"no anchor.xml");
    }
    free(b.bytes);
    remove(path);
}

static void test_row_callback_error_keeps_old_file(void)
{
    const char *path = tmp_path("keep.cubex");
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f != NULL) {
        fputs("old", f);
        fclose(f);
    }
    row_log log = {0, {0}, {0}, 7};
    cube_profile p = small_profile(tree_preorder, 5, &log);
    char err[256] = "";
    CHECK(cube_write(path, &p, err, sizeof err) == -1);
    CHECK(strstr(err, "row callback failed for metric time at cnode 3") != NULL);
    blob b = slurp(path);
    CHECK(b.size == 3 && memcmp(b.bytes, "old", 3) == 0);
    free(b.bytes);
    /* and no temporary file is left behind */
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    CHECK(access(tmp, F_OK) != 0);
    remove(path);
}

static void expect_invalid(cube_profile *p, const char *fragment)
{
    char err[512] = "";
    const char *path = tmp_path("invalid.cubex");
    int rc = cube_write(path, p, err, sizeof err);
    CHECK(rc == -1);
    if (strstr(err, fragment) == NULL) {
        fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", err, fragment);
        CHECK(!"expected message");
    }
    CHECK(strchr(err, '\n') == NULL);
    CHECK(access(path, F_OK) != 0);
}

static void test_validation(void)
{
    row_log log = {0, {0}, {0}, -1};
    cube_profile p = small_profile(tree_preorder, 5, &log);

    cube_cnode t[5];
    memcpy(t, tree_preorder, sizeof t);
    t[4].region = 4;
    p.cnodes = t;
    expect_invalid(&p, "cnode 4 calls region 4 of 4");
    t[4].region = 3;
    t[3].parent = -1;
    expect_invalid(&p, "cnode 3 is a second root");
    t[3].parent = 0;
    t[2].param_kind = CUBE_PARAM_INT; /* without a name */
    expect_invalid(&p, "parameter cnode 2 has no parameter name");
    p = small_profile(tree_preorder, 0, &log);
    expect_invalid(&p, "at least the root cnode");

    cube_metric bad[2];
    memcpy(bad, small_metrics, sizeof bad);
    p = small_profile(tree_preorder, 5, &log);
    p.metrics = bad;
    bad[1].dtype = CUBE_DTYPE_MINDOUBLE;
    expect_invalid(&p, "metric time: MINDOUBLE/MAXDOUBLE must be EXCLUSIVE");
    bad[1].dtype = CUBE_DTYPE_DOUBLE;
    bad[1].uniq_name = "visits";
    expect_invalid(&p, "metrics 0 and 1 are both named visits");
    bad[1].uniq_name = NULL;
    expect_invalid(&p, "metric 1 has no uniq_name");
    p = small_profile(tree_preorder, 5, &log);
    p.row = NULL;
    expect_invalid(&p, "without a row callback");

    const cube_location swapped[] = {{"Master thread", 1}, {"Master thread", 0}};
    p = small_profile(tree_preorder, 5, &log);
    p.locations = swapped;
    expect_invalid(&p, "location 1 is in group 0 after a location of group 1");
    const cube_location orphan[] = {{"Master thread", 0}, {"Master thread", 2}};
    p.locations = orphan;
    expect_invalid(&p, "location 1 has a group index out of range");
    p.locations = small_locations;
    p.nlocations = 0;
    expect_invalid(&p, "at least one location");
    const cube_location_group far[] = {{"MPI Rank 0", 0, 1}};
    p = small_profile(tree_preorder, 5, &log);
    p.groups = far;
    p.ngroups = 1;
    expect_invalid(&p, "location group 0 has a node index out of range");
    CHECK_EQ_U64(log.calls, 0); /* nothing invalid ever reached the row callback */

    char err[256] = "";
    CHECK(cube_write(NULL, &p, err, sizeof err) == -1);
    CHECK_STR(err, "cube_write: path is NULL");
}

/* Score-P's extras: remapping.spec as the first member, the CubePL version and mirrors
 * ahead of the metrics, attributes of a region and of the machine. */
static void test_spec_mirrors_and_attributes(void)
{
    row_log log = {0, {0}, {0}, -1};
    cube_profile p = small_profile(tree_preorder, 5, &log);
    const cube_attr region_attrs[] = {{"Score-P::ProgramArguments::numberOfArguments", "2"}};
    const cube_attr machine_attrs[] = {{"platform", "Linux"}};
    const char *const mirrors[] = {"https://example.org/doc/", "file:///x & y/"};
    cube_region regions[4];
    memcpy(regions, small_regions, sizeof regions);
    regions[0].attrs = region_attrs;
    regions[0].nattrs = 1;
    p.regions = regions;
    p.machine_attrs = machine_attrs;
    p.nmachine_attrs = 1;
    p.mirrors = mirrors;
    p.nmirrors = 2;
    p.remapping_spec = "<metrics>\n</metrics>\n";
    char err[256] = "";
    const char *path = tmp_path("spec.cubex");
    CHECK(cube_write(path, &p, err, sizeof err) == 0);
    blob b = slurp(path);
    member m[MAX_MEMBERS];
    int n = list_members(&b, m, MAX_MEMBERS);
    CHECK_EQ_U64(n, 6);
    if (n == 6) {
        CHECK_STR(m[0].name, "remapping.spec");
        CHECK(m[0].size == 21 && memcmp(m[0].data, "<metrics>\n</metrics>\n", 21) == 0);
        CHECK_STR(m[5].name, "anchor.xml");
        char *xml = malloc(m[5].size + 1);
        memcpy(xml, m[5].data, m[5].size);
        xml[m[5].size] = '\0';
        CHECK(strstr(xml, "<cube version=\"4.4\">\n<attr key=\"CubePL Version\" value=\"1.1\"/>\n"
                          "<attr key=\"Cube anchor.xml syntax version\"") != NULL);
        CHECK(strstr(xml, "<doc>\n<mirrors>\n<murl>https://example.org/doc/</murl>\n"
                          "<murl>file:///x &amp; y/</murl>\n</mirrors>\n</doc>\n<metrics>") != NULL);
        CHECK(strstr(xml, "<descr></descr>\n<attr key=\"Score-P::ProgramArguments::"
                          "numberOfArguments\" value=\"2\"/>\n</region>\n<region id=\"1\"") != NULL);
        CHECK(strstr(xml, "<class>machine</class>\n<attr key=\"platform\" value=\"Linux\"/>\n"
                          "<systemtreenode Id=\"1\">") != NULL);
        free(xml);
    }
    free(b.bytes);
    remove(path);
    /* An attribute without a value is refused in one line. */
    const cube_attr broken[] = {{"key", NULL}};
    p.machine_attrs = broken;
    CHECK(cube_write(path, &p, err, sizeof err) == -1);
    CHECK(strstr(err, "attribute 0 of the machine lacks a key or value") != NULL);
}

static void test_unwritable_path(void)
{
    row_log log = {0, {0}, {0}, -1};
    cube_profile p = small_profile(tree_preorder, 5, &log);
    char err[256] = "";
    CHECK(cube_write("/nonexistent-dir/x/profile.cubex", &p, err, sizeof err) == -1);
    CHECK(strstr(err, "/nonexistent-dir/x/profile.cubex: cannot create") == err);
    CHECK(strstr(err, "No such file or directory") != NULL);
}

/* fill_rows: the rows left as holes at the offsets given, written afterwards with pwrite
 * into the temporary file (as other ranks do), give the row callback's file byte for byte;
 * a failing fill_rows leaves no file. */
typedef struct {
    row_log log;
    const cube_cnode *cnodes;
    size_t ncnodes;
    int calls;
    int fail;
} fill_state;

static int fill_small(void *user, const char *tmp, const uint64_t *offsets, char *err,
                      size_t errlen)
{
    fill_state *st = user;
    st->calls++;
    if (st->fail) {
        snprintf(err, errlen, "no rows today");
        return -1;
    }
    uint32_t deep[8], wide[8];
    if (cube_row_orders(st->cnodes, st->ncnodes, deep, wide, NULL, 0) != 0)
        return -1;
    FILE *f = fopen(tmp, "r+b");
    if (!f)
        return -1;
    /* the holes read as zeros until written */
    unsigned char zero[16], buf[16];
    memset(zero, 0, sizeof zero);
    int bad = fseek(f, (long)offsets[0], SEEK_SET) != 0 || fread(buf, 1, 16, f) != 16 ||
              memcmp(buf, zero, 16) != 0;
    for (uint32_t m = 0; m < 2 && !bad; m++) {
        const uint32_t *order = small_metrics[m].type == CUBE_INCLUSIVE ? wide : deep;
        /* the rows in reverse, location by location: any order lands at its offset */
        for (size_t k = st->ncnodes; k-- > 0 && !bad;) {
            unsigned char row[16];
            small_row(&st->log, m, order[k], row);
            for (int l = 1; l >= 0 && !bad; l--)
                bad = fseek(f, (long)(offsets[m] + (k * 2 + (size_t)l) * 8), SEEK_SET) != 0 ||
                      fwrite(row + l * 8, 1, 8, f) != 8;
        }
    }
    return fclose(f) != 0 || bad ? -1 : 0;
}

static void test_rows_filled_into_holes(void)
{
    const char *a = tmp_path("rows.cubex");
    row_log log = {0, {0}, {0}, -1};
    cube_profile p = small_profile(tree_preorder, 5, &log);
    char err[256] = "";
    CHECK(cube_write(a, &p, err, sizeof err) == 0);
    blob want = slurp(a);
    remove(a);
    fill_state st = {{0, {0}, {0}, -1}, tree_preorder, 5, 0, 0};
    p.row = NULL;
    p.fill_rows = fill_small;
    p.fill_user = &st;
    CHECK(cube_write(a, &p, err, sizeof err) == 0);
    CHECK_EQ_U64(st.calls, 1);
    blob got = slurp(a);
    member mw[16], mg[16];
    int nw = list_members(&want, mw, 16), ng = list_members(&got, mg, 16);
    CHECK(nw == 5 && ng == nw); /* 2 x (data, index), anchor.xml */
    for (int i = 0; i < nw && i < ng; i++) {
        CHECK(strcmp(mw[i].name, mg[i].name) == 0 && mw[i].size == mg[i].size);
        CHECK(mw[i].size == mg[i].size && memcmp(mw[i].data, mg[i].data, mw[i].size) == 0);
    }
    free(want.bytes);
    free(got.bytes);
    remove(a);
    st.fail = 1;
    CHECK(cube_write(a, &p, err, sizeof err) == -1);
    CHECK(strstr(err, "no rows today") != NULL);
    CHECK(access(a, F_OK) != 0);
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", a, (long)getpid());
    CHECK(access(tmp, F_OK) != 0);
}

CTEST_MAIN(test_row_orders, test_bad_parent, test_tar_header, test_xml_escape,
           test_small_profile_bytes, test_ids_follow_document_order,
           test_row_callback_error_keeps_old_file, test_validation,
           test_spec_mirrors_and_attributes, test_unwritable_path, test_rows_filled_into_holes)
