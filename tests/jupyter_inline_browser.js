// Opens the inline results of the Score-P kernel (a cell's text/html output saved into a
// page) in Debian's Chromium through puppeteer-core, as a notebook reader would: each
// result is a one-line summary; clicking it opens the report in a frame. Prints what it saw
// as JSON.
//
//   node tests/jupyter_inline_browser.js PAGE.html [SCREENSHOT_DIR]
//
// Nothing is fetched from a network: the page is a file and every request is refused.
"use strict";
const fs = require("fs");
const path = require("path");
const os = require("os");

const JS_DIR = path.join(__dirname, "..", "src", "scorep", "report", "js");
const puppeteer = require(path.join(JS_DIR, "node_modules", "puppeteer-core"));
const CHROMIUM = process.env.SCOREP_CHROMIUM || "/usr/bin/chromium";

async function main() {
  const [file, shots] = process.argv.slice(2);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "scorep-chromium-"));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: profile,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--hide-scrollbars"],
  });
  const out = {console: [], requests: [], results: []};
  try {
    const page = await browser.newPage();
    await page.setViewport({width: 1100, height: 900});
    page.on("console", (m) => out.console.push(m.type() + ": " + m.text()));
    page.on("pageerror", (e) => out.console.push("pageerror: " + e.message));
    await page.setRequestInterception(true);
    page.on("request", (r) => {
      const url = r.url();
      if (url.startsWith("file:") || url.startsWith("about:") || url.startsWith("blob:")) return r.continue();
      out.requests.push(url);
      return r.abort();
    });
    await page.goto("file://" + path.resolve(file), {waitUntil: "load"});
    const settle = (ms) => new Promise((r) => setTimeout(r, ms || 400));
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
  } finally {
    await browser.close();
    fs.rmSync(profile, {recursive: true, force: true});
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => { process.stderr.write(String(e && e.stack || e) + "\n"); process.exit(1); });
