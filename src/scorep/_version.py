"""The package's version: defined here only. pyproject.toml reads it for the package's
metadata; `python -m scorep --version`, `scorep-score --version`, scorep.cfg and MANIFEST.md
show it."""

__version__ = "0.1.0"
