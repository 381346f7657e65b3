#!/usr/bin/env python3
"""strapd-web's dashboard in a real browser (Tests/StrapWebTests/BrowserTests.swift, docs/web.md).

Drives Debian's headless Chromium through Debian's chromedriver with selenium, opens the token
URL strapd-web wrote, and prints one JSON report on stdout for the Swift test to judge: the
Swift side knows what strapd stored (samples.query through StrapKit), this script knows only
what the page shows. It asserts nothing itself, so a failure is reported by the test with
strapd's own numbers beside the page's.

    dashboard.py live    URL SCREENSHOT HR_NAME...  tiles, heart rates, CSP, a screenshot (PNG)
    dashboard.py hostile URL SCREENSHOT NAME        every device name replaced by NAME in the
                                                    browser; how the page renders it
    dashboard.py relayed URL SCREENSHOT NAME        the same for a device strapd itself calls
                                                    NAME (a replayed capture), nothing replaced
    dashboard.py figures URL SCREENSHOT NAME=KEYS... each tile's figures (zone, RR, RMSSD,
                                                    speed, cadence, pace) once tile NAME shows
                                                    every row in KEYS (comma-separated; "zone":
                                                    a zone class on its heart rate)

The driver's path is given (Service(executable_path=...)), so Selenium Manager never runs and
nothing is downloaded. --no-sandbox because the tests run as root, where Chromium's sandbox
refuses to start.
"""
import json
import os
import signal
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# Generous: on CI the rest of the suite runs beside this on two cores.
POLL_SECONDS = 30

# Runs before the page's own script in every document (CDP: not subject to the page's CSP, as
# an extension's script is not). It only watches: CSP violations and alert() calls are kept
# for the report; the page's code is untouched.
WATCH = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__cspViolations.push({directive: e.effectiveDirective, blocked: e.blockedURI, sample: e.sample});
});
window.__alerts = [];
window.alert = (m) => { window.__alerts.push(String(m)); };
"""

# The hostile name stand-in: neither --simulate nor --replay lets a test name a device in
# devices.list, so the name is put in where the page receives it (its fetch of /api/devices
# and its EventSource's sample and device events), before app.js sees the data. What is
# tested is how app.js renders a name, not how the name travels through strapd.
RENAME = """
const hostile = %s;
const rename = (d) => { if (d && typeof d === 'object' && 'name' in d) d.name = hostile; };
const realFetch = window.fetch.bind(window);
window.fetch = async (input, init) => {
  const r = await realFetch(input, init);
  if (!String(input).startsWith('/api/devices')) return r;
  const body = await r.json();
  for (const d of body.devices || []) rename(d);
  return new Response(JSON.stringify(body), {status: r.status, headers: r.headers});
};
const realAdd = EventSource.prototype.addEventListener;
EventSource.prototype.addEventListener = function (type, listener, options) {
  if (type !== 'sample' && type !== 'device') return realAdd.call(this, type, listener, options);
  return realAdd.call(this, type, (e) => {
    const data = JSON.parse(e.data);
    rename(data.device);
    rename(data);
    listener.call(this, new MessageEvent(type, {data: JSON.stringify(data)}));
  }, options);
};
"""

# What the page shows: every tile's name and heart-rate text, as the user sees them.
READ_TILES = """
return Array.from(document.querySelectorAll('#tiles .tile')).map((t) => ({
  name: t.querySelector('.name').textContent,
  nameHTML: t.querySelector('.name').innerHTML,
  hr: t.querySelector('.hr').textContent,
  meta: t.querySelector('.meta').textContent,
}));
"""

# Each tile's figures as shown: the heart rate's zone class and label, and every figure row
# with whether it is shown, its value and its unit.
READ_FIGURES = """
return Array.from(document.querySelectorAll('#tiles .tile')).map((t) => {
  const figures = {};
  for (const row of t.querySelectorAll('.figure')) {
    figures[row.dataset.figure] = {shown: !row.hidden, value: row.querySelector('.value').textContent,
                                   unit: row.querySelector('.unit').textContent.trim()};
  }
  return {name: t.querySelector('.name').textContent, hr: t.querySelector('.hr').textContent,
          readingClass: t.querySelector('.reading').className, zone: t.querySelector('.zone').textContent,
          figures};
});
"""


def browser(profile):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1000,700", "--user-data-dir=" + profile, "--no-first-run",
                "--disable-background-networking", "--disable-component-update"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=CHROMEDRIVER, log_output=os.path.join(profile, "chromedriver.log"))
    return webdriver.Chrome(options=options, service=service)


def poll(driver, condition):
    """The tiles once condition(tiles) holds, or the last read after POLL_SECONDS."""
    deadline = time.monotonic() + POLL_SECONDS
    while True:
        tiles = driver.execute_script(READ_TILES)
        if condition(tiles) or time.monotonic() > deadline:
            return tiles
        time.sleep(0.2)


def console_errors(driver):
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def live(driver, url, screenshot, names):
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})
    driver.get(url)
    wanted = set(names)

    def every_strap_has_a_number(tiles):
        shown = {t["name"]: t["hr"] for t in tiles}
        return all(shown.get(n, "").isdigit() for n in wanted)

    tiles = poll(driver, every_strap_has_a_number)
    report = {"url": driver.current_url, "title": driver.title,
              "state": driver.execute_script("return document.getElementById('state').textContent"),
              "tiles": tiles}
    # A second look a few seconds on: both reads are checked against strapd's store.
    time.sleep(3)
    report["tilesLater"] = driver.execute_script(READ_TILES)
    report["violationsBefore"] = driver.execute_script("return window.__cspViolations")
    report["consoleErrorsBefore"] = console_errors(driver)
    report["screenshot"] = driver.save_screenshot(screenshot)
    # An inline script and an inline handler, added the way an injection would add them: the
    # CSP the server sent must stop both, and the browser must say so.
    driver.execute_script("""
      const s = document.createElement('script');
      s.textContent = 'window.__inlineRan = true;';
      document.body.append(s);
      const i = document.createElement('img');
      i.setAttribute('src', '/no-such-image');
      i.setAttribute('onerror', 'window.__handlerRan = true;');
      document.body.append(i);
    """)
    time.sleep(1)
    report["inlineRan"] = driver.execute_script("return window.__inlineRan === true")
    report["handlerRan"] = driver.execute_script("return window.__handlerRan === true")
    report["violationsAfter"] = driver.execute_script("return window.__cspViolations")
    return report


def hostile(driver, url, screenshot, name, rename):
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})
    if rename:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RENAME % json.dumps(name)})
    driver.get(url)
    # Every tile renamed, and a heart rate arrived through the renamed live stream too.
    tiles = poll(driver, lambda ts: ts and all(t["name"] == name for t in ts) and any(t["hr"].isdigit() for t in ts))
    time.sleep(1)
    return {"tiles": tiles, "screenshot": driver.save_screenshot(screenshot),
            "images": driver.execute_script("return document.querySelectorAll('img').length"),
            "elementsInNames": driver.execute_script("return document.querySelectorAll('#tiles .name *').length"),
            "alerts": driver.execute_script("return window.__alerts"),
            "violations": driver.execute_script("return window.__cspViolations"),
            "consoleErrors": console_errors(driver)}


def figures(driver, url, screenshot, wanted):
    """Waits until each named tile shows its wanted rows, then reads every tile's figures."""
    driver.get(url)
    needs = {}
    for item in wanted:
        name, keys = item.rsplit("=", 1)
        needs[name] = keys.split(",")

    def has(tile, key):
        if key == "zone":
            return any(c.startswith("z") and c[1:].isdigit() for c in tile["readingClass"].split())
        return tile["figures"].get(key, {}).get("shown", False)

    deadline = time.monotonic() + POLL_SECONDS
    while True:
        tiles = driver.execute_script(READ_FIGURES)
        by_name = {t["name"]: t for t in tiles}
        done = all(n in by_name and all(has(by_name[n], k) for k in keys) for n, keys in needs.items())
        if done or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    return {"tiles": tiles, "screenshot": driver.save_screenshot(screenshot), "consoleErrors": console_errors(driver)}


