// The dashboard's own script and style (no libraries): the filters on the
// overview and machines pages, the run readout on a series page. The
// script reads only the site's data files (window.CNNBENCH_OVERVIEW,
// window.CNNBENCH_SERIES) and puts their strings into the page as text.
#include "tools/history/dashboard_parts.h"

namespace cnnbench::history::dashboard {

const char kScript[] = R"js(// cnnbench results history: the dashboard's script (written by
// //tools:history dashboard). Strings from the data go in as textContent only.
(function () {
  "use strict";
  var FILTERS = [["machine", "Machine"], ["family", "Family"], ["model", "Model"],
                 ["precision", "Precision"]];

  function element(tag, content, className) {
    var e = document.createElement(tag);
    if (content !== undefined && content !== null) e.textContent = String(content);
    if (className) e.className = className;
    return e;
  }

  function figure(v) {
    if (v === null || v === undefined) return "-";
    var size = Math.abs(v);
    return size >= 100 ? v.toFixed(1) : size >= 1 ? v.toFixed(2) : v.toPrecision(3);
  }

  function percent(fraction) {
    if (fraction === null || !isFinite(fraction)) return "-";
    return (fraction >= 0 ? "+" : "") + (fraction * 100).toFixed(1) + "%";
  }

  function readHash() {
    var state = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (pair) {
      var at = pair.indexOf("=");
      if (at <= 0) return;
      try {
        state[decodeURIComponent(pair.slice(0, at))] = decodeURIComponent(pair.slice(at + 1));
      } catch (e) { /* a malformed hash is ignored */ }
    });
    return state;
  }

  // --- Overview and machines side by side: filters ---
  function setupFilters(data) {
    var box = document.getElementById("filters");
    if (!box || !data) return;
    var byId = {}, platforms = {}, machineOrder = {};
    data.series.forEach(function (s) { byId[String(s.id)] = s; });
    data.machines.forEach(function (m, i) {
      platforms[String(m.id)] = m.platform;
      machineOrder[String(m.id)] = i;
    });
    var state = readHash(), selects = {};
    // Machines side by side shows training only: no family to choose.
    var filters = FILTERS.filter(function (f) {
      return !(f[0] === "family" && document.body.getAttribute("data-page") === "machines");
    });
    filters.forEach(function (f) {
      var key = f[0], values = {};
      data.series.forEach(function (s) { values[String(s[key])] = true; });
      var names = Object.keys(values).sort(function (a, b) {
        if (key === "machine") return (machineOrder[a] || 0) - (machineOrder[b] || 0);
        return a < b ? -1 : a > b ? 1 : 0;
      });
      var label = element("label", f[1]);
      var select = document.createElement("select");
      select.id = "filter-" + key;
      select.appendChild(element("option", "all"));
      select.options[0].value = "";
      names.forEach(function (v) {
        var shown = key === "machine" ? (platforms[v] || "machine " + v) : (v || "(none)");
        var option = element("option", shown);
        option.value = v;
        select.appendChild(option);
      });
      if (state[key] !== undefined && values[state[key]]) select.value = state[key];
      select.addEventListener("change", function () { apply(true); });
      label.appendChild(select);
      box.appendChild(label);
      selects[key] = select;
    });
    var reset = element("button", "Show all");
    reset.type = "button";
    reset.addEventListener("click", function () {
      Object.keys(selects).forEach(function (k) { selects[k].value = ""; });
      apply(true);
    });
    box.appendChild(reset);
    var count = element("span", "", "filter-count");
    count.id = "filter-count";
    box.appendChild(count);

    function passes(s) {
      return Object.keys(selects).every(function (k) {
        var v = selects[k].value;
        return v === "" || String(s[k]) === v;
      });
    }

    function apply(remember) {
      var machine = selects.machine.value;
      var rows = 0, shownRows = 0, changes = 0, shownChanges = 0;
      document.querySelectorAll("[data-series]").forEach(function (e) {
        var ok = e.getAttribute("data-series").split(" ").some(function (id) {
          return byId[id] !== undefined && passes(byId[id]);
        });
        e.classList.toggle("filtered-out", !ok);
        var isChange = e.closest("table.changes") !== null;
        if (isChange) { changes++; shownChanges += ok ? 1 : 0; }
        else { rows++; shownRows += ok ? 1 : 0; }
      });
      document.querySelectorAll("[data-machine]").forEach(function (e) {
        e.classList.toggle("machine-out", machine !== "" && e.getAttribute("data-machine") !== machine);
      });
      document.querySelectorAll("section.machine, section.side").forEach(function (section) {
        var all = section.querySelectorAll("tbody tr").length;
        var hidden = section.querySelectorAll("tbody tr.filtered-out").length;
        section.classList.toggle("empty-out", all > 0 && all === hidden);
      });
      var what = document.body.getAttribute("data-page") === "machines" ? " rows" : " series";
      count.textContent = shownRows + " of " + rows + what + " shown" +
          (changes ? ", " + shownChanges + " of " + changes + " open changes" : "");
      if (remember) {
        var hash = filters.filter(function (f) { return selects[f[0]].value !== ""; })
            .map(function (f) {
              return encodeURIComponent(f[0]) + "=" + encodeURIComponent(selects[f[0]].value);
            }).join("&");
        location.replace("#" + hash);
      }
    }
    apply(false);
  }

  // --- A series page: the run readout ---
  function setupSeries(data) {
    var readout = document.getElementById("readout");
    if (!readout || !data) return;
    var selected = [];

    function line(parent, label, value) {
      var p = element("div");
      p.appendChild(element("b", label + ": "));
      p.appendChild(document.createTextNode(String(value)));
      parent.appendChild(p);
    }

    function describe(index) {
      var p = data.points[index];
      if (!p) return;
      readout.textContent = "";
      readout.appendChild(element("h3", "Run " + p.run + " (" + (index + 1) + " of " +
                                        data.points.length + ")"));
      line(readout, "Date", p.date);
      line(readout, "Commit", p.commit || "unknown");
      if (p.value === null) {
        line(readout, "Status", p.status);
      } else {
        line(readout, "Value", figure(p.value) + " " + data.unit + " (best " + figure(p.best) + ")");
        line(readout, "Repetitions", p.repetitions + ", from " + figure(p.min) + " to " +
                                         figure(p.max));
        if (p.band.low !== null) {
          line(readout, "Rolling band", figure(p.band.low) + " to " + figure(p.band.high));
        }
      }
      data.changes.forEach(function (c) {
        if (c.after.run !== p.run) return;
        line(readout, (c.regression ? "Regression " : "Improvement ") + percent(c.ratio - 1),
             c.cause);
        c.environment_diff.forEach(function (d) { line(readout, d[0], d[1]); });
      });
      data.annotations.forEach(function (a) {
        if (a.run === p.run) line(readout, "Annotation", a.text);
      });
      selected.forEach(function (e) { e.classList.remove("selected"); });
      selected = Array.prototype.slice.call(
          document.querySelectorAll('[data-index="' + index + '"]'));
      selected.forEach(function (e) { e.classList.add("selected"); });
    }

    document.querySelectorAll("svg.chart [data-index], table.runs tr[data-index]")
        .forEach(function (e) {
          var index = parseInt(e.getAttribute("data-index"), 10);
          e.addEventListener("click", function () { describe(index); });
          if (e.tagName.toLowerCase() !== "tr") {
            e.addEventListener("mouseenter", function () { describe(index); });
          }
        });
    readout.setAttribute("data-runs", String(data.points.length));
  }

  var page = document.body.getAttribute("data-page");
  if (page === "overview" || page === "machines") setupFilters(window.CNNBENCH_OVERVIEW);
  if (page === "series") setupSeries(window.CNNBENCH_SERIES);
})();
)js";

