#!/usr/bin/env python3
"""strapd-web's /overlay in a real browser (Tests/StrapWebTests/OverlayTests.swift, docs/web.md).

    overlay.py URL SCREENSHOT [NAME]

Opens the overlay URL (the overlay's read-only token and its settings in the query) in Debian's
headless Chromium and watches the heart rate until it has shown two different values (or 60 s
have passed), then prints one JSON report for the Swift test to judge against strapd's store:
the values seen in order, the zone label, the page's computed background, whether it scrolls,
the number's font size, CSP violations and console errors, and a screenshot. It asserts
nothing itself. Browser setup, driver path and sandbox as dashboard.py. With NAME, every
device name the page receives is replaced by NAME in the browser (dashboard.py's RENAME), and
the report says how the name was rendered.
"""
import json
import sys
import time

from dashboard import RENAME, WATCH, console_errors, report_from_browser

# Generous: the simulated strap's heart rate may hold for seconds, and CI shares two cores.
POLL_SECONDS = 60

READ = """
const hr = document.getElementById('hr');
return {hr: hr.textContent, zone: document.getElementById('zone').textContent,
        name: document.getElementById('name').textContent,
        background: getComputedStyle(document.body).backgroundColor,
        htmlBackground: getComputedStyle(document.documentElement).backgroundColor,
        scrolls: document.documentElement.scrollHeight > innerHeight || document.documentElement.scrollWidth > innerWidth,
        fontSize: getComputedStyle(hr).fontSize};
"""


def watch(driver, url, screenshot, name):
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})
    if name is not None:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RENAME % json.dumps(name)})
    driver.get(url)
    values = []
    deadline = time.monotonic() + POLL_SECONDS
    while time.monotonic() < deadline:
        state = driver.execute_script(READ)
        if state["hr"].isdigit() and (not values or values[-1] != state["hr"]):
            values.append(state["hr"])
        if len(set(values)) >= 2:
            break
        time.sleep(0.2)
    state = driver.execute_script(READ)
    report = dict(state, values=values, url=driver.current_url)
    report["nameHTML"] = driver.execute_script("return document.getElementById('name').innerHTML")
    report["images"] = driver.execute_script("return document.querySelectorAll('img').length")
    report["alerts"] = driver.execute_script("return window.__alerts")
    report["violations"] = driver.execute_script("return window.__cspViolations")
    report["consoleErrors"] = console_errors(driver)
    report["screenshot"] = driver.save_screenshot(screenshot)
    return report


def main():
    url, screenshot = sys.argv[1:3]
    name = sys.argv[3] if len(sys.argv) > 3 else None
    report_from_browser("overlay.py", screenshot, lambda driver: watch(driver, url, screenshot, name))


if __name__ == "__main__":
    main()
