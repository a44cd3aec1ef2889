#!/usr/bin/env python3
"""The dashboard in a real browser: headless Chromium (Debian's chromium + chromium-driver)
driven through WebDriver (selenium).

Starts `storekeeper serve --demo` on a free loopback port with its own data directory and a
known admin key, signs in with the demo app's secret key through the form (keyboard only),
opens each page, checks the figures shown against the REST API (and the CSV download against
the page), uses a filter, and saves screenshots at 1280 and 390 px wide under
.build/dashboard-screenshots/. Usage: browser_test.py path/to/storekeeper
"""
import csv
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

ADMIN_KEY = "browser-test-admin-key-0123456789"
SCREENSHOTS = os.path.join(".build", "dashboard-screenshots")
WIDTHS = {"1280": (1280, 900), "390": (390, 844)}
failures = []


def check(condition, message):
    print(("ok   " if condition else "FAIL ") + message, flush=True)
    if not condition:
        failures.append(message)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_demo(binary, data):
    port = free_port()
    environment = dict(os.environ, STOREKEEPER_ADMIN_KEY=ADMIN_KEY, STOREKEEPER_DATA_DIRECTORY=data)
    process = subprocess.Popen(
        [binary, "serve", "--demo", "--listen", f"127.0.0.1:{port}", "--month-seconds", "600"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment)
    banner = []
    deadline = time.time() + 60
    for line in process.stdout:
        banner.append(line)
        if line.strip().startswith("Progress every") or time.time() > deadline:
            break
    text = "".join(banner)
    secret = re.search(r"secret\s+(sk_sec_\S+)", text)
    url = re.search(r"Dashboard\s+(http://\S+)", text)
    if not secret:
        process.kill()
        raise SystemExit("the demo did not print its keys:\n" + text)
    check(url is not None and url.group(1) == f"http://127.0.0.1:{port}/dashboard",
          "the demo prints the dashboard URL")
    return process, f"http://127.0.0.1:{port}", secret.group(1)


def api(base, path, key):
    request = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + key})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def api_write(base, method, path, key, body):
    """The status and JSON answer of a request with a JSON body."""
    request = urllib.request.Request(
        base + path, data=json.dumps(body).encode(), method=method,
        headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, json.loads(response.read())


def progress(rebuild):
    """A rebuild's progress as the dashboard writes it: `2 of 5 customers (40%)`."""
    done, total = rebuild["customersDone"], rebuild["customersTotal"]
    return f"{done} of {total} customers" + (f" ({done * 100 // total}%)" if total > 0 else "")


def amount(milliunits):
    """Milliunits as the dashboard shows them: two places, three when the last is not 0."""
    sign = "-" if milliunits < 0 else ""
    whole, fraction = divmod(abs(milliunits), 1000)
    return f"{sign}{whole}.{fraction // 10:02d}" if fraction % 10 == 0 else f"{sign}{whole}.{fraction:03d}"


def expected_cards(overview):
    """The API's overview cards as the page shows them (docs/dashboard.md)."""
    shown = {}
    for card in overview["cards"]:
        metric = card["metric"]
        if "byCurrency" not in card:
            shown[metric] = str(card["value"])
        elif card["value"] is not None:
            shown[metric] = amount(card["value"])
        else:
            field = "proceeds" if metric == "proceeds" else "gross"
            amounts = [f"{amount(c[field])} {c['currency']}" for c in card["byCurrency"]]
            shown[metric] = ", ".join(amounts) if amounts else "0.00"
    return shown


def first_value(value, key):
    """The first `key` found anywhere in a JSON value (depth first), or None."""
    if isinstance(value, dict):
        if isinstance(value.get(key), str):
            return value[key]
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            found = first_value(item, key)
            if found:
                return found
    return None


def compare_overview(driver, base, secret, query):
    """Opens the overview with `query` and checks its cards equal `/analytics/overview` for the
    same days, environment and filters. The demo keeps adding customers and its clock runs
    fast: the page is read before and after the API, and read again if it moved."""
    for attempt in range(8):
        driver.get(base + "/dashboard/apps/demo?" + query)
        def cards():
            return {e.get_attribute("id")[5:]: e.find_element(By.CSS_SELECTOR, ".value").text
                    for e in driver.find_elements(By.CSS_SELECTOR, "#cards .card")}
        before = cards()
        days = driver.execute_script(
            "return [...document.querySelectorAll('#chart-active tbody th')].map(e => e.textContent)")
        overview = api(base, f"/v1/apps/demo/analytics/overview?{query.replace('period=7&', '')}"
                             f"&from={days[0]}&to={days[-1]}", secret)
        driver.refresh()
        if before == cards() and before == expected_cards(overview):
            check(True, f"the overview's cards equal the analytics API's ({query})")
            return before
    check(False, f"the overview's cards equal the analytics API's ({query}): {before} / {expected_cards(overview)}")


def browser(downloads):
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1280,900"]:
        options.add_argument(argument)
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    options.add_experimental_option("prefs", {"download.default_directory": downloads,
                                              "download.prompt_for_download": False})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"),
                              options=options)
    driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
    driver.set_page_load_timeout(20)
    return driver


