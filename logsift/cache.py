"""Where logsift keeps what it derives from the rule library (the model, the compiled scan
database): `$LOGSIFT_CACHE_DIR`, else `$XDG_CACHE_HOME/logsift`, else `~/.cache/logsift`.

Everything in it is keyed by a digest of what it was made from, and is only ever a speed-up:
a missing, stale or unwritable cache means doing the work again, never a failure.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    explicit = os.environ.get("LOGSIFT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "logsift"
