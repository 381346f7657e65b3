#!/usr/bin/env bash
# `make demo` opening the dashboard URL it prints (issue 34), shown with real tools: the real
# xdg-open (xdg-utils) under a DISPLAY, whose generic path runs $BROWSER, here
# Tests/Fixtures/web/opened.py, which writes down the URL it was given and loads it in headless
# Chromium through selenium. `make demo` runs as a user would run it, in a session of its own,
# with its throwaway state under a private TMPDIR and HOME; once the browser is done the whole
# session gets SIGTERM (what `kill` sends) and must leave nothing behind.
#
# Why each part of the environment (read /usr/bin/xdg-open):
#   DISPLAY=:0         demo.sh calls xdg-open only with a display, and xdg-open's generic path
#                      asks has_display() too. Nothing listens there: headless Chromium needs no X.
#   XDG_* empty dirs   with the system's, `xdg-mime query default x-scheme-handler/http` answers
#                      chromium.desktop (Debian's chromium registers it), which xdg-open runs
#                      ahead of $BROWSER, as root without --no-sandbox, and it fails; no handler
#                      found, it falls through to $BROWSER.
#   desktop variables  unset, so detectDE finds no desktop and xdg-open takes the generic path.
# `make demo` runs `deps` first: scripts/deps.sh only asks dpkg-query when the build's
# packages are there, and they are (the suite's own build needed every one of them). It is
# checked first with DEPS_CHECK_ONLY=1: when one is missing this stage fails rather than let
# `make demo` install anything.
#
# Needs the debug build and .build/web-venv (scripts/test.sh makes both before it). Prints
# `demo-open CHECK: ok|FAILED` per check and `demo-open: N passed, N failed`; exits non-zero
# when one failed.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$PWD
venv=$top/.build/web-venv
work=$(mktemp -d /tmp/strapd-demoopen.XXXXXX)
mkdir -p "$work/tmp" "$work/home" "$work/xdg/data" "$work/xdg/config" "$work/opened"
out=$work/demo.out
pgid=
stop_demo() {   # SIGTERM to the demo's whole session; true when it is gone within 30 s
  [ -n "$pgid" ] || return 0
  kill -TERM -- "-$pgid" 2>/dev/null
  for _ in $(seq 300); do kill -0 -- "-$pgid" 2>/dev/null || { pgid=; return 0; }; sleep 0.1; done
  kill -KILL -- "-$pgid" 2>/dev/null
  pgid=
  return 1
}
cleanup() { stop_demo; rm -rf "$work"; }
trap cleanup EXIT
passed=0 failed=0
check() {   # NAME OK(0|1) DETAIL
  if [ "$2" -eq 1 ]; then echo "demo-open $1: ok"; passed=$((passed + 1))
  else echo "demo-open $1: FAILED${3:+ ($3)}"; failed=$((failed + 1)); fi
}
missing=()
for p in "$venv/bin/python" /usr/bin/xdg-open /usr/bin/chromium /usr/bin/chromedriver; do [ -x "$p" ] || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "demo-open: missing ${missing[*]} (scripts/deps.sh test; scripts/pyvenv.sh .build/web-venv Tests/Fixtures/web/requirements.txt)"
  echo "demo-open: 0 passed, 1 failed"
  exit 1
fi

if ! DEPS_CHECK_ONLY=1 scripts/deps.sh build; then
  echo "demo-open: 0 passed, 1 failed (make demo's deps would install; run scripts/deps.sh)"
  exit 1
fi

# setsid: the demo leads a process group of its own (make, demo.sh, strapd, strapd-web,
# strapctl live), so one signal reaches all of it, as a terminal's signals reach its
# foreground job.
# DEMO_SECONDS: long enough that the demo is still in its live view when it is ended.
env -u WAYLAND_DISPLAY -u XDG_CURRENT_DESKTOP -u DESKTOP_SESSION -u KDE_FULL_SESSION \
    -u GNOME_DESKTOP_SESSION_ID -u MATE_DESKTOP_SESSION_ID -u LXQT_SESSION_CONFIG -u DESKTOP \
    -u DBUS_SESSION_BUS_ADDRESS -u XDG_RUNTIME_DIR -u MAKEFLAGS -u MFLAGS \
    DISPLAY=:0 BROWSER="$top/Tests/Fixtures/web/opened.py" PATH="$venv/bin:$PATH" \
    STRAPD_OPENED_DIR="$work/opened" TMPDIR="$work/tmp" HOME="$work/home" \
    XDG_DATA_HOME="$work/xdg/data" XDG_DATA_DIRS="$work/xdg/data" \
    XDG_CONFIG_HOME="$work/xdg/config" XDG_CONFIG_DIRS="$work/xdg/config" \
    DEMO_SECONDS=600 setsid make --no-print-directory demo > "$out" 2>&1 < /dev/null &
