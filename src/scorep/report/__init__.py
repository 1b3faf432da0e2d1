"""Reports of an experiment directory: terminal summary, a self-contained HTML report,
exports for the viewers people use (Perfetto/Chrome, speedscope, pstats/SnakeViz, flame
graph stacks, Graphviz call graphs) and the difference of two runs.

    python -m scorep.report EXPERIMENT [-o FILE]...
    python -m scorep.report diff A B [-o FILE.html]

``main(argv)`` is the command line (also installed as ``scorep-report``).
"""


def main(argv=None):
    from scorep.report.cli import main as cli_main
    return cli_main(argv)


__all__ = ["main"]