def finish(driver, report, screenshot):
    """The report's closing members every page script gives: the screenshot, the CSP violations
    and alerts the watch recorded (WATCH), and the console's errors."""
    report["screenshot"] = driver.save_screenshot(screenshot)
    report["violations"] = driver.execute_script("return window.__cspViolations")
    report["alerts"] = driver.execute_script("return window.__alerts")
    report["consoleErrors"] = console_errors(driver)
    return report


def wait_for(driver, read, condition, what, log, seconds=30):
    """The page's state (the script `read` returns) once condition(state) holds; else, after
    `seconds`, the last read, with a line in log saying what never came."""
    deadline = time.monotonic() + seconds
    while True:
        state = driver.execute_script(read)
        if condition(state):
            return state
        if time.monotonic() > deadline:
            log.append("timed out waiting for " + what + ": " + json.dumps(state))
            return state
        time.sleep(0.2)


def report_from_browser(script, screenshot, body):
    """Runs body(driver) in a fresh headless Chromium with a profile of its own and prints the
    JSON report it returns: the one way every script here uses the browser. The script ends
    itself after 100 s, before the Swift test's 120 s SIGKILL, so the finally below still quits
    the browser (a killed script would leave chromedriver and Chromium running); what
    chromedriver said goes to stderr when the browser did not come up or the body failed."""
    def give_up(signum, frame):
        raise TimeoutError(f"{script}: no report within 100 s")
    signal.signal(signal.SIGALRM, give_up)
    signal.alarm(100)
    os.makedirs(os.path.dirname(screenshot), exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="strapweb-chromium-") as profile:
        driver = None
        try:
            driver = browser(profile)
            report = body(driver)
        except Exception:
            try:
                with open(os.path.join(profile, "chromedriver.log"), errors="replace") as log:
                    sys.stderr.write(log.read()[-4000:])
            except OSError:
                pass
            raise
        finally:
            if driver is not None:
                driver.quit()
    json.dump(report, sys.stdout)


def main():
    mode, url, screenshot, *rest = sys.argv[1:]
    if mode == "live":
        report_from_browser("dashboard.py", screenshot, lambda driver: live(driver, url, screenshot, rest))
    elif mode == "figures":
        report_from_browser("dashboard.py", screenshot, lambda driver: figures(driver, url, screenshot, rest))
    else:
        report_from_browser("dashboard.py", screenshot,
                            lambda driver: hostile(driver, url, screenshot, rest[0], rename=mode == "hostile"))


if __name__ == "__main__":
    main()
