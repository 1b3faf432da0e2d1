"""Score-P filter files (SCOREP_FILTERING_FILE, --filter), parsed and matched by the C core
so that the measurement and the tools (scorep-score -f) decide alike."""

__all__ = ["Filter", "FilterError"]


class FilterError(ValueError):
    """A filter file that cannot be used; str() is "file:line: what was expected"."""


class Filter:
    def __init__(self, path):
        from scorep import _bindings
        self._native = _bindings
        try:
            self._handle = _bindings.filter_load(str(path))
        except ValueError as error:
            raise FilterError(str(error)) from None
        self.path = str(path)

    def excludes(self, name, mangled=None, file=None):
        """Whether the region is left out (by its name, or by its source file)."""
        return self._native.filter_excludes(self._handle, name, mangled, file or None)

    def __len__(self):
        return self._native.filter_rule_count(self._handle)