pgid=$!

# demo.sh prints the URL, calls xdg-open, which returns once the browser script has; then it
# starts watching. That line, or the demo's end, or 5 minutes (its swift build may have work).
for _ in $(seq 3000); do
  grep -q '^== strapd --simulate' "$out" && break
  kill -0 "$pgid" 2>/dev/null || break
  sleep 0.1
done
printed=$(grep -A1 '^== strapd-web: the live dashboard' "$out" | sed -n '2s/^ *//p')
given=$(cat "$work/opened/url" 2>/dev/null)
report=$("$venv/bin/python" - "$work/opened/report.json" <<'EOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print("none", "", "", "", "", "", 0, 0, 0, e, "", sep="\n")
    sys.exit(0)
# The favicon a browser asks for by itself is a 404: strapd-web serves none.
errors = [e for e in r.get("consoleErrors") or [] if "/favicon.ico" not in e]
print("read", r.get("finalURL"), r.get("title"), r.get("heading"), r.get("state"),
      ",".join(r.get("tiles") or []), len(r.get("violations") or []), len(r.get("alerts") or []),
      len(errors), " | ".join(errors)[:300].replace("\n", " "), ",".join(r.get("heartRates") or []), sep="\n")
EOF
)
{ read -r status; read -r final; read -r title; read -r heading; read -r state; read -r tiles
  read -r violations; read -r alerts; read -r errors; read -r error_text; read -r heart_rates; } <<< "$report"
demo_dir=$(grep -oE "state in [^)]+" "$out" | head -1 | cut -c10-)

[[ "$printed" =~ ^http://127\.0\.0\.1:[0-9]+/\?token=[0-9a-f]{64}$ ]] && ok=1 || ok=0
check "prints the token URL" $ok "printed: '$printed'"
[ -n "$given" ] && [ "$given" = "$printed" ] && ok=1 || ok=0
check "xdg-open hands the browser the printed URL" $ok "given: '$given'"
[ "$status" = read ] && ok=1 || ok=0
check "the browser loaded it" $ok "$(cat "$work/opened/opened.log" 2>/dev/null | tail -5)"
port=$(sed -nE 's|^http://127\.0\.0\.1:([0-9]+)/.*|\1|p' <<< "$printed")
[ -n "$port" ] && [ "$final" = "http://127.0.0.1:$port/" ] && ok=1 || ok=0
check "the token URL redirected to the dashboard without the token" $ok "ended on '$final'"
dom=$work/opened/dom.html
[ "$title" = strapd ] && [ "$heading" = strapd ] && grep -q '<main id="tiles">' "$dom" 2>/dev/null \
  && ! grep -q 'a token is needed' "$dom" && ok=1 || ok=0
check "the DOM is the dashboard, not the token refusal" $ok "title '$title', heading '$heading'"
[ "$state" = live ] && [[ ",$tiles," == *",Sim HR 0,"* ]] && ok=1 || ok=0
check "the dashboard went live with the simulated sensors' tiles" $ok "state '$state', tiles '$tiles'"
[ "$violations" = 0 ] && [ "$alerts" = 0 ] && [ "$errors" = 0 ] && ok=1 || ok=0
[[ "$heart_rates" =~ ^[0-9]+(,[0-9]+)*$ ]] && ok=1 || ok=0
check "a heart rate came through the page's live stream" $ok "heart rates shown: '$heart_rates'"
check "no CSP violation, alert or console error" $ok "$violations violations, $alerts alerts, $errors console errors: $error_text"
[[ "$demo_dir" == "$work/tmp/strapd-demo."* ]] && [ -d "$demo_dir" ] && ok=1 || ok=0
check "the demo's state is under the private TMPDIR" $ok "state in '$demo_dir'"
grep -q '^== strapd --simulate' "$out" && kill -0 "$pgid" 2>/dev/null && ok=1 || ok=0
check "the demo is still running its live view" $ok "$(tail -5 "$out")"
stop_demo && ok=1 || ok=0
check "SIGTERM ends the demo's whole session" $ok
[ -n "$demo_dir" ] && [ ! -e "$demo_dir" ] && ok=1 || ok=0
check "the demo removed its state directory" $ok "$demo_dir"

# Kept beside the browser tests' screenshots (CI keeps .build/artifacts/web/).
[ -f "$work/opened/opened.png" ] && mkdir -p .build/artifacts/web && cp "$work/opened/opened.png" .build/artifacts/web/demo-opened.png
if [ $failed -gt 0 ]; then
  echo "  --- what make demo printed"
  sed 's/^/  /' "$out" | head -n 60
fi
echo "demo-open: $passed passed, $failed failed"
[ $failed -eq 0 ]
