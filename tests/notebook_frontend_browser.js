// Drives a real notebook front end in Debian's Chromium (puppeteer-core) as a user would:
//
//   node tests/notebook_frontend_browser.js server URL COUNT   a notebook on a running
//        Jupyter Notebook 6 server: runs all its cells, waits for COUNT inline results,
//        opens each, clicks every tab of the report, saves the notebook
//   node tests/notebook_frontend_browser.js file PAGE.html     an nbconvert HTML export:
//        opens each result and clicks every tab
//   node tests/notebook_frontend_browser.js untrusted URL      a notebook the server does
//        not trust: what its results' outputs show (text, tables) without their scripts
//
// A tab is clicked with the mouse; after each click the report's frame must still be the
// report (about:srcdoc, its own data) and the tab's section must be in view. Prints what it
// saw as JSON. Requests beyond the notebook server (or the file) are refused and listed.
"use strict";
const fs = require("fs");
const path = require("path");
const os = require("os");

const JS_DIR = path.join(__dirname, "..", "src", "scorep", "report", "js");
const puppeteer = require(path.join(JS_DIR, "node_modules", "puppeteer-core"));
const CHROMIUM = process.env.SCOREP_CHROMIUM || "/usr/bin/chromium";
const settle = (ms) => new Promise((r) => setTimeout(r, ms || 300));

async function waitFor(page, fn, timeoutMs, arg) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await page.evaluate(fn, arg)) return true;
    if (Date.now() > end) return false;
    await settle(250);
  }
}

// Where each section of the report's frame is after a click on its tab.
async function clickTabs(frame, out) {
  const tabs = await frame.$$eval("nav a", (l) => l.map((a) => a.getAttribute("href")));
  out.tabs = [];
  for (const href of tabs) {
    const link = await frame.$(`nav a[href="${href}"]`);
    await link.click();
    await settle(250);
    const seen = await frame.evaluate((h) => {
      const target = document.getElementById(h.slice(1));
      const top = target ? target.getBoundingClientRect().top : null;
      const end = window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2;
      return {href: h, url: location.href, report: !!document.getElementById("report-data"),
              top: top === null ? null : Math.round(top), at_end: end,
              notebook: !!document.getElementById("notebook")};
    }, href);
    seen.frame_url = frame.url();
    out.tabs.push(seen);
  }
  // A function's link in a table selects it and shows its callers and callees, in place.
  const fn = await frame.$("#summary a.fn, #summary tr[data-rid] td");
  if (fn) {
    await fn.click();
    await settle(250);
    out.after_function_link = await frame.evaluate(() => ({
      url: location.href, selected: document.body.getAttribute("data-selected")}));
  }
}

async function exercise(page, out) {
  const ids = await page.$$eval(".scorep-inline", (els) => els.map((e) => e.id));
  for (const id of ids) {
    const root = `#${id}`;
    const r = {id};
    r.summary_only = await page.$eval(root, (e) => e.classList.contains("scorep-summary-only"));
    r.summary = await page.$eval(`${root} summary`, (s) => s.textContent.trim());
    const toggle = await page.$(`${root} .scorep-toggle`);
    r.toggle = toggle ? await toggle.evaluate((t) => {
      const b = t.getBoundingClientRect(), st = getComputedStyle(t);
      return {text: t.textContent, width: Math.round(b.width), height: Math.round(b.height),
              visible: st.visibility === "visible" && st.display !== "none" && b.width > 0};
    }) : null;
    r.untrusted_line = await page.$$eval(`${root} .scorep-untrusted`, (l) => l.length);
    if (r.summary_only) { out.results.push(r); continue; }
    const open = await page.$eval(`${root} details`, (d) => d.open);
    if (!open) await page.click(`${root} .scorep-toggle`);
    r.toggle_after = await page.$eval(`${root} .scorep-toggle`, (t) => t.textContent);
    await page.waitForSelector(`${root} iframe`, {timeout: 30000});
    const handle = await page.$(`${root} iframe`);
    const frame = await handle.contentFrame();
    await frame.waitForSelector("body[data-ready]", {timeout: 30000});
    await settle(400);
    r.ready = await frame.$eval("body", (b) => b.getAttribute("data-ready"));
    r.mode = await frame.$eval("body", (b) => b.getAttribute("data-mode"));
    await handle.evaluate((f) => f.scrollIntoView({block: "start"}));
    await clickTabs(frame, r);
    r.frame_url_after = frame.url();
    out.results.push(r);
  }
  out.frames = page.frames().map((f) => f.url());
}

