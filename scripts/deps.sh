#!/usr/bin/env bash
# Installs the Debian packages one purpose needs: `build` (building and running strapd and
# strapctl; the default), `test` (build + what the test suite runs against), `bench` (build +
# the benchmark's peers), `deb` (build + Debian's packaging tools for `make deb`).
# Usage: scripts/deps.sh [build|test|bench|deb]...
# DEPS_CHECK_ONLY=1: install nothing; list what is missing and exit 1 (scripts/demo-open.sh
# runs `make demo`, whose deps step must not install from inside the test suite).
# Idempotent and non-interactive: packages already present are not touched, and apt's lists
# are refreshed only when something is missing. docs/dependencies.md says why each is here.
set -euo pipefail
BUILD=(
  pkg-config            # SwiftPM system-library targets
  libsystemd-dev        # sd-bus (BlueZ over D-Bus), sd-daemon (notify, socket activation), sd-journal
  libbluetooth-dev      # HCI connection info / LE Read RSSI for link quality
  zlib1g-dev            # crc32 for store record checksums
  libmosquitto-dev      # the MQTT publisher's client library (docs/mqtt.md)
  libmicrohttpd-dev     # strapd-web's HTTP server library (docs/web.md): no hand-written HTTP parser
)
TEST=(
  dbus                  # a private dbus-daemon for the BlueZ integration tests
  python3-dbus          # python-dbus for the mock BlueZ
  python3-dbusmock      # bluez5 template the mock BlueZ extends
  systemd               # busctl: the D-Bus codec tests compare our encoding with sd-bus's own CLI; systemd-socket-activate: strapd-web's passed-socket test
  # export tests (docs/export.md): scripts/pyvenv.sh builds .build/venv with the pinned readers
  python3-venv          # python3 -m venv for scripts/pyvenv.sh
  gpsbabel              # a third reader of the FIT and TCX exports (-i garmin_fit / -i gtrnctr)
  mosquitto             # the MQTT tests' brokers (started per test on loopback; bridged pairs)
  mosquitto-clients     # mosquitto_sub/mosquitto_pub: the tests' second consumer, the docs' recipes
  openssl               # the MQTT TLS tests' certificates (Tests/Fixtures/mqtt/make_certs.sh); strapd-web's TLS tests' certificate and client (s_client)
  prometheus            # promtool check metrics on strapd-web's /metrics, and the server the tests start to scrape it (docs/web.md)
  # strapd-web's browser tests (docs/web.md): a real browser runs the dashboard's script under its CSP;
  # Debian's builds, so selenium is given chromedriver's path and downloads no browser or driver
  chromium              # headless Chromium (--headless=new), the browser the tests drive
  chromium-driver       # /usr/bin/chromedriver, the WebDriver server selenium talks to (same version as chromium)
  xdg-utils             # xdg-open: scripts/demo-open.sh shows `make demo` opening its dashboard URL through the real one
)
BENCH=(
  libsqlite3-dev        # the benchmark's peer for the store (Benchmarks/ only)
  mosquitto             # the benchmark's peer for live latency: a broker strap-bench starts on loopback
  valgrind              # callgrind: instructions and allocations per notification (make bench-notification)
  bc                    # notification-cost.sh's division
)
DEB=(
  debhelper             # dh and its dh_install* helpers behind debian/rules (compat 13)
  dpkg-dev              # dpkg-buildpackage, dpkg-shlibdeps, dpkg-gencontrol
  lintian               # Debian's package checker: make deb and scripts/test.sh fail on its errors and warnings
)
[ $# -gt 0 ] || set -- build
PKGS=("${BUILD[@]}")
purposes=build
for purpose in "$@"; do
  case "$purpose" in
    build) ;;
    test) PKGS+=("${TEST[@]}"); purposes+=+test ;;
    bench) PKGS+=("${BENCH[@]}"); purposes+=+bench ;;
    deb) PKGS+=("${DEB[@]}"); purposes+=+deb ;;
    *) echo "usage: scripts/deps.sh [build|test|bench|deb]..." >&2; exit 2 ;;
  esac
done
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps ($purposes): all ${#PKGS[@]} packages present: ${PKGS[*]}"
  exit 0
fi
if [ -n "${DEPS_CHECK_ONLY:-}" ]; then
  echo "deps ($purposes): missing ${missing[*]}"
  exit 1
fi
echo "deps ($purposes): installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
# Debian enables prometheus.service and starts it (a server on :9090 scraping this machine)
# when it installs the package. The tests start their own on a free loopback port and never
# use it, so a prometheus this run installed is stopped and disabled; one that was installed
# before is left as its owner set it.
if [[ " ${missing[*]} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
  $SUDO systemctl disable --now prometheus.service || echo "deps: could not stop prometheus.service; it is not needed" >&2
fi
