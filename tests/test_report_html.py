"""The HTML reports in headless Chromium: they load from disk with no network and no
JavaScript error, the regions are in the DOM (flame graph frames drawn by d3-flame-graph,
the region table, the timeline), and a screenshot is not blank."""

import re
import sys
from html import unescape as html_unescape


from conftest import program, run_scorep
from test_report_support import chromium, image_stats, needs_chromium, report

pytestmark = needs_chromium


def measure(tmp_path, name, script="report_work.py", args=(), **env):
    exp = tmp_path / name
    out = run_scorep(sys.executable, [program(script)] + list(args), exp, cwd=tmp_path, **env)
    assert out.returncode == 0, out.stderr
    return exp


def load(path, tmp_path):
    """The DOM after the scripts ran, and what the page printed on the console."""
    out, console = chromium(path, tmp_path, "--virtual-time-budget=8000", "--dump-dom")
    assert out.returncode == 0, out.stderr[-2000:]
    dom = out.stdout
    assert 'data-ready="yes"' in dom, "the scripts did not finish: %s" % console
    body = re.search(r"<body[^>]*>", dom).group(0)
    assert 'data-resources="0"' in body, body  # nothing fetched, not even in vain
    assert "data-js-errors" not in body and '<div id="js-errors" hidden=""></div>' in dom
    assert console == [], console
    return dom


def screenshot(path, tmp_path, size="1400,1600"):
    png = tmp_path / "shot.png"
    out, console = chromium(path, tmp_path, "--virtual-time-budget=8000",
                            "--window-size=%s" % size, "--screenshot=%s" % png)
    assert out.returncode == 0 and png.exists(), out.stderr[-2000:]
    return png


