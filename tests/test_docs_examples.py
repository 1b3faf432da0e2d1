"""The examples the manual shows keep working: every fenced block that README.md or a page of
docs/ marks with `<!-- run -->` on the line before it is run, in order, in one temporary
directory per page, with this checkout's scorep.

Markers (an HTML comment, invisible on the rendered page, on the line before the fence):

    <!-- run -->                      run the block's commands; each must exit with status 0
    <!-- run: status=2 -->            ... each must exit with status 2 (an example of an error)
    <!-- run: makes=a.txt,b/c -->     ... and these paths must exist afterwards
    <!-- file: app.py -->             write the block's text to app.py (the program the next
                                      examples measure)

In a run block, the lines starting with `$ ` are the commands (the others are the output the
page shows, which timings make differ from run to run); a block without any `$ ` line is all
commands. A command runs in bash (pipefail) as a user would type it: `python`, `scorep-score`
and `scorep-report` are this checkout's (Debian's python3 with PYTHONPATH=src), `.venv/bin/`
in front of them is dropped, `mpirun` gets the flags a root user on few cores needs, and
`examples/` and `tests/` are the checkout's. Besides the block's `makes`, every output a command
names must exist: each `-o FILE` and each `SCOREP_EXPERIMENT_DIRECTORY=DIR`."""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md"] + sorted((REPO / "docs").glob("*.md"))

MARKER = re.compile(r"^<!--\s*(run|file)\s*(?::\s*(.*?))?\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```|~~~)")
# the topic pages whose examples must be run (a page may not lose all of its run blocks)
PAGES_WITH_EXAMPLES = {
    "README.md", "measuring.md", "configuration.md", "user-api.md", "scorep-score.md",
    "reports.md", "sampling.md", "line-profiles.md", "mpi.md", "child-processes.md", "io.md",
    "metrics.md", "jupyter.md",
}


def blocks(page):
    """(kind, options, text, line number) of each marked fenced block of a page."""
    lines = page.read_text().splitlines()
    found = []
    i = 0
    while i < len(lines):
        m = MARKER.match(lines[i])
        if m and i + 1 < len(lines) and FENCE.match(lines[i + 1]):
            indent, fence = FENCE.match(lines[i + 1]).groups()
            body = []
            j = i + 2
            while j < len(lines) and not lines[j].strip().startswith(fence):
                body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j])
                j += 1
            assert j < len(lines), "%s:%d: the marked block is never closed" % (page.name, i + 1)
            found.append((m.group(1), m.group(2) or "", "\n".join(body) + "\n", i + 1))
            i = j
        else:
            assert not m, ("%s:%d: %s marker not directly before a fenced block"
                           % (page.name, i + 1, m.group(1)))
        i += 1
    return found


TOOL_LINE = re.compile(r"^(scorep|scorep-report|scorep-score): ")


def commands(text):
    """[(command, the tool's own lines the page shows after it)] of a run block, continuation
    lines joined. The lines the page shows starting `scorep: ` (or `scorep-report: `,
    `scorep-score: `) are the tool's messages, which do not depend on timing: the command must
    print them (`...` where the page shortens one, see shown_line)."""
    lines = text.splitlines()
    prompted = any(line.startswith("$ ") for line in lines)
    found = []
    for line in lines:
        if found and found[-1][0].endswith("\\"):
            found[-1][0] = found[-1][0][:-1] + " " + line.strip()
        elif prompted and line.startswith("$ ") or not prompted and line.strip() \
                and not line.lstrip().startswith("#"):
            found.append([line[2:] if prompted else line, []])
        elif prompted and found and TOOL_LINE.match(line):
            found[-1][1].append(line.rstrip())
    return [(command, shown) for command, shown in found]


def shown_line(text):
    """A line as the page shows it, as a pattern: `...` (or `…`) stands for text the page
    leaves out (a long path, the rest of a long line)."""
    parts = re.split(r"\s*(?:\.\.\.|…)\s*", text)
    return re.compile(r".*?".join(re.escape(part) for part in parts))


