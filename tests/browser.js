// What the tests that drive a page in Debian's Chromium share (report_browser.js,
// wait_states_browser.js, jupyter_inline_browser.js): headless Chromium through
// puppeteer-core from the report's npm packages, a fresh profile, the page's console and
// errors collected, nothing fetched from a network (a request that is not for a file, an
// about: or a blob: page is refused and listed), the result printed as one line of JSON.
"use strict";
const fs = require("fs");
const path = require("path");
const os = require("os");

const JS_DIR = path.join(__dirname, "..", "src", "scorep", "report", "js");
const puppeteer = require(path.join(JS_DIR, "node_modules", "puppeteer-core"));
const CHROMIUM = process.env.SCOREP_CHROMIUM || "/usr/bin/chromium";
const LOCAL = ["file:", "about:", "blob:"];

// Runs body(page, out) on a new page of `viewport` ({width, height}); `out` starts as
// `fields` with console: [] and requests: [] added, and is printed when body has finished.
// Whatever happens, the browser is closed and its profile removed; an error is printed to
// stderr and ends the process with status 1.
function drive(viewport, fields, body) {
  async function run() {
    const out = Object.assign({console: [], requests: []}, fields);
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), "scorep-chromium-"));
    const browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      userDataDir: profile,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--hide-scrollbars"],
    });
    try {
      const page = await browser.newPage();
      await page.setViewport(viewport);
      page.on("console", (m) => out.console.push(m.type() + ": " + m.text()));
      page.on("pageerror", (e) => out.console.push("pageerror: " + e.message));
      await page.setRequestInterception(true);
      page.on("request", (r) => {
        const url = r.url();
        if (LOCAL.some((scheme) => url.startsWith(scheme))) return r.continue();
        out.requests.push(url);
        return r.abort();
      });
      await body(page, out);
    } finally {
      await browser.close();
      fs.rmSync(profile, {recursive: true, force: true});
    }
    process.stdout.write(JSON.stringify(out) + "\n");
  }
  run().catch((e) => { process.stderr.write(String(e && e.stack || e) + "\n"); process.exit(1); });
}

// A pause for the page's timers and frames to run (ms, else `fallback`).
const settler = (fallback) => (ms) => new Promise((r) => setTimeout(r, ms || fallback));

module.exports = {drive, settler};