def test_report_html_in_chromium(tmp_path):
    exp = measure(tmp_path, "exp", SCOREP_ENABLE_TRACING="true")
    html = tmp_path / "report.html"
    out = report(exp, "-o", html)
    assert out.returncode == 0, out.stderr
    m = re.match(r"wrote %s \([\d.]+ kB\): \d+ regions, \d+ call paths, timeline of (\d+) calls, "
                 r"source of 1 file\(s\)\n" % re.escape(str(html)), out.stdout)
    assert m, out.stdout
    calls = int(m.group(1))
    assert calls >= 24  # 1 trunk + 4 branch + 12 leaf + 6 recurse + 1 nap, + <module>, ...
    text = html.read_text()
    # self-contained: no resource is referenced (and load() checks that the page fetched
    # nothing, behind a dead proxy)
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=|<img|url\(|@import", text)
    dom = load(html, tmp_path)
    # flame graph: d3-flame-graph drew a frame per call path, with our labels
    frames = re.findall(r'<g [^>]*name="([^"]+)" class="frame"', dom)
    for name in ("report_work.py", "__main__:&lt;module&gt;", "__main__:trunk",
                 "__main__:branch", "__main__:leaf", "__main__:nap", "__main__:recurse"):
        assert name in frames, name
    assert frames.count("__main__:recurse") == 6  # one frame per recursion level
    assert re.search(r"<title>__main__:leaf \(%s:8\): [\d.]+ [nu]s inclusive \([\d.]+%%\), "
                     r"12 visits</title>" % re.escape(program("report_work.py")), dom)
    # region table: every region once, with its visits
    table = dom.split('id="region-table"')[1].split("</table>")[0]
    rows = re.findall(r'<tr data-rid="\d+"><td class="name" title="[^"]*" data-sort="([^"]+)">'
                      r'.*?</td>(.*?)</tr>', table)
    names = [r[0] for r in rows]
    assert len(names) == len(set(names)) and "__main__:leaf" in names
    leaf = dict(rows)["__main__:leaf"]
    assert re.findall(r'data-sort="([^"]*)"', leaf)[2] == "12"
    # timeline: a lane per thread, 30 calls drawn; load balance, configuration
    assert "Showing %d of %d calls" % (calls, calls) in dom
    assert re.search(r'<canvas id="timeline-canvas" [^>]*width="\d{3,}"', dom)
    assert "SCOREP_ENABLE_TRACING" in dom and "MANIFEST.md" in dom
    # no MPI in this run: no MPI section, no MPI link
    assert 'id="mpi"' not in dom and 'href="#mpi"' not in dom
    # the program's own source is in the report, the standard library's is not
    assert "def branch(k):" in text and "def _shutdown" not in text
    colors, share = image_stats(screenshot(html, tmp_path))
    assert colors > 30 and share > 0.1, (colors, share)


def test_report_html_profile_only_and_diff(tmp_path):
    a = measure(tmp_path, "a", args=["4"])
    b = measure(tmp_path, "b", args=["400"])  # 100x the calls: slower beyond timer noise
    html = tmp_path / "prof.html"
    out = report(a, "-o", html)
    assert out.returncode == 0, out.stderr
    dom = load(html, tmp_path)
    assert "No timeline: this experiment has no trace" in dom
    assert "missing: no trace (traces.otf2)" in dom
    assert 'name="__main__:leaf" class="frame"' in dom

    diff = tmp_path / "diff.html"
    out = report("diff", a, b, "-o", diff)
    assert out.returncode == 0, out.stderr
    dom = load(diff, tmp_path)
    frames = re.findall(r'<g [^>]*name="([^"]+)" class="frame"', dom)
    assert "(program)" in frames and "__main__:leaf" in frames
    # d3-flame-graph's differential colors: leaf got slower (more calls) -> red
    leaf = re.search(r'name="__main__:leaf" class="frame"><rect [^>]*fill="rgb\((\d+),(\d+),(\d+)\)"',
                     dom)
    r, g, b_ = map(int, leaf.groups())
    assert r == 220 and b_ < 220, leaf.group(0)
    table = dom.split('id="region-table"')[1]
    row = re.search(r'data-sort="__main__:leaf">.*?</tr>', table).group(0)
    assert re.findall(r'data-sort="([^"]*)"', row)[8:11] == ["12", "1200", "1188"]
    colors, share = image_stats(screenshot(diff, tmp_path, "1200,900"))
    assert colors > 10 and share > 0.05


def test_report_html_big_timeline_is_decimated(tmp_path):
    """400 000 events: the HTML keeps the --timeline-calls longest calls, says so, and
    still loads without error."""
    exp = measure(tmp_path, "many", "many_calls.py", SCOREP_ENABLE_TRACING="true")
    html = tmp_path / "many.html"
    out = report(exp, "-o", html, "--timeline-calls", "5000")
    assert out.returncode == 0, out.stderr
    m = re.search(r"timeline of ([\d,]+) calls \(the longest of ([\d,]+);", out.stdout)
    kept, total = (int(x.replace(",", "")) for x in m.groups())
    assert total >= 200000 and 0 < kept <= 7500
    dom = load(html, tmp_path)
    assert "Showing %s of %s calls (the longest" % ("{:,}".format(kept), "{:,}".format(total)) in dom
    draw_ms = float(re.search(r'data-draw-ms="([\d.]+)"', dom).group(1))
    assert draw_ms < 500, draw_ms


# Headless Chromium draws only the first few animation frames (nothing is on a screen), so
# requestAnimationFrame stalls; a display's frame clock is stood in for before any script
# (d3-timer keeps the function it finds when it loads).
FRAME_CLOCK = """<script>
window.requestAnimationFrame = function (f) {
  return setTimeout(function () { f(performance.now()); }, 16);
};
window.cancelAnimationFrame = function (id) { clearTimeout(id); };
</script>"""

INTERACT = """
<script>
// Test-only: drive the report like a user and leave the results in the DOM.
window.addEventListener("load", function () {
  var log = [];
  function say(k, v) {
    log.push(k + "=" + v);
    document.body.setAttribute("data-progress", log.join("|"));
  }
  function frame(f) { setTimeout(f, 200); }  // the redraws wait for an animation frame
  var c = document.getElementById("timeline-canvas"), r = c.getBoundingClientRect();
  say("view0", c.getAttribute("data-view"));
  for (var i = 0; i < 3; i++)  // three notches, each 1/1.3 of the range
    c.dispatchEvent(new WheelEvent("wheel", {deltaY: -100, clientX: r.left + r.width / 2,
      clientY: r.top + 60, bubbles: true, cancelable: true}));
  frame(function () {
    say("view1", c.getAttribute("data-view"));
    var x = r.left + r.width / 2, y = r.top + 60;
    c.dispatchEvent(new MouseEvent("mousedown", {clientX: x, clientY: y, bubbles: true}));
    c.dispatchEvent(new MouseEvent("mousemove", {clientX: x + 200, clientY: y, bubbles: true}));
    window.dispatchEvent(new MouseEvent("mouseup", {clientX: x + 200, clientY: y, bubbles: true}));
    frame(function () {
      say("view2", c.getAttribute("data-view"));
      document.getElementById("tl-reset").click();
      frame(function () {
        say("view3", c.getAttribute("data-view"));
        // hover the outermost call of the first lane (first row under its label)
        var lanes = 0;
        for (var px = 5; px < r.width; px += 5) {
          c.dispatchEvent(new MouseEvent("mousemove", {clientX: r.left + px, clientY: r.top + 22 + 15 + 3, bubbles: true}));
          var t = document.getElementById("timeline-info").textContent;
          if (t.indexOf("__main__:<module>") >= 0) { say("hover", t); break; }
        }
        // sort the region table by visits (descending first)
        var th = document.querySelectorAll("#region-table thead th")[3];
        th.click();
        say("sorted", document.querySelector("#region-table tbody tr td").getAttribute("data-sort"));
        var f = document.getElementById("region-filter");
        f.value = "leaf";
        f.dispatchEvent(new Event("input"));
        say("visible", Array.prototype.filter.call(document.querySelectorAll("#region-table tbody tr"),
          function (tr) { return !tr.hidden; }).length);
        // flame graph: search highlights, click zooms
        var s = document.getElementById("flame-search");
        s.value = "branch";
        s.dispatchEvent(new Event("input"));
        setTimeout(function () {
          say("highlighted", document.querySelectorAll('#flame-chart g[name="__main__:branch"] rect[fill="#e600e6"]').length);
          var g = document.querySelector('#flame-chart g[name="__main__:trunk"]');
          g.dispatchEvent(new MouseEvent("click", {bubbles: true}));
          setTimeout(function () {
            say("trunk_width", Math.round(parseFloat(document.querySelector('#flame-chart g[name="__main__:trunk"] rect').getAttribute("width"))));
            say("chart_width", document.querySelector("#flame-chart svg").getAttribute("width"));
            document.body.setAttribute("data-interactions", log.join("|"));
          }, 1500);
        }, 100);
      });
    });
  });
});
</script>
"""


def test_report_html_interactions(tmp_path):
    """Zoom and pan of the timeline, hover details, table sort and filter, flame graph
    search and click-to-zoom, driven by events in Chromium."""
    exp = measure(tmp_path, "exp", SCOREP_ENABLE_TRACING="true")
    html = tmp_path / "report.html"
    assert report(exp, "-o", html).returncode == 0
    driven = tmp_path / "driven.html"
    driven.write_text(html.read_text().replace("<head>", "<head>" + FRAME_CLOCK, 1)
                      .replace("</body>", INTERACT + "</body>"))
    out, console = chromium(driven, tmp_path, "--virtual-time-budget=15000",
                            "--window-size=1400,1200", "--dump-dom")
    assert console == [], console
    m = re.search(r'data-interactions="([^"]*)"', out.stdout)
    assert m, "the interactions did not finish: %s" % re.search(
        r"<body[^>]*>", out.stdout).group(0)
    got = dict(item.split("=", 1) for item in html_unescape(m.group(1)).split("|"))
    span = [int(v) for v in got["view0"].split(",")]
    zoomed = [int(v) for v in got["view1"].split(",")]
    panned = [int(v) for v in got["view2"].split(",")]
    assert span[0] == 0 and span[1] > 20_000_000  # the whole run: nap alone is 20 ms
    assert zoomed[1] - zoomed[0] < (span[1] - span[0]) / 2  # the wheel zoomed in
    # a drag to the right moves the view back in time, same range (rounding: 1 ns)
    assert abs((panned[1] - panned[0]) - (zoomed[1] - zoomed[0])) <= 1 and panned[0] < zoomed[0]
    assert got["view3"] == got["view0"]  # reset
    assert got["hover"].startswith("Process / MainThread: __main__:<module> (%s:1), "
                                   % program("report_work.py"))
    assert got["sorted"] == "__main__:leaf"  # the most visits first
    assert got["visible"] == "1"
    assert got["highlighted"] == "1"
    assert got["trunk_width"] == got["chart_width"]  # zoomed into trunk: full width
