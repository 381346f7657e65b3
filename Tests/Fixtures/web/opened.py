#!/usr/bin/env python3
"""The browser `make demo` opens, for scripts/demo-open.sh (docs/web.md, "Tests").

scripts/demo-open.sh names this script in $BROWSER and puts the browser tests' venv first on
PATH (so the shebang finds selenium); xdg-open's generic path, with no desktop detected and no
handler registered for http, runs it with the URL as its one argument. It writes, into
$STRAPD_OPENED_DIR:

    url           the argument exactly as xdg-open passed it, before anything else happens
    opened.log    what went wrong, when something did
    report.json   what headless Chromium made of that URL: the address it ended on (after the
                  token URL's redirect), the title, the page's connection state, the tiles'
                  names and the heart rates they show, whether the page is the 401 text; `finish`'s CSP/console members
    dom.html      the document as Chromium holds it then
    opened.png    a screenshot

It asserts nothing: demo-open.sh compares the URL with the one the demo printed and judges the
page. It waits (up to 30 s) for the page to say `live` and show a tile with a heart rate (a
sample through /events), so the DOM saved is the dashboard at work, not its empty shell before
the first fetch answers.
"""
import json
import os
import sys

from dashboard import WATCH, finish, report_from_browser, wait_for

READ_PAGE = """
return {
  title: document.title,
  heading: (document.querySelector('header h1') || {}).textContent || null,
  state: (document.getElementById('state') || {}).textContent || null,
  tiles: Array.from(document.querySelectorAll('#tiles .tile .name')).map((n) => n.textContent),
  heartRates: Array.from(document.querySelectorAll('#tiles .tile .hr')).map((n) => n.textContent).filter((t) => /^[0-9]+$/.test(t)),
  body: document.body ? document.body.innerText.slice(0, 300) : null,
};
"""


def opened(driver, url, out):
    log = []
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})
    driver.get(url)
    page = wait_for(driver, READ_PAGE, lambda p: p["state"] == "live" and len(p["tiles"]) > 0 and len(p["heartRates"]) > 0,
                    "the dashboard to go live with a tile showing a heart rate", log)
    with open(os.path.join(out, "dom.html"), "w") as dom:
        dom.write(driver.page_source)
    report = {"finalURL": driver.current_url, "log": log, **page}
    return finish(driver, report, os.path.join(out, "opened.png"))


def main():
    url = sys.argv[1]
    out = os.environ["STRAPD_OPENED_DIR"]
    with open(os.path.join(out, "url"), "w") as f:
        f.write(url)
    # xdg-open's caller (demo.sh) sends stdout and stderr to /dev/null: the report and any
    # complaint (a traceback, chromedriver's log) go to files.
    with open(os.path.join(out, "report.json"), "w") as report, open(os.path.join(out, "opened.log"), "w") as log:
        sys.stdout, sys.stderr = report, log
        report_from_browser("opened.py", os.path.join(out, "opened.png"), lambda driver: opened(driver, url, out))


if __name__ == "__main__":
    main()
