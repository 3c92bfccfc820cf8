"""Every fixture's JSON output follows the JSON Schema of the contract (`logsift schema`)."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest

import logsift
from logsift.exceptions import InputError
from logsift.rules import load_rules
from tests.helpers import FIXTURES, SHARED

RULES = load_rules()
VALIDATOR = jsonschema.Draft202012Validator(logsift.schema(), format_checker=jsonschema.FormatChecker())
FILES = sorted(
    [*FIXTURES.glob("**/journal.txt"), *FIXTURES.glob("captured/*.txt"), *FIXTURES.glob("healthy/*.txt"),
     *FIXTURES.glob("corpus/cases/*.log"), *(SHARED / "corpus" / "issues" / "cases").glob("*.log")]
)


def test_the_schema_is_a_valid_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(logsift.schema())


@pytest.mark.parametrize("path", FILES, ids=[str(path.relative_to(path.parents[1])) for path in FILES])
def test_fixture_output_follows_the_schema(path: Path) -> None:
    try:
        document = logsift.diagnose(path, rules=RULES, model="off").to_dict()
    except InputError as error:
        # A paste with no readable record (a pretty-printed JSON object cut short, as pasted) is
        # refused as the contract says: one line that says what and where, no document.
        message = str(error)
        assert "\n" not in message and str(path) in message and "cut short" in message, message
        return
    errors = sorted(VALIDATOR.iter_errors(document), key=lambda error: list(error.absolute_path))
    assert not errors, [f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in errors[:5]]


def test_the_schema_rejects_what_breaks_the_contract() -> None:
    document = logsift.diagnose(FIXTURES / "seed-incident" / "journal.txt", rules=RULES, model="off").to_dict()
    broken = {**document, "version": 2}
    assert not VALIDATOR.is_valid(broken)
    del document["incidents"][0]["runs"][0]["outcome"]
    assert not VALIDATOR.is_valid(document)
