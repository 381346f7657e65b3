#!/usr/bin/env python3
"""strapd-web's history page in a real browser (Tests/StrapWebTests/HistoryTests.swift, docs/web.md).

    history.py URL SCREENSHOT STRAPCTL SOCKET STRAP_ADDRESS DOWNLOAD_DIR

Records a short cycling workout on the simulated strap with the built strapctl (`workout
start`, then `workout end` a few seconds later), opens the token URL, follows the dashboard's
link to /history, picks that workout in the list, and reads what the page drew: the SVG
polyline's point count, the lap and zone rows. It asks the API (from the page, with its
session) how many heart-rate samples strapd stored for the workout, clicks the FIT link and
waits for the downloaded file. Like dashboard.py it asserts nothing: it prints one JSON report
and the Swift test holds it to strapd's own count and strapctl's export.
"""
import json
import os
import re
import subprocess
import sys
import time

from dashboard import WATCH, finish, report_from_browser, wait_for

POLL_SECONDS = 30
UUID = r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"

READ = """
const $ = (id) => document.getElementById(id);
const line = $('line');
return {detail: $('detail') ? ($('detail').hidden ? null : ($('detail').dataset.workout || null)) : null,
        points: line ? line.points.numberOfItems : 0,
        laps: $('laps') ? $('laps').tBodies[0].rows.length : 0,
        zones: $('zones') ? $('zones').tBodies[0].rows.length : 0,
        buttons: Array.from(document.querySelectorAll('#workouts button')).map((b) => b.dataset.workout),
        message: $('message') ? $('message').textContent : null,
        fit: $('fit') ? $('fit').getAttribute('href') : null};
"""


def wait(driver, condition, what, log):
    """The page's state once condition(state) holds; else the last read, noted in log."""
    return wait_for(driver, READ, condition, what, log, POLL_SECONDS)


def strapctl_run(strapctl, socket, *args):
    out = subprocess.run([strapctl, "--socket", socket, *args], capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise RuntimeError("strapctl " + " ".join(args) + ": " + out.stdout + out.stderr)
    return out.stdout


def run(driver, url, screenshot, strapctl, socket, strap, downloads):
    log = []
    report = {"log": log}
    started = strapctl_run(strapctl, socket, "workout", "start", "--activity", "cycling", "--location", "indoor",
                           "--device", strap)
    session = re.search(UUID, started).group(0)
    time.sleep(6)
    ended = strapctl_run(strapctl, socket, "workout", "end", session)
    # The store's samples are durable a sync interval after they arrive, longer on a loaded
    # machine (ASan, a benchmark beside it): a download before the last of them landed differs
    # from strapctl's export afterwards (seen once). So wait until strapctl exports the same
    # file twice, a second apart.
    saved = re.search(UUID, ended).group(0)
    settled, previous = time.monotonic() + POLL_SECONDS, None
    while time.monotonic() < settled:
        export = subprocess.run([strapctl, "--socket", socket, "workout", "export", saved, "--format", "fit", "-o", "-"],
                                capture_output=True, timeout=30).stdout
        if export and export == previous:
            break
        previous = export
        time.sleep(1)

    os.makedirs(downloads, exist_ok=True)
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})
    driver.get(url)
    deadline = time.monotonic() + POLL_SECONDS
    while not driver.execute_script("return document.getElementById('history-link') !== null"):
        if time.monotonic() > deadline:
            raise TimeoutError("the dashboard has no link to the history page")
        time.sleep(0.2)
    driver.execute_script("document.getElementById('history-link').click()")
    while driver.execute_script("return document.getElementById('workouts') === null"):
        if time.monotonic() > deadline:
            raise TimeoutError("the dashboard's link did not open the history page")
        time.sleep(0.2)
    report["url"] = driver.current_url

    # The saved workout's id, as the API gives it for the session strapctl ran.
    saved = driver.execute_async_script("""
      const done = arguments[arguments.length - 1];
      fetch('/api/workouts/' + arguments[0]).then((r) => r.json()).then((b) => done(b), (e) => done({error: String(e)}));
    """, session)
    uuid = (saved.get("workout") or {}).get("uuid")
    report["workout"] = uuid
    report["apiCount"] = (saved.get("heartRate") or {}).get("count")
    if uuid is None:
        log.append("the API has no saved workout for session " + session + ": " + json.dumps(saved)[:400])
        return report

    wait(driver, lambda s: uuid in s["buttons"], "the workout in the list", log)
    driver.execute_script("""
      for (const b of document.querySelectorAll('#workouts button')) if (b.dataset.workout === arguments[0]) b.click();
    """, uuid)
    shown = wait(driver, lambda s: s["detail"] == uuid and s["points"] > 0 and s["zones"] > 0, "the chosen workout", log)
    report.update(points=shown["points"], laps=shown["laps"], zones=shown["zones"])

    driver.execute_script("document.getElementById('fit').click()")
    deadline = time.monotonic() + POLL_SECONDS
    files = []
    while time.monotonic() < deadline:
        files = [f for f in os.listdir(downloads) if not f.endswith(".crdownload")]
        if files:
            break
        time.sleep(0.2)
    if files:
        report["downloadName"] = files[0]
        report["download"] = os.path.join(downloads, files[0])
    else:
        log.append("no FIT file downloaded: " + json.dumps(os.listdir(downloads)))
    return finish(driver, report, screenshot)


def main():
    url, screenshot, *rest = sys.argv[1:]
    report_from_browser("history.py", screenshot, lambda driver: run(driver, url, screenshot, *rest))


if __name__ == "__main__":
    main()
