/* scorep._reader: the Python face of the reports' OTF2 reader (rd_*.c). Only conversion
 * lives here; the passes run without the GIL. Bulk results (per-node statistics, slices,
 * histograms) cross as bytes in native byte order, read with the array module. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "reader/rd.h"

typedef struct {
    PyObject_HEAD
    rd_trace *trace;
} TraceObject;

typedef struct {
    PyObject_HEAD
    rd_scan scan;
    PyObject *trace; /* keeps the definitions alive for write_chrome */
} ScanObject;

static PyTypeObject TraceType;
static PyTypeObject ScanType;

static PyObject *error(const char *message)
{
    PyErr_SetString(PyExc_RuntimeError, message);
    return NULL;
}

static PyObject *str_or_empty(const rd_defs *d, uint32_t ref)
{
    return PyUnicode_DecodeUTF8(rd_string(d, ref), (Py_ssize_t)strlen(rd_string(d, ref)),
                                "replace");
}

/* ---- Trace ----------------------------------------------------------------------- */

static PyObject *reader_open(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path_obj;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path_obj))
        return NULL;
    char err[1024] = "";
    rd_trace *t;
    const char *path = PyBytes_AS_STRING(path_obj);
    Py_BEGIN_ALLOW_THREADS
    rd_quiet_begin();
    t = rd_open(path, err, sizeof err);
    rd_quiet_end();
    Py_END_ALLOW_THREADS
    Py_DECREF(path_obj);
    if (!t)
        return error(err);
    TraceObject *obj = PyObject_New(TraceObject, &TraceType);
    if (!obj) {
        rd_close(t);
        return NULL;
    }
    obj->trace = t;
    return (PyObject *)obj;
}

static void trace_dealloc(TraceObject *self)
{
    rd_close(self->trace);
    PyObject_Free(self);
}

/* Builds a dict from "key", value pairs; steals the value references. */
static int set_item(PyObject *dict, const char *key, PyObject *value)
{
    if (!value)
        return -1;
    int rc = PyDict_SetItemString(dict, key, value);
    Py_DECREF(value);
    return rc;
}

