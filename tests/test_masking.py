"""Masks and fingerprints: variable parts go, in order, and the fingerprint says what went and why."""

from __future__ import annotations

import pytest

from logsift.learn.masking import MASKS, fingerprint, mask, strip_prefix


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("request 123e4567-e89b-12d3-a456-426614174000 failed", "request <UUID> failed"),
        ("connect to 10.0.3.17:29500 refused", "connect to <IP> refused"),
        ("fatal error: curand.h: No such file or directory in /usr/local/cuda-13.0/include",
         "fatal error: curand.h: No such file or directory in <PATH>"),
        ("ptr 0x7f8416d6c1b6 cursor deadbeef0123456789", "ptr <HEX> cursor <HEX>"),
        ("torch 2.5.1+cu124 and vllm v0.6.3", "torch <VERSION> and vllm <VERSION>"),
        ("Tried to allocate 448.00 MiB on GPU 7", "Tried to allocate <NUM> MiB on GPU <NUM>"),
        ("at 2026-05-25T20:30:01.123456+00:00 and 21:22:51", "at <TIME> and <TIME>"),
        ("see https://huggingface.co/meta-llama/Llama-3.2-1B/resolve/main/config.json.", "see <URL>"),
        ("nvcc fatal : Unsupported gpu architecture 'compute_120'", "nvcc fatal : Unsupported gpu architecture 'compute_<NUM>'"),
    ],
)
def test_each_mask(text: str, expected: str) -> None:
    assert mask(text) == expected


def test_masks_are_named_data_in_order() -> None:
    names = [instruction.name for instruction in MASKS]
    assert names == ["timestamp", "uuid", "url", "ip", "path", "hex", "version", "number"]
    # Every placeholder is one token, so that token-position clustering keeps its shape.
    assert all(" " not in instruction.replacement for instruction in MASKS)


def test_earlier_masks_win() -> None:
    # A UUID is not hex runs and numbers; an IP is not a version; a path is not numbers.
    assert mask("id 123e4567-e89b-12d3-a456-426614174000") == "id <UUID>"
    assert mask("peer 192.168.1.20") == "peer <IP>"
    assert mask("open /opt/cuda-12.8/lib64/libcudart.so.12") == "open <PATH>"


def test_what_is_not_a_value_stays() -> None:
    # Ratios and systemd statuses are not paths; names with digits are not numbers.
    assert mask("gen throughput (token/s): 231.02") == "gen throughput (token/s): <NUM>"
    assert mask("status=1/FAILURE") == "status=<NUM>/FAILURE"
    assert mask("libcudart.so.12 for cu124 on python3") == "libcudart.so.12 for cu124 on python3"
    assert mask("sm_120") == "sm_<NUM>"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("ERROR 07-28 15:07:22 [core.py:632] RuntimeError: CUDA error", "RuntimeError: CUDA error"),
        ("[2026-05-25 21:22:51 TP0] Scheduler hit an exception", "Scheduler hit an exception"),
        ("2024-12-26 10:14:09,664 xinference.api.restful_api 4247 ERROR    boom", "boom"),
        ("[rank2]:[E1014 12:00:00.123456 ProcessGroupNCCL.cpp:1234] [Rank 2] Watchdog caught",
         "[Rank 2] Watchdog caught"),
        ("[   12.345678] NVRM: Xid (PCI:0000:3b:00): 79", "NVRM: Xid (PCI:0000:3b:00): 79"),
        ("ERROR:    [Errno 98] error while attempting to bind", "[Errno 98] error while attempting to bind"),
        ("RuntimeError: no prefix here", "RuntimeError: no prefix here"),
    ],
)
def test_strip_prefix(line: str, message: str) -> None:
    assert strip_prefix(line) == message


def test_fingerprint_groups_copies_and_says_why() -> None:
    first = fingerprint("ERROR 07-28 15:07:22 [core.py:632] RuntimeError: worker 3 died at 0x7f00aa, see /tmp/x.log")
    second = fingerprint("ERROR 07-29 09:01:02 [core.py:640] RuntimeError: worker 12 died at 0x7f00bb, see /var/y.log")
    other = fingerprint("RuntimeError: worker 3 exited at 0x7f00aa, see /tmp/x.log")
    assert first.key == second.key
    assert first.key != other.key
    assert first.template == "RuntimeError: worker <NUM> died at <HEX>, see <PATH>"
    ignored = [(part.text, part.hint) for part in first.parts if not part.contributes]
    assert ("ERROR 07-28 15:07:22 [core.py:632] ", "ignored: log prefix") in ignored
    assert ("3", "masked: number") in ignored
    assert ("0x7f00aa", "masked: hex") in ignored
    assert ("/tmp/x.log", "masked: path") in ignored
    # Contributing and ignored parts together are the whole message: nothing is lost silently.
    assert "".join(part.text for part in first.parts) == first.parts[0].text + first.template.replace(
        "<NUM>", "3").replace("<HEX>", "0x7f00aa").replace("<PATH>", "/tmp/x.log")
    explained = "\n".join(first.explain())
    assert "masked: hex" in explained and first.key in explained
