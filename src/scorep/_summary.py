"""The end-of-run summary: printed on stderr when it is a terminal (or with --summary), so
that pipelines and tests see exactly the program's own output otherwise."""

import os


def region_totals(profile_path):
    """(region name -> [visits, exclusive seconds]) summed over call paths and locations,
    and the total time, read from the profile the measurement just wrote."""
    from scorep import cube
    profile = cube.read(profile_path)
    visits = profile.values(profile.metric("visits"), inclusive=False)
    exclusive = profile.values(profile.metric("time"), inclusive=False)
    totals = {}
    for node in profile.cnodes:
        # A parameter's node is a split of its region's visit: its time is the region's,
        # its visits are not extra calls.
        entry = totals.setdefault(node.region.name, [0, 0.0])
        if not node.parameters:
            entry[0] += sum(visits[node.id])
        entry[1] += sum(exclusive[node.id])
    total = sum(t for _, t in totals.values())
    return totals, total, profile.root.region.name


def format_summary(measurement, finalize_seconds, top=8):
    r = measurement.results
    seconds = (r["end_time"] - r["start_time"]) / r["ticks_per_second"]
    exp = measurement.experiment_dir
    lines = ["scorep: measured %s for %.3f s: %d thread(s), %d region(s), %s call(s) recorded"
             % (measurement.program_name, seconds, r["locations"], r["regions"],
                "{:,}".format(r["enters"])),
             "scorep: results in %s" % exp]
    profile_path = os.path.join(exp, measurement.config["SCOREP_PROFILING_BASE_NAME"] + ".cubex")
    if measurement.config.profiling and os.path.exists(profile_path):
        totals, total, root = region_totals(profile_path)
        ranked = sorted(((t, v, name) for name, (v, t) in totals.items() if name != root),
                        reverse=True)[:top]
        lines.append("scorep: top regions by exclusive time:")
        lines.append("    %12s %8s %14s  %s" % ("time[s]", "time[%]", "visits", "region"))
        for t, v, name in ranked:
            lines.append("    %12.6f %8.1f %14s  %s" % (t, 100.0 * t / total if total else 0.0,
                                                     "{:,}".format(v), name))
    else:
        lines.append("scorep: profiling was off (SCOREP_ENABLE_PROFILING=false): no region "
                     "summary")
    lines.append("scorep: the measurement's own cost: %.3f s to write the results; %d trace "
                 "buffer flush(es) during the run" % (finalize_seconds, r["trace_flushes"]))
    look = ["scorep-score %s" % exp]
    if os.path.exists(profile_path) or os.path.exists(os.path.join(exp, "traces.otf2")):
        look.append("python -m scorep.report %s" % exp)
    lines.append("scorep: look further: " + "   ".join(look))
    return "\n".join(lines) + "\n"