static PyObject *trace_definitions(TraceObject *self, PyObject *unused)
{
    (void)unused;
    const rd_defs *d = &self->trace->defs;
    PyObject *out = PyDict_New();
    PyObject *list = NULL;
    if (!out)
        return NULL;
    if (set_item(out, "resolution", PyLong_FromUnsignedLongLong(d->resolution)) ||
        set_item(out, "offset", PyLong_FromUnsignedLongLong(d->offset)) ||
        set_item(out, "length", PyLong_FromUnsignedLongLong(d->length)) ||
        set_item(out, "length_ns", PyLong_FromUnsignedLongLong(rd_to_ns(d, d->offset + d->length))) ||
        set_item(out, "realtime", PyLong_FromUnsignedLongLong(d->realtime)) ||
        set_item(out, "creator", PyUnicode_DecodeUTF8(d->creator ? d->creator : "",
                                                      d->creator ? (Py_ssize_t)strlen(d->creator) : 0,
                                                      "replace")) ||
        set_item(out, "version", Py_BuildValue("(iii)", d->version[0], d->version[1], d->version[2])))
        goto fail;

    /* regions: ref -> (name, canonical, file, begin, end, role, paradigm) or None */
    if (!(list = PyList_New(d->nregions)))
        goto fail;
    for (uint32_t i = 0; i < d->nregions; i++) {
        const rd_region *r = &d->regions[i];
        PyObject *item;
        if (!r->defined) {
            item = Py_None;
            Py_INCREF(item);
        } else {
            item = Py_BuildValue("(NNNIIii)", str_or_empty(d, r->name), str_or_empty(d, r->canonical),
                                 str_or_empty(d, r->file), r->begin_line, r->end_line, r->role,
                                 r->paradigm);
            if (!item)
                goto fail;
        }
        PyList_SET_ITEM(list, i, item);
    }
    if (set_item(out, "regions", list))
        goto fail_nolist;

    /* locations in definition order: (id, name, type, events, group ref) */
    if (!(list = PyList_New(d->nlocations)))
        goto fail;
    for (uint32_t i = 0; i < d->nlocations; i++) {
        const rd_location *l = &d->locations[i];
        PyObject *item = Py_BuildValue("(KNiKI)", (unsigned long long)l->id, str_or_empty(d, l->name),
                                       l->type, (unsigned long long)l->events, l->group);
        if (!item)
            goto fail;
        PyList_SET_ITEM(list, i, item);
    }
    if (set_item(out, "locations", list))
        goto fail_nolist;

    /* location groups: ref -> (name, type, system tree parent) or None */
    if (!(list = PyList_New(d->nlgroups)))
        goto fail;
    for (uint32_t i = 0; i < d->nlgroups; i++) {
        const rd_lgroup *g = &d->lgroups[i];
        PyObject *item = g->defined ? Py_BuildValue("(NiI)", str_or_empty(d, g->name), g->type, g->parent)
                                    : (Py_INCREF(Py_None), Py_None);
        if (!item)
            goto fail;
        PyList_SET_ITEM(list, i, item);
    }
    if (set_item(out, "location_groups", list))
        goto fail_nolist;

    /* system tree nodes: ref -> (name, class, parent) or None */
    if (!(list = PyList_New(d->nstnodes)))
        goto fail;
    for (uint32_t i = 0; i < d->nstnodes; i++) {
        const rd_stnode *n = &d->stnodes[i];
        PyObject *item = n->defined ? Py_BuildValue("(NNI)", str_or_empty(d, n->name),
                                                    str_or_empty(d, n->class_name), n->parent)
                                    : (Py_INCREF(Py_None), Py_None);
        if (!item)
            goto fail;
        PyList_SET_ITEM(list, i, item);
    }
    if (set_item(out, "system_tree", list))
        goto fail_nolist;

    /* communicators: ref -> (name, [location group per rank]) or None */
    if (!(list = PyList_New(d->ncomms)))
        goto fail;
    for (uint32_t i = 0; i < d->ncomms; i++) {
        const rd_comm *m = &d->comms[i];
        PyObject *item;
        if (!m->defined) {
            item = Py_None;
            Py_INCREF(item);
        } else {
            PyObject *ranks = PyList_New(m->rank_to_lgroup ? m->size : 0);
            if (!ranks)
                goto fail;
            for (uint32_t r = 0; m->rank_to_lgroup && r < m->size; r++) {
                PyObject *v = m->rank_to_lgroup[r] == RD_NONE ? (Py_INCREF(Py_None), Py_None)
                                                              : PyLong_FromUnsignedLong(m->rank_to_lgroup[r]);
                if (!v) {
                    Py_DECREF(ranks);
                    goto fail;
                }
                PyList_SET_ITEM(ranks, r, v);
            }
            item = Py_BuildValue("(NN)", str_or_empty(d, m->name), ranks);
            if (!item)
                goto fail;
        }
        PyList_SET_ITEM(list, i, item);
    }
    if (set_item(out, "comms", list))
        goto fail_nolist;
    return out;
fail:
    Py_XDECREF(list);
fail_nolist:
    Py_DECREF(out);
    return NULL;
}

static PyObject *trace_scan(TraceObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"tree", "timeline_limit", "timeline_min_ns", "timeline_max_depth",
                             "density_bins", "message_limit", "flush_limit", "durations_path",
                             NULL};
    int tree = 1;
    unsigned int timeline_limit = 0, timeline_max_depth = UINT32_MAX, density_bins = 0;
    unsigned int message_limit = 0, flush_limit = 0;
    unsigned long long timeline_min_ns = 0;
    PyObject *durations = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|pIKIIIIO&", kwlist, &tree, &timeline_limit,
                                     &timeline_min_ns, &timeline_max_depth, &density_bins,
                                     &message_limit, &flush_limit, PyUnicode_FSConverter,
                                     &durations))
        return NULL;
    rd_scan_opts opts = {
        .tree = tree != 0,
        .timeline_limit = timeline_limit,
        .timeline_min_ns = timeline_min_ns,
        .timeline_max_depth = timeline_max_depth,
        .density_bins = density_bins,
        .message_limit = message_limit,
        .flush_limit = flush_limit,
        .durations_path = durations ? PyBytes_AS_STRING(durations) : NULL,
    };
    ScanObject *obj = PyObject_New(ScanObject, &ScanType);
    if (!obj) {
        Py_XDECREF(durations);
        return NULL;
    }
    memset(&obj->scan, 0, sizeof obj->scan);
    Py_INCREF(self);
    obj->trace = (PyObject *)self;
    char err[1024] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rd_quiet_begin();
    rc = rd_scan_run(self->trace, &opts, &obj->scan, err, sizeof err);
    rd_quiet_end();
    Py_END_ALLOW_THREADS
    Py_XDECREF(durations);
    if (rc != 0) {
        Py_DECREF(obj);
        return error(err);
    }
    return (PyObject *)obj;
}

