"""One JSON POST over HTTP(S) with the standard library, its failures sorted into "retry"
(connection refused, timeout, 5xx, 408, 429) and "give up" (any other 4xx: the sink refuses
this change and will refuse it again)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Mapping

from logsift import __version__
from logsift.exceptions import SinkError

RETRY_STATUS = {408, 425, 429}
USER_AGENT = f"logsift/{__version__}"


def post_json(url: str, body: Any, timeout: float, headers: Mapping[str, str] | None = None) -> int:
    """POST `body` as JSON; the HTTP status when it is 2xx, else SinkError. Credentials in the
    URL (`https://user:password@host/...`) are sent as HTTP basic authentication."""
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    url, auth = split_credentials(url)
    request = urllib.request.Request(url, data=data, method="POST", headers={
        "Content-Type": "application/json", "User-Agent": USER_AGENT, **auth, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - http(s) checked
            response.read()
            status: int = response.status
            return status
    except urllib.error.HTTPError as error:
        detail = _detail(error)
        retry = error.code >= 500 or error.code in RETRY_STATUS
        raise SinkError(f"HTTP {error.code} {error.reason}{detail}", url, retry=retry) from None
    except (TimeoutError, urllib.error.URLError, ConnectionError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise SinkError(f"cannot reach it: {reason}", url, retry=True) from None


def _detail(error: urllib.error.HTTPError) -> str:
    try:
        text = error.read(500).decode("utf-8", "replace").strip()
    except OSError:
        return ""
    return f": {' '.join(text.split())}" if text else ""


def split_credentials(url: str) -> tuple[str, dict[str, str]]:
    """The URL without `user:password@`, and the Authorization header they make."""
    import base64
    from urllib.parse import unquote, urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.username is None:
        return url, {}
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    secret = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
    header = {"Authorization": "Basic " + base64.b64encode(secret).decode("ascii")}
    return urlunsplit(parts._replace(netloc=netloc)), header
