#!/usr/bin/env bash
# strapd publishing to MQTT (docs/mqtt.md), watched with mosquitto_sub -v: a throwaway
# mosquitto on a free loopback port, strapd on simulated sensors with [mqtt] pointing at it,
# a short workout through strapctl, then a late subscriber that sees only what is retained
# (availability, device and workout state, Home Assistant discovery). No root, no hardware.
#   MQTT_DEMO_SECONDS=8 (how long before the workout)   MQTT_DEMO_SENSORS=2
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${MQTT_DEMO_SECONDS:-8}
SENSORS=${MQTT_DEMO_SENSORS:-2}
for tool in mosquitto mosquitto_sub; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || { echo "$tool is missing: scripts/deps.sh test installs it"; exit 1; }
done
swift build --product strapd >/dev/null
swift build --product strapctl >/dev/null
BIN=.build/debug
DIR=$(mktemp -d /tmp/strapd-mqtt-demo.XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cleanup() {
  for p in ${SUB:-} ${PID:-} ${BROKER:-}; do kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  rm -rf "$DIR"
}
trap cleanup EXIT
{ echo "listener $PORT 127.0.0.1"; echo "allow_anonymous true"; echo "persistence false"
  [ "$(id -u)" -eq 0 ] && echo "user root"; } > "$DIR/mosquitto.conf"
"$(command -v mosquitto || echo /usr/sbin/mosquitto)" -c "$DIR/mosquitto.conf" 2> "$DIR/broker.log" &
BROKER=$!
sleep 0.3
mosquitto_sub -h 127.0.0.1 -p "$PORT" -v -t 'strapd/#' -t 'homeassistant/#' > "$DIR/sub.txt" &
SUB=$!
SOCK=$DIR/strapd.sock
"$BIN/strapd" --simulate="$SENSORS" --state-dir "$DIR/state" --socket "$SOCK" --set daemon.socket_group= \
  --set mqtt.host=127.0.0.1 --set mqtt.port="$PORT" --set mqtt.topic_prefix=strapd/demo --log-level notice 2> "$DIR/strapd.log" &
PID=$!
for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
export STRAPD_SOCKET=$SOCK
sleep "$SECS"
HRM=5E:1A:00:00:48:00
"$BIN/strapctl" workout start --activity cycling --location indoor --device "$HRM" >/dev/null
sleep 2.5
"$BIN/strapctl" status | sed -n '/mqtt/p'
"$BIN/strapctl" workout end >/dev/null
sleep 2
echo "== mosquitto_sub -v -t 'strapd/#' -t 'homeassistant/#' (payloads cut at 160 characters)"
cut -c1-220 "$DIR/sub.txt" | awk '{ t=$1; $1=""; p=substr($0,2); if (length(p) > 160) p=substr(p,1,160) "…"; print t " " p }'
echo
echo "== a subscriber connecting now gets only the retained topics:"
timeout 2 mosquitto_sub -h 127.0.0.1 -p "$PORT" -v --retained-only -t 'strapd/#' -t 'homeassistant/#' \
  | awk '{ t=$1; $1=""; p=substr($0,2); if (length(p) > 100) p=substr(p,1,100) "…"; print t " " p }' | sort || true
echo
echo "== strapd log"
cat "$DIR/strapd.log"