/* A list of str per region ref (None where undefined) as C strings; NULL + exception. */
static const char **string_table(PyObject *seq, uint32_t n, const char *what)
{
    if (!PyList_Check(seq) || PyList_GET_SIZE(seq) != (Py_ssize_t)n) {
        PyErr_Format(PyExc_ValueError, "%s: a list of %u strings is needed", what, n);
        return NULL;
    }
    const char **out = calloc(n ? n : 1, sizeof *out);
    if (!out) {
        PyErr_NoMemory();
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(seq, i);
        if (item == Py_None)
            continue;
        out[i] = PyUnicode_AsUTF8(item); /* valid while the list lives */
        if (!out[i]) {
            free(out);
            return NULL;
        }
    }
    return out;
}

static uint32_t *u32_table(PyObject *seq, uint32_t n, const char *what)
{
    if (!PyList_Check(seq) || PyList_GET_SIZE(seq) != (Py_ssize_t)n) {
        PyErr_Format(PyExc_ValueError, "%s: a list of %u integers is needed", what, n);
        return NULL;
    }
    uint32_t *out = calloc(n ? n : 1, sizeof *out);
    if (!out) {
        PyErr_NoMemory();
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) {
        unsigned long v = PyLong_AsUnsignedLong(PyList_GET_ITEM(seq, i));
        if (PyErr_Occurred()) {
            free(out);
            return NULL;
        }
        out[i] = (uint32_t)v;
    }
    return out;
}

static PyObject *trace_write_chrome(TraceObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"scan", "out_path", "durations_path", "header", "footer", "names",
                             "cats", "pids", "tids", "flush_tids", "min_ns", "max_depth", NULL};
    PyObject *scan_obj, *out_path = NULL, *dur_path = NULL, *names, *cats, *pids, *tids, *ftids;
    const char *header, *footer;
    unsigned long long min_ns = 0;
    unsigned int max_depth = UINT32_MAX;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O&O&ssOOOOO|KI", kwlist, &ScanType, &scan_obj,
                                     PyUnicode_FSConverter, &out_path, PyUnicode_FSConverter,
                                     &dur_path, &header, &footer, &names, &cats, &pids, &tids,
                                     &ftids, &min_ns, &max_depth)) {
        Py_XDECREF(out_path);
        Py_XDECREF(dur_path);
        return NULL;
    }
    const rd_defs *d = &self->trace->defs;
    PyObject *result = NULL;
    const char **cnames = string_table(names, d->nregions, "names");
    const char **ccats = cnames ? string_table(cats, d->nregions, "cats") : NULL;
    uint32_t *cpids = ccats ? u32_table(pids, d->nlocations, "pids") : NULL;
    uint32_t *ctids = cpids ? u32_table(tids, d->nlocations, "tids") : NULL;
    uint32_t *cftids = ctids ? u32_table(ftids, d->nlocations, "flush_tids") : NULL;
    if (cftids) {
        ScanObject *scan = (ScanObject *)scan_obj;
        if (scan->trace != (PyObject *)self) {
            PyErr_SetString(PyExc_ValueError, "the scan belongs to another trace");
        } else {
            rd_chrome_opts opts = {
                .out_path = PyBytes_AS_STRING(out_path),
                .durations_path = PyBytes_AS_STRING(dur_path),
                .header = header,
                .footer = footer,
                .names = cnames,
                .cats = ccats,
                .pids = cpids,
                .tids = ctids,
                .flush_tids = cftids,
                .min_ns = min_ns,
                .max_depth = max_depth,
                .need_comma = true,
            };
            rd_chrome_stats stats;
            char err[1024] = "";
            int rc;
            Py_BEGIN_ALLOW_THREADS
            rd_quiet_begin();
            rc = rd_write_chrome(self->trace, &scan->scan, &opts, &stats, err, sizeof err);
            rd_quiet_end();
            Py_END_ALLOW_THREADS
            if (rc != 0)
                error(err);
            else
                result = Py_BuildValue("{sKsKsKsK}", "complete", (unsigned long long)stats.complete,
                                       "flows", (unsigned long long)stats.flows, "flushes",
                                       (unsigned long long)stats.flushes, "bytes",
                                       (unsigned long long)stats.bytes);
        }
    }
    free(cnames);
    free(ccats);
    free(cpids);
    free(ctids);
    free(cftids);
    Py_XDECREF(out_path);
    Py_XDECREF(dur_path);
    return result;
}

