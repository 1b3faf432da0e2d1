"""Score-P filter files (SCOREP_FILTERING_FILE, --filter), parsed and matched by the C core
so that the measurement and the tools (scorep-score -f) decide alike."""

from scorep import _native
from scorep._errors import FilterError

__all__ = ["Filter", "FilterError"]


class Filter:
    """A parsed filter file. MeasurementError when the core is not built for this Python,
    FilterError when the file cannot be used."""

    def __init__(self, path):
        self._native = _native.load()
        try:
            self._handle = self._native.filter_load(str(path))
        except ValueError as error:
            raise FilterError(str(error)) from None
        self.path = str(path)

    def excludes(self, name, mangled=None, file=None):
        """Whether the region is left out (by its name, or by its source file)."""
        return self._native.filter_excludes(self._handle, name, mangled, file or None)

    def __len__(self):
        return self._native.filter_rule_count(self._handle)