async function main() {
  const [mode, target, countText] = process.argv.slice(2);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "scorep-chromium-"));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM, headless: true, userDataDir: profile,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--hide-scrollbars"],
  });
  const out = {console: [], requests: [], results: []};
  const origin = mode !== "file" ? new URL(target).origin : null;
  try {
    const page = await browser.newPage();
    await page.setViewport({width: 1200, height: 1000});
    page.on("console", (m) => out.console.push(m.type() + ": " + m.text()));
    page.on("pageerror", (e) => out.console.push("pageerror: " + e.message));
    await page.setRequestInterception(true);
    page.on("request", (r) => {
      const url = r.url();
      if (url.startsWith("about:") || url.startsWith("blob:") || url.startsWith("data:") ||
          (mode === "file" && url.startsWith("file:")) ||
          (origin && (url.startsWith(origin) || url.startsWith(origin.replace("http", "ws"))))) {
        return r.continue();
      }
      out.requests.push(url);
      return r.abort();
    });
    if (mode === "untrusted") {
      // An untrusted notebook: its outputs' scripts do not run, and the front end's
      // sanitiser keeps what it allows of their HTML. What does a reader see?
      await page.goto(target, {waitUntil: "load"});
      await waitFor(page, () => window.Jupyter && Jupyter.notebook && Jupyter.notebook._fully_loaded, 60000);
      await settle(1000);
      out.trusted = await page.evaluate(() => Jupyter.notebook.trusted);
      out.outputs = await page.$$eval(".output_html", (l) => l.map((o) => ({
        text: o.innerText, all_text: o.textContent, untrusted_line: !!o.querySelector(".scorep-untrusted"),
        tables: o.querySelectorAll("table").length, scripts: o.querySelectorAll("script").length})));
    } else if (mode === "server") {
      await page.goto(target, {waitUntil: "load"});
      const ready = await waitFor(page, () => window.Jupyter && Jupyter.notebook &&
        Jupyter.notebook.kernel && Jupyter.notebook.kernel.is_connected(), 60000);
      if (!ready) throw new Error("the notebook's kernel did not connect");
      await page.evaluate(() => Jupyter.notebook.execute_all_cells());
      const count = Number(countText);
      const done = await waitFor(page, (n) => {
        const cells = Jupyter.notebook.get_cells().filter((c) => c.cell_type === "code");
        return cells.every((c) => typeof c.input_prompt_number === "number") &&
          document.querySelectorAll(".scorep-inline").length >= n;
      }, 300000, count);
      if (!done) throw new Error("the cells did not finish: " + await page.evaluate(() =>
        Jupyter.notebook.get_cells().map((c) => c.input_prompt_number).join(",")));
      out.prompts = await page.evaluate(() => Jupyter.notebook.get_cells()
        .filter((c) => c.cell_type === "code").map((c) => c.input_prompt_number));
      out.errors = await page.$$eval(".output_error", (l) => l.map((e) => e.textContent.slice(0, 300)));
      await exercise(page, out);
      await page.evaluate(() => Jupyter.notebook.save_notebook());
      out.saved = await waitFor(page, () => !Jupyter.notebook.dirty, 30000);
    } else {
      await page.goto("file://" + path.resolve(target), {waitUntil: "load"});
      await exercise(page, out);
    }
  } finally {
    await browser.close();
    fs.rmSync(profile, {recursive: true, force: true});
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => { process.stderr.write(String(e && e.stack || e) + "\n"); process.exit(1); });
