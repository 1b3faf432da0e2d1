/* scorep report: the interactive parts of the HTML report and of the diff report.
 *
 * Flame graph: d3-flame-graph (npm, inlined). Timeline and load balance: plain canvas,
 * because the timeline must stay responsive with hundreds of thousands of calls: calls
 * are kept per (lane, depth) sorted by start, a frame draws only the visible range
 * (binary search), and calls narrower than a pixel are merged into one grey run per
 * pixel column (decimation), so a frame costs at most one rectangle per pixel and row.
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
  var KIND_MPI = 1, KIND_MEASUREMENT = 2;
  function regionColor(name, kind) {
    if (kind === KIND_MPI) return "hsl(4,78%,56%)";
    if (kind === KIND_MEASUREMENT) return "#c4c4c4";
    // Warm-to-cool hues but never the red of MPI.
    return "hsl(" + (30 + hashHue(name) % 300) + ",58%,66%)";
  }

  function simpleTable(head, rows, cls) {
    var t = el("table", {"class": cls || "plain"});
    var tr = el("tr");
    head.forEach(function (h) { tr.appendChild(el("th", null, h)); });
    var thead = el("thead");
    thead.appendChild(tr);
    t.appendChild(thead);
    var tb = el("tbody");
    rows.forEach(function (r) {
      var row = el("tr");
      r.forEach(function (c) {
        var td = el("td");
        if (c && typeof c === "object" && c.node) td.appendChild(c.node);
        else td.textContent = c;
        row.appendChild(td);
      });
      tb.appendChild(row);
    });
    t.appendChild(tb);
    return t;
  }

  /* ---- flame graph ------------------------------------------------------------- */

  function hierarchy(flame, values, deltas) {
    var n = flame.parent.length, objs = new Array(n), roots = [];
    for (var i = 0; i < n; i++) {
      var v = values[i];
      if (!(v > 0) && !(deltas && deltas[i])) { objs[i] = null; continue; }
      var o = {name: flame.labels[flame.label[i]], value: Math.max(v, 0), kind: flame.kind[i],
               visits: flame.visits ? flame.visits[i] : 0, children: []};
      if (deltas) o.delta = deltas[i];
      objs[i] = o;
      var p = flame.parent[i];
      if (p < 0) roots.push(o);
      else if (objs[p]) objs[p].children.push(o);
    }
    if (roots.length === 1) return roots[0];
    var total = 0, dsum = 0;
    roots.forEach(function (r) { total += r.value; dsum += r.delta || 0; });
    var root = {name: "all", value: total, kind: KIND_MEASUREMENT, visits: 0, children: roots};
    if (deltas) root.delta = 0;
    return root;
  }

  function initFlame(flame, opts) {
    opts = opts || {};
    var chartBox = $("#flame-chart"), details = $("#flame-details");
    if (!flame || !flame.parent.length || typeof flamegraph === "undefined") {
      chartBox.appendChild(el("p", {"class": "missing"}, "No call paths to draw."));
      return;
    }
    var lib = flamegraph;
    var make = lib.flamegraph || lib.default || lib;
    var root = hierarchy(flame, flame.incl, opts.delta);
    var total = root.value;
    var width = Math.max(600, chartBox.clientWidth || 1000);
    var chart = make()
      .width(width)
      .cellHeight(18)
      .transitionDuration(250)
      // Frames under a pixel are skipped only for big trees: small ones keep every call
      // path in the DOM (findable, and zoomable from the table's point of view).
      .minFrameSize(flame.parent.length > 5000 ? 1 : 0)
      .sort(false)
      .inverted(false)
      .setSearchMatch(function (d, term) {
        return !!term && String(d.data.name).toLowerCase().indexOf(term.toLowerCase()) >= 0;
      })
      .setLabelHandler(function (d) {
        var s = d.data.name + ": " + fmtNs(d.data.value) + " inclusive (" +
                pct(d.data.value, total) + ")";
        if (d.data.visits) s += ", " + fmtCount(d.data.visits) + " visits";
        if (opts.delta) s += ", change " + (d.data.delta >= 0 ? "+" : "") + fmtNs(d.data.delta);
        return s;
      })
      .setDetailsElement(details);
    if (opts.delta && lib.colorMapper) {
      chart.setColorMapper(lib.colorMapper.differentialColorMapper);
    } else {
      chart.setColorMapper(function (d) {
        return d.highlight ? "#e600e6" : regionColor(String(d.data.name), d.data.kind);
      });
    }
    d3.select(chartBox).datum(root).call(chart);

    var icicle = $("#flame-icicle");
    if (icicle) icicle.addEventListener("change", function () {
      chart.inverted(icicle.checked);
      chart.update();
    });
    var search = $("#flame-search");
    if (search) search.addEventListener("input", function () {
      if (search.value) chart.search(search.value); else chart.clear();
    });
    var reset = $("#flame-reset");
    if (reset) reset.addEventListener("click", function () { chart.resetZoom(); });
    var select = $("#flame-location");
    if (select) {
      if (flame.by_loc && opts.locations) {
        select.appendChild(el("option", {value: "-1"}, "all threads"));
        opts.locations.forEach(function (l, i) {
          select.appendChild(el("option", {value: String(i)}, l.rank + " / " + l.name));
        });
        select.addEventListener("change", function () {
          var i = +select.value;
          var r = hierarchy(flame, i < 0 ? flame.incl : flame.by_loc[i]);
          total = r.value;
          chart.update(r);
        });
      } else {
        select.hidden = true;
      }
    }
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

  /* ---- timeline ---------------------------------------------------------------- */

  var MAX_ROWS = 40;      // depth rows drawn per lane
  var AXIS_H = 22, LABEL_H = 15, DENS_H = 6, GAP = 6;

  function initTimeline(tl) {
    var canvas = $("#timeline-canvas"), box = $("#timeline-box"), info = $("#timeline-info");
    if (!tl) {
      $("#timeline-controls").hidden = true;
      canvas.hidden = true;
      return;
    }
    var start = b64(tl.start, Float64Array), dur = b64(tl.dur, Float32Array);
    var region = b64(tl.region, Uint32Array), depth = b64(tl.depth, Uint8Array);
    var colors = tl.regions.map(function (name, i) { return regionColor(name, tl.region_kind[i]); });
    var totalRows = 0;
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
      totalRows += rows;
      var dens = tl.density[i] ? b64(tl.density[i], Uint32Array) : null, dmax = 0;
      if (dens) for (k = 0; k < dens.length; k++) if (dens[k] > dmax) dmax = dens[k];
      return {name: lane.name, rank: lane.rank, calls: lane.calls, rows: rows,
              byDepth: byDepth, deepest: lane.max_depth, dens: dens, dmax: dmax, y: 0, rowH: 0};
    });
    var rowH = Math.max(3, Math.min(14, Math.floor(640 / Math.max(1, totalRows))));
    var y = AXIS_H;
    lanes.forEach(function (lane) {
      lane.y = y;
      lane.top = y + LABEL_H;
      y = lane.top + lane.rows * rowH + DENS_H + GAP;
    });
    var height = y;
    var span = Math.max(1, tl.span_ns);
    var view = {t0: 0, t1: span};
    var ctx = canvas.getContext("2d");
    var width = 0, dpr = window.devicePixelRatio || 1;

    function resize() {
      width = Math.max(400, box.clientWidth || 1000);
      canvas.style.width = width + "px";
      canvas.style.height = height + "px";
      canvas.width = Math.round(width * dpr);
      canvas.height = Math.round(height * dpr);
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      draw();
    }

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

    function draw() {
      var t0 = view.t0, t1 = view.t1, sx = width / (t1 - t0);
      canvas.setAttribute("data-view", Math.round(t0) + "," + Math.round(t1));
      ctx.clearRect(0, 0, width, height);
      ctx.font = "11px sans-serif";
      ctx.textBaseline = "middle";
      // axis
      var step = niceStep(t1 - t0, width);
      ctx.fillStyle = "#555";
      ctx.strokeStyle = "#ddd";
      for (var t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
        var x = (t - t0) * sx;
        ctx.beginPath();
        ctx.moveTo(x + 0.5, AXIS_H - 6);
        ctx.lineTo(x + 0.5, height);
        ctx.stroke();
        ctx.fillText(fmtNs(t), x + 3, 8);
      }
      lanes.forEach(function (lane, li) {
        ctx.fillStyle = "#222";
        ctx.fillText(lane.rank + " / " + lane.name + "  (" + fmtCount(lane.calls) + " calls" +
                     (lane.deepest > lane.rows ? ", " + lane.rows + " of " + lane.deepest +
                      " levels shown" : "") + ")", 4, lane.y + LABEL_H / 2);
        for (var d = 0; d < lane.rows; d++) {
          var arr = lane.byDepth[d], yy = lane.top + d * rowH, h = Math.max(1, rowH - 1);
          var runStart = -1, runEnd = -1;
          for (var i = firstVisible(arr, t0); i < arr.length; i++) {
            var k = arr[i], s = start[k];
            if (s > t1) break;
            var x0 = (s - t0) * sx, x1 = (s + dur[k] - t0) * sx;
            if (x1 - x0 < 1) {
              // Decimation: sub-pixel calls of one pixel column become one grey run.
              if (runEnd >= 0 && x0 <= runEnd + 1) { if (x1 > runEnd) runEnd = Math.max(x1, runStart + 1); continue; }
              if (runEnd >= 0) { ctx.fillStyle = "#9a9a9a"; ctx.fillRect(runStart, yy, runEnd - runStart, h); }
              runStart = x0; runEnd = Math.max(x1, x0 + 1);
              continue;
            }
            if (runEnd >= 0) { ctx.fillStyle = "#9a9a9a"; ctx.fillRect(runStart, yy, runEnd - runStart, h); runEnd = -1; }
            var a = Math.max(x0, 0), b = Math.min(x1, width);
            ctx.fillStyle = colors[region[k]];
            ctx.fillRect(a, yy, b - a, h);
            if (b - a > 40 && rowH >= 10) {
              ctx.save();
              ctx.beginPath();
              ctx.rect(a, yy, b - a - 2, h);
              ctx.clip();
              ctx.fillStyle = "#111";
              ctx.fillText(tl.regions[region[k]], a + 2, yy + h / 2);
              ctx.restore();
            }
          }
          if (runEnd >= 0) { ctx.fillStyle = "#9a9a9a"; ctx.fillRect(runStart, yy, runEnd - runStart, h); }
        }
        // event density: calls entered per time bin, shorter calls included
        if (lane.dens && lane.dmax) {
          var bins = lane.dens.length, yd = lane.top + lane.rows * rowH + 1;
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
        if (!lane || f[2] < t0 || f[1] > t1) return;
        var xa = (f[1] - t0) * sx, xb = (f[2] - t0) * sx;
        ctx.fillRect(xa, lane.top, Math.max(2, xb - xa), lane.rows * rowH);
      });
      // messages: sender -> receiver
      ctx.strokeStyle = "rgba(0,0,0,0.55)";
      var drawn = 0;
      for (var m = 0; m < tl.messages.length && drawn < 3000; m++) {
        var msg = tl.messages[m], ls = lanes[msg[0]], lr = lanes[msg[2]];
        if (!ls || !lr || (msg[1] < t0 && msg[3] < t0) || (msg[1] > t1 && msg[3] > t1)) continue;
        ctx.beginPath();
        ctx.moveTo((msg[1] - t0) * sx, ls.top + rowH / 2);
        ctx.lineTo((msg[3] - t0) * sx, lr.top + rowH / 2);
        ctx.stroke();
        drawn++;
      }
    }

    function hit(px, py) {
      var t = view.t0 + px / width * (view.t1 - view.t0);
      for (var li = 0; li < lanes.length; li++) {
        var lane = lanes[li];
        if (py < lane.top || py >= lane.top + lane.rows * rowH) continue;
        var arr = lane.byDepth[Math.floor((py - lane.top) / rowH)];
        var tol = 2 * (view.t1 - view.t0) / width;
        var i = firstVisible(arr, t - tol);
        for (; i < arr.length && start[arr[i]] <= t + tol; i++) {
          var k = arr[i];
          if (start[k] - tol <= t && t <= start[k] + dur[k] + tol) return {lane: lane, k: k};
        }
      }
      return null;
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

    var drag = null;
    canvas.addEventListener("mousedown", function (e) { drag = {x: e.offsetX, t0: view.t0, t1: view.t1, moved: false}; });
    window.addEventListener("mouseup", function (e) {
      if (drag && !drag.moved && e.target === canvas) {
        var h = hit(e.offsetX, e.offsetY);
        if (h) {
          var pad = Math.max(dur[h.k] * 0.05, 10);
          view.t0 = start[h.k] - pad;
          view.t1 = start[h.k] + dur[h.k] + pad;
          schedule();
        }
      }
      drag = null;
    });
    canvas.addEventListener("mousemove", function (e) {
      if (drag) {
        var dt = (e.offsetX - drag.x) / width * (drag.t1 - drag.t0);
        if (Math.abs(e.offsetX - drag.x) > 2) drag.moved = true;
        view.t0 = drag.t0 - dt;
        view.t1 = drag.t1 - dt;
        schedule();
        return;
      }
      var h = hit(e.offsetX, e.offsetY);
      info.textContent = h ? h.lane.rank + " / " + h.lane.name + ": " + tl.regions[region[h.k]] +
        ", " + fmtNs(dur[h.k]) + " from " + fmtNs(start[h.k]) + ", depth " + depth[h.k] : summary;
    });
    canvas.addEventListener("wheel", function (e) {
      e.preventDefault();
      zoom(e.deltaY < 0 ? 1 / 1.3 : 1.3, e.offsetX / width);
    }, {passive: false});
    function zoom(f, at) {
      var t = view.t0 + at * (view.t1 - view.t0);
      var range = Math.max(50, (view.t1 - view.t0) * f);
      view.t0 = t - at * range;
      view.t1 = view.t0 + range;
      schedule();
    }
    $("#tl-zoom-in").addEventListener("click", function () { zoom(1 / 2, 0.5); });
    $("#tl-zoom-out").addEventListener("click", function () { zoom(2, 0.5); });
    $("#tl-reset").addEventListener("click", function () { view.t0 = 0; view.t1 = span; schedule(); });
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
    p.textContent = "Exclusive time per " + bal.unit + ": program code (blue), MPI (red), " +
      "outside any function / measurement (grey)." + (bal.idle.length ?
      " " + bal.idle.length + " of " + n + " " + bal.unit + "s do less than a quarter of the busiest one's work (marked IDLE)." : "");
    infoBox.appendChild(p);
    var barH = Math.max(3, Math.min(18, Math.floor(480 / Math.max(1, n))));
    var labelW = 190, width = Math.max(500, ($("#balance-box").clientWidth || 900));
    var height = n * (barH + 2) + 24, dpr = window.devicePixelRatio || 1;
    canvas.style.width = width + "px";
    canvas.style.height = height + "px";
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    var ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    var max = 0;
    for (var i = 0; i < n; i++) max = Math.max(max, bal.work[i] + bal.mpi[i] + bal.other[i]);
    var sx = max > 0 ? (width - labelW - 90) / max : 0;
    ctx.font = "11px sans-serif";
    ctx.textBaseline = "middle";
    for (i = 0; i < n; i++) {
      var y = 4 + i * (barH + 2), x = labelW;
      if (barH >= 8 || idle[i]) {
        ctx.fillStyle = idle[i] ? "#c00" : "#222";
        ctx.fillText((idle[i] ? "IDLE " : "") + bal.names[i], 4, y + barH / 2);
      }
      [[bal.work[i], "#4e79a7"], [bal.mpi[i], "#e15759"], [bal.other[i], "#bab0ac"]].forEach(function (part) {
        ctx.fillStyle = part[1];
        ctx.fillRect(x, y, part[0] * sx, barH);
        x += part[0] * sx;
      });
      if (idle[i]) {
        ctx.strokeStyle = "#c00";
        ctx.lineWidth = 2;
        ctx.strokeRect(labelW - 1, y - 1, Math.max(6, x - labelW) + 2, barH + 2);
        ctx.lineWidth = 1;
      }
      if (barH >= 8) {
        ctx.fillStyle = "#333";
        ctx.fillText(fmtTime(bal.work[i] + bal.mpi[i] + bal.other[i]), x + 4, y + barH / 2);
      }
    }
    var rows = bal.regions.map(function (r) {
      var lo = r.stats[0], mean = r.stats[1], hi = r.stats[2], sd = r.stats[3];
      var argmin = r.values.indexOf(lo), argmax = r.values.indexOf(hi);
      return [r.name, fmtTime(lo), fmtTime(mean), fmtTime(hi), fmtTime(sd),
              mean > 0 ? (hi / mean).toFixed(2) : "-", bal.names[argmin] || "-", bal.names[argmax] || "-"];
    });
    $("#balance-table").appendChild(simpleTable(
      ["region (inclusive time per " + bal.unit + ")", "min", "mean", "max", "stddev",
       "max/mean", "min at", "max at"], rows));
  }

  /* ---- MPI ---------------------------------------------------------------------- */

  function initMpi(mpi) {
    var body = $("#mpi-body");
    if (!mpi.p2p.length && !mpi.collectives.length && !mpi.bytes_sent) {
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
    safely("flame graph", function () { initFlame(data.flame, {locations: data.locations}); });
    safely("region table", function () { initTable($("#region-table"), $("#region-filter")); });
    safely("timeline", function () { initTimeline(data.timeline); });
    safely("load balance", function () { initBalance(data.balance); });
    safely("mpi", function () { initMpi(data.mpi); });
    safely("configuration", function () { initConfig(data.config); });
  }

  function diff(data) {
    safely("flame graph", function () { initFlame(data.flame, {delta: data.flame.delta}); });
    safely("region table", function () { initTable($("#region-table"), $("#region-filter")); });
  }

  function start() {
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