/* The engine's metrics as ((name, parent index or -1), ...), in its table's order. */
static PyObject *ws_metric_table(void)
{
    const char *const *names;
    const int *parents;
    uint32_t n = rd_ws_metrics(&names, &parents);
    PyObject *table = PyTuple_New(n);
    for (uint32_t k = 0; table && k < n; k++) {
        PyObject *item = Py_BuildValue("(si)", names[k], parents[k]);
        if (!item) {
            Py_CLEAR(table);
            break;
        }
        PyTuple_SET_ITEM(table, k, item);
    }
    return table;
}

static PyObject *trace_wait_states(TraceObject *self, PyObject *unused)
{
    (void)unused;
    rd_ws ws;
    char err[1024] = "";
    int status;
    Py_BEGIN_ALLOW_THREADS
    rd_quiet_begin();
    status = rd_wait_states(self->trace, &ws, err, sizeof err);
    rd_quiet_end();
    Py_END_ALLOW_THREADS
    if (status != 0)
        return error(err);
    PyObject *rows = PyList_New(0);
    for (size_t i = 0; rows && i < ws.nrows; i++) {
        const rd_ws_row *r = &ws.rows[i];
        PyObject *regions = PyTuple_New(r->depth);
        PyObject *times = PyTuple_New(ws.nmetrics);
        PyObject *counts = PyTuple_New(ws.nmetrics);
        PyObject *row = NULL;
        if (regions && times && counts) {
            for (uint32_t k = 0; k < r->depth; k++)
                PyTuple_SET_ITEM(regions, k, PyLong_FromUnsignedLong(r->regions[k]));
            for (uint32_t k = 0; k < ws.nmetrics; k++) {
                PyTuple_SET_ITEM(times, k, PyFloat_FromDouble(r->time[k]));
                PyTuple_SET_ITEM(counts, k, PyLong_FromUnsignedLongLong(r->count[k]));
            }
            row = Py_BuildValue("(IIOOO)", r->location, r->rank, regions, times, counts);
        }
        Py_XDECREF(regions);
        Py_XDECREF(times);
        Py_XDECREF(counts);
        if (!row || PyList_Append(rows, row) != 0)
            Py_CLEAR(rows);
        Py_XDECREF(row);
    }
    PyObject *metrics = rows ? ws_metric_table() : NULL;
    PyObject *result = rows && metrics
                           ? Py_BuildValue("{sIsOsOsKsKsK}", "ranks", ws.ranks, "metrics", metrics,
                                           "rows", rows, "violations",
                                           (unsigned long long)ws.violations, "unmatched",
                                           (unsigned long long)ws.unmatched, "skipped",
                                           (unsigned long long)ws.skipped)
                           : NULL;
    Py_XDECREF(rows);
    Py_XDECREF(metrics);
    rd_ws_free(&ws);
    return result;
}