def wait_for(condition, seconds=10):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def screenshots(driver, name):
    for label, (width, height) in WIDTHS.items():
        driver.set_window_size(width, height)
        time.sleep(0.2)
        driver.save_screenshot(os.path.join(SCREENSHOTS, f"{name}-{label}.png"))
        overflow = driver.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        check(overflow <= 0, f"{name} at {label} px: no sideways scrolling of the page ({overflow} px)")
    driver.set_window_size(*WIDTHS["1280"])


def accessible(driver, name):
    unlabelled = driver.execute_script(
        "return [...document.querySelectorAll('input:not([type=hidden]), select')]"
        ".filter(e => e.labels.length === 0).map(e => e.name)")
    check(unlabelled == [], f"{name}: every field has a label {unlabelled}")
    body = driver.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    active = driver.switch_to.active_element
    check(active.text == "Skip to content", f"{name}: the first Tab reaches the skip link")
    active.send_keys(Keys.ENTER)
    check(driver.execute_script("return document.activeElement.id") == "main",
          f"{name}: the skip link moves focus to the content")


def main():
    binary = sys.argv[1]
    started = time.time()
    os.makedirs(SCREENSHOTS, exist_ok=True)
    data = tempfile.mkdtemp(prefix="storekeeper-dashboard-")
    downloads = os.path.join(data, "downloads")
    os.makedirs(downloads)
    process, base, secret = start_demo(binary, data)
    driver = None
    try:
        driver = browser(downloads)
        # Sign in, keyboard only: the form takes the key, Enter submits.
        driver.get(base + "/dashboard")
        check(driver.current_url == base + "/dashboard/sign-in", "signed out: the dashboard asks to sign in")
        screenshots(driver, "sign-in")
        key = driver.find_element(By.ID, "key")
        check(driver.switch_to.active_element == key, "the key field has focus")
        key.send_keys(secret + Keys.ENTER)
        wait_for(lambda: "/dashboard/apps/" in driver.current_url)
        check(driver.current_url.startswith(base + "/dashboard/apps/demo"),
              "signed in: the app's overview" + ("" if "/apps/" in driver.current_url else
                                                   " (" + driver.find_element(By.TAG_NAME, "main").text + ")"))
        cookie = driver.get_cookie("storekeeper_dashboard")
        check(cookie is not None and cookie.get("httpOnly") and cookie.get("sameSite") == "Strict",
              "the session cookie is HttpOnly and SameSite=Strict")
        check(secret not in driver.current_url, "no key in the URL")

        # Overview: the cards, a filter, the CSV of the same figures.
        accessible(driver, "overview")
        screenshots(driver, "overview")
        for attempt in range(5):
            driver.get(base + "/dashboard/apps/demo?period=7&environment=Sandbox")
            shown = driver.find_element(By.CSS_SELECTOR, "#card-new-customers .value").text
            for name in os.listdir(downloads):
                os.remove(os.path.join(downloads, name))
            driver.find_element(By.ID, "csv").click()
            path = None
            for _ in range(100):
                names = [n for n in os.listdir(downloads) if n.endswith(".csv")]
                if names:
                    path = os.path.join(downloads, names[0])
                    break
                time.sleep(0.1)
            check(path is not None, "the CSV downloads")
            with open(path, newline="") as handle:
                rows = list(csv.reader(handle))
            figure = next(r[4] for r in rows if r[:3] == ["card", "new-customers", "current"])
            if figure == shown:
                break  # the demo adds a customer every few seconds: read both again if one came between
        check(figure == shown and int(shown) > 0, f"CSV and page agree on new customers ({figure} / {shown})")
        check(len([r for r in rows if r[:2] == ["chart", "chart-notifications"]]) == 7, "7 days in the CSV")

        # The cards are the analytics API's for the same query, unfiltered and filtered by a product.
        shown = compare_overview(driver, base, secret, "period=7&environment=Sandbox")
        # The demo's first customers start free trials: new customers is the figure it has at once.
        check(int(shown["new-customers"]) > 0, f"the demo has new customers ({shown})")
        product = first_value(api(base, "/v1/apps/demo/customers/user-0001", secret), "productId")
        check(product is not None, "a product of the demo")
        compare_overview(driver, base, secret, "period=7&environment=Sandbox&productId=" + urllib.parse.quote(product))
        unknown = compare_overview(driver, base, secret, "period=7&environment=Sandbox&productId=no.such.product")
        check(unknown["new-customers"] == "0" and unknown["revenue"] == "0.00",
              f"the product filter is applied ({unknown})")
        check(len([r for r in rows if r[:2] == ["chart", "chart-active"]]) == 14, "both active series in the CSV")

        # The environment filter: the demo's notifications are Sandbox, so Production shows none.
        driver.get(base + "/dashboard/apps/demo?period=28")
        select = driver.find_element(By.ID, "environment")
        for option in select.find_elements(By.TAG_NAME, "option"):
            if option.text == "Sandbox":
                option.click()
        driver.find_element(By.CSS_SELECTOR, "form.filters button").click()
        wait_for(lambda: "environment=" in driver.current_url)
        check("environment=Sandbox" in driver.current_url, "the filter form applies the environment")
        values = driver.execute_script(
            "return [...document.querySelectorAll('#chart-notifications tbody td')].map(e => Number(e.textContent))")
        check(len(values) == 28 and sum(values) > 0, f"28 days of Sandbox notifications ({sum(values)})")

        # Customer page: the entitlements shown are the API's.
        driver.get(base + "/dashboard/apps/demo/customers")
        accessible(driver, "customers")
        field = driver.find_element(By.ID, "q")
        field.send_keys("user-0001" + Keys.ENTER)
        wait_for(lambda: "q=user-0001" in driver.current_url)
        for attempt in range(5):
            shown = driver.find_element(By.ID, "active-entitlements").text
            info = api(base, "/v1/apps/demo/customers/user-0001", secret)
            active = sorted(k for k, v in info.get("entitlements", {}).items() if v.get("isActive"))
            if shown == (", ".join(active) if active else "none"):
                break
            driver.refresh()
        check(shown == (", ".join(active) if active else "none"), f"active entitlements equal the API's ({shown})")
        check(len(driver.find_elements(By.CSS_SELECTOR, "#timeline tbody tr")) > 0, "the timeline has rows")
        check(len(driver.find_elements(By.CSS_SELECTOR, "#timeline pre")) > 0, "raw signed payloads are shown")
        screenshots(driver, "customer")

        # Operations: the dead-lettered count equals the API's list.
        driver.get(base + "/dashboard/apps/demo/operations")
        accessible(driver, "operations")
        dead = int(driver.find_element(By.ID, "deliveries-dead").text)
        listed = api(base, "/v1/apps/demo/webhooks/deliveries/failed?limit=500", secret)["deliveries"]
        check(dead == len([d for d in listed if d.get("deadLetteredAt")]), f"dead-lettered deliveries ({dead})")
        intake = driver.find_elements(By.CSS_SELECTOR, "#intake tbody tr")
        check(len(intake) > 0 and "None." not in intake[0].text, "notification intake has rows")
        screenshots(driver, "operations")

        # Issue 13: a change of the commission terms rebuilds the analytics in the background. The
        # overview names the app's latest rebuild as `analytics-rebuilds/latest` has it (queued or
        # running with its progress and a note that the figures are being recomputed, then when it
        # finished), and the operations page lists it. The demo is small: it may finish at once.
        settings = api(base, "/v1/apps/demo/analytics-settings", ADMIN_KEY)
        settings = {k: v for k, v in settings.items() if k not in ("version", "rebuild") and v is not None}
        rates = settings.get("commissionRates") or {}
        default = rates.get("default") or {"standard": 3000, "reduced": 1500}
        rates["default"] = {"standard": default["standard"] - 100, "reduced": default["reduced"] - 50}
        settings["commissionRates"] = rates
        status, answer = api_write(base, "PUT", "/v1/apps/demo/analytics-settings", ADMIN_KEY, settings)
        queued = (answer.get("rebuild") or {}).get("id")
        check(status == 202 and queued is not None, f"a change of the commission terms queues a rebuild ({status})")

        def rebuild_note():
            driver.get(base + "/dashboard/apps/demo")
            notes = driver.find_elements(By.ID, "analytics-rebuild")
            if not notes:
                return None
            note = notes[0]
            return {"id": int(note.get_attribute("data-rebuild-id")), "status": note.get_attribute("data-status"),
                    "customersDone": int(note.get_attribute("data-customers-done")),
                    "customersTotal": int(note.get_attribute("data-customers-total")), "text": note.text}

        seen = []
        latest = None
        for attempt in range(120):
            before = rebuild_note()
            latest = api(base, "/v1/apps/demo/analytics-rebuilds/latest", ADMIN_KEY)
            after = rebuild_note()
            if before is None or before != after:
                time.sleep(0.25)
                continue  # the rebuild moved on between the reads
            fields = {k: latest[k] for k in ("id", "status", "customersDone", "customersTotal")}
            check({k: before[k] for k in fields} == fields, f"the overview's rebuild note is the API's ({fields})")
            if before["status"] in ("queued", "running"):
                check("The figures shown are being recomputed" in before["text"] and "Refresh" in before["text"],
                      f"while {before['status']}, the overview says its figures are being recomputed")
                if before["status"] == "running":
                    check(f"running: {progress(latest)}." in before["text"], "the note shows the rebuild's progress")
            seen.append(before["status"])
            if before["status"] not in ("queued", "running"):
                break
            time.sleep(0.25)
        check(latest is not None and latest["id"] == queued and latest["status"] == "completed"
              and seen and seen[-1] == "completed", f"the rebuild completes and the overview says so ({seen})")
        check(after is not None and "Figures recomputed for the current commission terms" in after["text"],
              f"the completed rebuild's note ({after and after['text']})")
        screenshots(driver, "overview-rebuilt")
        driver.get(base + "/dashboard/apps/demo/operations")
        row = driver.find_element(By.CSS_SELECTOR, "#analytics-rebuilds tbody tr")
        cells = [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
        check(cells[:4] == [str(latest["id"]), latest["status"],
                            f"commission terms changed (settings version {latest['settingsVersion']})",
                            progress(latest)] and cells[7] == str(latest["attempts"]),
              f"the operations page lists the rebuild as the API has it ({cells})")
        screenshots(driver, "operations-rebuilds")

        # Cohorts: the retention and LTV tables are the API's for the same months and filters.
        def cohort_tables(query):
            for attempt in range(8):
                driver.get(base + "/dashboard/apps/demo/cohorts?" + query)
                rows = "return [...document.querySelectorAll('#%s tbody tr')].map(r => [...r.children]" \
                       ".map(c => c.dataset.value !== undefined ? c.dataset.value : c.textContent.trim()))"
                shown = (driver.execute_script(rows % "retention"), driver.execute_script(rows % "ltv"))
                span = driver.find_element(By.ID, "cohort-range")
                api_query = (f"environment=Sandbox&from={span.get_attribute('data-from')}"
                             f"&to={span.get_attribute('data-to')}")
                for name in ["productId", "storefront", "subscriptionGroup"]:
                    value = urllib.parse.parse_qs(query).get(name)
                    if value:
                        api_query += f"&{name}=" + urllib.parse.quote(value[0])
                retention = api(base, "/v1/apps/demo/analytics/retention?" + api_query, secret)["cohorts"]
                ltv = api(base, "/v1/apps/demo/analytics/ltv?" + api_query, secret)["cohorts"]
                longest = max([len(c["stillPaying"]) for c in retention] + [0])
                expected_retention = [
                    [c["cohort"], c["productId"], str(c["size"])] + [str(n) for n in c["stillPaying"]]
                    + [""] * (longest - len(c["stillPaying"])) for c in retention]
                expected_ltv = []
                for c in ltv:
                    entries = [(e["currency"], e) for e in c["byCurrency"]]
                    if c.get("reporting"):
                        entries.append(("reporting:" + c["reporting"]["currency"], c["reporting"]))
                    for currency, entry in entries:
                        expected_ltv.append([c["cohort"], str(c["customers"]), currency] + [
                            "" if entry[h] is None else str(entry[h]) for h in ["d7", "d30", "d90", "d365"]])
                if shown == (expected_retention, expected_ltv):
                    return shown
            check(False, f"the cohorts page equals the API ({query}): {shown} / {(expected_retention, expected_ltv)}")
            return shown

        retention, ltv = cohort_tables("environment=Sandbox")
        # The demo's customers start with free trials: LTV cohorts exist at once, retention ones once
        # a trial converts (the equality above holds either way).
        check(len(ltv) > 0, f"the cohorts page shows the API's retention and LTV ({len(retention)} / {len(ltv)} rows)")
        accessible(driver, "cohorts")
        check(len(driver.find_elements(By.CSS_SELECTOR, "#chart-ltv svg")) == 1, "the LTV chart is drawn")
        screenshots(driver, "cohorts")
        filtered = cohort_tables("environment=Sandbox&productId=no.such.product")
        check(filtered == ([], []) and len(driver.find_elements(By.ID, "retention-empty")) == 1,
              "the cohorts page applies the product filter")

        # Sign out through its form.
        driver.find_element(By.CSS_SELECTOR, "nav form button").click()
        wait_for(lambda: driver.current_url.endswith("/sign-in"))
        check(driver.current_url == base + "/dashboard/sign-in", "signed out")
        driver.get(base + "/dashboard/apps/demo/operations")
        check(driver.current_url == base + "/dashboard/sign-in", "signed out: pages ask to sign in again")
    finally:
        if driver:
            driver.quit()
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(data, ignore_errors=True)
    elapsed = time.time() - started
    print(f"dashboard browser test: {len(failures)} failure(s) in {elapsed:.1f} s; screenshots in {SCREENSHOTS}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
