#!/usr/bin/env python3
"""strapd-web's devices page in a real browser (Tests/StrapWebTests/DevicesTests.swift, docs/web.md).

    devices.py forget  URL SCREENSHOT ADDRESS   from the dashboard's link: scan, then forget ADDRESS
    devices.py hostile URL SCREENSHOT NAME      every device name the page receives replaced by
                                                NAME (dashboard.py's stand-in); how it renders
    devices.py noadmin URL SCREENSHOT           what the page says and which buttons it offers
                                                when strapd-web lacks the admin grant

Like dashboard.py it asserts nothing: it prints one JSON report, and the Swift test holds it to
what strapd's devices.list answers afterwards.
"""
import json
import sys
import time

from dashboard import RENAME, WATCH, console_errors, finish, report_from_browser, wait_for

POLL_SECONDS = 30

READ = """
const $ = (id) => document.getElementById(id);
const rows = (id) => Array.from(document.querySelectorAll('#' + id + ' tbody tr')).map((r) => ({
  address: r.dataset.address,
  name: r.querySelector('.name').textContent,
  nameHTML: r.querySelector('.name').innerHTML,
  buttons: Array.from(r.querySelectorAll('button')).map((b) => ({text: b.textContent, disabled: b.disabled})),
}));
return {state: $('state') ? $('state').textContent : null,
        message: $('message') ? $('message').textContent : null,
        grant: $('grant') && !$('grant').hidden ? $('grant').textContent : null,
        scanDisabled: $('scan') ? $('scan').disabled : null,
        scanState: $('scan-state') ? $('scan-state').textContent : null,
        devices: $('devices') ? rows('devices') : [],
        found: $('found') && !$('found').hidden ? rows('found') : [],
        images: document.querySelectorAll('img').length};
"""


def wait(driver, condition, what, log):
    """The page's state once condition(state) holds; else the last read, noted in log."""
    return wait_for(driver, READ, condition, what, log, POLL_SECONDS)


def click(driver, table, address, label):
    """Clicks the button labelled `label` in `table`'s row of `address`, as a user would."""
    return driver.execute_script("""
      const row = Array.from(document.querySelectorAll('#' + arguments[0] + ' tbody tr'))
        .find((r) => r.dataset.address === arguments[1]);
      const b = row && Array.from(row.querySelectorAll('button')).find((x) => x.textContent === arguments[2]);
      if (!b) return false;
      b.click();
      return true;
    """, table, address, label)


def open_page(driver, url, log):
    driver.get(url)
    deadline = time.monotonic() + POLL_SECONDS
    while not driver.execute_script("return document.getElementById('devices-link') !== null"):
        if time.monotonic() > deadline:
            raise TimeoutError("the dashboard has no link to the devices page")
        time.sleep(0.2)
    driver.execute_script("document.getElementById('devices-link').click()")
    return wait(driver, lambda s: s["state"] in ("loaded", "not loaded"), "the devices", log)


def forget(driver, url, screenshot, address):
    log = []
    report = {"log": log}
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})
    loaded = open_page(driver, url, log)
    report["linked"] = driver.current_url
    report["listed"] = [d["address"] for d in loaded["devices"]]
    driver.execute_script("document.getElementById('scan').click()")
    scanned = wait(driver, lambda s: s["scanState"].startswith("found"), "the scan", log)
    report["found"] = [d["address"] for d in scanned["found"]]
    report["foundNames"] = [d["name"] for d in scanned["found"]]
    # Forget asks first: one click arms the button, the second forgets.
    report["armed"] = click(driver, "devices", address, "Forget")
    armed = wait(driver, lambda s: any(b["text"] == "Forget?" for d in s["devices"] if d["address"] == address
                                       for b in d["buttons"]), "the confirmation", log)
    report["stillListedWhenArmed"] = any(d["address"] == address for d in armed["devices"])
    report["confirmed"] = click(driver, "devices", address, "Forget?")
    gone = wait(driver, lambda s: s["state"] == "forgot " + address, "the forget", log)
    report["after"] = [d["address"] for d in gone["devices"]]
    report["message"] = gone["message"]
    return finish(driver, report, screenshot)


def hostile(driver, url, screenshot, name):
    log = []
    report = {"log": log}
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH + RENAME % json.dumps(name)})
    loaded = open_page(driver, url, log)
    driver.execute_script("document.getElementById('scan').click()")
    scanned = wait(driver, lambda s: s["scanState"].startswith("found") and s["found"], "the scan", log)
    report["devices"] = loaded["devices"]
    report["found"] = scanned["found"]
    report["images"] = scanned["images"]
    return finish(driver, report, screenshot)


def noadmin(driver, url, screenshot):
    log = []
    report = {"log": log}
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})
    loaded = open_page(driver, url, log)
    report.update(loaded)
    report["screenshot"] = driver.save_screenshot(screenshot)
    report["consoleErrors"] = console_errors(driver)
    return report


def main():
    mode, url, screenshot, *rest = sys.argv[1:]
    body = {"forget": forget, "hostile": hostile, "noadmin": noadmin}[mode]
    report_from_browser("devices.py", screenshot, lambda driver: body(driver, url, screenshot, *rest))


if __name__ == "__main__":
    main()
