"""logsift: read the systemd journal, find the line that explains a failure, say what to do.

    import logsift
    report = logsift.diagnose("journal.txt")
    report.incidents[0].root_cause.rule_id     # 'cuda.header-missing'
    report.to_dict()                           # the JSON contract, version 1

The names below are imported on first use, so that `import logsift` (and `logsift --help`)
stays fast. The API is documented in docs/api.md.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# name -> module that defines it
_EXPORTS = {
    "diagnose": "logsift.api",
    "parse_priority": "logsift.api",
    "Report": "logsift.report.document",
    "Summary": "logsift.report.document",
    "Template": "logsift.report.document",
    "Origin": "logsift.report.document",
    "Incident": "logsift.records",
    "Run": "logsift.records",
    "RunFact": "logsift.records",
    "Finding": "logsift.records",
    "Record": "logsift.records",
    "Event": "logsift.records",
    "Severity": "logsift.records",
    "LogsiftError": "logsift.exceptions",
    "InputError": "logsift.exceptions",
    "UsageError": "logsift.exceptions",
    "RuleError": "logsift.exceptions",
    "ModelUnavailable": "logsift.exceptions",
    "schema": "logsift.report.schema",
}

__all__ = [
    "Event", "Finding", "Incident", "InputError", "LogsiftError", "ModelUnavailable", "Origin", "Record", "Report",
    "RuleError", "Run", "RunFact", "Severity", "Summary", "Template", "UsageError", "__version__", "diagnose", "parse_priority",
    "schema",
]

if TYPE_CHECKING:
    from logsift.api import diagnose, parse_priority
    from logsift.exceptions import InputError, LogsiftError, ModelUnavailable, RuleError, UsageError
    from logsift.records import Event, Finding, Incident, Record, Run, RunFact, Severity
    from logsift.report.document import Origin, Report, Summary, Template
    from logsift.report.schema import schema


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'logsift' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
