#include "core/filter.h"
#include "ctest.h"

static sp_filter *parse_ok(const char *text)
{
    sp_filter *f = NULL;
    char err[256] = "";
    int status = sp_filter_parse(text, "f.filter", &f, err, sizeof err);
    if (status != 0)
        fprintf(stderr, "unexpected parse error: %s\n", err);
    CHECK(status == 0 && f != NULL);
    return f;
}

static void check_error(const char *text, const char *expected)
{
    sp_filter *f = NULL;
    char err[256] = "";
    CHECK(sp_filter_parse(text, "f.filter", &f, err, sizeof err) == -1);
    CHECK(f == NULL);
    CHECK_STR(err, expected);
}

static void test_rules_in_order_last_match_wins(void)
{
    sp_filter *f = parse_ok("# leading comment\n"
                            "SCOREP_REGION_NAMES_BEGIN\n"
                            "  EXCLUDE *\n"
                            "  INCLUDE main* app:work   # two patterns\n"
                            "          app:helper\n"
                            "  EXCLUDE app:work_inner\n"
                            "SCOREP_REGION_NAMES_END\n");
    CHECK_EQ_U64(sp_filter_rule_count(f), 5);
    CHECK(sp_filter_excludes(f, "lib:thing", NULL, NULL));
    CHECK(!sp_filter_excludes(f, "main_loop", NULL, NULL));
    CHECK(!sp_filter_excludes(f, "app:work", NULL, NULL));
    CHECK(!sp_filter_excludes(f, "app:helper", NULL, NULL)); /* continuation line */
    CHECK(sp_filter_excludes(f, "app:work_inner", NULL, NULL));
    sp_filter_free(f);
}

static void test_wildcards_mangled_and_files(void)
{
    sp_filter *f = parse_ok("SCOREP_REGION_NAMES_BEGIN\n"
                            "EXCLUDE __main__.Shape:?rea tiny:[a-c]*\n"
                            "EXCLUDE MANGLED pkg:Outer.inner\n"
                            "SCOREP_REGION_NAMES_END\n"
                            "SCOREP_FILE_NAMES_BEGIN\n"
                            "  EXCLUDE */site-packages/*\n"
                            "  INCLUDE */site-packages/mine/*\n"
                            "  EXCLUDE /with\\ space/*\n"
                            "SCOREP_FILE_NAMES_END\n");
    CHECK(sp_filter_excludes(f, "__main__.Shape:area", NULL, NULL));
    CHECK(!sp_filter_excludes(f, "__main__.Shape:areas", NULL, NULL));
    CHECK(sp_filter_excludes(f, "tiny:beta", NULL, NULL));
    CHECK(!sp_filter_excludes(f, "tiny:delta", NULL, NULL));
    /* MANGLED matches the canonical name, not the displayed one */
    CHECK(sp_filter_excludes(f, "pkg.Outer:inner", "pkg:Outer.inner", NULL));
    CHECK(!sp_filter_excludes(f, "pkg:Outer.inner", "pkg:other", NULL));
    CHECK(sp_filter_excludes(f, "x:y", NULL, "/usr/lib/python3/site-packages/np/core.py"));
    CHECK(!sp_filter_excludes(f, "x:y", NULL, "/usr/lib/python3/site-packages/mine/a.py"));
    CHECK(sp_filter_excludes(f, "x:y", NULL, "/with space/a.py"));
    CHECK(!sp_filter_excludes(f, "x:y", NULL, "/home/u/app.py"));
    CHECK(!sp_filter_excludes(f, "x:y", NULL, NULL));
    CHECK(!sp_filter_excludes(NULL, "x:y", NULL, NULL));
    sp_filter_free(f);
}

/* What real `scorep-score -g` writes (one EXCLUDE, then one MANGLED line per region), the
 * manual's `INCLUDE bar MANGLED foo baz`, and what Score-P's parser accepts besides. */
