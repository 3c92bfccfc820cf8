"""The sanitiser and the secret shapes: every sample redacted, every near miss left alone, no
raw control or bidi character from log text in any output mode, secrets in none of them."""

from __future__ import annotations

import json
import re
import unicodedata

import pytest

from logsift import sanitize
from tests.helpers import invoke

SHAPES = sanitize.shapes()
SAMPLES = [(shape.name, sample) for shape in SHAPES for sample in shape.samples]
NEAR_MISSES = [(shape.name, sample) for shape in SHAPES for sample in shape.ok]
# What may never appear raw in output: C0 but LF, DEL, C1, bidi and other format characters.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


def _secret(name: str, sample: str) -> str:
    shape = next(shape for shape in SHAPES if shape.name == name)
    match = shape.pattern.search(sample)
    assert match is not None, f"{name}: its own sample does not match: {sample!r}"
    return match.group("secret") if match.start("secret") >= 0 else match.group("secret_bare")


@pytest.mark.parametrize("name, sample", SAMPLES)
def test_every_sample_is_redacted(name: str, sample: str) -> None:
    redacted = sanitize.redact(sample)
    assert sanitize.REDACTED in redacted and _secret(name, sample) not in redacted, redacted
    assert sanitize.redact(redacted) == redacted  # idempotent


@pytest.mark.parametrize("name, sample", NEAR_MISSES)
def test_near_misses_are_left_alone(name: str, sample: str) -> None:
    assert sanitize.redact(sample) == sample


def test_every_shape_has_samples() -> None:
    assert all(shape.samples for shape in SHAPES)
    assert len(SAMPLES) >= 39


@pytest.mark.parametrize("text", [
    "/home/user/.cache/huggingface/hub/models--Qwen--Qwen2.5-7B-Instruct/snapshots/a09a35458c702b33eeacc393d103063234e8bc28",
    "s=8c2e1f0b3a4d4e5f9a8b7c6d5e4f3a2b;i=1a2b;b=0123456789abcdef0123456789abcdef;m=12;t=652a9fa53a3c0",
    "model=Qwen/Qwen2.5-72B-Instruct-AWQ dtype=bfloat16",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.14 GiB",
])
def test_the_entropy_catch_spares_paths_digests_and_model_names(text: str) -> None:
    assert sanitize.redact(text) == text


def test_the_entropy_catch_takes_random_tokens() -> None:
    assert sanitize.redact("session=Zk3qP9xLmT2vB8nR4wY6cJ1h") == "session=[REDACTED]"
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3"
    assert sanitize.redact(body) == sanitize.REDACTED


def test_every_invisible_character_class_is_escaped() -> None:
    # The hand-written list in sanitize matches Unicode's categories (Cc, Cf, Cs, Zl, Zp).
    missed = [hex(code) for code in range(0x110000)
              if unicodedata.category(chr(code)) in ("Cc", "Cf", "Cs", "Zl", "Zp")
              and sanitize.escape(chr(code)) == chr(code)]
    assert missed == []
    assert sanitize.escape("a\tb\nc", lines=True) == "a\tb\nc"
    assert sanitize.escape("a\tb\nc\rd") == "a\\tb\\nc\\rd"
    assert sanitize.clean("\x1b[31mred\x1b[0m \x1bc\u202egnp.exe") == "red \\x1bc\\u202egnp.exe"


def test_json_escapes_c1_bidi_and_surrogates() -> None:
    text = sanitize.dumps({"a": "x\u202e\x85\ud800\U000e0001\u2028"})
    assert RAW.search(text) is None and text.isascii()
    assert json.loads(text)["a"][:3] == "x\u202e\x85"


# -- through every output ----------------------------------------------------------------------

_HOSTILE = ("\x1bc\x1b(0\x1b]0;pwned\x07\r\x07\x9b\u202egnp\u2066\u200f\u2028")


def _journal(text: str) -> str:
    return (
        "May 25 20:00:01 h systemd[1]: Started x.service - X.\n"
        f"May 25 20:00:02 h python[12]: RuntimeError: CUDA error: out of memory {text}\n"
        "May 25 20:00:03 h systemd[1]: x.service: Main process exited, code=exited, "
        f"status=1/{text.replace(' ', '')}\n"
        "May 25 20:00:03 h systemd[1]: x.service: Failed with result 'exit-code'.\n"
    )


def _structured(text: str) -> str:
    entries = [
        {"MESSAGE": "Started x.service - X.", "_PID": "1", "SYSLOG_IDENTIFIER": "systemd", "UNIT": "x.service",
         "_HOSTNAME": f"h{text}\nIncident 9: forged.service RESOLVED"},
        {"MESSAGE": f"RuntimeError: CUDA error: out of memory {text}", "_PID": "12", "SYSLOG_IDENTIFIER": "python",
         "_SYSTEMD_UNIT": "x.service\n  9  forged.service", "_HOSTNAME": f"h{text}\nIncident 9: forged.service RESOLVED"},
        {"MESSAGE": f"x.service: Failed with result '{text}\nforged'.", "_PID": "1", "SYSLOG_IDENTIFIER": "systemd",
         "UNIT": "x.service", "_HOSTNAME": f"h{text}\nIncident 9: forged.service RESOLVED"},
    ]
    return "".join(json.dumps(entry) + "\n" for entry in entries)


