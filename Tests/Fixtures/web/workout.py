#!/usr/bin/env python3
"""strapd-web's workout page in a real browser (Tests/StrapWebTests/BrowserTests.swift, docs/web.md).

    workout.py steer   URL SCREENSHOT STRAPCTL SOCKET STRAP_ADDRESS
    workout.py hostile URL SCREENSHOT NAME     every device name replaced by NAME in the
                                               browser (dashboard.py's RENAME); how the
                                               device list renders it

Opens the token URL, follows the dashboard's link to /workout, then, as a person on the
handlebar would: ticks the strap, starts a cycling workout, waits for a heart rate, taps lap,
pause, resume and end. Then it
starts a second session with the built strapctl (`workout start`, another program through
strapd's socket), waits for the page to show it without a reload (mirroring through /events)
and taps its lap button. Like dashboard.py it asserts nothing: it prints one JSON report (what
the page showed at each step, the sessions' ids) and the Swift test checks strapd's own record
of both sessions through StrapKit.
"""
import json
import re
import subprocess
import sys
import time

from dashboard import RENAME, WATCH, finish, report_from_browser, wait_for

POLL_SECONDS = 30

READ = """
const $ = (id) => document.getElementById(id);
return {session: $('session').hidden ? null : ($('session').dataset.session || null),
        state: $('session').dataset.state || null, title: $('title').textContent,
        elapsed: $('elapsed').textContent, hr: $('hr').textContent, laps: $('laps').textContent,
        pause: $('pause').textContent, message: $('message').textContent,
        live: $('state').textContent, devices: $('devices').querySelectorAll('input').length,
        buttonHeights: ['lap', 'pause', 'end'].map((b) => $(b).getBoundingClientRect().height)};
"""


def wait(driver, condition, what, log):
    """The page's state once condition(state) holds; else the last read, noted in log."""
    return wait_for(driver, READ, condition, what, log, POLL_SECONDS)


def click(driver, button):
    driver.execute_script("document.getElementById(arguments[0]).click()", button)


def run(driver, url, screenshot, strapctl, socket, strap):
    log = []
    report = {"log": log}
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})
    # In through the dashboard, as a person would: the token URL, then the dashboard's link.
    driver.get(url)
    deadline = time.monotonic() + POLL_SECONDS
    while not driver.execute_script("return document.getElementById('workout-link') !== null"):
        if time.monotonic() > deadline:
            raise TimeoutError("the dashboard has no link to the workout page")
        time.sleep(0.2)
    click(driver, "workout-link")
    while driver.execute_script("return document.getElementById('start') === null"):
        if time.monotonic() > deadline:
            raise TimeoutError("the dashboard's link did not open the workout page")
        time.sleep(0.2)
    report["url"] = driver.current_url
    wait(driver, lambda s: s["devices"] > 0 and s["live"] == "live", "the device list and /events", log)
    driver.execute_script("""
      document.getElementById('activity').value = 'cycling';
      document.getElementById('location').value = 'indoor';
      for (const i of document.querySelectorAll('#devices input')) i.checked = i.value === arguments[0];
    """, strap)
    click(driver, "start")
    started = wait(driver, lambda s: s["state"] == "running", "the started session", log)
    report["started"] = started
    report["withHeartRate"] = wait(driver, lambda s: s["hr"].isdigit() and s["elapsed"] != "0:00",
                                   "a heart rate and a running clock", log)
    click(driver, "lap")
    report["afterLap"] = wait(driver, lambda s: s["laps"] == "2", "lap 2", log)
    click(driver, "pause")
    report["afterPause"] = wait(driver, lambda s: s["state"] == "paused", "paused", log)
    click(driver, "pause")
    report["afterResume"] = wait(driver, lambda s: s["state"] == "running", "running again", log)
    click(driver, "end")
    report["afterEnd"] = wait(driver, lambda s: s["session"] is None and "saved" in s["message"], "the end", log)

    # A session from another program: the page is not reloaded, it learns of it from /events.
    out = subprocess.run([strapctl, "--socket", socket, "workout", "start", "--activity", "rowing",
                          "--location", "indoor", "--device", strap],
                         capture_output=True, text=True, timeout=30)
    report["strapctl"] = out.stdout + out.stderr
    found = re.search(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}", out.stdout)
    mirrored = found.group(0).upper() if found else None
    report["mirroredID"] = mirrored
    report["mirrored"] = wait(driver, lambda s: mirrored is not None and (s["session"] or "").upper() == mirrored,
                              "the session strapctl started", log)
    click(driver, "lap")
    report["mirroredAfterLap"] = wait(driver, lambda s: s["laps"] == "2" and s["elapsed"] not in ("0:00", "0:01"),
                                      "the mirrored session's lap 2 and its clock running", log)
    return finish(driver, report, screenshot)


def hostile(driver, url, screenshot, name):
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RENAME % json.dumps(name)})
    driver.get(url)
    read = """return Array.from(document.querySelectorAll('#devices label span'))
                   .map((s) => ({text: s.textContent, html: s.innerHTML}));"""
    deadline = time.monotonic() + POLL_SECONDS
    labels = driver.execute_script(read)
    while not (labels and all(l["text"].startswith(name) for l in labels)) and time.monotonic() < deadline:
        time.sleep(0.2)
        labels = driver.execute_script(read)
    time.sleep(1)
    return {"url": driver.current_url, "labels": labels, "screenshot": driver.save_screenshot(screenshot),
            "images": driver.execute_script("return document.querySelectorAll('img').length"),
            "elementsInLabels": driver.execute_script("return document.querySelectorAll('#devices label span *').length"),
            "alerts": driver.execute_script("return window.__alerts")}


def main():
    mode, url, screenshot, *rest = sys.argv[1:]
    if mode == "steer":
        report_from_browser("workout.py", screenshot, lambda driver: run(driver, url, screenshot, *rest))
    else:
        report_from_browser("workout.py", screenshot, lambda driver: hostile(driver, url, screenshot, rest[0]))


if __name__ == "__main__":
    main()