static void test_score_p_grammar(void)
{
    sp_filter *f = parse_ok("SCOREP_REGION_NAMES_BEGIN\n"
                            "  EXCLUDE\n"
                            "    MANGLED pkg:a\n"
                            "    MANGLED pkg:b\n"
                            "  INCLUDE bar MANGLED foo baz\n"
                            "SCOREP_REGION_NAMES_END\n");
    CHECK_EQ_U64(sp_filter_rule_count(f), 5);
    CHECK(sp_filter_excludes(f, "shown:a", "pkg:a", NULL));
    CHECK(sp_filter_excludes(f, "shown:b", "pkg:b", NULL));
    CHECK(!sp_filter_excludes(f, "pkg:a", "other", NULL)); /* MANGLED: the canonical name */
    sp_filter_free(f);
    /* Keywords are case-sensitive: `exclude foo` after INCLUDE adds two include patterns. */
    f = parse_ok("SCOREP_REGION_NAMES_BEGIN\n"
                 "EXCLUDE *\n"
                 "INCLUDE x\n"
                 "exclude foo\n"
                 "SCOREP_REGION_NAMES_END\n");
    CHECK(!sp_filter_excludes(f, "x", NULL, NULL));
    CHECK(!sp_filter_excludes(f, "exclude", NULL, NULL));
    CHECK(!sp_filter_excludes(f, "foo", NULL, NULL));
    CHECK(sp_filter_excludes(f, "bar", NULL, NULL));
    sp_filter_free(f);
    /* DEMANGLED switches back; a block may stay open at the end; EXCLUDE without patterns. */
    f = parse_ok("SCOREP_REGION_NAMES_BEGIN\n"
                 "EXCLUDE MANGLED m:one DEMANGLED plain\n"
                 "INCLUDE\n");
    CHECK(sp_filter_excludes(f, "x:y", "m:one", NULL));
    CHECK(!sp_filter_excludes(f, "m:one", "x:y", NULL));
    CHECK(sp_filter_excludes(f, "plain", "other", NULL));
    sp_filter_free(f);
}

static void test_errors_name_line_and_expectation(void)
{
    check_error("EXCLUDE foo\n",
                "f.filter:1: expected SCOREP_REGION_NAMES_BEGIN or SCOREP_FILE_NAMES_BEGIN, "
                "found 'EXCLUDE'");
    check_error("SCOREP_REGION_NAMES_BEGIN\n  foo\n",
                "f.filter:2: expected INCLUDE or EXCLUDE before pattern 'foo'");
    check_error("SCOREP_REGION_NAMES_BEGIN\nEXCLUDE a\nSCOREP_FILE_NAMES_END\n",
                "f.filter:3: SCOREP_FILE_NAMES_END without SCOREP_FILE_NAMES_BEGIN");
    check_error("SCOREP_REGION_NAMES_BEGIN\nSCOREP_FILE_NAMES_BEGIN\n",
                "f.filter:2: SCOREP_FILE_NAMES_BEGIN inside a block (expected "
                "SCOREP_REGION_NAMES_END first)");
    check_error("SCOREP_FILE_NAMES_BEGIN\nEXCLUDE MANGLED x\nSCOREP_FILE_NAMES_END\n",
                "f.filter:2: MANGLED belongs after INCLUDE or EXCLUDE in a "
                "SCOREP_REGION_NAMES block");
    sp_filter *f = NULL;
    char err[256];
    CHECK(sp_filter_load("/nonexistent/x.filter", &f, err, sizeof err) == -1);
    CHECK_STR(err, "cannot read filter file /nonexistent/x.filter: No such file or directory");
}

static void test_empty_filter_excludes_nothing(void)
{
    sp_filter *f = parse_ok("# nothing\n\n");
    CHECK_EQ_U64(sp_filter_rule_count(f), 0);
    CHECK(!sp_filter_excludes(f, "a:b", NULL, "/x.py"));
    sp_filter_free(f);
}

CTEST_MAIN(test_rules_in_order_last_match_wins, test_wildcards_mangled_and_files,
           test_score_p_grammar, test_errors_name_line_and_expectation,
           test_empty_filter_excludes_nothing)
