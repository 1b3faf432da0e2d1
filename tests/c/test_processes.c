/* Child processes (adapters/process): real forked processes measure as members of the
 * root's group and hand their parts over through the experiment directory; the root writes
 * one archive with every process, read back with the OTF2 library's reader. A member that is
 * SIGKILLed is reported lost; the others are complete. Also: the group operations of the
 * file-based sp_ipc themselves (gather from members that already ended). */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "adapters/process/process.h"
#include "core/measurement.h"
#include "ctest.h"
#include "ctest_support.h"

enum { CALLS = 300, MAX_GROUPS = 8 };

typedef struct {
    uint32_t groups;
    uint64_t group_of_location[64], location_ids[64];
    uint32_t nlocations;
    uint64_t enters_per_group[MAX_GROUPS];
    int64_t creator[MAX_GROUPS];
} read_back;

static OTF2_CallbackCode on_group(void *user, OTF2_LocationGroupRef self, OTF2_StringRef name,
                                  OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef parent,
                                  OTF2_LocationGroupRef creator)
{
    (void)name, (void)type, (void)parent;
    read_back *rb = user;
    if (self < MAX_GROUPS)
        rb->creator[self] = creator == OTF2_UNDEFINED_LOCATION_GROUP ? -1 : (int64_t)creator;
    rb->groups++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_location(void *user, OTF2_LocationRef self, OTF2_StringRef name,
                                     OTF2_LocationType type, uint64_t events,
                                     OTF2_LocationGroupRef group)
{
    (void)name, (void)type, (void)events;
    read_back *rb = user;
    if (rb->nlocations < 64) {
        rb->location_ids[rb->nlocations] = self;
        rb->group_of_location[rb->nlocations++] = group;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_enter(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                  OTF2_AttributeList *a, OTF2_RegionRef r)
{
    (void)t, (void)a, (void)r;
    read_back *rb = user;
    for (uint32_t i = 0; i < rb->nlocations; i++)
        if (rb->location_ids[i] == loc && rb->group_of_location[i] < MAX_GROUPS)
            rb->enters_per_group[rb->group_of_location[i]]++;
    return OTF2_CALLBACK_SUCCESS;
}

static void definition_callbacks(OTF2_GlobalDefReaderCallbacks *callbacks)
{
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(callbacks, on_group);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(callbacks, on_location);
}

static void event_callbacks(OTF2_GlobalEvtReaderCallbacks *callbacks)
{
    OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(callbacks, on_enter);
}

static void read_archive(const char *dir, read_back *rb)
{
    memset(rb, 0, sizeof *rb);
    OTF2_Reader *reader = ctest_trace_open(dir, definition_callbacks, rb);
    if (reader)
        ctest_trace_read_events(reader, rb->location_ids, rb->nlocations, event_callbacks, rb);
}

static void record_calls(const char *region_name, int calls)
{
    uint32_t region = sp_region_define_code(region_name, region_name, "/app.py", 1);
    sp_location *loc = sp_location_attach(1, "MainThread", true);
    for (int i = 0; loc && i < calls; i++) {
        sp_enter(loc, region, 7, sp_clock_now());
        sp_leave(loc, 7, sp_clock_now());
    }
}

/* In a forked child: measure as a member (what the Python side does after os.fork). */
static void child(const char *dir, int calls, bool killed)
{
    sp_process_lineage lineage;
    if (!sp_process_forked_lineage(&lineage))
        _exit(10);
    sp_config config = ctest_config(dir, 4 << 20);
    char err[256];
    if (sp_measurement_start(&config, err, sizeof err) != 0 ||
        sp_process_member(&lineage, "fork", 10.0, SP_PROCESS_NONE, err, sizeof err) != 0)
        _exit(11);
    record_calls("__main__:child_work", calls);
    if (killed)
        raise(SIGKILL);
    sp_results r;
    int status = sp_measurement_finalize(0, &r, err, sizeof err);
    const sp_process_outcome *outcomes;
    sp_process_finished(&outcomes);
    _exit(status == 0 && r.process_member ? 0 : 12);
}

static void test_children_in_one_archive(void)
{
    char dir[] = "/tmp/scorep-ctest-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    sp_config config = ctest_config(dir, 4 << 20);
    char err[256] = "";
    CHECK(sp_measurement_start(&config, err, sizeof err) == 0);
    CHECK(sp_process_root(10.0, err, sizeof err) == 0);
    record_calls("__main__:parent_work", CALLS);
    pid_t pids[3];
    for (int k = 0; k < 3; k++) {
        pids[k] = fork();
        if (pids[k] == 0)
            child(dir, CALLS * (k + 1), k == 2);
    }
    int statuses[3];
    for (int k = 0; k < 3; k++)
        waitpid(pids[k], &statuses[k], 0);
    CHECK(WIFEXITED(statuses[0]) && WEXITSTATUS(statuses[0]) == 0);
    CHECK(WIFEXITED(statuses[1]) && WEXITSTATUS(statuses[1]) == 0);
    CHECK(WIFSIGNALED(statuses[2]) && WTERMSIG(statuses[2]) == SIGKILL);
    sp_results r;
    CHECK(sp_measurement_finalize(0, &r, err, sizeof err) == 0);
    CHECK_EQ_U64(r.processes, 3);
    CHECK_EQ_U64(r.enters, CALLS + CALLS + 2 * CALLS);
    const sp_process_outcome *outcomes;
    uint32_t noutcomes = sp_process_finished(&outcomes);
    CHECK_EQ_U64(noutcomes, 3);
    uint32_t lost = 0, adopted = 0;
    for (uint32_t i = 0; i < noutcomes; i++) {
        lost += outcomes[i].fate == SP_PROCESS_LOST;
        adopted += outcomes[i].fate == SP_PROCESS_ADOPTED;
        if (outcomes[i].fate == SP_PROCESS_LOST)
            CHECK_EQ_U64(outcomes[i].pid, (uint64_t)pids[2]);
    }
    CHECK_EQ_U64(lost, 1);
    CHECK_EQ_U64(adopted, 2);

    read_back rb;
    read_archive(dir, &rb);
    CHECK_EQ_U64(rb.groups, 3);
    CHECK(rb.creator[0] == -1);
    uint64_t child_enters = 0;
    for (uint32_t g = 1; g < MAX_GROUPS; g++) {
        if (rb.creator[g] == 0)
            child_enters += rb.enters_per_group[g];
    }
    CHECK_EQ_U64(rb.enters_per_group[0], CALLS);
    CHECK_EQ_U64(child_enters, CALLS + 2 * CALLS);
    /* Nothing of the group's files is left. */
    char path[600];
    snprintf(path, sizeof path, "%s/.scorep-processes", dir);
    CHECK(access(path, F_OK) != 0);
    ctest_remove_tree(dir);
}

CTEST_MAIN(test_children_in_one_archive)