def named_outputs(command):
    """What a command says it writes: `-o FILE` arguments and the experiment directory."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return []
    outputs = [words[k + 1] for k, w in enumerate(words[:-1]) if w == "-o"]
    outputs += [w.split("=", 1)[1] for w in words if w.startswith("SCOREP_EXPERIMENT_DIRECTORY=")]
    return outputs


def options(text):
    """`status=2 makes=a,b` -> {"status": "2", "makes": "a,b"}"""
    return dict(word.split("=", 1) for word in text.split())


def shims(bin_dir):
    """`python`, `scorep-score`, `scorep-report` and `mpirun` as the pages' commands use them."""
    bin_dir.mkdir()
    mpirun = shutil.which("mpirun")
    scripts = {
        "python": 'exec %s "$@"' % sys.executable,
        "python3": 'exec %s "$@"' % sys.executable,
        "scorep-score": 'exec %s -m scorep.score "$@"' % sys.executable,
        "scorep-report": 'exec %s -m scorep.report "$@"' % sys.executable,
    }
    if mpirun:
        root = "--allow-run-as-root " if os.getuid() == 0 else ""
        scripts["mpirun"] = 'exec %s %s--oversubscribe "$@"' % (mpirun, root)
    for name, body in scripts.items():
        path = bin_dir / name
        path.write_text("#!/bin/sh\n" + body + "\n")
        path.chmod(0o755)


def run_page(page, tmp_path, repo=REPO):
    work = tmp_path / "work"
    work.mkdir(parents=True)
    for shared in ("examples", "tests"):
        (work / shared).symlink_to(repo / shared)
    shims(tmp_path / "bin")
    env = dict(os.environ, PATH="%s:%s" % (tmp_path / "bin", os.environ.get("PATH", "")),
               PYTHONPATH=str(repo / "src"), COLUMNS="80", NO_COLOR="1")
    for name in list(env):
        if name.startswith("SCOREP_"):  # the examples say which settings they use
            del env[name]
    ran = 0
    for kind, opts, text, line in blocks(page):
        where = "%s:%d" % (page.relative_to(repo), line)
        if kind == "file":
            target = work / opts
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            continue
        opts = options(opts)
        status = int(opts.get("status", "0"))
        for command, shown_lines in commands(text):
            if command.startswith("mpirun") and not shutil.which("mpirun"):
                pytest.skip("%s: no mpirun on this machine" % where)
            shown = command
            command = re.sub(r"(^|[\s;&|(])\.venv/bin/", r"\1", command)
            out = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work, env=env,
                                 capture_output=True, text=True, timeout=120)
            assert out.returncode == status, (
                "%s: `%s` exited with %d, not %d\nstdout:\n%s\nstderr:\n%s"
                % (where, shown, out.returncode, status, out.stdout[-3000:], out.stderr[-3000:]))
            printed = (out.stdout + out.stderr).splitlines()
            for expected in shown_lines:
                assert any(shown_line(expected).fullmatch(line) for line in printed), (
                    "%s: `%s` did not print the line the page shows:\n%s\nit printed:\n%s"
                    % (where, shown, expected, "\n".join(printed[-40:])))
            for output in named_outputs(command):
                assert (work / output).exists(), "%s: `%s` did not write %s" % (where, shown, output)
            ran += 1
        for made in filter(None, opts.get("makes", "").split(",")):
            assert (work / made).exists(), "%s: %s was not made" % (where, made)
    return ran


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_examples_of_the_page_run(page, tmp_path):
    if not blocks(page):
        assert page.name not in PAGES_WITH_EXAMPLES, "%s has no marked examples left" % page.name
        pytest.skip("%s shows no runnable examples" % page.name)
    assert run_page(page, tmp_path) > 0


