"""Headless Debian Chromium for the browser tests (Selenium + chromedriver from apt, nothing
downloaded), a phone-sized viewport, and a small PNG reader to check screenshots."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.patience import HANG_GUARD_S

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="Debian chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)",
)
PHONE = (390, 844)
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


OFFLINE = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"
"""A flag that leaves the browser no name but 127.0.0.1 (what a machine without a network sees)."""


@contextmanager
def detached_chromedriver(workdir: str) -> Iterator[str]:
    """chromedriver started outside this process's tree (``setsid -f``: adopted by init), as a phone's
    browser is: the serve API refuses answers from a process paragents started (a session's tool), and
    the tests run the server in this process. Yields its URL; stops it by pid at the end."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    pidfile = os.path.join(workdir, "chromedriver.pid")
    script = f"echo $$ > {pidfile}; exec {DRIVER} --port={port} --allowed-ips=127.0.0.1"
    subprocess.run(["setsid", "-f", "sh", "-c", script], check=True, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + HANG_GUARD_S
    while True:  # another process: wait until it listens (bounded)
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            break
        if time.monotonic() > deadline:
            raise TimeoutError("chromedriver did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(Path(pidfile).read_text().strip()), signal.SIGTERM)


@contextmanager
def phone_browser(*flags: str, console: bool = False) -> Iterator[Any]:
    """A headless Chromium whose viewport is a 390x844 phone (blocking API: use it from a thread);
    ``flags`` are added to Chromium's; with ``console`` its console (CSP violations...) is kept for
    ``driver.get_log("browser")``."""
    from selenium import webdriver

    with tempfile.TemporaryDirectory(prefix="paragents-chromium-") as profile:
        options = webdriver.ChromeOptions()
        assert CHROMIUM is not None and DRIVER is not None
        options.binary_location = CHROMIUM
        for flag in (*FLAGS, *flags, f"--user-data-dir={profile}", f"--window-size={PHONE[0]},{PHONE[1]}"):
            options.add_argument(flag)
        if console:
            options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        with detached_chromedriver(profile) as url:
            driver: Any = webdriver.Remote(command_executor=url, options=options)
            # chromedriver's browser log, as webdriver.Chrome offers it (``console``)
            driver.get_log = lambda kind: driver.execute("getLog", {"type": kind})["value"]
            try:
                driver.execute_cdp_cmd(
                    "Emulation.setDeviceMetricsOverride",
                    {"width": PHONE[0], "height": PHONE[1], "deviceScaleFactor": 1, "mobile": True},
                )
                driver.set_page_load_timeout(30)
                yield driver
            finally:
                driver.quit()


def read_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """Decode an 8-bit RGB/RGBA PNG: (width, height, rows of RGBA bytes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, channels = 8, b"", 0, 0, 4
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6)
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for y in range(height):
        filt, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if filt == 1:
                line[i] = (line[i] + a) & 255
            elif filt == 2:
                line[i] = (line[i] + b) & 255
            elif filt == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif filt == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
        rgba = (
            line
            if channels == 4
            else bytearray(x for j in range(width) for x in (*line[j * 3 : j * 3 + 3], 255))
        )
        rows.append(bytes(rgba))
    return width, height, rows


def artefact_dir() -> Path:
    """Where browser screenshots are kept (``.artifacts/`` in the checkout, ignored by git)."""
    path = Path(__file__).resolve().parents[2] / ".artifacts"
    path.mkdir(exist_ok=True)
    return path
