"""The TSC timer where the kernel does not use the TSC itself (SCOREP_TIMER=tsc): used after
a start-up check that the TSCs of the process's CPUs agree, else clock_gettime with a note.
The machine's own clocksource cannot be changed by a test: the kernel's verdict is replaced
in-process, the CPUs' check is the real one."""

import os

import pytest

from scorep import _native
from scorep.measure import config as _config


class KernelDistrustsTsc:
    """The native module as on a machine booted with tsc=unstable."""

    def __init__(self, native, invariant=True, agree=None):
        self._native = native
        self._invariant = invariant
        self._agree = agree

    def tsc_usable(self):
        return False, "the kernel does not trust the TSC as its clocksource"

    def tsc_invariant(self):
        return self._invariant

    def tsc_synchronized(self, budget_ms):
        if self._agree is not None:
            return self._agree
        return self._native.tsc_synchronized(budget_ms)


@pytest.fixture
def distrusted(monkeypatch):
    native = _native.load()
    monkeypatch.setattr(_config, "_tsc_checked", {})

    def use(**kwargs):
        fake = KernelDistrustsTsc(native, **kwargs)
        monkeypatch.setattr(_native, "native", lambda: fake)
        return fake
    return use


def test_cross_cpu_check_of_the_real_tscs():
    native = _native.load()
    agree, hand_overs, resolution_ns, why = native.tsc_synchronized(50)
    if len(os.sched_getaffinity(0)) < 2:
        assert agree and hand_overs == 0
        return
    # Invariant TSCs of one machine agree. How many hand-overs fit into the budget depends on
    # the machine's load (each needs both pinned threads running; thousands on an idle
    # machine, a few dozen when other processes keep the cores busy): at least one per pair.
    assert native.tsc_invariant()
    assert agree, why
    assert hand_overs >= len(os.sched_getaffinity(0)) - 1
    assert 0 < resolution_ns < 50_000_000


def test_explicit_tsc_is_checked_where_the_kernel_distrusts_it(distrusted):
    distrusted()
    config = _config.from_environ({"SCOREP_TIMER": "tsc"})
    assert config["SCOREP_TIMER"] == "tsc"
    (note,) = config.notes
    assert note.startswith("SCOREP_TIMER=tsc although the kernel does not trust the TSC")
    assert "agreed in" in note


def test_explicit_tsc_falls_back_when_the_cpus_disagree(distrusted):
    distrusted(agree=(False, 10, 500, "the TSC of CPU 1 is behind that of CPU 0"))
    config = _config.from_environ({"SCOREP_TIMER": "tsc"})
    assert config["SCOREP_TIMER"] == "clock_gettime"
    assert config.notes == ["SCOREP_TIMER=tsc: the TSC of CPU 1 is behind that of CPU 0 (the "
                            "kernel does not use the TSC either); using clock_gettime"]


def test_explicit_tsc_without_an_invariant_tsc(distrusted):
    distrusted(invariant=False)
    config = _config.from_environ({"SCOREP_TIMER": "tsc"})
    assert config["SCOREP_TIMER"] == "clock_gettime"
    assert config.notes[0].endswith("using clock_gettime")


def test_default_stays_with_the_kernels_choice(distrusted):
    distrusted()
    assert _config.from_environ({})["SCOREP_TIMER"] == "clock_gettime"
