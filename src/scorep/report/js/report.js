/* scorep report: the interactive parts of the HTML report and of the diff report.
 *
 * One selection links the views: clicking a function in a table, a frame of the flame
 * graph or a call in the timeline selects it; the flame graph zooms to its heaviest call
 * path, the "callers and callees" panel (speedscope's sandwich) lists who calls it and
 * what it calls with inclusive and exclusive times, the timeline highlights its calls and
 * the source panel shows its lines.
 *
 * Flame graph: d3-flame-graph (npm, inlined). Timeline and load balance: plain canvas,
 * because the timeline must stay responsive with hundreds of thousands of calls: calls
 * are kept per (lane, depth) sorted by start, a frame draws only the visible lanes and
 * time range (binary search), and calls narrower than a pixel are merged into one run
 * per pixel column (decimation), so a frame costs at most one rectangle per pixel and row.
 */
(function () {
  "use strict";

  var errors = [];
  function reportError(message) {
    errors.push(message);
    var box = document.getElementById("js-errors");
    if (box) {
      box.hidden = false;
      box.textContent = "JavaScript error: " + errors.join("; ");
    }
    document.body.setAttribute("data-js-errors", String(errors.length));
  }
  window.addEventListener("error", function (e) {
    reportError((e.message || "error") + " (" + (e.filename || "") + ":" + (e.lineno || 0) + ")");
  });

  function $(sel) { return document.querySelector(sel); }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function b64(str, Type) {
    var bin = atob(str || "");
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new Type(bytes.buffer);
  }

  function fmtTime(s) {
    if (s === null || s === undefined || s < 0) return "-";
    var a = Math.abs(s);
    if (a === 0) return "0 s";
    if (a >= 100) return s.toFixed(0) + " s";
    if (a >= 10) return s.toFixed(1) + " s";
    if (a >= 1) return s.toPrecision(3) + " s";
    if (a >= 1e-3) return (s * 1e3).toPrecision(3) + " ms";
    if (a >= 1e-6) return (s * 1e6).toPrecision(3) + " us";
    return (s * 1e9).toPrecision(3) + " ns";
  }
  function fmtNs(ns) { return fmtTime(ns * 1e-9); }
  function fmtCount(n) { return Math.round(n).toLocaleString("en-US"); }
  function fmtBytes(n) {
    if (n >= 1e9) return (n / 1e9).toFixed(1) + " GB";
    if (n >= 1e6) return (n / 1e6).toFixed(1) + " MB";
    if (n >= 1e3) return (n / 1e3).toFixed(1) + " kB";
    return n + " B";
  }
  function pct(part, whole) { return whole > 0 ? (100 * part / whole).toFixed(1) + "%" : "-"; }

  function hashHue(name) {
    var h = 2166136261;
    for (var i = 0; i < name.length; i++) {
      h ^= name.charCodeAt(i);
      h = Math.imul(h, 16777619);
    }
    return (h >>> 0) % 360;
  }
  var KIND_MPI = 1, KIND_MEASUREMENT = 2, KIND_IO = 3;
  var HIGHLIGHT = "#e600e6", SELECTED = "#ff8c00", FADED = "#e2e2e2";
  function regionColor(name, kind) {
    if (kind === KIND_MPI) return "hsl(4,78%,56%)";
    if (kind === KIND_MEASUREMENT) return "#c4c4c4";
    // I/O calls stand out in the timeline and the flame graph: one dark, saturated teal.
    if (kind === KIND_IO) return "hsl(188,85%,36%)";
    // Warm-to-cool hues but never the red of MPI.
    return "hsl(" + (30 + hashHue(name) % 300) + ",58%,66%)";
  }

  // optional: indexes of the columns that narrow screens leave out
  function simpleTable(head, rows, cls, optional) {
    var t = el("table", {"class": cls || "plain"});
    var tr = el("tr");
    var opt = {};
    (optional || []).forEach(function (i) { opt[i] = 1; });
    head.forEach(function (h, i) { tr.appendChild(el("th", opt[i] ? {"class": "opt"} : null, h)); });
    var thead = el("thead");
    thead.appendChild(tr);
    t.appendChild(thead);
    var tb = el("tbody");
    rows.forEach(function (r) {
      var row = el("tr");
      r.forEach(function (c, i) {
        var td = el("td", opt[i] ? {"class": "opt"} : null);
        if (c && typeof c === "object" && c.node) td.appendChild(c.node);
        else td.textContent = c;
        row.appendChild(td);
      });
      tb.appendChild(row);
    });
    t.appendChild(tb);
    return t;
  }

  /* ---- the selection shared by the views ------------------------------------------ */

  var regions = [];          // the report's regions: {name, full, file, line, end, kind}
  var listeners = [];
  var selected = -1;
  function where(r) { return r.file ? r.file + (r.line ? ":" + r.line : "") : ""; }
  function onSelect(f) { listeners.push(f); }
  function select(rid, from) {
    if (rid === null || rid === undefined || rid < 0 || rid >= regions.length) return;
    selected = rid;
    document.body.setAttribute("data-selected", regions[rid].name);
    listeners.forEach(function (f) {
      try { f(rid, from); } catch (e) { reportError("selection: " + (e && e.stack ? e.stack.split("\n")[0] : e)); }
    });
  }
  function regionLink(rid) {
    var a = el("a", {href: "#sandwich", "class": "fn", "data-rid": String(rid)}, regions[rid].name);
    a.addEventListener("click", function (e) { e.preventDefault(); select(rid, "link"); });
    return a;
  }

  /* ---- flame graph ------------------------------------------------------------- */

  // Nodes of the hierarchy d3-flame-graph draws: {name, value, kind, rid, visits, children}.
  function node(name, rid, kind) {
    return {name: name, value: 0, self: 0, kind: kind, rid: rid, visits: 0, children: [], byKey: null};
  }
  function child(parent, key, name, rid, kind) {
    if (!parent.byKey) parent.byKey = {};
    var c = parent.byKey[key];
    if (!c) {
      c = parent.byKey[key] = node(name, rid, kind);
      c.up = parent;
      parent.children.push(c);
    }
    return c;
  }
  // value = own time + children's, bottom-up; empty nodes go.
  function finish(root) {
    var order = [], stack = [root];
    while (stack.length) {
      var n = stack.pop();
      order.push(n);
      for (var i = 0; i < n.children.length; i++) stack.push(n.children[i]);
    }
    for (var k = order.length - 1; k >= 0; k--) {
      var m = order[k], sum = m.self;
      m.children = m.children.filter(function (c) { return c.value > 0; });
      m.children.forEach(function (c) { sum += c.value; });
      m.value = Math.max(sum, 0);
      delete m.byKey;
      delete m.up;
    }
    return root;
  }

  function exclusive(flame, values) {
    var n = flame.parent.length, ex = new Float64Array(n);
    for (var i = 0; i < n; i++) ex[i] = values[i];
    for (i = 0; i < n; i++) if (flame.parent[i] >= 0) ex[flame.parent[i]] -= values[i];
    for (i = 0; i < n; i++) if (ex[i] < 0) ex[i] = 0;
    return ex;
  }

  function regionOf(flame, i) { return flame.region ? flame.region[i] : -1; }
  function labelOf(flame, i) { return flame.labels[flame.label[i]]; }
  function kindOf(flame, i) {
    var r = regionOf(flame, i);
    return r >= 0 ? regions[r].kind : (flame.kind ? flame.kind[i] : 0);
  }

  // The call tree as drawn: values = inclusive ns per call path; with `fold`, a function
  // called from itself (directly or through others) is merged into its outermost call.
  function hierarchy(flame, values, deltas, fold) {
    var n = flame.parent.length, objs = new Array(n), roots = [];
    if (!fold) {
      for (var i = 0; i < n; i++) {
        var v = values[i];
        if (!(v > 0) && !(deltas && deltas[i])) { objs[i] = null; continue; }
        var o = {name: labelOf(flame, i), value: Math.max(v, 0), kind: kindOf(flame, i),
                 rid: regionOf(flame, i), visits: flame.visits ? flame.visits[i] : 0, children: []};
        if (deltas) o.delta = deltas[i];
        objs[i] = o;
        var p = flame.parent[i];
        if (p < 0) roots.push(o);
        else if (objs[p]) objs[p].children.push(o);
      }
    } else {
      var ex = exclusive(flame, values), top = node("all", -1, KIND_MEASUREMENT);
      for (i = 0; i < n; i++) {
        var pf = flame.parent[i] < 0 ? top : objs[flame.parent[i]];
        if (!pf) { objs[i] = null; continue; }
        var rid = regionOf(flame, i), target = null;
        if (!flame.param[i]) {
          for (var up = pf; up && up !== top; up = up.up) if (up.rid === rid && !up.param) { target = up; break; }
        }
        if (!target) {
          target = child(pf, labelOf(flame, i), labelOf(flame, i), rid, kindOf(flame, i));
          target.param = flame.param[i];
        }
        target.self += ex[i];
        target.visits += flame.visits[i];
        objs[i] = target;
      }
      finish(top);
      roots = top.children;
    }
    if (roots.length === 1) return roots[0];
    var total = 0;
    roots.forEach(function (r) { total += r.value; });
    var root = {name: "all", value: total, kind: KIND_MEASUREMENT, rid: -1, visits: 0, children: roots};
    if (deltas) root.delta = 0;
    return root;
  }

  var flameView = null;  // {chart, show(root, scopeText), focus(rid), current}

  // A flame graph taller than most of the window (deep, thin call paths: a Pool's
  // plumbing, imports) would open on the empty space above its tallest spike, with the
  // wide frames that hold the time below the fold, in a notebook's frame above all: then
  // it opens as an icicle, root on top.
  function startIcicle(root) {
    var deepest = 0, todo = [[root, 1]];
    while (todo.length) {
      var it = todo.pop(), kids = it[0].children || [];
      if (it[1] > deepest) deepest = it[1];
      for (var i = 0; i < kids.length; i++) todo.push([kids[i], it[1] + 1]);
    }
    return deepest * 18 > 0.6 * (window.innerHeight || 800);
  }

  function initFlame(flame, opts) {
    opts = opts || {};
    var chartBox = $("#flame-chart"), details = $("#flame-details"), scope = $("#flame-scope");
    if (!flame || !flame.parent.length || typeof flamegraph === "undefined") {
      chartBox.appendChild(el("p", {"class": "missing"}, "No call paths to draw."));
      return;
    }
    var lib = flamegraph;
    var make = lib.flamegraph || lib.default || lib;
    var fold = false, location = -1, range = null, searchText = "", total = 0;
    // -1: time; else the index of a recorded metric (SCOREP_METRIC_*, --memory) whose
    // inclusive values give the frames' widths (all threads together).
    var metric = -1;
    function fmtValue(v) {
      if (metric < 0) return fmtNs(v);
      var unit = flame.metrics[metric].unit.toLowerCase();
      if (unit === "s" || unit === "sec") return fmtTime(v);
      if (unit === "bytes") return fmtBytes(v);
      return fmtCount(v) + (unit && unit !== "#" ? " " + flame.metrics[metric].unit : "");
    }
    function build() {
      if (range && metric < 0) return range.root;
      var values = metric >= 0 ? flame.metrics[metric].incl
                               : location < 0 ? flame.incl : flame.by_loc[location];
      return hierarchy(flame, values, opts.delta, fold);
    }
    var root = build();
    total = root.value;
    function width() { return Math.max(300, chartBox.clientWidth || 1000); }
    function label(d) {
      var s = d.data.name, r = d.data.rid >= 0 ? regions[d.data.rid] : null;
      if (r && where(r)) s += " (" + where(r) + ")";
      s += ": " + fmtValue(d.data.value) + (metric >= 0 ? " " + flame.metrics[metric].display : "") +
        " inclusive (" + pct(d.data.value, total) + ")";
      if (d.data.visits) s += ", " + fmtCount(d.data.visits) + " visits";
      if (opts.delta) s += ", change " + (d.data.delta >= 0 ? "+" : "") + fmtNs(d.data.delta);
      return s;
    }
    var chart = make()
      .width(width())
      .cellHeight(18)
      .transitionDuration(250)
      // The chart is as tall as what it shows: folded recursion or a zoom make it shorter.
      .resetHeightOnZoom(true)
      // Frames under a pixel are skipped only for big trees: small ones keep every call
      // path in the DOM (findable, and zoomable from the table's point of view).
      .minFrameSize(flame.parent.length > 5000 ? 1 : 0)
      .sort(false)
      .inverted(startIcicle(root))
      .setSearchMatch(function (d, term) {
        return !!term && String(d.data.name).toLowerCase().indexOf(term.toLowerCase()) >= 0;
      })
      .setLabelHandler(label)
      .setDetailsElement(details)
      // Our own texts: the library's speak of "samples" (ours are nanoseconds) and keep
      // the search text after the search is cleared.
      .setDetailsHandler(function (text) { details.textContent = text || searchText || "\u00a0"; })
      .setSearchHandler(function (results, sum, all) {
        var names = {};
        results.forEach(function (d) { names[d.data.name] = 1; });
        searchText = results.length ? "search: " + Object.keys(names).length + " function(s) in " +
          results.length + " frame(s), " + fmtNs(sum) + " of " + fmtNs(all) + " (" + pct(sum, all) + ")" :
          "search: no function matches";
        details.textContent = searchText;
      });
    if (opts.delta && lib.colorMapper) {
      chart.setColorMapper(lib.colorMapper.differentialColorMapper);
    } else {
      chart.setColorMapper(function (d) {
        if (d.highlight) return HIGHLIGHT;
        if (selected >= 0 && d.data.rid === selected) return SELECTED;
        return regionColor(String(d.data.name), d.data.kind);
      });
    }
    chart.onClick(function (d) {
      if (d && d.data && d.data.rid >= 0 && !opts.delta) select(d.data.rid, "flame");
    });
    d3.select(chartBox).datum(root).call(chart);
    chartBox.setAttribute("data-width", String(chart.width()));

    function redraw() {
      root = build();
      total = root.value;
      chart.update(root);
    }
    var icicle = $("#flame-icicle");
    if (icicle) icicle.checked = chart.inverted();
    chartBox.setAttribute("data-icicle", chart.inverted() ? "1" : "0");
    if (icicle) icicle.addEventListener("change", function () {
      chart.inverted(icicle.checked);
      chart.update();
    });
    // Folded imports (the default) or importlib's frames as recorded: the same regions,
    // another call tree.
    var importsBox = $("#flame-imports"), folded = flame;
    if (importsBox && flame.recorded && !opts.delta) {
      importsBox.parentNode.hidden = false;
      importsBox.addEventListener("change", function () {
        flame = importsBox.checked ? folded.recorded : folded;
        if (location >= 0 && !flame.by_loc) { location = -1; if (selectBox) selectBox.value = "-1"; }
        redraw();
      });
    }
    var foldBox = $("#flame-fold");
    if (foldBox) {
      if (!flame.param) foldBox.parentNode.hidden = true;
      foldBox.addEventListener("change", function () { fold = foldBox.checked; redraw(); });
    }
    var search = $("#flame-search");
    if (search) search.addEventListener("input", function () {
      if (search.value) chart.search(search.value);
      else { searchText = ""; chart.clear(); details.textContent = "\u00a0"; }
    });
    var reset = $("#flame-reset");
    if (reset) reset.addEventListener("click", function () { chart.resetZoom(); });
    var metricBox = $("#flame-metric");
    if (metricBox && flame.metrics && flame.metrics.length && !opts.delta) {
      metricBox.appendChild(el("option", {value: "-1"}, "time"));
      flame.metrics.forEach(function (m, i) {
        metricBox.appendChild(el("option", {value: String(i), title: m.description}, m.display));
      });
      metricBox.hidden = false;
      metricBox.addEventListener("change", function () {
        metric = +metricBox.value;
        if (selectBox && metric >= 0) { selectBox.value = "-1"; location = -1; }
        if (selectBox) selectBox.disabled = metric >= 0;
        redraw();
        var tableBox = $("#table-metric");
        if (tableBox && tableBox.value !== metricBox.value) {
          tableBox.value = metricBox.value;
          tableBox.dispatchEvent(new Event("change"));
        }
        // The load balance follows when it shows the metric per rank (else: time).
        var balanceBox = $("#balance-metric");
        if (balanceBox) {
          var wanted = balanceBox.querySelector('option[value="' + metricBox.value + '"]') ? metricBox.value : "-1";
          if (balanceBox.value !== wanted) {
            balanceBox.value = wanted;
            balanceBox.dispatchEvent(new Event("change"));
          }
        }
      });
    }
    var selectBox = $("#flame-location");
    if (selectBox) {
      if (flame.by_loc && opts.locations) {
        selectBox.appendChild(el("option", {value: "-1"}, "all threads"));
        opts.locations.forEach(function (l, i) {
          selectBox.appendChild(el("option", {value: String(i)}, l.rank + " / " + l.name));
        });
        selectBox.addEventListener("change", function () { location = +selectBox.value; redraw(); });
      } else {
        selectBox.hidden = true;
      }
    }
    // The window's width, not the first one: redraw at the new width.
    var resizeTimer = null;
    window.addEventListener("resize", function () {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(function () {
        var w = width();
        if (w === chart.width()) return;
        chart.width(w);
        chart.update();
        chartBox.setAttribute("data-width", String(w));
      }, 60);
    });

    function heaviest(rid) {
      var top = d3.select(chartBox).datum(), best = null;
      if (!top || !top.descendants) return null;
      top.descendants().forEach(function (d) {
        if (d.data.rid === rid && (!best || d.value > best.value)) best = d;
      });
      return best;
    }
    flameView = {
      chart: chart,
      // A time range of the timeline (root built from its calls), or null: the whole run.
      setRange: function (r) {
        range = r;
        scope.hidden = !r;
        scope.textContent = "";
        if (r) {
          scope.appendChild(document.createTextNode(r.text + " "));
          var back = el("button", {id: "flame-whole-run"}, "show the whole run");
          back.addEventListener("click", function () { if (flameView.onClearRange) flameView.onClearRange(); });
          scope.appendChild(back);
        }
        redraw();
      },
      focus: function (rid) {
        var d = heaviest(rid);
        if (d) chart.zoomTo(d); else chart.update();
        chartBox.setAttribute("data-focus", d ? String(d.data.name) : "");
      },
      root: function () { return root; }
    };
    if (!opts.delta) onSelect(function (rid, from) { if (from !== "flame") flameView.focus(rid); else chart.update(); });
  }

  /* ---- sortable, filterable tables --------------------------------------------- */

  function initTable(table, filterInput) {
    if (!table) return;
    var heads = table.querySelectorAll("thead th");
    var tbody = table.tBodies[0];
    var dir = {};
    heads.forEach(function (th, col) {
      th.addEventListener("click", function () {
        var numeric = th.getAttribute("data-numeric") === "1";
        var d = dir[col] = -(dir[col] || (numeric ? 1 : -1));
        var rows = Array.prototype.slice.call(tbody.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col].getAttribute("data-sort"), y = b.cells[col].getAttribute("data-sort");
          if (numeric) { x = parseFloat(x); y = parseFloat(y); }
          return x < y ? -d : x > y ? d : 0;
        });
        rows.forEach(function (r) { tbody.appendChild(r); });
        heads.forEach(function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(d > 0 ? "asc" : "desc");
      });
    });
    if (filterInput) filterInput.addEventListener("input", function () {
      var term = filterInput.value.toLowerCase();
      Array.prototype.forEach.call(tbody.rows, function (r) {
        r.hidden = term && r.cells[0].textContent.toLowerCase().indexOf(term) < 0;
      });
    });
  }

  // A recorded metric chosen above the region table shows its exclusive and inclusive
  // columns and sorts by the exclusive one; "time" hides them again.
  function initTableMetric(table, box, metrics) {
    if (!table || !box || !metrics || !metrics.length) return;
    box.appendChild(el("option", {value: "-1"}, "time"));
    metrics.forEach(function (m, i) { box.appendChild(el("option", {value: String(i)}, m.display)); });
    box.hidden = false;
    function show(chosen) {
      table.querySelectorAll(".metric").forEach(function (cell) {
        cell.style.display = cell.classList.contains("m-" + chosen) ? "" : "none";
      });
    }
    show(-1);
    box.addEventListener("change", function () {
      var chosen = +box.value;
      show(chosen);
      var th = chosen >= 0 ? table.querySelector("thead th.m-" + chosen) : null;
      if (th) { th.click(); if (th.classList.contains("asc")) th.click(); }
      var flameBox = $("#flame-metric");
      if (flameBox && !flameBox.hidden && flameBox.value !== box.value) {
        flameBox.value = box.value;
        flameBox.dispatchEvent(new Event("change"));
      }
    });
  }

  // Rows with data-rid select their function; the selected one is marked.
  function selectableRows(container) {
    if (!container) return;
    container.addEventListener("click", function (e) {
      var tr = e.target.closest ? e.target.closest("tr[data-rid]") : null;
      if (tr && container.contains(tr)) select(+tr.getAttribute("data-rid"), "table");
    });
  }
  onSelect(function (rid) {
    document.querySelectorAll("tr[data-rid].selected").forEach(function (tr) { tr.classList.remove("selected"); });
    document.querySelectorAll('#region-table tr[data-rid="' + rid + '"], .tops tr[data-rid="' + rid + '"]').forEach(function (tr) {
      tr.classList.add("selected");
    });
  });

  /* ---- callers and callees (the sandwich) --------------------------------------------- */

  // cProfile's view of the call tree, as scorep.report.analysis.call_stats computes it:
  // per function and per caller -> callee pair, calls, primitive calls (not already
  // active further out), exclusive and inclusive time (inclusive once per outermost
  // activation). A parameter's node is part of its call.
  function callStats(flame) {
    var n = flame.parent.length, ex = exclusive(flame, flame.incl);
    var funcs = {}, edges = {}, active = {}, activePair = {};
    var path = [], undo = [];  // ancestors of the current node and what each incremented
    var callOf = new Int32Array(n);  // the call a node belongs to (itself unless a parameter)
    function f(rid) { return funcs[rid] || (funcs[rid] = {nc: 0, cc: 0, tt: 0, ct: 0}); }
    function e(key) { return edges[key] || (edges[key] = {nc: 0, cc: 0, tt: 0, ct: 0}); }
    for (var i = 0; i < n; i++) {
      var p = flame.parent[i];
      while (path.length && path[path.length - 1] !== p) {
        path.pop();
        var u = undo.pop();
        if (u) { active[u[0]]--; if (u[1] !== null) activePair[u[1]]--; }
      }
      var rid = flame.region[i];
      if (flame.param[i] && p >= 0) {
        var call = callOf[p], crid = flame.region[call], cp = flame.parent[call];
        callOf[i] = call;
        f(crid).tt += ex[i];
        if (cp >= 0) e(flame.region[callOf[cp]] + ">" + crid).tt += ex[i];
        path.push(i);
        undo.push(null);
        continue;
      }
      callOf[i] = i;
      var nc = flame.visits[i], fi = f(rid);
      fi.nc += nc;
      fi.tt += ex[i];
      if (!active[rid]) { fi.cc += nc; fi.ct += flame.incl[i]; }
      var key = null;
      if (p >= 0) {
        key = flame.region[callOf[p]] + ">" + rid;
        var ei = e(key);
        ei.nc += nc;
        ei.tt += ex[i];
        if (!activePair[key]) { ei.cc += nc; ei.ct += flame.incl[i]; }
        activePair[key] = (activePair[key] || 0) + 1;
      }
      active[rid] = (active[rid] || 0) + 1;
      path.push(i);
      undo.push([rid, key]);
    }
    return {funcs: funcs, edges: edges};
  }

  function initSandwich(flame) {
    var body = $("#sandwich-body");
    if (!flame || !flame.region) return;
    var stats = null;
    onSelect(function (rid) {
      if (!stats) stats = callStats(flame);
      var r = regions[rid], fs = stats.funcs[rid] || {nc: 0, cc: 0, tt: 0, ct: 0};
      var callers = [], callees = [];
      for (var key in stats.edges) {
        var parts = key.split(">"), a = +parts[0], b = +parts[1], e = stats.edges[key];
        if (b === rid) callers.push([a, e]);
        if (a === rid) callees.push([b, e]);
      }
      function byTime(x, y) { return y[1].ct - x[1].ct || regions[x[0]].name.localeCompare(regions[y[0]].name); }
      callers.sort(byTime);
      callees.sort(byTime);
      body.textContent = "";
      var h = el("h3", {id: "sandwich-title"});
      h.appendChild(el("span", {"class": "fn-name"}, r.name));
      if (where(r)) {
        h.appendChild(document.createTextNode(" "));
        var src = el("a", {href: "#source", "class": "where"}, where(r));
        src.addEventListener("click", function () { showSource(rid); });
        h.appendChild(src);
      }
      body.appendChild(h);
      body.appendChild(el("p", {id: "sandwich-totals"}, fmtCount(fs.nc) + " calls" +
        (fs.cc !== fs.nc ? " (" + fmtCount(fs.cc) + " not recursive)" : "") + ", inclusive " +
        fmtNs(fs.ct) + " (" + pct(fs.ct, rootTotal(flame)) + " of the run), exclusive " +
        fmtNs(fs.tt)));
      function table(id, title, rows, empty) {
        var box = el("div", {"class": "sandwich-part"});
        box.appendChild(el("h4", null, title));
        if (!rows.length) { box.appendChild(el("p", {"class": "hint"}, empty)); return box; }
        var t = simpleTable(["function", "calls", "inclusive", "exclusive", "share"], rows.map(function (x) {
          var e = x[1];
          return [{node: regionLink(x[0])}, fmtCount(e.nc), fmtNs(e.ct), fmtNs(e.tt), pct(e.ct, fs.ct)];
        }));
        t.id = id;
        rows.forEach(function (x, i) { t.tBodies[0].rows[i].setAttribute("data-rid", String(x[0])); });
        box.appendChild(t);
        return box;
      }
      var parts = el("div", {"class": "sandwich-parts"});
      parts.appendChild(table("callers", "Called by (time spent in " + r.name + " when called from each)",
                              callers, "nothing: the outermost function"));
      parts.appendChild(table("callees", "Calls (time spent in each when called by " + r.name + ")",
                              callees, "nothing: it calls no recorded function"));
      body.appendChild(parts);
    });
  }
  function rootTotal(flame) {
    var t = 0;
    for (var i = 0; i < flame.parent.length; i++) if (flame.parent[i] < 0) t += flame.incl[i];
    return t;
  }

  /* ---- source ------------------------------------------------------------------------ */

  var sources = {};
  var lineProfiles = {};
  function pad(text, width) {
    while (text.length < width) text = " " + text;
    return text;
  }
  function showSource(rid) {
    var body = $("#source-body"), r = regions[rid];
    body.textContent = "";
    var text = sources[r.file];
    if (!r.file) { body.appendChild(el("p", {"class": "hint"}, r.name + " has no source file.")); return; }
    if (text === undefined) {
      body.appendChild(el("p", {"class": "hint"}, r.name + " is in " + where(r) + ", whose source is not in " +
        "this report (only the program's own files are, not the standard library's or installed packages')."));
      return;
    }
    var lines = text.split("\n"), first = Math.max(1, r.line || 1), last = r.end;
    if (!last && r.line) {
      // Python: the function goes on while lines are blank or indented deeper than its def.
      var indent = /^\s*/.exec(lines[first - 1] || "")[0].length;
      last = first;
      for (var k = first; k < lines.length; k++) {
        var line = lines[k];
        if (!line.trim()) continue;
        if (/^\s*/.exec(line)[0].length <= indent && !/^\s*[)\]}]/.test(line)) break;
        last = k + 1;
      }
    }
    last = last || first;
    body.appendChild(el("p", {id: "source-title"}, r.file + ", lines " + first + "-" + last + " (" + r.name + ")"));
    // Line-level profile of the function (--lines, @scorep.user.lines): a heat column.
    var heat = lineProfiles[r.file] || null, most = 0, total = 0;
    if (heat) {
      for (var h = first; h <= last; h++) {
        var cell = heat[String(h)];
        if (cell) { most = Math.max(most, cell[1]); total += cell[1]; }
      }
      if (!total) heat = null;
    }
    if (heat) {
      body.appendChild(el("p", {"class": "hint", id: "line-profile-note"}, "Line profile: hits and time " +
        "per line (a line's time includes the calls made on it); " + fmtTime(total) + " in all."));
    }
    var pre = el("pre", {"class": heat ? "source with-heat" : "source", id: "source-text"});
    var from = Math.max(1, first - 3), to = Math.min(lines.length, last + 3);
    for (var n = from; n <= to; n++) {
      var row = el("span", {"class": n >= first && n <= last ? "src-line hot" : "src-line"});
      if (heat) {
        var c = heat[String(n)];
        var share = c && most ? c[1] / most : 0;
        var cellText = c ? pad(String(c[0]), 8) + " " + pad(fmtTime(c[1]), 9) + " " + pad((100 * c[1] / total).toFixed(1) + "%", 6)
                         : pad("", 25);
        var h2 = el("span", {"class": "heat", title: c ? c[0] + " hits, " + fmtTime(c[1]) : ""}, cellText + " ");
        if (c) h2.style.background = "rgba(220, 60, 30, " + (0.1 + 0.7 * share).toFixed(3) + ")";
        if (c) h2.setAttribute("data-hits", String(c[0]));
        row.appendChild(h2);
      }
      row.appendChild(el("span", {"class": "lineno"}, String(n)));
      row.appendChild(document.createTextNode(lines[n - 1] + "\n"));
      pre.appendChild(row);
    }
    body.appendChild(pre);
  }
  function initSource(src) {
    (src.files || []).forEach(function (f) { sources[f.file] = f.text; });
    var body = $("#source-body");
    if (src.off) body.appendChild(el("p", {"class": "hint"}, "The source was left out (--no-source)."));
    if (src.left_out && src.left_out.length) {
      body.appendChild(el("p", {"class": "hint"}, "Not embedded: " + src.left_out.map(function (x) {
        return x[0] + " (" + x[1] + ")";
      }).join(", ")));
    }
    onSelect(function (rid) { showSource(rid); });
  }

  /* ---- timeline ---------------------------------------------------------------- */

  var MAX_ROWS = 40;      // depth rows drawn per expanded lane
  var AXIS_H = 22, GROUP_H = 18, LABEL_H = 16, ROW_H = 13, DENS_H = 6, GAP = 6;
  var FOLD_LANES = 8;     // more lanes than this: they start folded (one row each)

  function initTimeline(tl) {
    var canvas = $("#timeline-canvas"), box = $("#timeline-box"), info = $("#timeline-info");
    var spacer = $("#timeline-spacer"), panel = $("#range-panel");
    if (!tl) {
      $("#timeline-controls").hidden = true;
      box.hidden = true;
      return;
    }
    var start = b64(tl.start, Float64Array), dur = b64(tl.dur, Float32Array);
    var region = b64(tl.region, Uint32Array), depth = b64(tl.depth, Uint8Array);
    var colors = regions.map(function (r) { return regionColor(r.name, r.kind); });
    var groupsByName = {}, groups = [];
    var lanes = tl.lanes.map(function (lane, i) {
      var lo = tl.offsets[i], hi = tl.offsets[i + 1], maxD = 0, k;
      for (k = lo; k < hi; k++) if (depth[k] > maxD) maxD = depth[k];
      var rows = hi > lo ? Math.min(maxD + 1, MAX_ROWS) : 1;
      var counts = new Array(rows).fill(0);
      for (k = lo; k < hi; k++) if (depth[k] < rows) counts[depth[k]]++;
      var byDepth = counts.map(function (c) { return new Int32Array(c); });
      var fill = new Array(rows).fill(0);
      for (k = lo; k < hi; k++) {
        var d = depth[k];
        if (d < rows) byDepth[d][fill[d]++] = k;
      }
      var dens = tl.density[i] ? b64(tl.density[i], Uint32Array) : null, dmax = 0;
      if (dens) for (k = 0; k < dens.length; k++) if (dens[k] > dmax) dmax = dens[k];
      var l = {index: i, name: lane.name, rank: lane.rank, calls: lane.calls, rows: rows, lo: lo, hi: hi,
               byDepth: byDepth, deepest: lane.max_depth, dens: dens, dmax: dmax,
               folded: tl.lanes.length > FOLD_LANES && i > 0, y: 0, top: 0, shown: 0};
      var g = groupsByName[lane.rank];
      if (!g) { g = groupsByName[lane.rank] = {name: lane.rank, lanes: [], folded: false, y: 0}; groups.push(g); }
      g.lanes.push(l);
      return l;
    });
    var grouped = groups.length > 1;
    var items = [], height = AXIS_H;  // what is drawn, top to bottom, in content coordinates

    function layout() {
      items = [];
      var y = AXIS_H;
      groups.forEach(function (g) {
        if (grouped) {
          g.y = y;
          items.push({kind: "group", group: g, y: y, h: GROUP_H});
          y += GROUP_H;
          if (g.folded) return;
        }
        g.lanes.forEach(function (lane) {
          lane.shown = lane.folded ? 1 : lane.rows;
          lane.y = y;
          lane.top = y + LABEL_H;
          var h = LABEL_H + lane.shown * ROW_H + DENS_H + GAP;
          items.push({kind: "lane", lane: lane, y: y, h: h});
          y += h;
        });
      });
      height = y;
      canvas.setAttribute("data-lanes", String(items.filter(function (it) { return it.kind === "lane"; }).length));
    }

    var span = Math.max(1, tl.span_ns);
    var view = {t0: 0, t1: span};
    var ctx = canvas.getContext("2d");
    var width = 0, viewH = 0, dpr = window.devicePixelRatio || 1;
    var search = [], range = null, drag = null, hoverX = -1;

    function resize() {
      layout();
      width = Math.max(300, box.clientWidth || 1000);
      // The box shows up to 70% of the window; more lanes scroll under a fixed time axis.
      viewH = Math.min(height, Math.max(240, Math.round(window.innerHeight * 0.7)));
      box.style.height = viewH + "px";
      spacer.style.height = Math.max(0, height - viewH) + "px";
      canvas.style.width = width + "px";
      canvas.style.height = viewH + "px";
      canvas.width = Math.round(width * dpr);
      canvas.height = Math.round(viewH * dpr);
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      draw();
    }
    function scrollY() { return box.scrollTop; }

    function firstVisible(arr, t0) {
      var lo = 0, hi = arr.length;
      while (lo < hi) {
        var mid = (lo + hi) >> 1;
        if (start[arr[mid]] < t0) lo = mid + 1; else hi = mid;
      }
      // Calls at one depth of one thread do not overlap: only the one before may reach in.
      if (lo > 0 && start[arr[lo - 1]] + dur[arr[lo - 1]] > t0) lo--;
      return lo;
    }

    function niceStep(rangeNs, px) {
      var raw = rangeNs / Math.max(1, px / 110);
      var p = Math.pow(10, Math.floor(Math.log10(raw)));
      var m = raw / p;
      return (m < 2 ? 2 : m < 5 ? 5 : 10) * p;
    }

    // Regions highlighted: those whose name contains the search text, else the selected.
    var marked = null;
    function updateMarks() {
      marked = null;
      var term = ($("#tl-search").value || "").toLowerCase();
      if (term) {
        marked = new Uint8Array(regions.length);
        regions.forEach(function (r, i) { if (r.name.toLowerCase().indexOf(term) >= 0) marked[i] = 1; });
      } else if (selected >= 0) {
        marked = new Uint8Array(regions.length);
        marked[selected] = 1;
      }
    }

    function draw() {
      var t0 = view.t0, t1 = view.t1, sx = width / (t1 - t0), sy = scrollY();
      canvas.setAttribute("data-view", Math.round(t0) + "," + Math.round(t1));
      ctx.clearRect(0, 0, width, viewH);
      ctx.font = "11px sans-serif";
      ctx.textBaseline = "middle";
      var step = niceStep(t1 - t0, width);
      ctx.strokeStyle = "#e4e4e4";
      for (var t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
        var gx = (t - t0) * sx;
        ctx.beginPath();
        ctx.moveTo(gx + 0.5, AXIS_H);
        ctx.lineTo(gx + 0.5, viewH);
        ctx.stroke();
      }
      var matches = 0;
      items.forEach(function (it) {
        var y0 = it.y - sy;
        if (y0 + it.h < AXIS_H || y0 > viewH) return;
        if (it.kind === "group") {
          var g = it.group;
          ctx.fillStyle = "#e8edf5";
          ctx.fillRect(0, y0, width, GROUP_H - 2);
          ctx.fillStyle = "#23395d";
          ctx.font = "bold 11px sans-serif";
          ctx.fillText((g.folded ? "\u25B8 " : "\u25BE ") + g.name + "  (" + g.lanes.length + " thread" +
                       (g.lanes.length === 1 ? "" : "s") + ")", 4, y0 + GROUP_H / 2 - 1);
          ctx.font = "11px sans-serif";
          return;
        }
        var lane = it.lane, top = lane.top - sy;
        ctx.fillStyle = "#222";
        ctx.fillText((lane.folded ? "\u25B8 " : "\u25BE ") + (grouped ? "" : lane.rank + " / ") + lane.name +
                     "  (" + fmtCount(lane.calls) + " calls" + (lane.folded ? ", folded" :
                     lane.deepest > lane.rows ? ", " + lane.rows + " of " + lane.deepest + " levels shown" : "") + ")",
                     4 + (grouped ? 12 : 0), y0 + LABEL_H / 2);
        for (var d = 0; d < lane.shown; d++) {
          var arr = lane.byDepth[d], yy = top + d * ROW_H, h = ROW_H - 1;
          if (yy + h < AXIS_H || yy > viewH) continue;
          var runStart = -1, runEnd = -1, runMark = false;
          for (var i = firstVisible(arr, t0); i < arr.length; i++) {
            var k = arr[i], s = start[k];
            if (s > t1) break;
            var x0 = (s - t0) * sx, x1 = (s + dur[k] - t0) * sx, m = marked ? marked[region[k]] : 0;
            if (m) matches++;
            if (x1 - x0 < 1) {
              // Decimation: sub-pixel calls of one pixel column become one run.
              if (runEnd >= 0 && x0 <= runEnd + 1) { if (x1 > runEnd) runEnd = Math.max(x1, runStart + 1); runMark = runMark || m; continue; }
              if (runEnd >= 0) { ctx.fillStyle = runMark ? HIGHLIGHT : "#9a9a9a"; ctx.fillRect(runStart, yy, runEnd - runStart, h); }
              runStart = x0; runEnd = Math.max(x1, x0 + 1); runMark = !!m;
              continue;
            }
            if (runEnd >= 0) { ctx.fillStyle = runMark ? HIGHLIGHT : "#9a9a9a"; ctx.fillRect(runStart, yy, runEnd - runStart, h); runEnd = -1; }
            var a = Math.max(x0, 0), b = Math.min(x1, width);
            ctx.fillStyle = marked ? (m ? (search.length ? HIGHLIGHT : SELECTED) : FADED) : colors[region[k]];
            ctx.fillRect(a, yy, b - a, h);
            if (b - a > 40) {
              ctx.save();
              ctx.beginPath();
              ctx.rect(a, yy, b - a - 2, h);
              ctx.clip();
              ctx.fillStyle = marked && !m ? "#999" : "#111";
              ctx.fillText(regions[region[k]].name, a + 2, yy + h / 2);
              ctx.restore();
            }
          }
          if (runEnd >= 0) { ctx.fillStyle = runMark ? HIGHLIGHT : "#9a9a9a"; ctx.fillRect(runStart, yy, runEnd - runStart, h); }
        }
        // event density: calls entered per time bin, shorter calls included
        if (lane.dens && lane.dmax) {
          var bins = lane.dens.length, yd = top + lane.shown * ROW_H + 1;
          var b0 = Math.max(0, Math.floor(t0 / span * bins)), b1 = Math.min(bins - 1, Math.floor(t1 / span * bins));
          for (var bi = b0; bi <= b1; bi++) {
            var c = lane.dens[bi];
            if (!c) continue;
            var xa = (bi * span / bins - t0) * sx, xb = ((bi + 1) * span / bins - t0) * sx;
            ctx.fillStyle = "rgba(60,90,200," + (0.15 + 0.85 * Math.log(1 + c) / Math.log(1 + lane.dmax)).toFixed(3) + ")";
            ctx.fillRect(Math.max(0, xa), yd, Math.max(1, Math.min(width, xb) - Math.max(0, xa)), DENS_H - 2);
          }
        }
      });
      // buffer flushes: the program stood still
      ctx.fillStyle = "rgba(220,0,0,0.28)";
      tl.flushes.forEach(function (f) {
        var lane = lanes[f[0]];
        if (!lane || !isShown(lane) || f[2] < t0 || f[1] > t1) return;
        var xa = (f[1] - t0) * sx, xb = (f[2] - t0) * sx;
        ctx.fillRect(xa, lane.top - sy, Math.max(2, xb - xa), lane.shown * ROW_H);
      });
      // messages: sender -> receiver
      ctx.strokeStyle = "rgba(0,0,0,0.55)";
      var drawn = 0;
      for (var mi = 0; mi < tl.messages.length && drawn < 3000; mi++) {
        var msg = tl.messages[mi], ls = lanes[msg[0]], lr = lanes[msg[2]];
        if (!ls || !lr || !isShown(ls) || !isShown(lr) ||
            (msg[1] < t0 && msg[3] < t0) || (msg[1] > t1 && msg[3] > t1)) continue;
        ctx.beginPath();
        ctx.moveTo((msg[1] - t0) * sx, ls.top - sy + ROW_H / 2);
        ctx.lineTo((msg[3] - t0) * sx, lr.top - sy + ROW_H / 2);
        ctx.stroke();
        drawn++;
      }
      // the selected time range
      var sel = drag && drag.mode === "range" ? {t0: Math.min(drag.tA, drag.tB), t1: Math.max(drag.tA, drag.tB)} : range;
      if (sel) {
        var ra = (sel.t0 - t0) * sx, rb = (sel.t1 - t0) * sx;
        ctx.fillStyle = "rgba(35,57,93,0.12)";
        ctx.fillRect(ra, AXIS_H, rb - ra, viewH - AXIS_H);
        ctx.strokeStyle = "#23395d";
        ctx.strokeRect(ra + 0.5, AXIS_H + 0.5, rb - ra, viewH - AXIS_H - 1);
      }
      // the time axis stays on top while the lanes scroll under it
      ctx.fillStyle = "#f7f8fa";
      ctx.fillRect(0, 0, width, AXIS_H);
      ctx.fillStyle = "#555";
      for (t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
        var ax = (t - t0) * sx;
        ctx.fillRect(ax, AXIS_H - 6, 1, 6);
        ctx.fillText(fmtNs(t), ax + 3, 8);
      }
      canvas.setAttribute("data-marked-calls", marked ? String(matches) : "");
    }
    function isShown(lane) {
      return lane.shown > 0 && !(grouped && groupsByName[lane.rank].folded);
    }

    function itemAt(py) {
      var y = py + scrollY();
      for (var i = 0; i < items.length; i++) if (y >= items[i].y && y < items[i].y + items[i].h) return items[i];
      return null;
    }
    function hit(px, py) {
      if (py < AXIS_H) return null;
      var it = itemAt(py);
      if (!it || it.kind !== "lane") return null;
      var lane = it.lane, y = py + scrollY();
      if (y < lane.top || y >= lane.top + lane.shown * ROW_H) return null;
      var t = view.t0 + px / width * (view.t1 - view.t0);
      var arr = lane.byDepth[Math.floor((y - lane.top) / ROW_H)];
      var tol = 2 * (view.t1 - view.t0) / width;
      for (var i = firstVisible(arr, t - tol); i < arr.length && start[arr[i]] <= t + tol; i++) {
        var k = arr[i];
        if (start[k] - tol <= t && t <= start[k] + dur[k] + tol) return {lane: lane, k: k};
      }
      return null;
    }
    function describe(h) {
      var r = regions[region[h.k]];
      return h.lane.rank + " / " + h.lane.name + ": " + r.name + (where(r) ? " (" + where(r) + ")" : "") +
        ", " + fmtNs(dur[h.k]) + " from " + fmtNs(start[h.k]) + ", depth " + depth[h.k];
    }

    var summary = "Showing " + fmtCount(tl.kept) + " of " + fmtCount(tl.calls) + " calls";
    if (tl.kept < tl.calls) summary += " (the longest, " + fmtNs(tl.threshold_ns) + " and more; the blue strip under each lane counts all calls)";
    if (tl.flushes_total) summary += "; red: " + fmtCount(tl.flushes_total) + " trace buffer flush(es)";
    if (tl.messages_total) summary += "; lines: " + fmtCount(tl.messages.length) + " of " + fmtCount(tl.messages_total) + " messages";
    info.textContent = summary;

    // Input events come faster than frames: redraw at most once per frame.
    var pending = false;
    function schedule() {
      if (pending) return;
      pending = true;
      requestAnimationFrame(function () { pending = false; draw(); });
    }
    function timeAt(px) { return view.t0 + px / width * (view.t1 - view.t0); }

    canvas.addEventListener("mousedown", function (e) {
      box.focus({preventScroll: true});
      var rangeMode = e.shiftKey || e.offsetY < AXIS_H;
      drag = {x: e.offsetX, y: e.offsetY, t0: view.t0, t1: view.t1, moved: false,
              mode: rangeMode ? "range" : "pan", tA: timeAt(e.offsetX), tB: timeAt(e.offsetX)};
    });
    window.addEventListener("mouseup", function (e) {
      var d = drag;
      drag = null;
      if (!d) return;
      if (d.mode === "range" && d.moved) {
        setRange(Math.max(0, Math.min(d.tA, d.tB)), Math.min(span, Math.max(d.tA, d.tB)));
        return;
      }
      if (!d.moved && e.target === canvas) {
        var it = itemAt(e.offsetY);
        if (it && e.offsetY >= AXIS_H && it.kind === "group") { it.group.folded = !it.group.folded; resize(); return; }
        if (it && it.kind === "lane" && e.offsetY + scrollY() < it.lane.top) { it.lane.folded = !it.lane.folded; resize(); return; }
        var h = hit(e.offsetX, e.offsetY);
        if (h) select(region[h.k], "timeline");
      }
      schedule();
    });
    canvas.addEventListener("dblclick", function (e) {
      var h = hit(e.offsetX, e.offsetY);
      if (!h) return;
      var pad = Math.max(dur[h.k] * 0.05, 10);
      view.t0 = start[h.k] - pad;
      view.t1 = start[h.k] + dur[h.k] + pad;
      schedule();
    });
    canvas.addEventListener("mousemove", function (e) {
      hoverX = e.offsetX;
      if (drag) {
        if (Math.abs(e.offsetX - drag.x) > 2) drag.moved = true;
        if (drag.mode === "range") {
          drag.tB = timeAt(e.offsetX);
        } else {
          var dt = (e.offsetX - drag.x) / width * (drag.t1 - drag.t0);
          view.t0 = drag.t0 - dt;
          view.t1 = drag.t1 - dt;
        }
        schedule();
        return;
      }
      var h = hit(e.offsetX, e.offsetY);
      info.textContent = h ? describe(h) : summary;
    });
    canvas.addEventListener("mouseleave", function () { hoverX = -1; });
    box.addEventListener("scroll", schedule);
    canvas.addEventListener("wheel", function (e) {
      // Lanes that overflow the box scroll with the wheel; ctrl+wheel zooms (Perfetto).
      if (height > viewH && !e.ctrlKey && !e.metaKey) return;
      e.preventDefault();
      zoom(e.deltaY < 0 ? 1 / 1.3 : 1.3, e.offsetX / width);
    }, {passive: false});
    function zoom(f, at) {
      var t = view.t0 + at * (view.t1 - view.t0);
      var r = Math.max(50, (view.t1 - view.t0) * f);
      view.t0 = t - at * r;
      view.t1 = view.t0 + r;
      schedule();
    }
    function pan(f) {
      var dt = (view.t1 - view.t0) * f;
      view.t0 += dt;
      view.t1 += dt;
      schedule();
    }
    // W/S zoom in/out at the pointer (or the middle), A/D pan: while the pointer is over
    // the timeline or it has the focus, and no text field has it.
    var pointerIn = false;
    box.addEventListener("mouseenter", function () { pointerIn = true; });
    box.addEventListener("mouseleave", function () { pointerIn = false; });
    document.addEventListener("keydown", function (e) {
      var tag = e.target && e.target.tagName;
      if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || e.ctrlKey || e.metaKey || e.altKey) return;
      if (!pointerIn && document.activeElement !== box) return;
      var at = hoverX >= 0 ? hoverX / width : 0.5, key = (e.key || "").toLowerCase();
      if (key === "w") zoom(1 / 1.25, at);
      else if (key === "s") zoom(1.25, at);
      else if (key === "a") pan(-0.1);
      else if (key === "d") pan(0.1);
      else if (key === "escape" && range) clearRange();
      else return;
      e.preventDefault();
    });
    $("#tl-zoom-in").addEventListener("click", function () { zoom(1 / 2, 0.5); });
    $("#tl-zoom-out").addEventListener("click", function () { zoom(2, 0.5); });
    $("#tl-reset").addEventListener("click", function () { view.t0 = 0; view.t1 = span; schedule(); });
    $("#tl-expand").addEventListener("click", function () {
      lanes.forEach(function (l) { l.folded = false; });
      groups.forEach(function (g) { g.folded = false; });
      resize();
    });
    $("#tl-collapse").addEventListener("click", function () {
      lanes.forEach(function (l) { l.folded = true; });
      resize();
    });
    $("#tl-search").addEventListener("input", function () {
      search = $("#tl-search").value ? [1] : [];
      updateMarks();
      draw();
      var n = canvas.getAttribute("data-marked-calls");
      info.textContent = search.length ? fmtCount(+n) + " calls of matching functions in view" : summary;
    });
    onSelect(function (rid) {
      if (!$("#tl-search").value) { updateMarks(); draw(); }
    });

    /* A time range: totals of its calls (each clipped to the range) per function, and
     * the flame graph of the range. Built from the calls the timeline keeps. */
    function rangeStats(r0, r1) {
      var top = node("selection", -1, KIND_MEASUREMENT), stats = {}, calls = 0;
      function st(rid) { return stats[rid] || (stats[rid] = {rid: rid, incl: 0, excl: 0, calls: 0}); }
      lanes.forEach(function (lane) {
        var stack = [], onStack = {};
        for (var k = lane.lo; k < lane.hi; k++) {
          var s = start[k];
          if (s >= r1) break;
          var e = s + dur[k];
          if (e <= r0) continue;
          while (stack.length && stack[stack.length - 1].end <= s) {
            var popped = stack.pop();
            onStack[popped.rid]--;
          }
          var clip = Math.min(e, r1) - Math.max(s, r0), rid = region[k];
          var parent = stack.length ? stack[stack.length - 1] : null;
          var n = child(parent ? parent.node : top, rid, regions[rid].name, rid, regions[rid].kind);
          n.self += clip;
          n.visits += 1;
          var x = st(rid);
          x.calls++;
          x.excl += clip;
          if (!onStack[rid]) x.incl += clip;
          if (parent) { parent.node.self -= clip; st(parent.rid).excl -= clip; }
          calls++;
          stack.push({end: e, rid: rid, node: n});
          onStack[rid] = (onStack[rid] || 0) + 1;
        }
      });
      finish(top);
      var list = Object.keys(stats).map(function (k) { return stats[k]; });
      return {root: top.children.length === 1 ? top.children[0] : top, stats: list, calls: calls};
    }
    function setRange(r0, r1) {
      if (!(r1 > r0)) return;
      range = {t0: r0, t1: r1};
      box.setAttribute("data-range", Math.round(r0) + "," + Math.round(r1));
      var res = rangeStats(r0, r1);
      panel.hidden = false;
      panel.textContent = "";
      var head = el("p", {id: "range-title"});
      head.appendChild(document.createTextNode("Selected " + fmtNs(r0) + " \u2013 " + fmtNs(r1) + " (" +
        fmtNs(r1 - r0) + "): " + fmtCount(res.calls) + " calls" + (tl.kept < tl.calls ? " of those the timeline keeps" : "") +
        "; the flame graph shows this range. "));
      var clear = el("button", {id: "range-clear"}, "clear (Esc)");
      clear.addEventListener("click", clearRange);
      head.appendChild(clear);
      panel.appendChild(head);
      res.stats.sort(function (a, b) { return b.excl - a.excl || b.incl - a.incl; });
      var rows = res.stats.slice(0, 25);
      var t = simpleTable(["function", "calls", "exclusive", "excl %", "inclusive"], rows.map(function (x) {
        return [{node: regionLink(x.rid)}, fmtCount(x.calls), fmtNs(x.excl), pct(x.excl, r1 - r0 > 0 ? sumExcl(res.stats) : 0), fmtNs(x.incl)];
      }));
      t.id = "range-table";
      rows.forEach(function (x, i) { t.tBodies[0].rows[i].setAttribute("data-rid", String(x.rid)); });
      panel.appendChild(t);
      if (flameView) flameView.setRange({root: res.root, text: "Showing the time range " + fmtNs(r0) + " \u2013 " +
                                         fmtNs(r1) + " of the timeline (" + fmtCount(res.calls) + " calls)."});
      draw();
    }
    function sumExcl(list) { var s = 0; list.forEach(function (x) { s += x.excl; }); return s; }
    function clearRange() {
      range = null;
      box.removeAttribute("data-range");
      panel.hidden = true;
      if (flameView) flameView.setRange(null);
      draw();
    }
    if (flameView) flameView.onClearRange = clearRange;
    // for scripts (and the tests): select a range in nanoseconds
    canvas.selectRange = setRange;

    window.addEventListener("resize", resize);
    var t0 = performance.now();
    resize();
    // How long a full redraw takes (all kept calls in view): the tests and the scale
    // benchmark read it to keep the timeline responsive.
    canvas.setAttribute("data-draw-ms", (performance.now() - t0).toFixed(1));
  }
  /* ---- load balance ------------------------------------------------------------ */

  function initBalance(bal) {
    var canvas = $("#balance-canvas"), infoBox = $("#balance-info");
    var n = bal.names.length;
    var idle = {};
    bal.idle.forEach(function (i) { idle[i] = true; });
    var p = el("p");
    var timeText = "Exclusive time per " + bal.unit + ": program code (blue), MPI (red), " +
      "outside any function / measurement (grey)." + (bal.idle.length ?
      " " + bal.idle.length + " of " + n + " " + bal.unit + "s do less than a quarter of the busiest one's work (marked IDLE)." : "");
    p.textContent = timeText;
    // The wait states per rank: one selector for time and each of them, the same choice
    // as the flame graph's and the region table's.
    var metrics = bal.metrics || [], chosen = -1, box = null;
    if (metrics.length) {
      box = el("select", {id: "balance-metric", title: "what the bars show per " + bal.unit});
      box.appendChild(el("option", {value: "-1"}, "time"));
      metrics.forEach(function (m) {
        box.appendChild(el("option", {value: String(m.index), title: m.description || ""}, m.display));
      });
      var label = el("label", null, "metric ");
      label.appendChild(box);
      infoBox.appendChild(label);
    }
    infoBox.appendChild(p);
    var barH = Math.max(3, Math.min(18, Math.floor(480 / Math.max(1, n))));
    var labelW = Math.min(190, Math.round(($("#balance-box").clientWidth || 900) * 0.3));
    var width = Math.max(300, ($("#balance-box").clientWidth || 900));
    var height = n * (barH + 2) + 24, dpr = window.devicePixelRatio || 1;
    canvas.style.width = width + "px";
    canvas.style.height = height + "px";
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    var ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    function metricOf(index) {
      for (var k = 0; k < metrics.length; k++) if (metrics[k].index === index) return metrics[k];
      return null;
    }
    function draw() {
      var m = chosen >= 0 ? metricOf(chosen) : null;
      ctx.clearRect(0, 0, width, height);
      var parts = [];
      for (var i = 0; i < n; i++)
        parts.push(m ? [[m.values[i], "#f28e2b"]]
                     : [[bal.work[i], "#4e79a7"], [bal.mpi[i], "#e15759"], [bal.other[i], "#bab0ac"]]);
      var max = 0;
      parts.forEach(function (ps) { max = Math.max(max, ps.reduce(function (a, q) { return a + q[0]; }, 0)); });
      var sx = max > 0 ? (width - labelW - 90) / max : 0;
      ctx.font = "11px sans-serif";
      ctx.textBaseline = "middle";
      var shown = [];
      for (i = 0; i < n; i++) {
        var y = 4 + i * (barH + 2), x = labelW, sum = 0;
        var mark = !m && idle[i];
        if (barH >= 8 || mark) {
          ctx.fillStyle = mark ? "#c00" : "#222";
          ctx.fillText((mark ? "IDLE " : "") + bal.names[i], 4, y + barH / 2);
        }
        parts[i].forEach(function (part) {
          ctx.fillStyle = part[1];
          ctx.fillRect(x, y, part[0] * sx, barH);
          x += part[0] * sx;
          sum += part[0];
        });
        if (mark) {
          ctx.strokeStyle = "#c00";
          ctx.lineWidth = 2;
          ctx.strokeRect(labelW - 1, y - 1, Math.max(6, x - labelW) + 2, barH + 2);
          ctx.lineWidth = 1;
        }
        if (barH >= 8) {
          ctx.fillStyle = "#333";
          ctx.fillText(fmtTime(sum), x + 4, y + barH / 2);
        }
        shown.push(sum.toPrecision(6));
      }
      // What the bars show, for the tests and for reading off exact values.
      canvas.setAttribute("data-metric", m ? m.name : "time");
      canvas.setAttribute("data-values", shown.join(" "));
      p.textContent = m ? m.display + " per " + bal.unit + " (seconds, its call paths summed): " +
        "the " + bal.unit + "s that wait; one that does not is the late one." : timeText;
    }
    draw();
    if (box) {
      box.addEventListener("change", function () {
        chosen = +box.value;
        draw();
        var flameBox = $("#flame-metric");
        if (flameBox && !flameBox.hidden && flameBox.value !== box.value) {
          flameBox.value = box.value;
          flameBox.dispatchEvent(new Event("change"));
        }
      });
    }
    // Statistics over the units that run the region: a function of one thread out of
    // eight is where it is, not imbalanced; how many run it is its own column.
    var rows = bal.regions.map(function (r) {
      var lo = r.stats[0], mean = r.stats[1], hi = r.stats[2], sd = r.stats[3];
      var argmin = -1, argmax = -1;
      r.ran.forEach(function (u) {
        if (argmin < 0 || r.values[u] < r.values[argmin]) argmin = u;
        if (argmax < 0 || r.values[u] > r.values[argmax]) argmax = u;
      });
      return [r.name, r.ran.length + " of " + n, fmtTime(lo), fmtTime(mean), fmtTime(hi), fmtTime(sd),
              mean > 0 && r.ran.length > 1 ? (hi / mean).toFixed(2) : "-",
              bal.names[argmin] || "-", bal.names[argmax] || "-"];
    });
    var table = simpleTable(
      ["region (inclusive time per " + bal.unit + ")", bal.unit + "s running it", "min", "mean", "max",
       "stddev", "max/mean", "min at", "max at"], rows, "plain", [2, 5, 7, 8]);
    table.id = "balance-regions";
    $("#balance-table").appendChild(table);
  }

  /* ---- MPI ---------------------------------------------------------------------- */

  function initMpi(mpi) {
    var body = $("#mpi-body");
    var volumes = mpi.volumes || {columns: [], rows: []};
    if (!mpi.p2p.length && !mpi.collectives.length && !mpi.bytes_sent && !volumes.columns.length) {
      body.appendChild(el("p", {"class": "hint"}, mpi.source === null && mpi.ranks.length > 1 ?
        "No MPI message records in this experiment (they come from the trace)." :
        "No MPI communication in this run."));
      return;
    }
    var n = mpi.ranks.length;
    if (mpi.p2p.length) {
      body.appendChild(el("h3", null, "Point-to-point messages (sender row, receiver column)"));
      if (n <= 32) {
        var cells = [], max = 0;
        for (var i = 0; i < n; i++) { cells.push(new Array(n).fill(null)); }
        mpi.p2p.forEach(function (p) { if (p[0] < n && p[1] < n) { cells[p[0]][p[1]] = p; max = Math.max(max, p[3]); } });
        var t = el("table", {"class": "plain matrix"});
        var tr = el("tr");
        tr.appendChild(el("th", null, "from \\ to"));
        mpi.ranks.forEach(function (r) { tr.appendChild(el("th", null, r)); });
        t.appendChild(tr);
        for (i = 0; i < n; i++) {
          tr = el("tr");
          tr.appendChild(el("th", null, mpi.ranks[i]));
          for (var j = 0; j < n; j++) {
            var c = cells[i][j], td = el("td");
            if (c) {
              td.textContent = fmtCount(c[2]) + " / " + fmtBytes(c[3]);
              td.style.background = "rgba(225,87,89," + (0.1 + 0.8 * c[3] / (max || 1)).toFixed(2) + ")";
            }
            tr.appendChild(td);
          }
          t.appendChild(tr);
        }
        body.appendChild(t);
      } else {
        var top = mpi.p2p.slice().sort(function (a, b) { return b[3] - a[3]; }).slice(0, 100);
        body.appendChild(simpleTable(["from", "to", "messages", "bytes"], top.map(function (p) {
          return [mpi.ranks[p[0]] || p[0], mpi.ranks[p[1]] || p[1], fmtCount(p[2]), fmtBytes(p[3])];
        })));
      }
      var sent = new Array(n).fill(0), sentB = new Array(n).fill(0), recv = new Array(n).fill(0), recvB = new Array(n).fill(0);
      mpi.p2p.forEach(function (p) {
        if (p[0] < n) { sent[p[0]] += p[2]; sentB[p[0]] += p[3]; }
        if (p[1] < n) { recv[p[1]] += p[2]; recvB[p[1]] += p[3]; }
      });
      body.appendChild(el("h3", null, "Per rank"));
      body.appendChild(simpleTable(["rank", "messages sent", "bytes sent", "messages received", "bytes received"],
        mpi.ranks.map(function (r, i) { return [r, fmtCount(sent[i]), fmtBytes(sentB[i]), fmtCount(recv[i]), fmtBytes(recvB[i])]; })));
    }
    if (mpi.collectives.length) {
      var byOp = {};
      mpi.collectives.forEach(function (c) {
        var o = byOp[c[1]] = byOp[c[1]] || {count: 0, sent: 0, recv: 0, ranks: 0};
        o.count += c[2]; o.sent += c[3]; o.recv += c[4]; o.ranks++;
      });
      body.appendChild(el("h3", null, "Collective operations"));
      body.appendChild(simpleTable(["operation", "calls (all ranks)", "ranks", "bytes sent", "bytes received"],
        Object.keys(byOp).sort().map(function (k) {
          var o = byOp[k];
          return [k, fmtCount(o.count), fmtCount(o.ranks), fmtBytes(o.sent), fmtBytes(o.recv)];
        })));
    }
    if (volumes.columns.length) {
      body.appendChild(el("h3", null, "Bytes moved per rank"));
      body.appendChild(simpleTable(["rank"].concat(volumes.columns), volumes.rows.map(function (row) {
        return [row[0]].concat(row.slice(1).map(fmtBytes));
      })));
    }
    if (mpi.bytes_sent) {
      body.appendChild(el("h3", null, "Bytes per rank (profile)"));
      body.appendChild(simpleTable(["rank", "bytes sent", "bytes received"], mpi.ranks.map(function (r, i) {
        return [r, fmtBytes(mpi.bytes_sent[i] || 0), fmtBytes((mpi.bytes_received || [])[i] || 0)];
      })));
    }
  }

  /* ---- configuration ------------------------------------------------------------- */

  function initConfig(cfg) {
    var body = $("#config-body");
    if (cfg.cfg.length) {
      body.appendChild(el("h3", null, "scorep.cfg"));
      body.appendChild(simpleTable(["variable", "value"], cfg.cfg));
    } else {
      body.appendChild(el("p", {"class": "missing"}, "No scorep.cfg in the experiment directory."));
    }
    if (cfg.profile) {
      body.appendChild(el("h3", null, "Profile"));
      body.appendChild(simpleTable(["attribute", "value"], [["file", cfg.profile]].concat(cfg.profile_attrs)));
    }
    if (cfg.trace) {
      body.appendChild(el("h3", null, "Trace"));
      var rows = [];
      for (var k in cfg.trace) rows.push([k, String(cfg.trace[k])]);
      body.appendChild(simpleTable(["property", "value"], rows));
    }
    if (cfg.manifest) {
      body.appendChild(el("h3", null, "MANIFEST.md"));
      body.appendChild(el("pre", null, cfg.manifest));
    }
  }

  /* ---- entry points ---------------------------------------------------------------- */

  function safely(name, f) {
    try { f(); } catch (e) { reportError(name + ": " + (e && e.stack ? e.stack.split("\n")[0] : e)); }
  }

  function report(data) {
    regions = data.regions || [];
    lineProfiles = data.lines || {};
    safely("source", function () { initSource(data.sources || {}); });
    safely("flame graph", function () { initFlame(data.flame, {locations: data.locations}); });
    safely("callers and callees", function () { initSandwich(data.flame); });
    safely("region table", function () {
      initTable($("#region-table"), $("#region-filter"));
      initTableMetric($("#region-table"), $("#table-metric"), data.flame && data.flame.metrics);
      initTable($("#io-files"), null);
      selectableRows($("#region-table"));
      selectableRows($("#io"));
      selectableRows($("#summary"));
      selectableRows($("#sandwich"));
      selectableRows($("#range-panel"));
    });
    safely("timeline", function () { initTimeline(data.timeline); });
    safely("load balance", function () { initBalance(data.balance); });
    if (data.mpi) safely("mpi", function () { initMpi(data.mpi); });
    safely("configuration", function () { initConfig(data.config); });
  }

  function diff(data) {
    safely("flame graph", function () { initFlame(data.flame, {delta: data.flame.delta}); });
    safely("region table", function () { initTable($("#region-table"), $("#region-filter")); });
  }

  // Links to a part of the report ("#regions") scroll inside the report itself. Left to
  // the browser, such a link resolves against the document's base URL, and a report shown
  // in a notebook is a srcdoc frame whose base URL is the notebook's: a click would load
  // the notebook page into the frame (or, in an nbconvert export, the export itself).
  function sameDocumentLinks() {
    document.addEventListener("click", function (e) {
      if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      var a = e.target && e.target.closest ? e.target.closest("a[href^='#']") : null;
      if (!a) return;
      e.preventDefault();
      var id = decodeURIComponent(a.getAttribute("href").slice(1));
      var target = id ? document.getElementById(id) : document.body;
      if (target) target.scrollIntoView({block: "start"});
      var nav = document.querySelectorAll("nav a");
      for (var i = 0; i < nav.length; i++) nav[i].classList.toggle("current", nav[i] === a);
      // A page of its own keeps the address of the part shown (for a bookmark or a reload);
      // a srcdoc frame has no address of its own to keep.
      if (id && location.protocol !== "about:" && window.history && history.replaceState) {
        try { history.replaceState(null, "", "#" + encodeURIComponent(id)); } catch (err) { /* no address */ }
      }
    });
  }

  function start() {
    sameDocumentLinks();
    var data = JSON.parse(document.getElementById("report-data").textContent);
    if (document.body.getAttribute("data-mode") === "diff") diff(data); else report(data);
    document.body.setAttribute("data-ready", errors.length ? "errors" : "yes");
  }

  // What the page fetched (failed fetches included): a self-contained report fetches
  // nothing, and the tests check that here.
  window.addEventListener("load", function () {
    var res = window.performance && performance.getEntriesByType ?
      performance.getEntriesByType("resource") : [];
    document.body.setAttribute("data-resources", String(res.length));
  });

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
