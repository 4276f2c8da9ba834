#!/usr/bin/env bash
# Opens //tools:report's HTML page in headless Chromium and checks that it
# loads without errors and shows every table and every chart; saves a
# screenshot. Installs Debian's chromium through apt only when it is missing.
#   tools/check_report_html.sh [OUT_DIR]     (default: a temporary directory)
# CI runs it (.ci/run); exits non-zero on any problem.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { printf 'check_report_html: %s\n' "$*" >&2; }

out="${1:-$(mktemp -d /tmp/cnnbench_report_html.XXXXXX)}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

source tools/chromium.sh  # sets $chromium

# The page: two platforms plus the DGX-1 fixture and a comparison, so every
# kind of table and chart appears.
./bazelw build //tools:report
d=tests/tools/testdata
bazel-bin/tools/report --format=html --output="$out/report.html" \
  --compare="$d/gpu_box_base.json" \
  "$d/dgx1.json" "$d/gpu_box.json" "$d/cpu_box.json" "$d/cpu_box_more.json"

# A copy with a probe: errors are collected from the start of <head>; at the
# end of <body> every table and chart is measured and the verdict written
# into the DOM, which --dump-dom prints.
cat > "$out/probe_head.html" <<'PROBE'
<script>
window.__problems = [];
window.addEventListener("error", function (e) {
  window.__problems.push("error: " + (e.message || (e.target && e.target.outerHTML)));
}, true);
</script>
PROBE
cat > "$out/probe_body.html" <<'PROBE'
<script>
(function () {
  var problems = window.__problems;
  function meta(name) {
    var m = document.querySelector('meta[name="' + name + '"]');
    return m ? parseInt(m.content, 10) : -1;
  }
  function shown(e) {
    var r = e.getBoundingClientRect(), s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.display !== "none" && s.visibility !== "hidden";
  }
  var tables = document.querySelectorAll("table");
  var charts = document.querySelectorAll("figure > svg");
  if (tables.length !== meta("cnnbench-tables") || tables.length === 0) {
    problems.push("tables: " + tables.length + " of " + meta("cnnbench-tables"));
  }
  if (charts.length !== meta("cnnbench-charts")) {
    problems.push("charts: " + charts.length + " of " + meta("cnnbench-charts"));
  }
  tables.forEach(function (t) {
    if (!shown(t) || t.rows.length < 2) problems.push("table not shown: " + t.id);
  });
  charts.forEach(function (svg) {
    var marks = svg.querySelectorAll("path, rect, polyline, use").length;
    if (!shown(svg) || marks < 5) problems.push("chart not drawn: " + svg.parentNode.id);
  });
  var verdict = document.createElement("pre");
  verdict.id = "report-check";
  verdict.textContent = problems.length ? "FAIL\n" + problems.join("\n")
                                        : "OK tables=" + tables.length + " charts=" + charts.length;
  document.body.appendChild(verdict);
})();
</script>
PROBE
{
  sed -n '1,/<head>/p' "$out/report.html"
  cat "$out/probe_head.html"
  sed '1,/<head>/d; /<\/body>/,$d' "$out/report.html"
  cat "$out/probe_body.html"
  printf '</body>\n</html>\n'
} > "$out/check.html"

flags=(--headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars
       --user-data-dir="$out/profile" --enable-logging=stderr --v=0)
timeout 180 "$chromium" "${flags[@]}" --dump-dom "file://$out/check.html" \
  > "$out/dom.html" 2> "$out/chromium.log" || { log "chromium failed:"; tail -20 "$out/chromium.log" >&2; exit 1; }
timeout 180 "$chromium" "${flags[@]}" --window-size=1280,6000 --screenshot="$out/report.png" \
  "file://$out/report.html" >> "$out/chromium.log" 2>&1 || { log "screenshot failed"; exit 1; }

status=0
verdict="$(sed -n '/<pre id="report-check">/,/<\/pre>/p' "$out/dom.html")"
if [[ "$verdict" == *'<pre id="report-check">OK '* ]]; then
  log "$(sed 's/<[^>]*>//g' <<<"$verdict")"
else
  log "the page does not show everything: ${verdict:-no verdict (did the page load?)}"
  status=1
fi
# Messages the page itself logs to the console (none are expected).
if grep -E 'CONSOLE|Uncaught' "$out/chromium.log" >&2; then
  log "the page logged to the console (above)"
  status=1
fi
[[ -s "$out/report.png" ]] || { log "no screenshot"; status=1; }
if [[ $status == 0 ]]; then
  log "ok: $out/report.html; screenshot $out/report.png"
fi
exit $status
