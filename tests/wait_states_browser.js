// Drives the HTML report of an MPI run with wait states in Debian's Chromium (headless,
// puppeteer-core from the report's npm packages): chooses a metric in one selector as a
// person would and prints, as JSON, what each view then shows.
//
//   node tests/wait_states_browser.js REPORT.html PLAN.json
//
// PLAN: {"steps": [{"select": "#flame-metric" | "#balance-metric" | "#table-metric",
// "label": the option's text}, ...]}.
"use strict";
const path = require("path");
const {drive, settler} = require("./browser");

const [file, planFile] = process.argv.slice(2);
const plan = JSON.parse(require("fs").readFileSync(planFile, "utf8"));
drive({width: 1280, height: 900}, {steps: []}, async (page, out) => {
  await page.goto("file://" + path.resolve(file), {waitUntil: "load"});
  await page.waitForSelector("body[data-ready]");
  const settle = settler(300);
  async function views() {
    return await page.evaluate(() => {
      const box = (id) => { const b = document.querySelector(id); return b ? b.value : null; };
      const canvas = document.querySelector("#balance-canvas");
      const visible = (c) => c.offsetParent !== null && getComputedStyle(c).display !== "none";
      // The flame graph's frames wide enough to carry a name, and their titles.
      const frames = Array.from(document.querySelectorAll("#flame-chart g title, #flame svg g title"))
        .map((t) => t.textContent);
      const heads = Array.from(document.querySelectorAll("#region-table thead th.metric"))
        .filter(visible).map((th) => th.textContent.trim());
      return {
        flame_metric: box("#flame-metric"), table_metric: box("#table-metric"),
        balance_metric: box("#balance-metric"),
        balance_options: Array.from(document.querySelectorAll("#balance-metric option")).map((o) => o.textContent),
        flame_options: Array.from(document.querySelectorAll("#flame-metric option")).map((o) => o.textContent),
        balance_shows: canvas ? canvas.getAttribute("data-metric") : null,
        balance_values: canvas ? canvas.getAttribute("data-values") : null,
        balance_text: (document.querySelector("#balance-info p") || {}).textContent || "",
        flame_frames: frames,
        table_heads: heads,
      };
    });
  }
  out.initial = await views();
  for (const step of plan.steps) {
    const value = await page.$eval(step.select, (s, label) => {
      const o = Array.from(s.options).find((x) => x.textContent === label);
      return o ? o.value : null;
    }, step.label);
    if (value === null) throw new Error("no option " + step.label + " in " + step.select);
    await page.$eval(step.select, (s) => s.scrollIntoView());
    await page.click(step.select);          // open it, as a person does
    await page.select(step.select, value);  // and pick the option: input + change events
    await page.keyboard.press("Escape");
    await settle();
    out.steps.push(Object.assign({select: step.select, label: step.label}, await views()));
  }
});
