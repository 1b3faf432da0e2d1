// Drives an HTML report in Debian's Chromium (headless, through puppeteer-core from the
// report's npm packages) as a person would, and prints what it saw as JSON.
//
//   node tests/report_browser.js REPORT.html PLAN.json
//
// PLAN: {"select": region name to click in the region table, "range": [a, b] fractions
// of the timeline's width to drag over on its time axis, "keys": "wwad...", "narrow":
// a window width to resize to, "fold_lane": index of a lane whose name to click,
// "screenshots": a directory for PNGs of the views}. Nothing is fetched from a network:
// the report is a file and every request is refused.
"use strict";
const path = require("path");
const {drive, settler} = require("./browser");

const [file, planFile] = process.argv.slice(2);
const plan = JSON.parse(require("fs").readFileSync(planFile, "utf8"));
drive({width: plan.width || 1280, height: plan.height || 900}, {steps: {}}, async (page, out) => {
  await page.goto("file://" + path.resolve(file), {waitUntil: "load"});
  await page.waitForSelector("body[data-ready]");
  out.ready = await page.$eval("body", (b) => b.getAttribute("data-ready"));
  const shots = plan.screenshots;
  async function shot(name, selector) {
    if (!shots) return;
    const el = await page.$(selector);
    if (!el) return;
    await el.scrollIntoView();
    await el.screenshot({path: path.join(shots, name + ".png")});
  }
  const settle = settler(350);
  await settle(400);
  if (plan.tops) {
    // The summary's two tables: every column inside its box, none behind a scrollbar.
    out.steps.tops = await page.evaluate(() => Array.from(document.querySelectorAll(".top")).map((box) => {
      const right = box.getBoundingClientRect().right;
      const cells = Array.from(box.querySelectorAll("th"));
      return {
        overflow: box.scrollWidth - box.clientWidth,
        hidden_columns: cells.filter((c) => c.getBoundingClientRect().right > right + 0.5).map((c) => c.textContent),
        names_cut: Array.from(box.querySelectorAll("td.name")).filter((c) => c.scrollWidth > c.clientWidth).map((c) => c.getAttribute("title")),
      };
    }));
  }
  if (plan.search) {
    // Flame graph search: our text in nanoseconds, gone once the field is cleared.
    await page.type("#flame-search", plan.search);
    await settle(400);
    const found = await page.$eval("#flame-details", (e) => e.textContent);
    await page.$eval("#flame-search", (e) => { e.value = ""; e.dispatchEvent(new Event("input")); });
    await settle(400);
    const cleared = await page.$eval("#flame-details", (e) => e.textContent.trim());
    out.steps.search = {found, cleared};
  }
  if (plan.select) {
    const row = await page.$(`#region-table tr[data-sort], #region-table tbody tr`);
    const rid = await page.$$eval("#region-table tbody tr", (rows, name) => {
      const tr = rows.find((r) => r.cells[0].getAttribute("data-sort") === name);
      if (!tr) return null;
      tr.scrollIntoView({block: "center"});
      return tr.getAttribute("data-rid");
    }, plan.select);
    if (row && rid !== null) {
      await page.click(`#region-table tbody tr[data-rid="${rid}"] td.name`);
      await settle(700);
    }
    const part = (id) => page.$$eval(`#${id} tbody tr`, (rows) => rows.map((r) =>
      [r.cells[0].textContent, r.cells[1].textContent, r.cells[2].textContent, r.cells[3].textContent]));
    out.steps.select = {
      rid,
      selected: await page.$eval("body", (b) => b.getAttribute("data-selected")),
      title: await page.$eval("#sandwich-title", (e) => e.textContent).catch(() => null),
      totals: await page.$eval("#sandwich-totals", (e) => e.textContent).catch(() => null),
      callers: await part("callers").catch(() => []),
      callees: await part("callees").catch(() => []),
      focus: await page.$eval("#flame-chart", (e) => e.getAttribute("data-focus")),
      marked: await page.$eval("#timeline-canvas", (e) => e.getAttribute("data-marked-calls")).catch(() => null),
      source: await page.$eval("#source-title", (e) => e.textContent).catch(() => null),
      hot: await page.$$eval("#source-text .src-line.hot", (l) => l.map((e) => e.textContent)).catch(() => []),
      heat: await page.$$eval("#source-text .heat[data-hits]", (l) => l.map((e) =>
        [e.parentNode.querySelector(".lineno").textContent, e.getAttribute("data-hits")])).catch(() => []),
      selected_rows: await page.$$eval("#region-table tr.selected", (l) => l.length),
    };
    await shot("sandwich", "#sandwich");
    await shot("source", "#source");
  }
  if (plan.metric) {
    // Switch the flame graph to a recorded metric: the frames' widths and the region
    // table's columns follow; each frame's name is its label (name: value inclusive).
    const frames = () => page.$$eval("#flame-chart g.frame", (gs) => gs.map((g) => ({
      name: g.getAttribute("name"),
      title: (g.querySelector("title") || {textContent: ""}).textContent,
      width: +(g.querySelector("rect") || {getAttribute: () => 0}).getAttribute("width")})));
    const options = await page.$$eval("#flame-metric option", (os) => os.map((o) => o.textContent));
    const before = await frames();
    await page.select("#flame-metric", String(options.indexOf(plan.metric) - 1));
    await settle(800);
    const table = await page.evaluate(() => {
      const t = document.querySelector("#region-table");
      const visible = Array.from(t.querySelectorAll("thead th")).filter(
        (th) => th.style.display !== "none").map((th) => th.textContent);
      const first = t.tBodies[0].rows[0];
      return {visible, chosen: document.querySelector("#table-metric").value,
              first: first.cells[0].textContent};
    });
    out.steps.metric = {options, before, after: await frames(), table,
                        hidden: await page.$eval("#flame-metric", (e) => e.hidden)};
    await shot("flame-metric", "#flame");
  }
  if (plan.fold) {
    // recursion folding in the flame graph
    const frames = () => page.$$eval("#flame-chart g.frame", (gs) => gs.map((g) => g.getAttribute("name")));
    const height = () => page.$eval("#flame-chart svg", (s) => +s.getAttribute("height"));
    const unfolded = await frames(), unfoldedHeight = await height();
    await page.click("#flame-fold");
    await settle(800);
    out.steps.fold = {unfolded, unfolded_height: unfoldedHeight, folded: await frames(),
                      folded_height: await height()};
    await shot("flame-folded", "#flame");
  }
  if (plan.fold_lane !== undefined) {
    await shot("timeline-lanes", "#timeline");
    const before = await page.$eval("#timeline-canvas", (c) => [c.getAttribute("data-lanes"), c.style.height]);
    const box = await (await page.$("#timeline-canvas")).boundingBox();
    // a lane's name is the first line under the time axis (22 px), 16 px high
    await page.mouse.click(box.x + 40, box.y + 22 + 8);
    await settle();
    const after = await page.$eval("#timeline-box", (b) => [b.scrollHeight, b.clientHeight]);
    out.steps.fold = {before, after};
  }
  if (plan.range) {
    const canvas = await page.$("#timeline-canvas");
    await canvas.scrollIntoView();
    const box = await canvas.boundingBox();
    const y = box.y + 10;  // on the time axis
    await page.mouse.move(box.x + box.width * plan.range[0], y);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * (plan.range[0] + plan.range[1]) / 2, y, {steps: 4});
    await page.mouse.move(box.x + box.width * plan.range[1], y, {steps: 4});
    await page.mouse.up();
    await settle(700);
    out.steps.range = {
      range: await page.$eval("#timeline-box", (b) => b.getAttribute("data-range")),
      view: await page.$eval("#timeline-canvas", (c) => c.getAttribute("data-view")),
      title: await page.$eval("#range-title", (e) => e.textContent).catch(() => null),
      rows: await page.$$eval("#range-table tbody tr", (rows) => rows.map((r) =>
        [r.cells[0].textContent, r.cells[1].textContent, r.cells[2].textContent, r.cells[4].textContent])),
      scope: await page.$eval("#flame-scope", (e) => (e.hidden ? "" : e.textContent)),
      frames: await page.$$eval("#flame-chart g.frame", (gs) => gs.map((g) => g.getAttribute("name"))),
    };
    await shot("timeline-range", "#timeline");
    await shot("flame-range", "#flame");
    await page.click("#range-clear");
    await settle(500);
    out.steps.range.cleared_scope = await page.$eval("#flame-scope", (e) => e.hidden);
  }
  if (plan.keys) {
    await page.focus("#timeline-box");
    const views = [await page.$eval("#timeline-canvas", (c) => c.getAttribute("data-view"))];
    for (const k of plan.keys) {
      await page.keyboard.press(k);
      await settle(120);
      views.push(await page.$eval("#timeline-canvas", (c) => c.getAttribute("data-view")));
    }
    out.steps.keys = views;
  }
  if (plan.narrow) {
    const wide = await page.$eval("#flame-chart", (e) => e.getAttribute("data-width"));
    await page.setViewport({width: plan.narrow, height: 900});
    await settle(800);
    out.steps.narrow = await page.evaluate(() => ({
      flame_attr: document.querySelector("#flame-chart").getAttribute("data-width"),
      flame_svg: document.querySelector("#flame-chart svg").getAttribute("width"),
      page_width: document.documentElement.scrollWidth,
      table: document.querySelector("#region-table").getBoundingClientRect().width,
      table_box: document.querySelector("#regions").getBoundingClientRect().width,
      timeline: document.querySelector("#timeline-canvas").getBoundingClientRect().width,
    }));
    out.steps.narrow.wide_flame = wide;
    if (shots) {
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({path: path.join(shots, "narrow.png")});
    }
  }
  out.errors = await page.$eval("body", (b) => b.getAttribute("data-js-errors"));
});
