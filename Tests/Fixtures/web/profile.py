#!/usr/bin/env python3
"""strapd-web's athlete profile page in a real browser (Tests/StrapWebTests/ProfileTests.swift, docs/web.md).

    profile.py URL SCREENSHOT ATHLETE WEIGHT

Opens the token URL, follows the dashboard's link to /profile, switches to ATHLETE's profile,
types WEIGHT into the weight field and saves; once the page says it saved it takes the
screenshot, then saves a weight strapd refuses (0) and reads the message the page shows.
Like dashboard.py it asserts nothing: it prints one JSON report, and the Swift test holds it
to what `profile.get` answers afterwards.
"""
import sys
import time

from dashboard import WATCH, console_errors, report_from_browser, wait_for

POLL_SECONDS = 30

READ = """
const $ = (id) => document.getElementById(id);
return {state: $('state') ? $('state').textContent : null,
        message: $('message') ? $('message').textContent : null,
        athlete: $('athlete') ? $('athlete').textContent : null,
        weight: $('weight') ? $('weight').value : null,
        maximum: $('maximum') ? $('maximum').textContent : null};
"""


def wait(driver, condition, what, log):
    """The page's state once condition(state) holds; else the last read, noted in log."""
    return wait_for(driver, READ, condition, what, log, POLL_SECONDS)


def save_weight(driver, weight):
    driver.execute_script("""
      const w = document.getElementById('weight');
      w.value = arguments[0];
      document.getElementById('save').click();
    """, weight)


def run(driver, url, screenshot, athlete, weight):
    log = []
    report = {"log": log}
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})
    driver.get(url)
    deadline = time.monotonic() + POLL_SECONDS
    while not driver.execute_script("return document.getElementById('profile-link') !== null"):
        if time.monotonic() > deadline:
            raise TimeoutError("the dashboard has no link to the profile page")
        time.sleep(0.2)
    driver.execute_script("document.getElementById('profile-link').click()")
    while driver.execute_script("return document.getElementById('form') === null"):
        if time.monotonic() > deadline:
            raise TimeoutError("the dashboard's link did not open the profile page")
        time.sleep(0.2)
    report["linked"] = driver.current_url
    # The athlete is the page's query, as a bookmark would keep it.
    driver.get(driver.current_url.split("?")[0] + "?athlete=" + athlete)
    loaded = wait(driver, lambda s: s["state"] == "loaded", "the profile", log)
    report["loadedWeight"] = loaded["weight"]

    save_weight(driver, weight)
    saved = wait(driver, lambda s: s["state"] == "saved", "the save", log)
    report["savedWeight"] = saved["weight"]
    report["maximum"] = saved["maximum"]
    report["screenshot"] = driver.save_screenshot(screenshot)

    save_weight(driver, "0")
    refused = wait(driver, lambda s: s["state"] == "not saved" and s["message"], "strapd's refusal", log)
    report["refusal"] = refused["message"]
    report["violations"] = driver.execute_script("return window.__cspViolations")
    report["alerts"] = driver.execute_script("return window.__alerts")
    report["consoleErrors"] = console_errors(driver)
    return report


def main():
    url, screenshot, *rest = sys.argv[1:]
    report_from_browser("profile.py", screenshot, lambda driver: run(driver, url, screenshot, *rest))


if __name__ == "__main__":
    main()
