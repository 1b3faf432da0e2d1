"""scorep-score's estimate of one profile (scorep.score.model has the region types and rows):
the profile's own model fills the rows, the bytes this tool's trace writes
(scorep.score.measured) for its profiles, Score-P's rules (scorep.score.scorep_rules) for
Score-P's."""

from scorep.cube import recorded_metrics
from scorep.score.measured import MeasuredModel
from scorep.score.model import (FILTER_STATE, FILTERABLE, TYPE_ORDER, Group, Part, RegionRow,
                                ScoreError, classify, is_own_profile, paradigm)
from scorep.score.scorep_rules import ScorePModel


def _sum_metrics(target, rows):
    for row in rows:
        for name, value in row.metrics.items():
            target.metrics[name] = target.metrics.get(name, 0) + value


class Estimate:
    """The estimate for one profile; build it with :func:`estimate`.

    ``rows``: a RegionRow per region with bytes, in region id order. ``unfiltered`` and
    ``filtered`` (None without a filter) are the models' scenarios (``unit_bytes``,
    ``total_bytes``, ``max_buf``, ``total_memory``); ``scenario`` is the one the summary
    lines report (the filtered one when there is a filter). ``dense``: the hardware counters
    of -c."""

    def __init__(self, profile, filter=None, dense=0):
        self.profile = profile
        self.filter = filter
        self.dense = dense
        try:
            self.visit_values = profile.values("visits", inclusive=False)
            self.time_values = profile.values("time", inclusive=False)
        except KeyError as error:
            raise ScoreError("%s: not a Score-P profile: %s" % (
                profile.path, str(error).strip("'\"").split(": ", 1)[-1]))
        if not profile.locations:
            raise ScoreError("%s: the profile has no locations" % profile.path)
        self.types = classify(profile)
        self.own = is_own_profile(profile)
        # Columns of the recorded metrics for our own profiles; Score-P's own scorep-score
        # prints none, so its profiles keep its layout.
        self.metrics = recorded_metrics(profile) if self.own else []
        if self.own and not dense and self.metrics:
            # Our trace of the same run writes its metric records at every enter and leave.
            self.dense = len(self.metrics)
        self.model = (MeasuredModel if self.own else ScorePModel)(self)
        self.units = self.model.units
        nunits = len(self.units)
        self.has_hits = self.model.has_hits
        self.all_rows = [RegionRow(r, self.types[r.id], nunits) for r in profile.regions]
        self._parts = {}
        self.model.fill(self)
        if filter is not None:
            for row in self.all_rows:
                row.filtered = row.type in FILTERABLE and paradigm(row.region) != "sampling" \
                    and bool(filter.excludes(row.region.name, row.region.mangled_name,
                                             row.region.file or None))
        self._sum_recorded_metrics()
        self.rows = [row for row in self.all_rows if row.total_bytes > 0]
        self.unfiltered = self.model.scenario(self, filtered=False)
        self.filtered = self.model.scenario(self, filtered=True) if filter is not None else None
        self.scenario = self.filtered or self.unfiltered
        all_group, _ = self.groups()
        self.total_time = all_group.time

    def add(self, type_, row, unit, nbytes, visits, hits, time, dynamic=False):
        """What one call path did on one unit: counted in ``row`` and in type_'s group."""
        key = (type_, row.region.id, dynamic)
        part = self._parts.get(key)
        if part is None:
            part = self._parts[key] = Part(type_, row, dynamic, len(self.units))
        for target in (part, row):
            target.visits += visits
            target.hits += hits
            target.time += time
            target.bytes[unit] += nbytes

    def _sum_recorded_metrics(self):
        """Each region's exclusive value of every recorded metric, summed over its call
        paths and locations."""
        for metric in self.metrics:
            values = self.profile.values(metric, inclusive=False)
            for cnode in self.profile.cnodes:
                row = self.all_rows[cnode.region.id]
                row.metrics[metric.uniq_name] = row.metrics.get(metric.uniq_name, 0) + \
                    sum(values[cnode.id])

    def parts(self, filtered=None):
        """The parts, all (None), or those a filter keeps (False) or leaves out (True)."""
        for part in self._parts.values():
            if filtered is None:
                yield part
            elif not part.dynamic and bool(part.row.filtered) == filtered:
                yield part

    # -- groups ---------------------------------------------------------------------------

    def groups(self):
        """ALL and the type groups without a filter, in TYPE_ORDER; only those with bytes
        are shown (as in Score-P)."""
        nunits = len(self.units)
        symbol = "-" if self.filter is not None else " "
        all_group = Group("ALL", "ALL", nunits, symbol)
        by_type = {}
        for part in self.parts():
            group = by_type.get(part.type)
            if group is None:
                group = by_type[part.type] = Group(part.type, part.type, nunits, symbol)
            group.add(part)
            all_group.add(part)
        if self.metrics:
            for group in by_type.values():
                _sum_metrics(group, [r for r in self.all_rows if r.type == group.type])
            _sum_metrics(all_group, self.all_rows)
        return all_group, _ordered(by_type)

    def filtered_groups(self):
        """ALL-FLT, FLT (what the filter leaves out) and <type>-FLT."""
        nunits = len(self.units)
        all_group = Group("ALL", "ALL-FLT", nunits, FILTER_STATE["ALL"])
        by_type = {"FLT": Group("FLT", "FLT", nunits, FILTER_STATE["FLT"])}
        for part in self.parts(filtered=True):
            by_type["FLT"].add(part)
        for part in self.parts(filtered=False):
            group = by_type.get(part.type)
            if group is None:
                group = by_type[part.type] = Group(part.type, part.type + "-FLT", nunits,
                                                   FILTER_STATE.get(part.type, "-"))
            group.add(part)
            all_group.add(part)
        if self.metrics:
            kept = [r for r in self.all_rows if not r.filtered]
            _sum_metrics(by_type["FLT"], [r for r in self.all_rows if r.filtered])
            for group in by_type.values():
                if group.type != "FLT":
                    _sum_metrics(group, [r for r in kept if r.type == group.type])
            _sum_metrics(all_group, kept)
        return all_group, _ordered(by_type)


def _ordered(by_type):
    order = {t: i for i, t in enumerate(TYPE_ORDER)}
    return [by_type[t] for t in sorted(by_type, key=lambda t: (order.get(t, len(order)), t))]


def estimate(profile, filter=None, dense=0):
    """The Estimate of a profile read with :func:`scorep.cube.read`; ``filter`` is a
    :class:`scorep.measure.filter.Filter` or None; ``dense`` the number of hardware counters a
    tracing run would record per event (scorep-score -c)."""
    return Estimate(profile, filter, dense)
