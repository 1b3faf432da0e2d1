"""Measured cells' results in a real notebook front end: Debian's Jupyter Notebook 6 server
(bound to 127.0.0.1 on a free port, stopped after) driven by headless Chromium through
tests/notebook_frontend_browser.js. The browser runs the notebook's cells, opens every
result, clicks every tab of each report (the frame must stay on the report: a link
"#regions" in a srcdoc frame resolves against the notebook's address unless the report
handles it) and saves the notebook, whose size is checked; then the same clicks in the
nbconvert HTML export of the saved notebook."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import nbformat
import pytest

from conftest import REPO
from test_jupyter_kernel import install_kernelspec, kernel_env

BROWSER = REPO / "tests" / "notebook_frontend_browser.js"
PUPPETEER = REPO / "src" / "scorep" / "report" / "js" / "node_modules" / "puppeteer-core"
NOTEBOOK_SERVER = shutil.which("jupyter-notebook")
pytestmark = [
    pytest.mark.skipif(not (os.path.exists("/usr/bin/chromium") and shutil.which("node") and
                            PUPPETEER.is_dir()),
                       reason="needs chromium, node and the report's npm packages (make js)"),
    pytest.mark.skipif(NOTEBOOK_SERVER is None,
                       reason="needs Jupyter Notebook (Debian: python3-notebook)"),
]

TINY = "%%scorep\ndef tiny(n):\n    return n + 1\ntiny(1)\ntiny(2)\n"
BUSY = ("%%scorep\ndef busy(n):\n    return sum(i * i for i in range(n))\n"
        "for _ in range(5):\n    busy(20000)\n")
CELLS = [
    TINY,
    "%%scorep_env\nSCOREP_ENABLE_TRACING=true",
    BUSY,
    "%scorep_diff 1 3",
    "%%scorep_env\nSCOREP_JUPYTER_INLINE=summary",
    TINY,
]
RESULTS = 4  # inline results: cells 1, 3 and 6 and the diff


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(base URL, token, notebook folder) of a Notebook 6 server with the scorep kernel."""
    root = tmp_path_factory.mktemp("frontend")
    kernels = install_kernelspec(root / "prefix")
    folder = root / "notebooks"
    folder.mkdir()
    env = kernel_env(root / ".ipython")
    env.update(JUPYTER_PATH=str(kernels.parent), JUPYTER_CONFIG_DIR=str(root / "config"),
               JUPYTER_DATA_DIR=str(root / "data"), JUPYTER_RUNTIME_DIR=str(root / "runtime"))
    port, token = free_port(), "scorep-test-%d" % os.getpid()
    log = open(root / "server.log", "w")
    proc = subprocess.Popen(
        [sys.executable, NOTEBOOK_SERVER, "--no-browser", "--allow-root", "--ip=127.0.0.1",
         "--port=%d" % port, "--port-retries=0", "--NotebookApp.token=" + token,
         "--notebook-dir=" + str(folder)], env=env, stdout=log, stderr=subprocess.STDOUT)
    base = "http://127.0.0.1:%d" % port
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen("%s/api/status?token=%s" % (base, token), timeout=2)
                break
            except OSError:
                if proc.poll() is not None:
                    break
                time.sleep(0.5)
        if proc.poll() is not None:
            pytest.fail("the notebook server did not start:\n" +
                        (root / "server.log").read_text())
        yield base, token, folder
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def browse(*args, timeout=600):
    out = subprocess.run(["node", str(BROWSER)] + [str(a) for a in args],
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def check_tabs(result):
    """Every tab click left the frame on the report, with the tab's section in view."""
    assert result["tabs"], result
    for tab in result["tabs"]:
        assert tab["frame_url"] == "about:srcdoc", tab
        assert tab["url"] == "about:srcdoc", tab
        assert tab["report"] and not tab["notebook"], tab
        # The section's heading is at the top (below the sticky tabs), or the page could
        # not scroll further.
        assert tab["at_end"] or 0 <= tab["top"] <= 60, tab
    assert result["frame_url_after"] == "about:srcdoc"


def test_results_in_notebook_6_and_its_html_export(server, tmp_path):
    base, token, folder = server
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "scorep_jupyter", "display_name": "Score-P Python",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    nbformat.write(nb, str(folder / "Frontend Check.ipynb"))

    seen = browse("server", "%s/notebooks/Frontend%%20Check.ipynb?token=%s" % (base, token),
                  RESULTS)
    assert seen["errors"] == [], seen["errors"]
    assert seen["prompts"] == list(range(1, len(CELLS) + 1))
    assert seen["requests"] == []
    results = seen["results"]
    assert len(results) == RESULTS
    reports = [r for r in results if not r["summary_only"]]
    assert len(reports) == 3  # cells 1 and 3, the diff
    for r in reports:
        assert r["ready"] == "yes", r
        # The control to open a result is there and says so, in Notebook 6 too.
        assert r["toggle"]["visible"] and r["toggle"]["width"] > 30, r
        assert r["toggle_after"] == "\u25be hide the report"
        assert r["untrusted_line"] == 0  # the output's script ran and removed it
        check_tabs(r)
    assert [r["mode"] for r in reports] == ["report", "report", "diff"]
    tabs = {t["href"] for t in reports[1]["tabs"]}
    assert {"#flame", "#summary", "#timeline", "#regions", "#balance"} <= tabs
    # No frame holds a second copy of the notebook.
    assert [f for f in seen["frames"] if "/notebooks/" in f] == [seen["frames"][0]], \
        seen["frames"]

    # Notebook 6 does not name the notebook to its kernel: the experiments go to one folder
    # per kernel working directory (the notebook's), the same after a restart.
    import hashlib
    cwd = str(folder.resolve())
    (exps,) = (folder / "scorep-notebook").iterdir()
    assert exps.name == "notebooks-" + hashlib.sha1(cwd.encode()).hexdigest()[:6]
    assert len([d for d in exps.iterdir() if d.name.startswith("cell-")]) == 3

    # The saved notebook: a tiny cell's output stays under 100 kB, the summary-only one
    # under 10 kB.
    assert seen["saved"]
    saved = nbformat.read(str(folder / "Frontend Check.ipynb"), as_version=4)
    sizes = [sum(len(json.dumps(o)) for o in c.outputs) for c in saved.cells]
    assert sizes[0] <= 100 * 1000, sizes
    assert sizes[5] <= 10 * 1000, sizes
    print("output sizes per cell:", sizes, "notebook:",
          os.path.getsize(folder / "Frontend Check.ipynb"))

    # The same notebook changed outside the front end (a cell added): no longer trusted,
    # its outputs' scripts do not run. Each result still reads as text, with its table of
    # top regions and the line on how to trust the notebook.
    saved.cells.insert(0, nbformat.v4.new_markdown_cell("changed elsewhere"))
    nbformat.write(saved, str(folder / "Untrusted.ipynb"))
    seen = browse("untrusted", "%s/notebooks/Untrusted.ipynb?token=%s" % (base, token))
    assert seen["trusted"] is False
    results = [o for o in seen["outputs"] if "scorep In [" in o["text"]]
    assert len(results) == 3, seen["outputs"]  # cells 1, 3 and 6
    for o in results:
        assert o["scripts"] == 0
    reports = [o for o in results if "trust the notebook" in o["text"]]
    assert len(reports) == 2, results  # the summary-only result has no report to trust
    for o in reports:
        assert "jupyter trust NOTEBOOK.ipynb" in o["text"], o["text"]  # shown, not folded
        assert o["tables"] == 1 and "__main__:" in o["all_text"]
        # The resource plot's labels, without their SVG, do not run together.
        assert "CPUprocess" not in o["all_text"] and "coreMemory" not in o["all_text"]
    print("untrusted:", [o["text"][:400] for o in results])

    # The nbconvert export of the saved notebook: the same clicks.
    out = subprocess.run([sys.executable, "-m", "nbconvert", "--to", "html",
                          "--output-dir", str(tmp_path), str(folder / "Frontend Check.ipynb")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    exported = browse("file", tmp_path / "Frontend Check.html")
    assert exported["requests"] == []
    reports = [r for r in exported["results"] if not r["summary_only"]]
    assert len(reports) == 3
    for r in reports:
        assert r["ready"] == "yes", r
        check_tabs(r)
    assert [f for f in exported["frames"] if f.startswith("file:")] == [exported["frames"][0]]
