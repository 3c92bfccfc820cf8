"""Which exception of a chained traceback the catch-all quotes. Python prints a chain from the
first exception to the last: across "During handling of the above exception, another exception
occurred" the earlier one is what a handler was dealing with and the later one the failure;
across "The above exception was the direct cause of the following exception" the earlier one is
the cause and the later a wrapper. Both captures are real (fixtures/captured/README.md)."""

from __future__ import annotations

import logsift
from logsift.rules import load_rules
from tests.helpers import FIXTURES

CATCH_ALL = "python.unclassified-traceback"


def _catch_all_evidence(name: str) -> str:
    rules = load_rules()
    only = rules.without(rule.id for rule in rules.rules if rule.id != CATCH_ALL)
    report = logsift.diagnose(FIXTURES / "captured" / name, rules=only, model=False)
    causes = [
        run["root_cause"] for incident in report.to_dict()["incidents"] for run in incident["runs"] if run["root_cause"]
    ]
    assert [cause["class"] for cause in causes] == [CATCH_ALL]
    return str(causes[0]["evidence"][0]["text"])


def test_after_during_handling_the_last_exception_is_quoted() -> None:
    # transformers' trust_remote_code prompt meets a closed stdin (EOFError), then raises the
    # ValueError that says what to do
    assert _catch_all_evidence("unseen-remote-code.txt").startswith("ValueError: The repository ")


def test_across_a_direct_cause_the_cause_is_quoted() -> None:
    # huggingface_hub's LocalEntryNotFoundError is the direct cause of transformers' OSError
    assert _catch_all_evidence("hf-offline-not-cached.txt").startswith(
        "huggingface_hub.errors.LocalEntryNotFoundError: "
    )