def test_the_markers_are_read_as_the_docstring_says(tmp_path):
    """The runner itself: a failing command fails the page, a missing output too, and the
    commands of a `$` block are its `$` lines only."""
    page = tmp_path / "page.md"
    page.write_text("<!-- file: hello.py -->\n```python\nprint('hi')\n```\n\n"
                    "<!-- run: makes=out.txt -->\n```\n$ python hello.py > out.txt\nhi\n```\n")
    assert [b[0] for b in blocks(page)] == ["file", "run"]
    assert commands(blocks(page)[1][2]) == [("python hello.py > out.txt", [])]
    assert commands("$ a \\\n  b\nout\nscorep: said ...\n$ c\n") == [
        ("a  b", ["scorep: said ..."]), ("c", [])]
    assert commands("# setup\na\n\nb\n") == [("a", []), ("b", [])]
    assert named_outputs("SCOREP_EXPERIMENT_DIRECTORY=d python -m scorep a.py") == ["d"]
    assert named_outputs("scorep-report d -o x.html -o y.prof  # both") == ["x.html", "y.prof"]

    repo = tmp_path / "repo"
    for sub in ("examples", "tests"):
        (repo / sub).mkdir(parents=True)
    page.rename(repo / "page.md")
    page = repo / "page.md"
    assert run_page(page, tmp_path / "a", repo) == 1
    assert (tmp_path / "a" / "work" / "out.txt").read_text() == "hi\n"
    page.write_text("<!-- run: makes=missing.txt -->\n```\ntrue\n```\n")
    with pytest.raises(AssertionError, match="missing.txt was not made"):
        run_page(page, tmp_path / "b", repo)
    page.write_text("<!-- run -->\n```\n$ false\n```\n")
    with pytest.raises(AssertionError, match="exited with 1, not 0"):
        run_page(page, tmp_path / "c", repo)
    page.write_text("<!-- run -->\n```\n$ python -c 'open(\"x\", \"w\")' -o y\n```\n")
    with pytest.raises(AssertionError, match="did not write y"):
        run_page(page, tmp_path / "d", repo)
    page.write_text("<!-- run -->\n```\n$ echo 'scorep: one thing'\nscorep: another...\n```\n")
    with pytest.raises(AssertionError, match="did not print the line the page shows"):
        run_page(page, tmp_path / "e", repo)
    page.write_text("<!-- run -->\n```\n$ echo 'scorep: one thing'\nscorep: one ...\n```\n")
    assert run_page(page, tmp_path / "f", repo) == 1
    assert shown_line("scorep: .../bad.filter:2: no").fullmatch("scorep: /tmp/x/bad.filter:2: no")
    assert not shown_line("scorep: bad.filter:2: no").fullmatch("scorep: /tmp/x/bad.filter:2: no")


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def anchor(heading):
    """GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces
    as `-`."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page):
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)
    return {anchor(m.group(1)) for m in re.finditer(r"^#+ (.*)$", text, re.M)}


def test_every_link_between_the_pages_leads_somewhere():
    """A relative link names a file of the checkout and, after `#`, a heading of it: the pages
    moved out of one README, and a link to an old section would lead nowhere."""
    broken = []
    for page in PAGES:
        for target in LINK.findall(re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, fragment = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append("%s: %s (no such file)" % (page.name, target))
            elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
                broken.append("%s: %s (no such heading)" % (page.name, target))
    assert broken == []
    assert anchor("Reports: scorep-report") == "reports-scorep-report"
    assert anchor("mpi4py.futures and MPI_Comm_spawn") == "mpi4pyfutures-and-mpi_comm_spawn"


@pytest.mark.parametrize("command, page", [
    (["-m", "scorep", "--help"], "configuration.md"),
    (["-m", "scorep.score", "--help"], "scorep-score.md"),
    (["-m", "scorep.report", "--help"], "reports.md"),
], ids=["scorep", "scorep-score", "scorep-report"])
def test_every_option_and_variable_of_the_help_is_documented(command, page):
    """What a tool's --help lists (its options, and for python -m scorep every SCOREP_*
    variable it reads) is documented on its page: the help comes from the code, so an option
    added there without a word on the page fails here."""
    out = subprocess.run([sys.executable] + command, capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(REPO / "src")))
    assert out.returncode == 0, out.stderr
    # "scorep-score -g" in scorep's help names the other tool's option
    text = re.sub(r"scorep-score -\w", "", out.stdout)
    names = set(re.findall(r"(?<![\w-])--?[a-z][\w-]*", text))
    names |= set(re.findall(r"\bSCOREP_[A-Z0-9_]+\b", text))
    assert len(names) > 10
    documented = (REPO / "docs" / page).read_text()
    assert sorted(n for n in names if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(n),
                                                    documented)) == []
