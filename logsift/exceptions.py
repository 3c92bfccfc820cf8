"""All exceptions that logsift raises on purpose are defined here.

The library never prints or exits; the CLI maps these to a one-line message and exit code 2.
Every message says what was wrong, where (file:line when there is one) and, when it helps,
what to do.
"""

from __future__ import annotations


class LogsiftError(Exception):
    """Base of every error logsift reports to the user (exit code 2)."""

    def __init__(self, message: str, where: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where

    def __str__(self) -> str:
        if not self.where:
            return self.message
        where = self.where
        if len(where) > WHERE_MAX:  # a 5000-character file name is still one readable line
            where = where[: WHERE_MAX // 2] + "..." + where[-WHERE_MAX // 2 :]
        return f"{where}: {self.message}"


WHERE_MAX = 200


class InputError(LogsiftError):
    """The input cannot be read: missing file, binary data, unknown format."""


class RuleError(LogsiftError):
    """A rule file is broken: bad TOML, a missing key, a regex that does not compile."""


class UsageError(LogsiftError):
    """Options that contradict each other or name something that does not exist."""


class OutputError(LogsiftError):
    """The report cannot be written: a full disk, a closed or unwritable output."""


class ModelUnavailable(LogsiftError):
    """The learned fallback was asked for but cannot run (scikit-learn missing, no model)."""


class SinkError(LogsiftError):
    """A sink (webhook, Alertmanager) did not take a state change. `retry`: whether sending it
    again may work (the sink is down, or overloaded), or not (it refused the change as invalid)."""

    def __init__(self, message: str, where: str | None = None, retry: bool = True) -> None:
        super().__init__(message, where)
        self.retry = retry


class SinkClosed(SinkError):
    """The sink went away for good (the reader of stdout exited, as `| head` does): stop."""

    def __init__(self, message: str, where: str | None = None) -> None:
        super().__init__(message, where, retry=False)
