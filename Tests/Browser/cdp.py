#!/usr/bin/env python3
"""Drives one headless Chromium through the DevTools protocol over --remote-debugging-pipe (no websocket, no
third-party module) and prints what it saw as JSON. The web-page tests (WebPageBrowserTests) run it.

    cdp.py CHROMIUM STEPS.json

STEPS.json: {"steps": [step, ...], "foreign_page": "<html>..."}; each step one of
    {"go": URL}                      navigate the page and wait for its load event
    {"wait_url": URL}                wait until the page has loaded URL (a meta refresh, a form's answer)
    {"eval": JS}                     evaluate JS in the page; its value (JSON) is the step's result
    {"click": SELECTOR}              click the element and wait for the page that follows to load
    {"width": PIXELS}                emulate a screen that wide (a phone: 375)
    {"cookies": true}                the browser's cookies (name, httpOnly, sameSite, path) are the result
    {"screenshot": PATH}             a PNG of the whole page (for a person looking at the layout)
"foreign_page", when given, is served from a second origin (another port of 127.0.0.1, a neighbour's server) at
FOREIGN/ and the steps may say FOREIGN in URLs; NEIGHBOUR names the same server as http://localhost:<its port>.

Prints {"results": [...], "requests": [{"url", "method"}], "documents": [{"url", "status"}], "foreign_requests":
[{"host", "path", "cookie"}]}: every request the page made (documents, stylesheets, anything), every document
answer, and every request the foreign server received with the Cookie header the browser sent it, in order. Exits 1
(message on stderr) when a step times out or Chromium fails.
"""
import base64
import fcntl
import http.server
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time

TIMEOUT = 20.0


class Browser:
    def __init__(self, chromium, user_data):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def child_fds():
            # Chromium reads fd 3 and writes fd 4. Moved above 10 first: a pipe end that already is 3 or 4 would be
            # overwritten, or keep its close-on-exec flag (dup2 onto itself changes nothing).
            read_end, write_end = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        arguments = [
            chromium, "--headless", "--remote-debugging-pipe", "--user-data-dir=" + user_data, "--no-first-run",
            "--no-default-browser-check", "--disable-gpu", "--disable-extensions", "--disable-sync",
            "--disable-background-networking", "--disable-component-update", "--disable-dev-shm-usage",
            "about:blank",
        ]
        if os.geteuid() == 0:
            arguments.insert(1, "--no-sandbox")
        self.process = subprocess.Popen(
            arguments, close_fds=False, preexec_fn=child_fds,
            stdout=subprocess.DEVNULL, stderr=None)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def send(self, method, params=None, session=True):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(message).encode() + b"\0")
        wanted = self.next_id
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self.read(deadline)
            if message.get("id") == wanted:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def read(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            # Wait for the pipe at most until the deadline: a read alone would block for as long as Chromium is silent.
            if left <= 0 or not select.select([self.from_chrome], [], [], left)[0]:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self.from_chrome, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def wait_event(self, matches, what):
        deadline = time.monotonic() + TIMEOUT
        index = 0
        while True:
            while index < len(self.events):
                event = self.events[index]
                index += 1
                if matches(event):
                    del self.events[:index]
                    return event
            try:
                self.events.append(self.read(deadline))
            except TimeoutError:
                raise TimeoutError(f"timed out waiting for {what}")

    def close(self):
        try:
            self.send("Browser.close", session=False)
        except Exception:
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def serve_foreign(page, received):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            received.append({"host": self.headers.get("Host", ""), "path": self.path,
                             "cookie": self.headers.get("Cookie", "")})
            body = page.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *arguments):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main():
    chromium, steps_file = sys.argv[1], sys.argv[2]
    with open(steps_file) as file:
        plan = json.load(file)
    foreign_requests = []
    foreign = serve_foreign(plan["foreign_page"], foreign_requests) if "foreign_page" in plan else None
    origin = f"http://127.0.0.1:{foreign.server_address[1]}" if foreign else "FOREIGN"
    neighbour = f"http://localhost:{foreign.server_address[1]}" if foreign else "NEIGHBOUR"
    user_data = tempfile.mkdtemp(prefix="cohorly-chromium-")
    browser = Browser(chromium, user_data)
    requests, documents, results = [], [], []
    state = {"loads": 0, "loaded_url": None}

    def observe(event):
        method, params = event.get("method"), event.get("params", {})
        if method == "Network.requestWillBeSent":
            requests.append({"url": params["request"]["url"], "method": params["request"]["method"]})
        elif method == "Network.responseReceived" and params.get("type") == "Document":
            documents.append({"url": params["response"]["url"], "status": params["response"]["status"]})
        elif method == "Page.loadEventFired":
            state["loads"] += 1
            state["loaded_url"] = documents[-1]["url"] if documents else None

    def pump(condition, what):
        for event in browser.events:
            observe(event)
        browser.events.clear()
        if not condition():
            browser.wait_event(lambda event: observe(event) or condition(), what)

    try:
        targets = browser.send("Target.getTargets", session=False)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        browser.session = browser.send(
            "Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}, session=False)["sessionId"]
        browser.send("Page.enable")
        browser.send("Network.enable")
        for step in plan["steps"]:
            step = json.loads(json.dumps(step).replace("FOREIGN", origin).replace("NEIGHBOUR", neighbour))
            loads = state["loads"]
            if "go" in step:
                browser.send("Page.navigate", {"url": step["go"]})
                pump(lambda: state["loads"] > loads, f"the load of {step['go']}")
                results.append(None)
            elif "wait_url" in step:
                url = step["wait_url"]
                if state["loaded_url"] != url:
                    pump(lambda: state["loaded_url"] == url, f"the load of {url}")
                results.append(None)
            elif "click" in step:
                selector = json.dumps(step["click"])
                clicked = browser.send("Runtime.evaluate", {
                    "expression": f"(e => e ? (e.click(), true) : false)(document.querySelector({selector}))",
                    "returnByValue": True})
                if clicked.get("result", {}).get("value") is not True:
                    raise RuntimeError(f"nothing to click: {step['click']}")
                pump(lambda: state["loads"] > loads, f"the page after clicking {step['click']}")
                results.append(None)
            elif "eval" in step:
                answer = browser.send("Runtime.evaluate", {"expression": step["eval"], "returnByValue": True})
                results.append(answer.get("result", {}).get("value"))
            elif "width" in step:
                browser.send("Emulation.setDeviceMetricsOverride", {
                    "width": step["width"], "height": 800, "deviceScaleFactor": 2, "mobile": True})
                results.append(None)
            elif "screenshot" in step:
                shot = browser.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
                with open(step["screenshot"], "wb") as file:
                    file.write(base64.b64decode(shot["data"]))
                results.append(None)
            elif "cookies" in step:
                cookies = browser.send("Network.getCookies")["cookies"]
                results.append([{k: c.get(k) for k in ("name", "httpOnly", "sameSite", "path", "domain")}
                                for c in cookies])
        for event in browser.events:
            observe(event)
    except Exception as error:
        print(f"cdp.py: {error}", file=sys.stderr)
        print(json.dumps({"results": results, "requests": requests, "documents": documents}), file=sys.stderr)
        sys.exit(1)
    finally:
        browser.close()
        shutil.rmtree(user_data, ignore_errors=True)
        if foreign:
            foreign.shutdown()
    print(json.dumps({"results": results, "requests": requests, "documents": documents, "foreign": origin,
                      "foreign_requests": foreign_requests}))


if __name__ == "__main__":
    main()
