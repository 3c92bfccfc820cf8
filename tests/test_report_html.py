"""The HTML post-mortem, opened in a real browser (headless Chromium, tests/browser.py).

The seed report must hold one resolved incident whose three failed runs carry the seed's three
classes in order, show CUDA_HOME=/dev/null arriving in run 2 and the toolkit path changing in
run 3, load nothing from anywhere, log nothing on the console, and look like something (a
screenshot that is not blank). Log text that carries markup, links, terminal escapes and a
right-to-left override must show as inert text.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pytest

from logsift.report.html import policy
from tests.browser import Browser, available
from tests.helpers import FIXTURES, invoke

SEED = FIXTURES / "seed-incident" / "journal.txt"
SEED_CLASSES = ["cuda.toolkit-too-old-for-arch", "cuda.nvcc-not-found", "cuda.header-missing"]

# A failure whose captured values, host name and evidence carry everything a log can throw at a page.
HOSTILE_HOST = 'gpu"><svg/onload=alert(1)>'
HOSTILE = [
    f"2026-05-25T20:11:02+0000 {HOSTILE_HOST} systemd[1]: Started evil.service - Evil.",
    f"2026-05-25T20:11:05+0000 {HOSTILE_HOST} python3[4242]: Traceback (most recent call last):",
    f'2026-05-25T20:11:05+0000 {HOSTILE_HOST} python3[4242]:   File "/srv/<img src=x onerror=alert(4)>.py", line 1, '
    "in <module>",
    f"2026-05-25T20:11:05+0000 {HOSTILE_HOST} python3[4242]:     import evil  # <a href=\"javascript:alert(1)\">x</a> "
    "[click](javascript:alert(2)) \x1b[31mred\x1b[0m",
    f"2026-05-25T20:11:05+0000 {HOSTILE_HOST} python3[4242]: RuntimeError: Error building extension 'evil'",
    f"2026-05-25T20:11:05+0000 {HOSTILE_HOST} python3[4242]: /bin/sh: 1: "
    "/<script>alert(document.domain)</script>\u202eevil\x1b[2J/bin/nvcc: not found",
    f"2026-05-25T20:11:06+0000 {HOSTILE_HOST} systemd[1]: evil.service: Main process exited, code=exited, "
    "status=1/FAILURE",
    f"2026-05-25T20:11:06+0000 {HOSTILE_HOST} systemd[1]: evil.service: Failed with result 'exit-code'.",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    missing = available()
    if missing:
        pytest.skip(missing)
    started = Browser()
    try:
        yield started
    finally:
        started.close()


def _page(tmp_path: Path, journal: Path, name: str = "report.html") -> Path:
    code, out, err = invoke("report", "-o", "html", "--utc", str(journal))
    assert code == 1, err
    path = tmp_path / name
    path.write_text(out, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def seed_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _page(tmp_path_factory.mktemp("seed-html"), SEED)


def test_seed_dom_tells_the_story(browser: Browser, seed_page: Path) -> None:
    loaded = browser.open(seed_page)
    incidents = browser.js("return [...document.querySelectorAll('[data-incident]')].map(e => "
                           "[e.dataset.incident, e.dataset.unit, e.dataset.resolved])")
    assert incidents == [["1", "sglang-k26.service", "true"]]
    runs = browser.js("return [...document.querySelectorAll('[data-run]')].map(e => [e.dataset.run, e.dataset.class])")
    assert runs == [["1", SEED_CLASSES[0]], ["2", SEED_CLASSES[1]], ["3", SEED_CLASSES[2]]]
    # What changed: CUDA_HOME=/dev/null arrives in run 2, the toolkit path changes in run 3.
    cell = "return (document.querySelector(`tr[data-fact-run='${arguments[0]}'] td[data-fact='cuda_home']`) || {}).textContent"
    mark = "return (document.querySelector(`tr[data-fact-run='${arguments[0]}'] td[data-fact='cuda_home']`) || {dataset: {}}).dataset.mark"
    assert browser.js(cell, 1) == "not shown"
    assert browser.js(cell, 2).startswith("/dev/null") and browser.js(mark, 2) == "new"
    assert browser.js(cell, 3).startswith("/usr/local/cuda-13.0") and browser.js(mark, 3) == "changed"
    assert "was /dev/null" in browser.js(cell, 3)
    headers = browser.js("return [...document.querySelectorAll('table.facts-by-run th')].map(e => e.textContent)")
    assert headers[:2] == ["Run", "CUDA_HOME"]
    assert browser.js("return document.querySelector('section.fix').dataset.resolvedBy") == "4"
    assert browser.js("return document.querySelectorAll('svg.timeline rect.failed').length") == 3
    # The stylesheet applied (its hash is in the policy): the body is a column, not the full width.
    assert browser.js("return getComputedStyle(document.body).maxWidth") == "1152px"
    assert loaded.requests == [seed_page.resolve().as_uri()], "the page asked for more than itself"
    assert loaded.console == []


def test_seed_page_is_self_contained(seed_page: Path) -> None:
    html = seed_page.read_text(encoding="utf-8")
    assert re.search(r"<(?:script|link|img|iframe|object|embed)\b", html) is None
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", html.split("<main>")[0])
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html)
    assert meta is not None
    csp = unescape(meta.group(1))
    assert "default-src 'none'" in csp and "script-src 'none'" in csp
    css = re.search(r"<style>(.*?)</style>", html, re.S)
    assert css is not None and csp == policy(css.group(1)), "the policy allows exactly the page's stylesheet"
    assert "prefers-color-scheme: dark" in html and "@media print" in html
    assert "<details" in html and "<svg" in html


def test_screenshot_is_not_blank(browser: Browser, seed_page: Path) -> None:
    from PIL import Image

    browser.open(seed_page)
    image = Image.open(io.BytesIO(browser.screenshot())).convert("RGB")
    assert image.size[0] >= 1000
    colours = image.getcolors(maxcolors=1 << 20) or []
    assert len(colours) > 50, "a page of text, tables and a timeline has many colours"
    background = max(colours)[0]
    inked = sum(count for count, _ in colours) - background
    assert inked > 0.03 * image.size[0] * image.size[1]
    # The timeline's red bars are there: failed runs.
    assert any(r > 150 and g < 80 and b < 80 for _, (r, g, b) in colours)


def test_dark_scheme_and_print(browser: Browser, seed_page: Path) -> None:
    browser.open(seed_page)
    background = "return getComputedStyle(document.documentElement).backgroundColor"
    light = browser.js(background)
    browser.media(scheme="dark")
    dark = browser.js(background)
    assert light == "rgb(255, 255, 255)" and dark != light
    shown = "return document.querySelector('details.context pre').checkVisibility()"
    browser.media(scheme="light")
    assert browser.js(shown) is False, "on screen the lines around the evidence are folded"
    browser.media("print")
    assert browser.js(shown) is True, "printed, the folded lines are shown"
    browser.media()


def test_hostile_log_text_is_inert(browser: Browser, tmp_path: Path) -> None:
    journal = tmp_path / "hostile.txt"
    journal.write_text("\n".join(HOSTILE) + "\n", encoding="utf-8")
    page = _page(tmp_path, journal)
    loaded = browser.open(page)
    counts = browser.js("""return {
        scripts: document.scripts.length,
        images: document.images.length,
        svgs: document.querySelectorAll('svg').length,
        handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
        javascript: [...document.querySelectorAll('a[href]')].filter(a => !/^(https?:|#)/.test(a.getAttribute('href'))).length,
    }""")
    assert counts == {"scripts": 0, "images": 0, "svgs": 1, "handlers": 0, "javascript": 0}
    shown = browser.js("return document.body.innerText")  # what a reader sees
    text = browser.js("return document.body.textContent")  # folded <details> included
    evil = "/<script>alert(document.domain)</script>\\u202eevil"
    assert f"/bin/sh: 1: {evil}/bin/nvcc: not found" in shown  # as text, in the evidence
    assert f"nvcc not found at {evil}/bin/nvcc" in shown  # in the title, filled in with the value
    assert browser.js("return document.querySelector(`tr[data-fact-run='1'] td[data-fact='cuda_home']`)") is None
    assert evil in browser.js("return document.querySelector('details.context').textContent")
    assert '/srv/<img src=x onerror=alert(4)>.py' in text
    assert '<a href="javascript:alert(1)">x</a> [click](javascript:alert(2))' in text
    assert "\\u202e" in shown and "\u202e" not in text  # the override shown as an escape, not applied
    assert "\x1b" not in text and "[31m" not in text and "[2J" not in text
    assert browser.js("return document.querySelector('[data-incident]').dataset.host") == HOSTILE_HOST
    assert browser.js("return document.querySelector('[data-run]').dataset.class") == "cuda.nvcc-not-found"
    assert loaded.requests == [page.resolve().as_uri()]
    assert loaded.console == []
    from selenium.common.exceptions import NoAlertPresentException

    with pytest.raises(NoAlertPresentException):
        browser.driver.switch_to.alert.text  # noqa: B018 - no script ran, so no alert is open


def test_the_network_and_console_checks_can_fail(browser: Browser, tmp_path: Path) -> None:
    # The same checks on a page that does load something: they must see it.
    page = tmp_path / "leaky.html"
    page.write_text('<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/pixel.png"><script>console.error("boom")'
                    "</script></body></html>", encoding="utf-8")
    loaded = browser.open(page)
    assert "http://127.0.0.1:9/pixel.png" in loaded.requests
    assert any("boom" in entry["message"] for entry in loaded.console)
