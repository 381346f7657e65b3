#!/usr/bin/env python3
"""MQTT consumer for strapd's MQTT tests: records every message it receives as a JSON line.

An independent client (Eclipse Paho, not strapd's own code) so that the tests check what a
real subscriber sees: topics, retain flags, QoS and payloads.

    consume.py (--host H --port P | --unix PATH) [--topic T]... [--qos Q] --out FILE
               [--ready FILE] [--client-id ID] [--session] [--cafile CA [--cert C --key K]]
               [--username U --password P] [--seconds N]

--out FILE gets one line per message, flushed at once:
    {"topic": "...", "retain": false, "qos": 1, "payload": "<UTF-8 text>"}
--ready FILE is (re)written, atomically, each time the subscriptions are in place (SUBACK, or
a reconnect whose persistent session kept them): {"connects": N, "session_present": bool}.
A test waits for it before making strapd publish.
--session keeps a persistent session (clean_session false, fixed client id, default
"strapd-test-consumer"), so QoS 1 messages published while this client is away are queued by
the broker and delivered on reconnect.

The client reconnects by itself whenever the broker goes away and keeps appending.
Exit: 0 after SIGTERM/SIGINT or --seconds; 2 bad arguments or subscription refused;
3 connection refused for credentials/authorisation (retrying would never succeed).
"""
import argparse
import json
import os
import signal
import sys
import threading

import paho.mqtt.client as mqtt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=1883)
    ap.add_argument("--unix", metavar="PATH", help="broker's unix socket (instead of TCP)")
    ap.add_argument("--topic", action="append", help="filter to subscribe (repeatable; default #)")
    ap.add_argument("--qos", type=int, default=1, choices=(0, 1, 2))
    ap.add_argument("--out", required=True)
    ap.add_argument("--ready")
    ap.add_argument("--client-id")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--clean", action="store_true", help="clean session (the default)")
    mode.add_argument("--session", action="store_true", help="persistent session")
    ap.add_argument("--cafile", help="enable TLS, trusting this CA")
    ap.add_argument("--cert", help="client certificate (TLS)")
    ap.add_argument("--key", help="client key (TLS)")
    ap.add_argument("--username")
    ap.add_argument("--password")
    ap.add_argument("--seconds", type=float, help="stop after this long")
    a = ap.parse_args()
    topics = a.topic or ["#"]

    client_id = a.client_id or ("strapd-test-consumer" if a.session else "")
    client = mqtt.Client(
        mqtt.CallbackAPIVersion.VERSION2,
        client_id=client_id,
        clean_session=not a.session,
        transport="unix" if a.unix else "tcp",
    )
    if a.cafile:
        client.tls_set(ca_certs=a.cafile, certfile=a.cert, keyfile=a.key)
    if a.username is not None:
        client.username_pw_set(a.username, a.password)
    # Short delays: a test restarting the broker wants the consumer back within a second.
    client.reconnect_delay_set(min_delay=1, max_delay=2)

    out = open(a.out, "a", encoding="utf-8")
    state = {"connects": 0, "exit": 0}
    pending_mids = set()

    def mark_ready(session_present: bool) -> None:
        if not a.ready:
            return
        tmp = a.ready + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"connects": state["connects"], "session_present": session_present}, f)
        os.replace(tmp, a.ready)  # the test never reads a half-written file

    def stop(code: int) -> None:
        state["exit"] = max(state["exit"], code)
        client.disconnect()

    def on_connect(c, _ud, flags, reason, _props):
        if reason.is_failure:
            # 4 = bad user name or password, 5 = not authorised (MQTT 3.1.1 CONNACK codes).
            if reason.value in (4, 5, 0x86, 0x87):
                print(f"consume: connection refused: {reason}", file=sys.stderr)
                stop(3)
            return
        state["connects"] += 1
        state["failing"] = False
        if flags.session_present:
            # The broker kept the subscriptions; subscribing again would replay retained messages.
            mark_ready(True)
            return
        result, mid = c.subscribe([(t, a.qos) for t in topics])
        if result == mqtt.MQTT_ERR_SUCCESS:
            pending_mids.add(mid)

    def on_subscribe(_c, _ud, mid, reasons, _props):
        pending_mids.discard(mid)
        bad = [r for r in reasons if r.is_failure]
        if bad:
            print(f"consume: subscription refused: {bad}", file=sys.stderr)
            stop(2)
            return
        mark_ready(False)

    def on_message(_c, _ud, msg):
        line = {
            "topic": msg.topic,
            "retain": bool(msg.retain),
            "qos": msg.qos,
            "payload": msg.payload.decode("utf-8", errors="replace"),
        }
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
        out.flush()

    def on_connect_fail(_c, _ud):
        # Once per outage, so that a test's log shows why nothing arrives (e.g. a TLS refusal).
        if not state.get("failing"):
            print("consume: cannot connect, retrying", file=sys.stderr)
        state["failing"] = True

    client.on_connect_fail = on_connect_fail
    client.on_connect = on_connect
    client.on_subscribe = on_subscribe
    client.on_message = on_message

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop(0))
    if a.seconds is not None:
        timer = threading.Timer(a.seconds, stop, args=(0,))
        timer.daemon = True
        timer.start()

    try:
        if a.unix:
            client.connect_async(a.unix, 1, keepalive=10)  # the path as host; port unused but must be > 0
        else:
            client.connect_async(a.host, a.port, keepalive=10)
        # retry_first_connection: the broker may not be up yet, or may restart later;
        # loop_forever reconnects after every loss until disconnect() is called.
        client.loop_forever(retry_first_connection=True)
    finally:
        out.flush()
        out.close()
    return state["exit"]


if __name__ == "__main__":
    sys.exit(main())