static PyMethodDef trace_methods[] = {
    {"definitions", (PyCFunction)trace_definitions, METH_NOARGS,
     "The global definitions as a dict of lists indexed by ref."},
    {"scan", (PyCFunction)(void (*)(void))trace_scan, METH_VARARGS | METH_KEYWORDS,
     "One pass over all events; returns a Scan."},
    {"write_chrome", (PyCFunction)(void (*)(void))trace_write_chrome, METH_VARARGS | METH_KEYWORDS,
     "Writes Chrome trace events from a scan made with durations_path."},
    {"wait_states", (PyCFunction)trace_wait_states, METH_NOARGS,
     "Replays the MPI operations of every rank with the wait-state engine: a dict with "
     "ranks, metrics ((name, parent), ...), rows [(location, rank, regions, seconds, "
     "counts)], violations, unmatched, skipped."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TraceType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "scorep._reader.Trace",
    .tp_basicsize = sizeof(TraceObject),
    .tp_dealloc = (destructor)trace_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An OTF2 trace opened for reading.",
    .tp_methods = trace_methods,
};

/* ---- Scan ------------------------------------------------------------------------ */

static void scan_dealloc(ScanObject *self)
{
    rd_scan_free(&self->scan);
    Py_XDECREF(self->trace);
    PyObject_Free(self);
}

static PyObject *bytes_of(const void *p, size_t n)
{
    return PyBytes_FromStringAndSize(n ? (const char *)p : "", (Py_ssize_t)n);
}

static PyObject *scan_locations(ScanObject *self, PyObject *unused)
{
    (void)unused;
    const rd_scan *s = &self->scan;
    PyObject *list = PyList_New(s->nlocs);
    if (!list)
        return NULL;
    for (uint32_t i = 0; i < s->nlocs; i++) {
        const rd_locstat *l = &s->locs[i];
        PyObject *item = PyDict_New();
        if (!item) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, item);
        const struct {
            const char *key;
            uint64_t value;
        } fields[] = {
            {"enters", l->enters}, {"leaves", l->leaves}, {"first", l->first}, {"last", l->last},
            {"max_depth", l->max_depth}, {"flushes", l->flushes}, {"flush_ns", l->flush_ns},
            {"off_count", l->off_count}, {"off_ns", l->off_ns},
            {"unmatched_leaves", l->unmatched_leaves}, {"unclosed", l->unclosed},
            {"sends", l->sends}, {"send_bytes", l->send_bytes}, {"recvs", l->recvs},
            {"recv_bytes", l->recv_bytes}, {"collectives", l->collectives},
            {"coll_sent", l->coll_sent}, {"coll_received", l->coll_received},
            {"rma_ops", l->rma_ops}, {"rma_put_bytes", l->rma_put_bytes},
            {"rma_get_bytes", l->rma_get_bytes},
            {"mpi_io_read_bytes", l->mpi_io_read_bytes},
            {"mpi_io_written_bytes", l->mpi_io_written_bytes},
            {"program_begin", l->program_begin}, {"program_end", l->program_end},
        };
        for (size_t f = 0; f < sizeof fields / sizeof *fields; f++)
            if (set_item(item, fields[f].key, PyLong_FromUnsignedLongLong(fields[f].value))) {
                Py_DECREF(list);
                return NULL;
            }
        if (set_item(item, "any", PyBool_FromLong(l->any)) ||
            set_item(item, "exit_status",
                     l->has_exit ? PyLong_FromLongLong(l->exit_status) : (Py_INCREF(Py_None), Py_None))) {
            Py_DECREF(list);
            return NULL;
        }
    }
    return list;
}

static PyObject *scan_density(ScanObject *self, PyObject *args)
{
    unsigned int li;
    if (!PyArg_ParseTuple(args, "I", &li))
        return NULL;
    if (li >= self->scan.nlocs || !self->scan.locs[li].density)
        Py_RETURN_NONE;
    return bytes_of(self->scan.locs[li].density, (size_t)self->scan.density_bins * sizeof(uint32_t));
}

static PyObject *scan_tree(ScanObject *self, PyObject *unused)
{
    (void)unused;
    const rd_scan *s = &self->scan;
    return Py_BuildValue("(NN)", bytes_of(s->parent, (size_t)s->nnodes * sizeof(uint32_t)),
                         bytes_of(s->region, (size_t)s->nnodes * sizeof(uint32_t)));
}

