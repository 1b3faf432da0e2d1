"""The end-of-run summary: printed on stderr when it is a terminal (or with --summary), so
that pipelines and tests see exactly the program's own output otherwise."""

import os


def top_regions(experiment_dir, base_name, top):
    """(regions by exclusive time, total time, call tree) from the profile the measurement
    just wrote: the shared aggregates of scorep.report.analysis, as the report and the
    Jupyter kernel rank them."""
    from scorep.report.analysis import experiment_tree, top_regions as rank
    tree = experiment_tree(experiment_dir, base_name)
    return rank(tree, "excl", top, include_measurement=False), tree.total_time(), tree


def format_summary(measurement, finalize_seconds, top=8):
    r = measurement.results
    seconds = (r["end_time"] - r["start_time"]) / r["ticks_per_second"]
    exp = measurement.experiment_dir
    processes = r.get("processes", 1)
    lines = ["scorep: measured %s for %.3f s: %s%d thread(s), %d region(s), %s call(s) recorded"
             % (measurement.program_name, seconds,
                "%d process(es), " % processes if processes > 1 else "", r["locations"],
                r["regions"], "{:,}".format(r["enters"])),
             "scorep: results in %s" % exp]
    profile_path = os.path.join(exp, measurement.config["SCOREP_PROFILING_BASE_NAME"] + ".cubex")
    if measurement.config.profiling and os.path.exists(profile_path):
        ranked, total, tree = top_regions(
            exp, measurement.config["SCOREP_PROFILING_BASE_NAME"], top)
        samples = None
        if tree.sampling is not None:
            samples = tree.samples_by_region()
            lines.append("scorep: " + tree.sampling.describe())
            if tree.sampling.idle is not None:
                lines.append("scorep: shares of the %.3f s on a CPU; idle apart: %.3f s"
                             % (total, sum(tree.sampling.idle)))
        lines.append("scorep: top regions by exclusive time:")
        lines.append("    %12s %8s %14s  %s" % ("time[s]", "time[%]",
                                                "visits" if samples is None else "samples",
                                                "region"))
        for st in ranked:
            lines.append("    %12.6f %8.1f %14s  %s" % (
                st.excl, 100.0 * st.excl / total if total else 0.0,
                "{:,}".format(st.visits if samples is None else samples.get(st.region.id, 0)),
                st.region.display))
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
