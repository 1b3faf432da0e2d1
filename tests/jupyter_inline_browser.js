// Opens the inline results of the Score-P kernel (a cell's text/html output saved into a
// page) in Debian's Chromium through puppeteer-core, as a notebook reader would: each
// result is a one-line summary; clicking it opens the report in a frame. Prints what it saw
// as JSON.
//
//   node tests/jupyter_inline_browser.js PAGE.html [SCREENSHOT_DIR]
//
// Nothing is fetched from a network: the page is a file and every request is refused.
"use strict";
const path = require("path");
const {drive, settler} = require("./browser");

const [file, shots] = process.argv.slice(2);
drive({width: 1100, height: 900}, {results: []}, async (page, out) => {
  await page.goto("file://" + path.resolve(file), {waitUntil: "load"});
  const settle = settler(400);
  const ids = await page.$$eval(".scorep-inline", (els) => els.map((e) => e.id));
  for (const id of ids) {
    const root = `#${id}`;
    const r = {id};
    r.summary = await page.$eval(`${root} summary`, (s) => s.textContent.trim());
    r.open_before = await page.$eval(`${root} details`, (d) => d.open);
    r.frames_before = await page.$$eval(`${root} iframe`, (f) => f.length);
    r.static_visible = await page.$eval(`${root} .scorep-static`, (s) => !s.hidden && s.textContent.length > 0);
    r.monitoring_svg = await page.$$eval(`${root} svg.scorep-monitoring`, (l) => l.length);
    if (!r.open_before) await page.click(`${root} summary`);
    await page.waitForSelector(`${root} iframe`);
    const handle = await page.$(`${root} iframe`);
    const frame = await handle.contentFrame();
    await frame.waitForSelector("body[data-ready]", {timeout: 30000});
    await settle(600);
    r.ready = await frame.$eval("body", (b) => b.getAttribute("data-ready"));
    r.errors = await frame.$eval("body", (b) => b.getAttribute("data-js-errors"));
    r.mode = await frame.$eval("body", (b) => b.getAttribute("data-mode"));
    r.frame_height = await page.$eval(`${root} .scorep-frame`, (b) => b.getBoundingClientRect().height);
    r.static_visible_after = await page.$eval(`${root} .scorep-static`, (s) => !s.hidden);
    r.sections = await frame.$$eval("main > section", (l) => l.map((s) => s.id));
    r.flame_frames = await frame.$$eval("#flame-chart g.frame", (gs) =>
      gs.map((g) => g.getAttribute("name") || (g.querySelector("title") || {}).textContent || ""));
    r.flame_width = await frame.$eval("#flame-chart svg", (s) => +s.getAttribute("width")).catch(() => 0);
    r.table_regions = await frame.$$eval("#region-table tbody tr td.name", (l) => l.map((td) => td.getAttribute("data-sort") || td.textContent));
    r.timeline_lanes = await frame.$eval("#timeline-canvas", (c) => c.getAttribute("data-lanes")).catch(() => null);
    r.save_link = await page.$eval(`${root} a.scorep-save`, (a) => !a.hidden && a.href.startsWith("blob:"));
    if (shots) {
      const el = await page.$(root);
      await el.screenshot({path: path.join(shots, id + ".png")});
    }
    out.results.push(r);
  }
});
