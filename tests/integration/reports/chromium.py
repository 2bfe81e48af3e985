"""A small headless-Chromium driver over the DevTools protocol on a pipe.

Why our own ~150 lines and not Playwright/Selenium: the check we need is narrow (load a
local file, record console errors and every network request, take a full-page screenshot)
and Debian's `chromium` speaks the DevTools protocol on `--remote-debugging-pipe` (fd 3 in,
fd 4 out, NUL-terminated JSON) with no extra package and no port to race for.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
    "--remote-debugging-pipe",
)


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class PageLoad:
    """What happened while one page loaded."""

    url: str
    loaded: bool
    console_errors: list[str] = field(default_factory=list)
    network_requests: list[str] = field(default_factory=list)  # every URL except the page itself
    screenshot_png: bytes = b""
    title: str = ""
    text_sample: str = ""


class Chromium:
    """One headless browser process; use as a context manager so it is always stopped."""

    def __init__(self, binary: str, timeout_s: float = 60.0) -> None:
        self.timeout_s = timeout_s
        self._profile = tempfile.mkdtemp(prefix="servops-chromium-")
        to_chrome_r, self._to_chrome_w = os.pipe()
        self._from_chrome_r, from_chrome_w = os.pipe()
        # Move the child's ends above 9 so they cannot be fds 3/4 themselves.
        to_chrome_r, from_chrome_w = (_move_high(to_chrome_r), _move_high(from_chrome_w))
        # bash (dash allows only fds 0-9) places our pipe ends on fds 3 and 4, where Chromium expects them.
        script = f'exec "$0" "$@" 3<&{to_chrome_r} 4>&{from_chrome_w} {to_chrome_r}<&- {from_chrome_w}>&-'
        self._proc = subprocess.Popen(
            [
                shutil.which("bash") or "/bin/bash",
                "-c",
                script,
                binary,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={self._profile}",
                "about:blank",
            ],
            pass_fds=(to_chrome_r, from_chrome_w),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()
        self._next_id = 0
        self._events: list[dict[str, Any]] = []

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            if self._proc.poll() is None:
                try:
                    self.call("Browser.close", timeout_s=10)
                except Exception:
                    pass
                try:
                    self._proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait(timeout=10)
        finally:
            for fd in (self._to_chrome_w,):
                try:
                    os.close(fd)
                except OSError:
                    pass
            shutil.rmtree(self._profile, ignore_errors=True)

    def call(
        self, method: str, params: dict | None = None, session: str | None = None, timeout_s: float | None = None
    ) -> dict[str, Any]:
        """Send one command and wait (bounded) for its reply; events seen meanwhile are kept."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_chrome_w, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + (timeout_s or self.timeout_s)
        while time.monotonic() < deadline:
            try:
                reply = self._messages.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._events.append(reply)
        raise TimeoutError(f"no reply to {method} within {timeout_s or self.timeout_s} s")

    def wait_event(self, method: str, session: str, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        if any(e.get("method") == method and e.get("sessionId") == session for e in self._events):
            return True
        while time.monotonic() < deadline:
            try:
                event = self._messages.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                return False
            self._events.append(event)
            if event.get("method") == method and event.get("sessionId") == session:
                return True
        return False

    def load(self, path: Path, width: int = 1400, max_height: int = 6000, settle_s: float = 0.5) -> PageLoad:
        """Open a local file, wait for load, record errors/requests, screenshot the full page."""
        url = path.resolve().as_uri()
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=session)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            session,
        )
        self._events.clear()
        self.call("Page.navigate", {"url": url}, session)
        loaded = self.wait_event("Page.loadEventFired", session, self.timeout_s)
        self.wait_event("Never.happens", session, settle_s)  # let late requests/errors arrive
        metrics = self.call("Page.getLayoutMetrics", session=session)
        height = int(min(max_height, metrics.get("cssContentSize", metrics.get("contentSize"))["height"]))
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": max(height, 300), "deviceScaleFactor": 1, "mobile": False},
            session,
        )
        shot = self.call("Page.captureScreenshot", {"format": "png"}, session)
        title = self.call("Runtime.evaluate", {"expression": "document.title", "returnByValue": True}, session)[
            "result"
        ].get("value", "")
        text = self.call(
            "Runtime.evaluate",
            {"expression": "document.body.innerText.slice(0, 20000)", "returnByValue": True},
            session,
        )["result"].get("value", "")
        result = PageLoad(
            url=url, loaded=loaded, screenshot_png=base64.b64decode(shot["data"]), title=title, text_sample=text
        )
        for event in self._events:
            if event.get("sessionId") != session:
                continue
            method, params = event.get("method"), event.get("params", {})
            if method == "Network.requestWillBeSent":
                request_url = params.get("request", {}).get("url", "")
                if request_url != url:
                    result.network_requests.append(request_url)
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                result.console_errors.append(
                    " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
                )
            elif method == "Runtime.exceptionThrown":
                result.console_errors.append(str(params.get("exceptionDetails", {}).get("text")))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                result.console_errors.append(f"{entry.get('source')}: {entry.get('text')} {entry.get('url', '')}")
        self.call("Target.closeTarget", {"targetId": target})
        return result

    def _read_loop(self) -> None:  # runs in a daemon thread until Chromium closes its end
        buffer = b""
        with os.fdopen(self._from_chrome_r, "rb", buffering=0) as stream:
            while True:
                chunk = stream.read(1 << 16)
                if not chunk:
                    return
                buffer += chunk
                while b"\0" in buffer:
                    raw, buffer = buffer.split(b"\0", 1)
                    try:
                        self._messages.put(json.loads(raw))
                    except json.JSONDecodeError:
                        continue


def _move_high(fd: int) -> int:
    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high
