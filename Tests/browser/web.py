#!/usr/bin/env python3
"""savingsctl web in a real browser: Playwright driving Debian's headless Chromium.

Starts the built savingsd on a scratch socket and database (ready when it says READY=1 on a
NOTIFY_SOCKET of ours), fills it with the example data, starts `savingsctl web`, opens the URL
it prints and checks what a user sees and does. Changes are made and checked over the daemon's
socket, as any other client would. Prints "N passed, N failed".

    Tests/browser/web.py BIN_DIR [--screenshot PATH]
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from playwright.sync_api import expect, sync_playwright

BROWSER = next((path for path in ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium") if os.path.exists(path)), None)
passes = failures = 0


def check(what, ok, detail=""):
    global passes, failures
    if ok:
        passes += 1
        print(f"ok: {what}")
    else:
        failures += 1
        print(f"FAIL: {what} {detail}")


class Daemon:
    """One real savingsd, ready when it says so on NOTIFY_SOCKET."""

    def __init__(self, bin_dir, directory):
        self.socket_path = os.path.join(directory, "d.sock")
        notify_path = os.path.join(directory, "notify")
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(notify_path)
        notify.settimeout(30)
        env = {"PATH": "/usr/bin:/bin", "HOME": directory, "TZ": "UTC", "NOTIFY_SOCKET": notify_path,
               "XDG_RUNTIME_DIR": directory + "/run", "XDG_DATA_HOME": directory + "/data", "XDG_CONFIG_HOME": directory + "/config"}
        self.log = open(os.path.join(directory, "daemon.log"), "w")
        self.process = subprocess.Popen([os.path.join(bin_dir, "savingsd"), "--socket", self.socket_path,
                                         "--database", os.path.join(directory, "db", "savings.db")],
                                        env=env, stdout=self.log, stderr=self.log)
        while b"READY=1" not in notify.recv(4096):
            pass
        notify.close()
        self.next_id = 0

    def call(self, method, params=None):
        self.next_id += 1
        with socket.socket(socket.AF_UNIX) as connection:
            connection.connect(self.socket_path)
            request = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
            connection.sendall((json.dumps(request) + "\n").encode())
            answer = json.loads(connection.makefile("r").readline())
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(30)


def main():
    bin_dir = sys.argv[1]
    screenshot = sys.argv[sys.argv.index("--screenshot") + 1] if "--screenshot" in sys.argv else None
    if BROWSER is None:
        print("no Chromium: install chromium-headless-shell (make test does)")
        sys.exit(1)
    directory = tempfile.mkdtemp(prefix="sdweb-")
    daemon = Daemon(bin_dir, directory)
    web = None
    try:
        daemon.call("data.demo")
        web = subprocess.Popen([os.path.join(bin_dir, "savingsctl"), "--socket", daemon.socket_path, "web"],
                               stdout=subprocess.PIPE, stderr=open(os.path.join(directory, "web.log"), "w"), text=True)
        url = web.stdout.readline().strip()
        check("savingsctl web prints one URL with its token", url.startswith("http://127.0.0.1:") and "/?token=" in url, url)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=BROWSER)
            page = browser.new_page(viewport={"width": 390, "height": 844})
            problems = []
            # Script errors; a status the page was meant to get (422 for a refused form) is not one.
            page.on("console", lambda message: problems.append(message.text)
                    if message.type == "error" and not message.text.startswith("Failed to load resource") else None)
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.goto(url)
            check("the token becomes a cookie and the address loses it", "token=" not in page.url, page.url)
            goals = page.locator("li.goal h3").all_inner_texts()
            check("the dashboard shows the goals", "Japan trip" in goals and "Emergency fund" in goals, str(goals))

            # A change made over the socket, as savingsctl in another terminal would, shows without a
            # reload (once the page says changes reach it).
            page.wait_for_selector("html[data-live=yes]", state="attached", timeout=5000)
            page.evaluate("window.notReloaded = true")
            japan = page.locator("li.goal", has_text="Japan trip")
            before = japan.inner_text()
            started = time.monotonic()
            daemon.call("goal.contribute", {"goal": "Japan trip", "amount": "25"})
            try:
                expect(japan).not_to_have_text(before, timeout=3000)
                shown = time.monotonic() - started
            except AssertionError:
                shown = None
            check("a change over the socket shows on the open page within 1 s",
                  shown is not None and shown < 1.0, f"(after {shown} s)")
            check("without a reload", page.evaluate("window.notReloaded === true"))

            # "I saved" through the page, checked over the socket.
            saved_before = float(daemon.call("goal.get", {"goal": "New laptop"})["current_total"])
            page.get_by_role("link", name="I saved").click()
            page.get_by_label("Goal").select_option("New laptop")
            page.get_by_label("Amount").fill("40")
            page.get_by_label("Note").fill("from the browser")
            page.get_by_role("button", name="Save").click()
            page.wait_for_url("**/")
            saved_after = float(daemon.call("goal.get", {"goal": "New laptop"})["current_total"])
            check("\"I saved\" submitted in the page is the daemon's", abs(saved_after - saved_before - 40) < 1e-9,
                  f"{saved_before} -> {saved_after}")

            # The form by keyboard alone: Tab from the top of the page, type, Enter.
            page.goto(url.split("?")[0] + "saved")
            for _ in range(4):
                page.keyboard.press("Tab")
            focused = page.evaluate("document.activeElement.id")
            check("Tab reaches the form's first field after the three links", focused == "goal", focused)
            chosen = page.evaluate("document.activeElement.value")
            first = float(daemon.call("goal.get", {"goal": chosen})["current_total"])
            page.keyboard.press("Tab")
            page.keyboard.type("12.5")
            page.keyboard.press("Enter")
            page.wait_for_url("**/")
            total = float(daemon.call("goal.get", {"goal": chosen})["current_total"])
            check("and Enter saves it", abs(total - first - 12.5) < 1e-9, f"{chosen}: {first} -> {total}")

            # A refused amount: the daemon's message in the page, nothing written.
            page.goto(url.split("?")[0] + "saved")
            page.get_by_label("Amount").fill("-3")
            page.get_by_role("button", name="Save").click()
            alert = page.get_by_role("alert")
            check("a refused amount shows the daemon's message", alert.count() == 1 and len(alert.inner_text()) > 10)

            # The daemon stopping and coming back.
            page.goto(url.split("?")[0])
            daemon.stop()
            try:
                expect(page.locator("#live")).to_contain_text("reconnecting", timeout=5000)
                check("the daemon stopping shows as reconnecting", True)
            except AssertionError:
                check("the daemon stopping shows as reconnecting", False, page.locator("#live").inner_text())
            daemon = restart(daemon, bin_dir, directory)
            try:
                expect(page.locator("#live")).to_have_text("", timeout=8000)
                check("and it resumes when the daemon is back", True)
            except AssertionError:
                check("and it resumes when the daemon is back", False, page.locator("#live").inner_text())

            if screenshot:
                page.set_viewport_size({"width": 900, "height": 900})
                page.goto(url.split("?")[0])
                page.screenshot(path=screenshot, full_page=True)
                print(f"screenshot: {screenshot}")
            check("no script errors in the pages", not problems, str(problems))
            browser.close()
    finally:
        if web and web.poll() is None:
            web.send_signal(signal.SIGTERM)
            try:
                code = web.wait(10)
                check("savingsctl web stops cleanly on SIGTERM", code == 0, str(code))
            except subprocess.TimeoutExpired:
                web.kill()
                check("savingsctl web stops cleanly on SIGTERM", False, "still running after 10 s")
        if daemon.process.poll() is None:
            daemon.stop()
        shutil.rmtree(directory, ignore_errors=True)
    print(f"{passes} passed, {failures} failed")
    sys.exit(0 if failures == 0 else 1)


def restart(daemon, bin_dir, directory):
    """A new savingsd on the same socket and database."""
    os.unlink(os.path.join(directory, "notify"))
    return Daemon(bin_dir, directory)


if __name__ == "__main__":
    main()