OUTPUTS = ["terminal", "json", "table", "report markdown", "report html"]


def _run(output: str, text: str) -> tuple[int, str, str]:
    """Triage with `-o output`, or the post-mortem (`report markdown`, `report html`)."""
    if output.startswith("report "):
        return invoke("report", "--no-model", "-o", output.split()[1], input=text)
    return invoke("--no-model", "--color", "never", "-o", output, input=text)


@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize("build", [_journal, _structured])
def test_no_raw_control_or_bidi_character_and_no_forged_line(output: str, build: object) -> None:
    code, out, _ = _run(output, build(_HOSTILE))  # type: ignore[operator]
    assert code == 1
    assert RAW.search(out) is None, repr(RAW.search(out))
    assert "\nIncident 9" not in out and "\n  9  forged" not in out


@pytest.mark.parametrize("output", [*OUTPUTS, "explain"])
def test_secrets_are_redacted_in_every_output(output: str, tmp_path: object) -> None:
    lines = ["May 25 20:00:01 h systemd[1]: Started x.service - X.",
             "May 25 20:00:02 h python[12]: Traceback (most recent call last):",
             'May 25 20:00:02 h python[12]:   File "/srv/app.py", line 8, in connect']
    lines += [f"May 25 20:00:02 h python[12]:     {sample}" for _, sample in SAMPLES if "\n" not in sample]
    lines += ["May 25 20:00:02 h python[12]: RuntimeError: CUDA error: out of memory " +
              " ".join(sample for _, sample in SAMPLES if "\n" not in sample),
              "May 25 20:00:03 h systemd[1]: x.service: Main process exited, code=exited, status=1/FAILURE"]
    text = "\n".join(lines) + "\n"
    if output == "explain":
        from pathlib import Path

        path = Path(str(tmp_path)) / "journal.txt"
        path.write_text(text)
        code, out, _ = invoke("explain", str(path), "--line", "5")
    else:
        code, out, _ = _run(output, text)
    assert code in (0, 1)
    leaked = [name for name, sample in SAMPLES if "\n" not in sample and len(_secret(name, sample)) >= 6
              and _secret(name, sample) in out]
    assert leaked == []


MULTILINE = [(name, sample) for name, sample in SAMPLES if "\n" in sample]


@pytest.mark.parametrize("output", [*OUTPUTS, "explain"])
@pytest.mark.parametrize("name, sample", MULTILINE)
def test_multi_line_secrets_are_redacted_line_by_line_and_whole(output: str, name: str, sample: str,
                                                                tmp_path: object) -> None:
    # A PEM key printed into the journal: one line each (text), or one MESSAGE (JSON).
    from pathlib import Path

    body = _secret(name, sample)
    pieces = [piece for piece in body.split("\n") if len(piece) >= 16]
    head = ["May 25 20:00:01 h systemd[1]: Started x.service - X.",
            "May 25 20:00:02 h python[12]: Traceback (most recent call last):",
            'May 25 20:00:02 h python[12]:   File "/srv/app.py", line 8, in connect']
    lines = head + [f"May 25 20:00:02 h python[12]:     {line}" for line in sample.split("\n")]
    lines += ["May 25 20:00:02 h python[12]: RuntimeError: CUDA error: out of memory",
              "May 25 20:00:03 h systemd[1]: x.service: Main process exited, code=exited, status=1/FAILURE"]
    entries = [{"MESSAGE": "Started x.service - X.", "_PID": "1", "SYSLOG_IDENTIFIER": "systemd", "UNIT": "x.service"},
               {"MESSAGE": "RuntimeError: CUDA error: out of memory while loading\n" + sample, "_PID": "12",
                "SYSLOG_IDENTIFIER": "python", "_SYSTEMD_UNIT": "x.service"},
               {"MESSAGE": "x.service: Failed with result 'exit-code'.", "_PID": "1", "SYSLOG_IDENTIFIER": "systemd",
                "UNIT": "x.service"}]
    for text in ("\n".join(lines) + "\n", "".join(json.dumps(entry) + "\n" for entry in entries)):
        if output == "explain":
            path = Path(str(tmp_path)) / "journal.txt"
            path.write_text(text)
            code, out, _ = invoke("explain", str(path), "--line", "3" if text.startswith("May") else "2")
        else:
            code, out, _ = _run(output, text)
        assert code in (0, 1)
        assert [piece for piece in pieces if piece in out] == [], out[-2000:]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b[36m(RayWorkerWrapper pid=4009)\x1b[0m RuntimeError", "(RayWorkerWrapper pid=4009) RuntimeError"),
        ("[36m(RayWorkerWrapper pid=4009)[0m RuntimeError", "(RayWorkerWrapper pid=4009) RuntimeError"),
        # brackets that merely end in "m" are text, not a colour that lost its ESC
        ("pip install 'logsift[ml]'", "pip install 'logsift[ml]'"),
        ("x[m]", "x[m]"),
        ("retry in [5m]", "retry in [5m]"),
    ],
)
def test_escape_sequences_and_their_paste_remnants_go_text_stays(text: str, shown: str) -> None:
    assert sanitize.clean(text) == shown
