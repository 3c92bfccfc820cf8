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
    return user_cache()


def user_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "logsift"


def make_cache(directory: Path) -> None:
    """The one directory logsift creates: `logsift` under the user's cache directory (and that
    cache directory itself, as XDG says). A directory named by LOGSIFT_CACHE_DIR or --cache-dir
    is created only when its parent exists: a typo must not leave folders about. Raises OSError
    when it cannot be made (the caller goes on without the cache)."""
    if directory == user_cache():
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    else:
        directory.mkdir(exist_ok=True, mode=0o700)
