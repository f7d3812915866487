// report_html.js: the page of index.html (report_html.c embeds it after plotly.js and the data).
// Reads the run from <script id="qc-data">, builds the filterable summary table and, per failing
// item, its plots: where the mismatches sit (a heatmap over rows x blocks), how close the errors
// come to their bounds (gemm, moe), and for ops with stages where the backend first parts from the
// reference and how its error runs along K. Errors land in #qc-errors; body[data-done] says the
// page finished, body[data-plots] how many plots it drew (tests/test_html.py reads both).
"use strict";
window.addEventListener("error", (e) => {
  document.getElementById("qc-errors").textContent += "error: " + e.message + "\n";
});

const data = JSON.parse(document.getElementById("qc-data").textContent);
const havePlotly = typeof Plotly !== "undefined";
let plots = 0;

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

function plot(parent, traces, layout) {
  const div = el("div", {class: "plot"});
  parent.append(div);
  const base = {margin: {l: 60, r: 20, t: 40, b: 50}, height: 320, font: {size: 11}};
  Plotly.newPlot(div, traces, Object.assign(base, layout), {displayModeBar: false, responsive: true});
  plots++;
}

function head() {
  const c = data.counts;
  document.getElementById("meta").append(
    el("p", {}, `qcheck ${data.qcheck_version} (${data.git_revision}), suite ${data.suite}, started ${data.started}, ` +
                `${data.seconds.toFixed(1)} s: ${c.PASS} passed, ${c.FAIL} failed, ${c.ERROR} error, ` +
                `${c.MISTRUSTED} mistrusted, ${c.SKIPPED} skipped of ${c.total}`),
    el("p", {}, el("code", {}, data.command)));
}

function table() {
  const body = document.querySelector("#results tbody");
  for (const [i, r] of data.rows.entries()) {
    const tr = el("tr", {class: r[0], "data-i": i},
                  el("td", {}, r[0]), el("td", {}, r[1]), el("td", {}, r[2]), el("td", {}, r[3]));
    body.append(tr);
  }
  const verdict = document.getElementById("f-verdict"), text = document.getElementById("f-text");
  const apply = () => {
    const v = verdict.value, t = text.value.toLowerCase();
    let shown = 0;
    for (const tr of body.children) {
      const r = data.rows[tr.dataset.i];
      const ok = (v === "all" || (v === "failing" ? r[0] !== "PASS" && r[0] !== "SKIPPED" : r[0] === v)) &&
                 (!t || (r[1] + " " + r[2]).toLowerCase().includes(t));
      tr.hidden = !ok;
      shown += ok;
    }
    document.getElementById("f-count").textContent = `${shown} of ${data.rows.length} items`;
  };
  verdict.addEventListener("change", apply);
  text.addEventListener("input", apply);
  apply();
}

function heatmap(parent, m) {
  const z = m.counts, rows = m.rows, cols = m.cols;
  const ry = z.map((_, b) => `rows ${Math.floor(b * rows / m.brows)}-${Math.floor((b + 1) * rows / m.brows) - 1}`);
  const unit = m.block > 1 ? `blocks of ${m.block}` : "cols";
  const cx = z[0].map((_, b) => `${unit} ${Math.floor(b * cols / m.bcols)}-${Math.floor((b + 1) * cols / m.bcols) - 1}`);
  plot(parent, [{type: "heatmap", z: z, x: cx, y: ry, colorscale: "Reds", hoverongaps: false,
                 colorbar: {title: {text: "mismatches"}}}],
       {title: {text: `${m.output}: where the mismatches sit (${rows} rows x ${cols} ${unit})`},
        yaxis: {autorange: "reversed", showticklabels: m.brows <= 16}, xaxis: {showticklabels: false}});
}

function ratio(parent, h) {
  const x = h.bins.map((_, k) => Math.pow(10, k / 2 - 6 + 0.25));
  plot(parent, [{type: "bar", x: x, y: h.bins, name: "elements", marker: {color: "#4a78b5"}}],
       {title: {text: `${h.output}: |error| / bound per element (worst ${h.tightness.toPrecision(3)}; ` +
                      `${h.zero} exact)`},
        xaxis: {type: "log", title: {text: "|got - expected| / bound"}}, yaxis: {title: {text: "elements"}},
        shapes: [{type: "line", x0: 1, x1: 1, yref: "paper", y0: 0, y1: 1, line: {color: "#c0392b", dash: "dash"}}]});
}

function stages(parent, p) {
  const names = p.stages.map((s) => s.name.replace(/^stage\./, ""));
  const colors = p.stages.map((s, i) => i === p.first_stage ? "#c0392b" : s.bad ? "#e08e79" : "#9bbf85");
  plot(parent, [{type: "bar", x: names, y: p.stages.map((s) => s.n ? s.bad / s.n : 0), marker: {color: colors},
                 text: p.stages.map((s) => `${s.bad}/${s.n}, max|err| ${s.maxerr.toPrecision(3)}`),
                 hoverinfo: "text+x"}],
       {title: {text: "stages in the reference's order: fraction of elements that differ (red: the first)"},
        yaxis: {title: {text: "differing"}, range: [0, 1]}});
  if (p.along_k)
    plot(parent, [{type: "scatter", mode: "lines+markers", y: p.along_k.bins,
                   x: p.along_k.bins.map((_, b) => Math.floor(b * p.along_k.cols / p.along_k.bins.length)),
                   line: {shape: "hv", color: "#c0392b"}}],
         {title: {text: `${names[p.first_stage] || "first differing stage"}: error mass along K (${p.along_k.cols} columns)`},
          xaxis: {title: {text: "column (K of the next GEMM)"}}, yaxis: {title: {text: "sum over rows of |error|"}}});
}

function items() {
  const box = document.getElementById("items");
  for (const it of data.items) {
    const sec = el("section", {class: "item " + it.verdict},
                   el("h3", {}, `${it.verdict} ${it.case_id}  ${it.backend}`), el("p", {}, it.figures),
                   el("pre", {class: "repro"}, "REPRO: " + it.repro), el("pre", {}, it.detail));
    box.append(sec);
    const p = it.plots;
    if (!p || !havePlotly) continue;
    if (p.map) heatmap(sec, p.map);
    if (p.ratio) ratio(sec, p.ratio);
    if (p.stages && p.stages.length) stages(sec, p);
  }
  if (!data.items.length) box.append(el("p", {}, "Every item passed or was skipped: nothing to draw."));
}

head();
table();
if (!havePlotly)
  document.getElementById("items").append(el("p", {class: "note"}, data.plotly_note));
items();
document.body.dataset.plots = String(plots);
document.body.dataset.done = "1";
