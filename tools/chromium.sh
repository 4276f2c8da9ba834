# Sourced by the headless-Chromium checks (tools/check_report_html.sh,
# tools/check_dashboard_html.sh) after they define log(): sets $chromium to
# Debian's chromium, installing it through apt only when it is missing
# (exits 1 when it cannot be installed).
browser() { command -v chromium || command -v chromium-browser || true; }
if [[ -z "$(browser)" ]]; then
  sudo=""
  [[ "$(id -u)" != 0 ]] && sudo="sudo"
  log "installing chromium with apt (once)"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium \
    || { $sudo apt-get update -q && $sudo env DEBIAN_FRONTEND=noninteractive \
           apt-get install -y -q --no-install-recommends chromium; } \
    || { log "could not install chromium"; exit 1; }
fi
chromium="$(browser)"