/* visits, incl, min, max (u64, ns) of every node at one location, nodes it never reached
 * included (as zeros). */
static PyObject *scan_node_stats(ScanObject *self, PyObject *args)
{
    unsigned int li;
    if (!PyArg_ParseTuple(args, "I", &li))
        return NULL;
    const rd_scan *s = &self->scan;
    if (li >= s->nlocs) {
        PyErr_SetString(PyExc_IndexError, "no such location");
        return NULL;
    }
    const rd_locstat *l = &s->locs[li];
    PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)s->nnodes * (Py_ssize_t)sizeof(rd_nodestat));
    if (!b)
        return NULL;
    char *p = PyBytes_AS_STRING(b);
    size_t have = l->node_cap < s->nnodes ? l->node_cap : s->nnodes;
    if (have)
        memcpy(p, l->nodes, have * sizeof(rd_nodestat));
    memset(p + have * sizeof(rd_nodestat), 0, (s->nnodes - have) * sizeof(rd_nodestat));
    return b;
}

static PyObject *scan_histogram(ScanObject *self, PyObject *unused)
{
    (void)unused;
    const rd_scan *s = &self->scan;
    size_t n = (size_t)RD_DEPTHS * RD_BUCKETS * sizeof(uint64_t);
    return Py_BuildValue("(NN)", bytes_of(s->hist, n), bytes_of(s->hist_name_bytes, n));
}

/* Slices as columns: start and dur (u64 ns), region, location, depth (u32). */
static PyObject *scan_slices(ScanObject *self, PyObject *unused)
{
    (void)unused;
    const rd_scan *s = &self->scan;
    uint64_t n = s->nslices;
    PyObject *start = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * 8));
    PyObject *dur = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * 8));
    PyObject *region = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * 4));
    PyObject *loc = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * 4));
    PyObject *depth = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * 4));
    if (!start || !dur || !region || !loc || !depth) {
        Py_XDECREF(start);
        Py_XDECREF(dur);
        Py_XDECREF(region);
        Py_XDECREF(loc);
        Py_XDECREF(depth);
        return NULL;
    }
    uint64_t *ps = (uint64_t *)PyBytes_AS_STRING(start), *pd = (uint64_t *)PyBytes_AS_STRING(dur);
    uint32_t *pr = (uint32_t *)PyBytes_AS_STRING(region), *pl = (uint32_t *)PyBytes_AS_STRING(loc);
    uint32_t *pp = (uint32_t *)PyBytes_AS_STRING(depth);
    for (uint64_t i = 0; i < n; i++) {
        ps[i] = s->slices[i].start;
        pd[i] = s->slices[i].dur;
        pr[i] = s->slices[i].region;
        pl[i] = s->slices[i].loc;
        pp[i] = s->slices[i].depth;
    }
    return Py_BuildValue("{sNsNsNsNsN}", "start", start, "dur", dur, "region", region, "loc", loc,
                         "depth", depth);
}

static PyObject *message_list(const rd_message *m, uint32_t n)
{
    PyObject *list = PyList_New(n);
    if (!list)
        return NULL;
    for (uint32_t i = 0; i < n; i++) {
        PyObject *item = Py_BuildValue("(KKKKI)", (unsigned long long)m[i].time,
                                       (unsigned long long)m[i].key, (unsigned long long)m[i].seq,
                                       (unsigned long long)m[i].bytes, m[i].loc);
        if (!item) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, item);
    }
    return list;
}

