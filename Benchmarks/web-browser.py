#!/usr/bin/env python3
"""strapd-web's pages in headless Chromium, for strap-bench web (docs/benchmarks.md).

    web-browser.py fcp URL ROUNDS PATH...   first contentful paint of each PATH
    web-browser.py dom URL SECONDS          when each heart rate reached the dashboard's DOM

URL is the token URL strapd-web wrote (it answers with the session cookie and a redirect to
the dashboard). fcp loads each PATH ROUNDS times in the same browser and reads the Performance
API's first-contentful-paint entry: {PATH: [ms, ...]}. dom watches the dashboard for SECONDS:
every write of a tile's heart-rate text with the page's clock in ms since the epoch
(performance.timeOrigin + performance.now()): {"writes": [{"name", "hr", "t"}, ...]};
strap-bench matches them with the samples its own StrapKit client got. One JSON object on
stdout; this script measures, it judges nothing. Debian's chromium and chromedriver, the driver
path given so Selenium Manager never runs; --no-sandbox because the benchmark may run as root.
"""
import json
import os
import sys
import tempfile
import time

# The browser tests' Chromium, started one way (Tests/Fixtures/web/dashboard.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "web"))
from dashboard import browser  # noqa: E402

FCP = """
const e = performance.getEntriesByName('first-contentful-paint');
return e.length ? e[0].startTime : null;
"""


# Runs before the page's own script (CDP, as the browser tests' watcher does): it only watches.
# Setting textContent replaces the text node, so every sample written is one mutation, even
# when the value repeats.
WATCH_HR = """
window.__hrWrites = [];
new MutationObserver((records) => {
  const t = performance.timeOrigin + performance.now();
  for (const r of records) {
    const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
    if (!el || !el.classList.contains('hr')) continue;
    const tile = el.closest('.tile');
    const name = tile ? tile.querySelector('.name').textContent : '';
    window.__hrWrites.push({name: name, hr: el.textContent, t: t});
  }
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


def dom(driver, url, seconds):
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH_HR})
    driver.get(url)
    time.sleep(seconds)
    return {"writes": driver.execute_script("return window.__hrWrites;")}


def fcp(driver, url, rounds, paths):
    base = url.split("?")[0].rstrip("/")
    driver.get(url)  # the session cookie; the browser is warm after this load
    result = {}
    for path in paths:
        times = []
        for _ in range(rounds):
            driver.get(base + path)
            # The entry is queued once the paint happened; a page that never paints stays null.
            value = None
            deadline = time.monotonic() + 10
            while value is None and time.monotonic() < deadline:
                value = driver.execute_script(FCP)
                if value is None:
                    time.sleep(0.05)
            times.append(value)
        result[path] = times
    return result


def main():
    mode, url = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="strap-bench-browser-") as profile:
        driver = browser(profile)
        try:
            if mode == "fcp":
                print(json.dumps(fcp(driver, url, int(sys.argv[3]), sys.argv[4:])))
            else:
                print(json.dumps(dom(driver, url, float(sys.argv[3]))))
        finally:
            driver.quit()


if __name__ == "__main__":
    main()
