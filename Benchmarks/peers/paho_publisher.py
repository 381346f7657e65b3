#!/usr/bin/env python3
"""The MQTT benchmark's peer: what a user would script today to get strapd's samples onto MQTT.

Pages through the store with `samples.anchored` on strapd's unix socket (docs/protocol.md) and
publishes each sample with Eclipse Paho at QoS 1, in strapd's own topic layout and payload
(P/samples/<node>/<type>; tombstones on P/deleted), then waits for every PUBACK.

    paho_publisher.py (--socket PATH | --fake N) [--host H] [--port P] [--prefix P]
                      [--max-inflight N] [--page N]

Prints one JSON line: {"samples": N, "seconds": S, "rate": N/S}, timed from the first read
of the store to the last PUBACK (the MQTT connection is made before the clock starts).
--fake N skips the socket and publishes N generated heart-rate samples (tests the MQTT half).
Exit: 0 done; 1 strapd answered an error, the socket or the broker failed; 2 usage.
"""
import argparse
import json
import socket
import sys
import threading
import time

import paho.mqtt.client as mqtt

BACKLOG = 60000  # unacked messages at most; see throttle()
SAMPLE_KEYS = ("uuid", "anchor", "type", "value", "beats", "unit", "start", "end")


def payload(sample: dict) -> str:
    # The members of strapd's MQTT sample payload; the socket's extra device fields and
    # metadata are left out so that both sides publish the same bytes per sample.
    p = {k: sample[k] for k in SAMPLE_KEYS if k in sample}
    d = sample.get("device") or {}
    p["device"] = {"id": d.get("id"), "address": d.get("address"), "name": d.get("name")}
    return json.dumps(p, separators=(",", ":"))


def node(sample: dict) -> str:
    d = sample.get("device") or {}
    return (d.get("address") or d.get("id") or "unknown").replace(":", "").lower()


def socket_pages(path: str, page: int):
    """Yields (added, deleted) pages until the store has nothing past the anchor."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    rf = s.makefile("rb")
    anchor, rid = 0, 0
    while True:
        rid += 1
        req = {"id": rid, "op": "samples.anchored", "anchor": anchor, "limit": page}
        s.sendall(json.dumps(req).encode() + b"\n")
        line = rf.readline()
        if not line:
            raise OSError("strapd closed the connection")
        reply = json.loads(line)
        if not reply.get("ok"):
            raise RuntimeError(f"strapd: {reply.get('error')}")
        r = reply["result"]
        if not r["added"] and not r["deleted"]:
            return
        anchor = r["anchor"]
        yield r["added"], r["deleted"]


def fake_pages(n: int, page: int):
    dev = {"id": "C0:FF:EE:00:00:01", "address": "C0:FF:EE:00:00:01", "name": "Fake HR"}
    t0 = 1796000000.0
    for first in range(1, n + 1, page):
        added = []
        for a in range(first, min(first + page, n + 1)):
            ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t0 + a)) + ".000Z"
            added.append({"uuid": f"00000000-0000-4000-8000-{a:012X}", "anchor": a,
                          "type": "heartRate", "value": 60 + a % 60, "unit": "count/min",
                          "start": ts, "end": ts, "device": dev, "metadata": {}})
        yield added, []


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--socket", help="strapd's unix socket")
    src.add_argument("--fake", type=int, metavar="N", help="N generated samples, no socket")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=1883)
    ap.add_argument("--prefix", default=f"strapd/{socket.gethostname()}")
    ap.add_argument("--max-inflight", type=int, default=1000)
    ap.add_argument("--page", type=int, default=1000, help="samples.anchored limit (1...100000)")
    a = ap.parse_args()

    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="", clean_session=True)
    client.max_inflight_messages_set(a.max_inflight)
    client.max_queued_messages_set(0)  # unbounded: publish() never refuses, paho queues
    connected = threading.Event()
    lock = threading.Condition()
    acked = [0]

    def on_connect(_c, _ud, _flags, reason, _props):
        if not reason.is_failure:
            connected.set()

    def on_publish(_c, _ud, _mid, _reason, _props):
        with lock:
            acked[0] += 1
            lock.notify()

    client.on_connect = on_connect
    client.on_publish = on_publish
    try:
        client.connect(a.host, a.port, keepalive=30)
    except OSError as e:
        print(f"paho_publisher: broker {a.host}:{a.port}: {e}", file=sys.stderr)
        return 1
    client.loop_start()  # network thread: sends and reads PUBACKs while we read the store
    if not connected.wait(10):
        print("paho_publisher: no CONNACK", file=sys.stderr)
        return 1

    def throttle() -> None:
        # paho keeps every unacked message (in flight or queued) under a distinct 16-bit
        # message id and refuses the 65536th, so reading the store may only run this far ahead.
        with lock:
            while messages - acked[0] >= BACKLOG:
                if not lock.wait(30):
                    raise OSError("no PUBACK for 30 s")

    sent = messages = 0  # samples; all messages (samples and tombstone lists) to be acked
    start = time.monotonic()
    try:
        pages = fake_pages(a.fake, a.page) if a.fake is not None else socket_pages(a.socket, a.page)
        for added, deleted in pages:
            for s in added:
                if "device" not in s or s.get("type") == "workout":
                    continue  # workouts have their own retained state topic, not a sample topic
                throttle()
                info = client.publish(f"{a.prefix}/samples/{node(s)}/{s['type']}", payload(s), qos=1)
                if info.rc not in (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_NO_CONN):
                    raise OSError(f"publish: {mqtt.error_string(info.rc)}")
                sent += 1
                messages += 1
            if deleted:
                throttle()
                client.publish(f"{a.prefix}/deleted",
                               json.dumps({"deleted": deleted}, separators=(",", ":")), qos=1)
                messages += 1
    except (OSError, RuntimeError, ValueError, KeyError) as e:
        print(f"paho_publisher: {e}", file=sys.stderr)
        client.loop_stop()
        return 1
    with lock:
        while acked[0] < messages:
            if not lock.wait(30):
                print(f"paho_publisher: {messages - acked[0]} PUBACKs missing", file=sys.stderr)
                return 1
    seconds = time.monotonic() - start
    client.disconnect()
    client.loop_stop()
    print(json.dumps({"samples": sent, "seconds": round(seconds, 6),
                      "rate": round(sent / seconds, 1) if seconds > 0 else None}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