static PyObject *scan_messages(ScanObject *self, PyObject *unused)
{
    (void)unused;
    const rd_scan *s = &self->scan;
    PyObject *p2p = PyList_New(s->np2p);
    PyObject *colls = PyList_New(s->ncolls);
    PyObject *flushes = PyList_New(s->nflushes);
    if (!p2p || !colls || !flushes)
        goto fail;
    for (uint32_t i = 0; i < s->np2p; i++) {
        PyObject *item = Py_BuildValue("(IIKK)", s->p2p[i].src, s->p2p[i].dst,
                                       (unsigned long long)s->p2p[i].count,
                                       (unsigned long long)s->p2p[i].bytes);
        if (!item)
            goto fail;
        PyList_SET_ITEM(p2p, i, item);
    }
    for (uint32_t i = 0; i < s->ncolls; i++) {
        PyObject *item = Py_BuildValue("(IIKKK)", s->colls[i].lgroup, s->colls[i].op,
                                       (unsigned long long)s->colls[i].count,
                                       (unsigned long long)s->colls[i].sent,
                                       (unsigned long long)s->colls[i].received);
        if (!item)
            goto fail;
        PyList_SET_ITEM(colls, i, item);
    }
    for (uint32_t i = 0; i < s->nflushes; i++) {
        PyObject *item = Py_BuildValue("(KKI)", (unsigned long long)s->flushes[i].start,
                                       (unsigned long long)s->flushes[i].stop, s->flushes[i].loc);
        if (!item)
            goto fail;
        PyList_SET_ITEM(flushes, i, item);
    }
    return Py_BuildValue("{sNsNsNsNsNsKsKsK}", "p2p", p2p, "collectives", colls, "flushes", flushes,
                         "sends", message_list(s->sends, s->nsends), "recvs",
                         message_list(s->recvs, s->nrecvs), "sends_total",
                         (unsigned long long)s->sends_total, "recvs_total",
                         (unsigned long long)s->recvs_total, "flushes_total",
                         (unsigned long long)s->flushes_total);
fail:
    Py_XDECREF(p2p);
    Py_XDECREF(colls);
    Py_XDECREF(flushes);
    return NULL;
}

/* The I/O the scan saw: targets (files, or handles without a file) with any activity, who
 * did it, and the I/O calls without events. */
static PyObject *scan_io(ScanObject *self, PyObject *unused)
{
    (void)unused;
    const rd_scan *s = &self->scan;
    const rd_defs *d = &((TraceObject *)self->trace)->trace->defs;
    PyObject *targets = PyList_New(0), *callers = PyList_New(0);
    if (!targets || !callers)
        goto fail;
    for (uint32_t i = 0; i < s->nio_targets; i++) {
        const rd_io_target *t = &s->io_targets[i];
        if (!(t->reads || t->writes || t->flushes || t->creates || t->destroys || t->seeks ||
              t->duplicates))
            continue;
        bool file = i < d->nio_files;
        uint32_t name = file ? d->io_files[i].name : d->io_handles[i - d->nio_files].name;
        PyObject *paradigms = PyList_New(0);
        if (!paradigms)
            goto fail;
        for (uint32_t p = 0; p < 32 && p < d->nio_paradigms; p++) {
            if (!(t->paradigms & (1u << p)))
                continue;
            PyObject *n = str_or_empty(d, d->io_paradigm_names[p]);
            if (!n || PyList_Append(paradigms, n) < 0) {
                Py_XDECREF(n);
                Py_DECREF(paradigms);
                goto fail;
            }
            Py_DECREF(n);
        }
        PyObject *item = Py_BuildValue(
            "{sIsssNsNsKsKsKsKsKsKsKsKsKsKsK}", "index", i, "kind", file ? "file" : "handle",
            "name", str_or_empty(d, name), "paradigms", paradigms, "reads",
            (unsigned long long)t->reads, "writes", (unsigned long long)t->writes, "flushes",
            (unsigned long long)t->flushes, "failed", (unsigned long long)t->failed,
            "bytes_read", (unsigned long long)t->bytes_read, "bytes_written",
            (unsigned long long)t->bytes_written, "ns", (unsigned long long)t->ns, "creates",
            (unsigned long long)t->creates, "destroys", (unsigned long long)t->destroys,
            "seeks", (unsigned long long)t->seeks, "duplicates",
            (unsigned long long)t->duplicates);
        if (!item || PyList_Append(targets, item) < 0) {
            Py_XDECREF(item);
            goto fail;
        }
        Py_DECREF(item);
    }
    for (uint32_t i = 0; i < s->nio_callers; i++) {
        const rd_io_caller *c = &s->io_callers[i];
        PyObject *region;
        if (c->region == RD_NONE) {
            Py_INCREF(Py_None);
            region = Py_None;
        } else {
            region = PyLong_FromUnsignedLong(c->region);
        }
        PyObject *function;
        if (c->function == RD_NONE) {
            Py_INCREF(Py_None);
            function = Py_None;
        } else {
            function = PyLong_FromUnsignedLong(c->function);
        }
        PyObject *item = Py_BuildValue("(INNKKKK)", c->target, region, function,
                                       (unsigned long long)c->operations,
                                       (unsigned long long)c->bytes_read,
                                       (unsigned long long)c->bytes_written,
                                       (unsigned long long)c->ns);
        if (!item || PyList_Append(callers, item) < 0) {
            Py_XDECREF(item);
            goto fail;
        }
        Py_DECREF(item);
    }
    return Py_BuildValue("{sNsNsKsK}", "targets", targets, "callers", callers, "calls",
                         (unsigned long long)s->io_calls, "unknown_calls",
                         (unsigned long long)s->io_calls_unknown);
fail:
    Py_XDECREF(targets);
    Py_XDECREF(callers);
    return NULL;
}

