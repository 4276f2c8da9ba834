#!/usr/bin/env bash
# Opens the results history's static dashboard (tools/history/dashboard.h),
# written from the test data (tests/tools/history/dashboard_fixture.h), in
# headless Chromium from file:// with no network, and checks in the DOM: no
# errors, every machine and series shown, the filters, the open changes with
# their cause, a series page's points, band, change and annotation, and the
# hostile strings shown as text (no <img> made, no alert called). Each page
# is checked as written (with its Content-Security-Policy) and with the
# policy taken out, so escaping is tested without the policy's safety net.
# Saves screenshots of the overview, a series page and the machines page.
#   tools/check_dashboard_html.sh [OUT_DIR]     (default: a temporary directory)
# Exits non-zero on any problem.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { printf 'check_dashboard_html: %s\n' "$*" >&2; }

out="${1:-$(mktemp -d /tmp/cnnbench_dashboard_html.XXXXXX)}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

source tools/chromium.sh  # sets $chromium

./bazelw build //tests/tools/history:dashboard_fixture_site
site="$out/site"
rm -rf "$site"
bazel-bin/tests/tools/history/dashboard_fixture_site "$site"

# The probe: the head part records errors and alerts from the start; the
# body part (after the page's own scripts) checks the page and writes its
# verdict into the DOM, which --dump-dom prints.
cat > "$site/probe_head.js" <<'PROBE'
window.__problems = [];
window.__alerts = [];
window.alert = window.confirm = window.prompt = function (m) { window.__alerts.push(String(m)); };
window.addEventListener("error", function (e) {
  window.__problems.push("error: " + (e.message || (e.target && e.target.outerHTML)));
}, true);
document.addEventListener("securitypolicyviolation", function (e) {
  window.__problems.push("policy violation: " + e.violatedDirective + " " + e.blockedURI);
});
PROBE
cat > "$site/probe_body.js" <<'PROBE'
// After the load event: an <img>'s error handler has run by then.
window.addEventListener("load", function () {
  // The test data's figures (tests/tools/history/dashboard_fixture.cc).
  var MACHINES = 2, SERIES = 14, FP32 = 8, CPU_BOX = 7, RUNS = 60, FAILED_AT = 45;
  var HOSTILE_SQL = "\x3cscript\x3ealert(1)\x3c/script\x3e\"'; DROP TABLE runs;--";
  var HOSTILE_TAG = "\x3c/script\x3e\x3cimg src=x onerror=alert(2)\x3e";
  var problems = window.__problems;
  function expect(ok, what) { if (!ok) problems.push(what); }
  function all(selector, root) { return Array.prototype.slice.call((root || document).querySelectorAll(selector)); }
  function shown(e) {
    var r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== "hidden";
  }
  function countShown(selector) { return all(selector).filter(shown).length; }
  function setFilter(key, value) {
    var select = document.getElementById("filter-" + key);
    if (!select) { problems.push("no filter " + key); return; }
    select.value = value;
    if (select.value !== value) problems.push("filter " + key + " has no option " + value);
    select.dispatchEvent(new Event("change"));
  }
  function resetFilters() { all("#filters select").forEach(function (s) { setFilter(s.id.replace("filter-", ""), ""); }); }
  function text(e) { return e ? e.textContent.replace(/\s+/g, " ") : ""; }

  function overview() {
    expect(window.CNNBENCH_OVERVIEW && CNNBENCH_OVERVIEW.series.length === SERIES, "overview.js not loaded");
    expect(all("section.machine").length === MACHINES, "machine sections: " + all("section.machine").length);
    expect(countShown("tr.series-row") === SERIES, "series rows shown: " + countShown("tr.series-row"));
    expect(countShown("tr.series-row svg.spark path.spark-line") === SERIES, "sparklines");
    expect(all("#filters select").length === 4, "filters: " + all("#filters select").length);
    setFilter("machine", "1");
    expect(countShown("tr.series-row") === CPU_BOX, "machine filter: " + countShown("tr.series-row"));
    expect(!shown(document.getElementById("machine-2")), "machine filter leaves gpu-box shown");
    resetFilters();
    setFilter("precision", "fp32");
    expect(countShown("tr.series-row") === FP32, "precision filter: " + countShown("tr.series-row"));
    setFilter("family", "conv");
    expect(countShown("tr.series-row") === 1, "family filter: " + countShown("tr.series-row"));
    resetFilters();
    setFilter("model", HOSTILE_SQL);
    var rows = all("tr.series-row").filter(shown);
    expect(rows.length === 1 && text(rows[0]).indexOf(HOSTILE_TAG) >= 0, "model filter on the hostile model");
    expect(/#model=/.test(location.hash), "the filter is not kept in the address: " + location.hash);
    resetFilters();
    expect(countShown("tr.series-row") === SERIES, "after reset: " + countShown("tr.series-row"));
    var changes = all("table.changes tbody tr");
    expect(changes.length === 2, "open changes: " + changes.length);
    var first = text(changes[0]);
    expect(/regression/.test(first) && first.indexOf("oneDNN 2.6.3 -> 3.2 between these runs") >= 0 &&
           first.indexOf("onednn_version: 2.6.3 -> 3.2") >= 0 && first.indexOf("-10.0%") >= 0,
           "the regression and its cause are not first in the open changes: " + first);
    expect(text(document.body).indexOf("gpu-box " + HOSTILE_SQL) >= 0, "the hostile platform is not shown as text");
    expect(text(document.body).indexOf("last run failed: error: cudnn") >= 0, "the failed series' status");
  }

  function machines() {
    expect(all("section.side").length === 3, "side-by-side tables: " + all("section.side").length);
    expect(/fp32/.test(text(document.querySelector("section.side h2"))), "fp32 is not the first table");
    expect(all("#filters select").length === 3, "filters: " + all("#filters select").length);
    var fp32 = all("section.side").filter(function (s) { return /fp32/.test(text(s.querySelector("h2"))); })[0];
    expect(fp32 && all("thead th", fp32).length === 1 + MACHINES, "fp32 columns");
    expect(fp32 && all("tbody tr", fp32).length === 4, "fp32 rows");
    expect(fp32 && all("tbody tr", fp32).every(function (r) { return all("td", r).length === MACHINES; }), "cells per row");
    expect(countShown("table.side-by-side tbody tr") === 10, "rows: " + countShown("table.side-by-side tbody tr"));
    setFilter("machine", "1");
    expect(countShown("table.side-by-side tbody tr") === 6, "machine filter rows: " + countShown("table.side-by-side tbody tr"));
    expect(countShown('th[data-machine="2"]') === 0, "machine filter leaves the gpu-box column");
    resetFilters();
    setFilter("precision", "fp16");
    expect(countShown("table.side-by-side tbody tr") === 3, "precision filter rows");
    resetFilters();
  }

  function series() {
    var data = window.CNNBENCH_SERIES;
    expect(data && data.points.length === RUNS, "series data not loaded");
    var chart = document.querySelector("svg.chart");
    expect(chart && shown(chart), "no chart shown");
    if (data.id === 1) {
      expect(all("svg.chart circle.point").length === RUNS - 1, "points: " + all("svg.chart circle.point").length);
      expect(all("svg.chart path.spread").length >= RUNS - 5, "spread marks");
      expect(all("svg.chart path.band").length >= 1 && shown(document.querySelector("path.band")), "no band");
      expect(all("svg.chart g.change.regression").length === 1, "no change marker");
      expect(all("svg.chart g.annotation").length === 1, "no annotation marker");
      expect(all('svg.chart path.failed[data-index="' + FAILED_AT + '"]').length === 1, "the failed run is not marked");
      var line = document.querySelector("svg.chart path.value").getAttribute("d");
      expect((line.match(/M/g) || []).length === 2, "the value line is not broken at the failed run");
      expect(all("table.runs tbody tr").length === RUNS, "runs table");
      document.querySelector('svg.chart circle.point[data-index="40"]').dispatchEvent(new MouseEvent("click"));
      var readout = text(document.getElementById("readout"));
      expect(/Regression -10\.0%/.test(readout) && readout.indexOf("onednn_version: 2.6.3 -> 3.2") >= 0,
             "the readout of the first run after the change: " + readout);
      document.querySelector('svg.chart path.failed').dispatchEvent(new MouseEvent("click"));
      expect(/Status: OOM/.test(text(document.getElementById("readout"))), "the failed run's readout");
      expect(text(document.querySelector("#changes")).indexOf("oneDNN 2.6.3 -> 3.2 between these runs") >= 0, "the change's cause");
      expect(text(document.querySelector("#annotations")).indexOf("moved to rack B") >= 0, "the annotation");
    } else {
      expect(text(document.querySelector("h1")).indexOf(HOSTILE_SQL + "/fp32/" + HOSTILE_TAG) >= 0, "the hostile case name as text");
      expect(text(document.body).indexOf("data_dir=" + HOSTILE_TAG) >= 0, "the hostile settings as text");
    }
  }

  var page = document.body.getAttribute("data-page");
  if (page === "overview") overview();
  if (page === "machines") machines();
  if (page === "series") series();
  // On every page: the strings stayed text, nothing came from the network.
  expect(all("img").length === 0, "an <img> was made: " + all("img").length);
  expect(window.__alerts.length === 0, "alert called: " + window.__alerts.join(", "));
  all("script").forEach(function (s) {
    expect(s.src !== "" && s.textContent === "", "a script that is not the site's file: " + s.outerHTML.slice(0, 80));
  });
  performance.getEntriesByType("resource").forEach(function (r) {
    expect(/^file:/.test(r.name), "loaded from the network: " + r.name);
  });
  var verdict = document.createElement("pre");
  verdict.id = "dashboard-check";
  verdict.textContent = problems.length ? "FAIL " + page + "\n" + problems.join("\n") : "OK " + page;
  document.body.appendChild(verdict);
});
PROBE

# A copy of a page with the probe (keep_policy: with its
# Content-Security-Policy, or without it).
probe_copy() {
  local page="$1" copy="$2" keep_policy="$3" root=""
  [[ "$page" == series/* ]] && root="../"
  {
    if [[ "$keep_policy" == 1 ]]; then cat "$site/$page"; else grep -v 'http-equiv="Content-Security-Policy"' "$site/$page"; fi
  } | sed -e "s|<head>|<head>\n<script src=\"${root}probe_head.js\"></script>|" \
          -e "s|</body>|<script src=\"${root}probe_body.js\"></script>\n</body>|" > "$site/$copy"
}

flags=(--headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars
       --user-data-dir="$out/profile" --enable-logging=stderr --v=0
       --host-resolver-rules="MAP * ~NOTFOUND" --proxy-server="http://127.0.0.1:9")
status=0
: > "$out/chromium.log"
for page in index.html machines.html series/1.html series/14.html; do
  for keep_policy in 1 0; do
    copy="$(dirname "$page")/check_${keep_policy}_$(basename "$page")"
    copy="${copy#./}"
    probe_copy "$page" "$copy" "$keep_policy"
    dom="$out/dom_$(tr '/' '_' <<<"$copy")"
    timeout 180 "$chromium" "${flags[@]}" --dump-dom "file://$site/$copy" \
      > "$dom" 2>> "$out/chromium.log" || { log "chromium failed on $copy"; tail -20 "$out/chromium.log" >&2; exit 1; }
    verdict="$(sed -n '/<pre id="dashboard-check">/,/<\/pre>/p' "$dom" | sed 's/<[^>]*>//g')"
    if [[ "$verdict" == OK* ]]; then
      log "$copy: $verdict"
    else
      log "$copy: ${verdict:-no verdict (did the page load?)}"
      status=1
    fi
  done
done

# The probe must see a page that fails to escape: a copy of the overview
# with the hostile strings put in raw (and no policy) must fail it.
grep -v 'http-equiv="Content-Security-Policy"' "$site/index.html" \
  | sed -e 's|<head>|<head>\n<script src="probe_head.js"></script>|' \
        -e 's|<body data-page="overview">|&\n<p><script>alert(1)</script><img src=x onerror=alert(2)></p>|' \
        -e 's|</body>|<script src="probe_body.js"></script>\n</body>|' > "$site/check_canary.html"
timeout 180 "$chromium" "${flags[@]}" --dump-dom "file://$site/check_canary.html" \
  > "$out/dom_canary.html" 2> "$out/chromium_canary.log" || { log "chromium failed on the canary"; exit 1; }
canary="$(sed -n '/<pre id="dashboard-check">/,/<\/pre>/p' "$out/dom_canary.html" | sed 's/<[^>]*>//g')"
if [[ "$canary" == FAIL* && "$canary" == *"an &lt;img&gt; was made"* && "$canary" == *"alert called: 1, 2"* ]]; then
  log "the probe fails an unescaped page, as it should"
else
  log "the probe passed an unescaped page: ${canary:-no verdict}"
  status=1
fi

for shot in index.html:overview:1400,1440 series/1.html:series:1400,1500 machines.html:machines:1400,1100; do
  IFS=: read -r page name size <<<"$shot"
  timeout 180 "$chromium" "${flags[@]}" --window-size="$size" --screenshot="$out/$name.png" \
    "file://$site/$page" >> "$out/chromium.log" 2>&1 || { log "screenshot of $page failed"; status=1; }
  [[ -s "$out/$name.png" ]] || { log "no screenshot of $page"; status=1; }
done

# Messages the pages log to the console (none are expected).
if grep -E 'CONSOLE|Uncaught|Refused to' "$out/chromium.log" >&2; then
  log "a page logged to the console (above)"
  status=1
fi
if [[ $status == 0 ]]; then
  log "ok: $site/index.html; screenshots $out/{overview,series,machines}.png"
fi
exit $status
