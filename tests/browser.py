"""A real browser for the HTML report: Debian's Chromium, headless, driven by Selenium through
Debian's chromedriver (nothing is downloaded). The flags keep it off the network it would
otherwise try to reach at start (../shared/COMPONENTS.md).

`Browser.open(path)` loads a page and returns what a test checks: the network requests the page
made (from Chromium's performance log) and the console messages it logged.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-quic", "--disable-extensions",
    "--window-size=1280,2000",
)


def available() -> str | None:
    """Why no browser can run here, or None."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if shutil.which(path) is None:
            return f"needs {path}: apt-get install chromium chromium-driver (make test installs them)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "needs selenium (the dev extra: make test installs it)"
    return None


@dataclass
class Loaded:
    requests: list[str]  # URLs the page asked for, its own file included
    console: list[dict[str, Any]]  # console and CSP messages: level, message


class Browser:
    def __init__(self) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.profile = tempfile.mkdtemp(prefix="logsift-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={self.profile}")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        self.driver: Any = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
        self.driver.set_page_load_timeout(30)

    def open(self, path: Path) -> Loaded:
        """Load a page; its requests are those made for its document (Chromium's own pages,
        such as a new tab's, log theirs too, with their own document URL)."""
        driver = self.driver
        uri = path.resolve().as_uri()
        driver.get("about:blank")
        driver.get_log("performance")  # drop what earlier pages logged
        driver.get_log("browser")
        self.media()
        driver.get(uri)
        requests = []
        for entry in driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            params = message.get("params", {})
            if message.get("method") == "Network.requestWillBeSent" and params.get("documentURL") == uri:
                requests.append(params["request"]["url"])
        return Loaded(requests, [entry for entry in driver.get_log("browser") if uri in entry.get("message", "")
                                 or not entry.get("message", "").startswith(("chrome://", "devtools://"))])

    def media(self, media: str = "", scheme: str = "light") -> None:
        """Emulate print (or screen) media and a colour scheme, as a reader's settings would."""
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "media": media, "features": [{"name": "prefers-color-scheme", "value": scheme}],
        })

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def screenshot(self) -> bytes:
        data: bytes = self.driver.get_screenshot_as_png()
        return data

    def close(self) -> None:
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)