static PyObject *scan_get_summary(ScanObject *self, void *closure)
{
    (void)closure;
    const rd_scan *s = &self->scan;
    return Py_BuildValue("{sKsKsKsIsK}", "events", (unsigned long long)s->events, "calls",
                         (unsigned long long)s->calls, "threshold_ns",
                         (unsigned long long)s->threshold, "nodes", s->nnodes, "slices",
                         (unsigned long long)s->nslices);
}

static PyMethodDef scan_methods[] = {
    {"locations", (PyCFunction)scan_locations, METH_NOARGS, "Per-location statistics."},
    {"density", (PyCFunction)scan_density, METH_VARARGS, "Enters per time bin of a location."},
    {"tree", (PyCFunction)scan_tree, METH_NOARGS, "(parents, regions) of the call tree (u32)."},
    {"node_stats", (PyCFunction)scan_node_stats, METH_VARARGS,
     "visits, incl, min, max (u64 ns) per node at a location."},
    {"histogram", (PyCFunction)scan_histogram, METH_NOARGS,
     "(calls, name bytes) per (depth, duration bucket), u64."},
    {"slices", (PyCFunction)scan_slices, METH_NOARGS, "The kept slices as columns."},
    {"messages", (PyCFunction)scan_messages, METH_NOARGS, "Message, collective, flush records."},
    {"io", (PyCFunction)scan_io, METH_NOARGS, "I/O per file or handle and per calling region."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef scan_getset[] = {
    {"summary", (getter)scan_get_summary, NULL, "events, calls, threshold_ns, nodes, slices", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ScanType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "scorep._reader.Scan",
    .tp_basicsize = sizeof(ScanObject),
    .tp_dealloc = (destructor)scan_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "What one pass over a trace gathered.",
    .tp_methods = scan_methods,
    .tp_getset = scan_getset,
};

/* ---- module ---------------------------------------------------------------------- */

static PyObject *reader_bucket_floor(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned int b;
    if (!PyArg_ParseTuple(args, "I", &b))
        return NULL;
    return PyLong_FromUnsignedLongLong(rd_bucket_floor(b));
}

static PyObject *reader_bucket(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned long long ns;
    if (!PyArg_ParseTuple(args, "K", &ns))
        return NULL;
    return PyLong_FromUnsignedLong(rd_bucket(ns));
}

static PyMethodDef module_methods[] = {
    {"open", reader_open, METH_VARARGS, "open(anchor path) -> Trace"},
    {"bucket", reader_bucket, METH_VARARGS, "Histogram bucket of a duration in ns."},
    {"bucket_floor", reader_bucket_floor, METH_VARARGS, "Smallest duration in ns of a bucket."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "scorep._reader",
    "Fast OTF2 reading for the reports (scorep.report), on the OTF2 C library.", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__reader(void);

PyMODINIT_FUNC PyInit__reader(void)
{
    if (PyType_Ready(&TraceType) < 0 || PyType_Ready(&ScanType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (PyModule_AddIntConstant(m, "DEPTHS", RD_DEPTHS) || PyModule_AddIntConstant(m, "BUCKETS", RD_BUCKETS) ||
        PyModule_AddObject(m, "WAIT_STATE_METRICS", ws_metric_table()) != 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
