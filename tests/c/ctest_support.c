#include "ctest_support.h"

#include <ftw.h>
#include <stdio.h>

#include "ctest.h"

sp_config ctest_config(const char *dir, uint64_t total_memory)
{
    return (sp_config){
        .tracing = true,
        .profiling = true,
        .all_threads = false,
        .experiment_dir = dir,
        .total_memory = total_memory,
        .timer = SP_TIMER_CLOCK_GETTIME,
        .max_callpath_depth = 30,
        .program_name = "prog",
    };
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

void ctest_remove_tree(const char *dir)
{
    CHECK(nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0);
}

OTF2_Reader *ctest_trace_open(const char *dir, ctest_definition_callbacks set_callbacks,
                              void *user)
{
    char path[512];
    snprintf(path, sizeof path, "%s/traces.otf2", dir);
    OTF2_Reader *reader = OTF2_Reader_Open(path);
    CHECK(reader != NULL);
    if (!reader)
        return NULL;
    OTF2_Reader_SetSerialCollectiveCallbacks(reader);
    OTF2_GlobalDefReader *gdr = OTF2_Reader_GetGlobalDefReader(reader);
    OTF2_GlobalDefReaderCallbacks *callbacks = OTF2_GlobalDefReaderCallbacks_New();
    if (set_callbacks)
        set_callbacks(callbacks);
    OTF2_Reader_RegisterGlobalDefCallbacks(reader, gdr, callbacks, user);
    uint64_t n;
    CHECK(OTF2_Reader_ReadAllGlobalDefinitions(reader, gdr, &n) == OTF2_SUCCESS);
    OTF2_GlobalDefReaderCallbacks_Delete(callbacks);
    return reader;
}

void ctest_trace_read_events(OTF2_Reader *reader, const uint64_t *locations, size_t count,
                             ctest_event_callbacks set_callbacks, void *user)
{
    for (size_t i = 0; i < count; i++)
        CHECK(OTF2_Reader_SelectLocation(reader, locations[i]) == OTF2_SUCCESS);
    CHECK(OTF2_Reader_OpenEvtFiles(reader) == OTF2_SUCCESS);
    CHECK(OTF2_Reader_OpenDefFiles(reader) == OTF2_SUCCESS);
    uint64_t n;
    for (size_t i = 0; i < count; i++) {
        OTF2_DefReader *dr = OTF2_Reader_GetDefReader(reader, locations[i]);
        CHECK(dr != NULL); /* every location has its local definition file */
        if (dr) {
            OTF2_Reader_ReadAllLocalDefinitions(reader, dr, &n);
            OTF2_Reader_CloseDefReader(reader, dr);
        }
        OTF2_Reader_GetEvtReader(reader, locations[i]);
    }
    OTF2_Reader_CloseDefFiles(reader);
    OTF2_GlobalEvtReader *ger = OTF2_Reader_GetGlobalEvtReader(reader);
    OTF2_GlobalEvtReaderCallbacks *callbacks = OTF2_GlobalEvtReaderCallbacks_New();
    set_callbacks(callbacks);
    OTF2_Reader_RegisterGlobalEvtCallbacks(reader, ger, callbacks, user);
    CHECK(OTF2_Reader_ReadAllGlobalEvents(reader, ger, &n) == OTF2_SUCCESS);
    OTF2_GlobalEvtReaderCallbacks_Delete(callbacks);
    OTF2_Reader_CloseGlobalEvtReader(reader, ger);
    OTF2_Reader_CloseEvtFiles(reader);
    OTF2_Reader_Close(reader);
}