const char kStyle[] = R"css(/* cnnbench results history: the dashboard's style. */
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em auto;
       max-width: 1360px; padding: 0 1em; color: #222; background: #fff; }
header h1 { margin: 0 0 0.3em; font-size: 1.6em; }
h1.case { font-size: 1.3em; overflow-wrap: anywhere; }
nav a { margin-right: 1.4em; }
.meta, .note { color: #666; font-size: 0.9em; }
h2 { margin-top: 1.6em; border-bottom: 2px solid #ddd; padding-bottom: 0.2em; font-size: 1.25em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.55em; text-align: left; vertical-align: middle; }
thead th { background: #f3f3f3; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.case, dd { overflow-wrap: anywhere; }
td.case { max-width: 30em; }
table.overview, table.changes { width: 100%; }
td.empty { color: #aaa; }
code { font-size: 0.92em; background: #f5f5f5; padding: 0 0.2em; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 0 0.5em; border-radius: 0.7em; font-size: 0.85em;
         background: #eee; white-space: nowrap; max-width: 24em; overflow: hidden;
         text-overflow: ellipsis; vertical-align: middle; }
.badge.status-ok { background: #e8f5e9; color: #1b5e20; }
.badge.status-regression, .badge.status-failed { background: #ffebee; color: #b71c1c; }
.badge.status-improvement { background: #e3f2fd; color: #0d47a1; }
.badge.status-none { color: #777; }
table.changes tr.regression td:first-child { border-left: 4px solid #c62828; }
table.changes tr.improvement td:first-child { border-left: 4px solid #2e7d32; }
.ratio { font-weight: 600; white-space: nowrap; }
.interval { color: #666; font-size: 0.9em; white-space: nowrap; }
ul.env { margin: 0.1em 0; padding-left: 1.1em; }
.filters { display: flex; gap: 1em; flex-wrap: wrap; align-items: flex-end; margin: 1em 0;
           padding: 0.6em 0.8em; background: #f7f7f7; border: 1px solid #e3e3e3; }
.filters:empty { display: none; }
.filters label { display: flex; flex-direction: column; font-size: 0.85em; color: #444; }
.filters select { min-width: 9em; max-width: 24em; }
.filter-count { color: #555; font-size: 0.9em; }
.filtered-out, .machine-out, .empty-out { display: none !important; }
.case-rest { color: #666; font-size: 0.85em; font-weight: normal; }
details summary { cursor: pointer; color: #444; font-size: 0.9em; }
table.identity { font-size: 0.85em; }
svg text { font: 11px system-ui, sans-serif; fill: #555; }
.spark { display: block; }
.spark-line { fill: none; stroke: #1565c0; stroke-width: 1.3; }
.spark-baseline { stroke: #999; stroke-dasharray: 3 2; stroke-width: 1; }
.spark-failed { stroke: #c62828; stroke-width: 1.6; }
.spark-last { fill: #1565c0; }
svg.chart { max-width: 100%; height: auto; }
.chart .plot { fill: #fff; stroke: #ccc; }
.chart .grid { stroke: #eee; }
.chart .band { fill: #90caf9; fill-opacity: 0.35; stroke: none; }
.chart .band-center { fill: none; stroke: #64b5f6; stroke-dasharray: 4 3; }
.chart .baseline { stroke: #777; stroke-dasharray: 6 4; }
.chart .spread { stroke: #78909c; stroke-width: 1.2; }
.chart .value { fill: none; stroke: #1565c0; stroke-width: 1.6; }
.chart .point { fill: #1565c0; stroke: #fff; stroke-width: 1; cursor: pointer; }
.chart .point.selected { fill: #ff6f00; stroke: #000; }
.chart .failed { stroke: #c62828; stroke-width: 2.2; cursor: pointer; }
.chart .change path { stroke-width: 2; }
.chart .change.regression path { stroke: #c62828; }
.chart .change.improvement path { stroke: #2e7d32; }
.chart .change text { font-weight: bold; }
.chart .change.regression text { fill: #c62828; }
.chart .change.improvement text { fill: #2e7d32; }
.chart .annotation path { stroke: #8e24aa; stroke-width: 1.5; stroke-dasharray: 2 3; }
.chart .annotation text { fill: #8e24aa; font-weight: bold; }
.chart .axis { fill: #444; font-size: 12px; }
figure.series-chart { margin: 1em 0 0.5em; }
.legend { font-size: 0.85em; color: #444; }
.legend .key { display: inline-block; width: 18px; height: 10px; margin: 0 0.3em 0 1em;
               vertical-align: middle; }
.legend .key:first-child { margin-left: 0; }
.key-value { border-top: 2px solid #1565c0; height: 0 !important; }
.key-spread { border-left: 2px solid #78909c; width: 0 !important; margin-right: 0.6em !important; }
.key-band { background: rgba(144, 202, 249, 0.5); }
.key-baseline { border-top: 2px dashed #777; height: 0 !important; }
.key-change { border-left: 2px solid #c62828; width: 0 !important; margin-right: 0.6em !important; }
.key-annotation { border-left: 2px dotted #8e24aa; width: 0 !important;
                  margin-right: 0.6em !important; }
.key-failed { color: #c62828; font-weight: bold; margin-left: 1em; }
.readout { min-height: 2.4em; padding: 0.5em 0.8em; background: #fffde7;
           border: 1px solid #f0e6a0; font-size: 0.92em; overflow-wrap: anywhere; }
.readout h3 { margin: 0 0 0.3em; font-size: 1em; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.2em 1em; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
article.change-detail { border-left: 4px solid #ccc; padding: 0.1em 1em; margin: 1em 0; }
article.change-detail.regression { border-color: #c62828; }
article.change-detail.improvement { border-color: #2e7d32; }
article.change-detail h3 { font-size: 1.05em; margin: 0.4em 0; }
table.runs tr.failed td { color: #b71c1c; }
table.runs tr.selected td { background: #fff3e0; }
table.runs tr[data-index] { cursor: pointer; }
)css";

}  // namespace cnnbench::history::dashboard
