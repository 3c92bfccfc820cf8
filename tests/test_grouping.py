"""Grouping: one failure's lines become one event, per stream, in input order."""

from __future__ import annotations

from logsift.group import group
from logsift.read.text import TextReader
from logsift.records import Event

NOHIT: frozenset[int] = frozenset()
HIT: frozenset[int] = frozenset({0})


def events(text: str, hits_on: tuple[str, ...] = ()) -> list[Event]:
    records = TextReader("t", year=2026).read(text.splitlines())
    items = [(record, HIT if any(h in record.message for h in hits_on) else NOHIT) for record in records]
    return [grouped.event for grouped in group(items)]


CHAINED = """\
Traceback (most recent call last):
  File "/x/cpp_extension.py", line 2595, in _run_ninja_build
    subprocess.run(
subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/x/utils.py", line 208, in load_jit
    return load_inline(
RuntimeError: Error building extension 'moe': [1/2] /dev/null/bin/nvcc -c a.cu -o a.o
FAILED: a.o
/bin/sh: 1: /dev/null/bin/nvcc: not found
ninja: build stopped: subcommand failed.

INFO 05-25 20:37:40 [launcher.py:80] Shutting down
"""


def test_chained_traceback_with_multiline_message_is_one_event() -> None:
    found = events(CHAINED)
    assert [event.kind for event in found] == ["traceback"]
    (event,) = found
    assert event.line == 1
    assert event.records[-1].message == "ninja: build stopped: subcommand failed."


def test_interleaved_ranks_stay_apart() -> None:
    text = "\n".join(
        f"May 25 20:16:10 host python[{pid}]: {line}"
        for line in ("Traceback (most recent call last):", '  File "/a.py", line 1, in f', "    f()", "RuntimeError: boom")
        for pid in (101, 102)
    )
    found = events(text)
    assert len(found) == 2
    assert {event.first.pid for event in found} == {101, 102}
    for event in found:
        assert len(event.records) == 4 and len({record.pid for record in event.records}) == 1


def test_build_output_event() -> None:
    text = (
        "[1/3] /usr/local/cuda/bin/nvcc -c x.cu -o x.o\n"
        "FAILED: x.o\n"
        "x.cu(3): error: identifier \"foo\" is undefined\n"
        "1 error detected in the compilation of \"x.cu\".\n"
        "ninja: build stopped: subcommand failed.\n"
        "INFO healthy line again\n"
    )
    found = events(text, hits_on=("nvcc", "FAILED", "error"))
    assert found[0].kind == "build" and len(found[0].records) == 5


def test_nccl_burst_and_banner() -> None:
    text = (
        "host:1:2 [0] NCCL WARN Net : Connection closed by remote peer 10.0.0.2<5123>\n"
        "host:1:2 [0] NCCL INFO transport/net.cc:1298 -> 6\n"
        "host:1:2 [0] NCCL WARN Call to ibv_poll_cq failed\n"
        "plain line\n"
    )
    (event,) = events(text, hits_on=("NCCL WARN",))
    assert event.kind == "nccl" and len(event.records) == 3


def test_events_come_out_in_order_of_first_line() -> None:
    text = (
        "May 25 20:37:37 h python[7]: Traceback (most recent call last):\n"
        "May 25 20:37:37 h python[7]:   File \"/a.py\", line 1, in f\n"
        "May 25 20:37:37 h systemd[1]: x.service: Main process exited, code=exited, status=1/FAILURE\n"
        "May 25 20:37:37 h python[7]: RuntimeError: boom\n"
        "May 25 20:37:38 h systemd[1]: x.service: Failed with result 'exit-code'.\n"
    )
    found = events(text)
    assert [event.kind for event in found] == ["traceback", "lifecycle", "lifecycle"]
    assert [event.line for event in found] == [1, 3, 5]
    assert found[0].records[-1].message == "RuntimeError: boom"


def test_unflagged_lines_make_no_event() -> None:
    assert events("INFO all good\nDEBUG still good\n") == []


HEADERLESS = """\
  File "/srv/dynamo/runtime/__init__.py", line 38, in wrapper
    runtime = DistributedRuntime(loop, static)
              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
Exception: Failed to connect to etcd server
INFO 05-25 20:37:40 [launcher.py:80] Shutting down
"""


def test_a_paste_that_starts_below_the_header_is_still_a_traceback() -> None:
    found = events(HEADERLESS, hits_on=('", line ',))
    assert found[0].kind == "traceback"
    assert [record.message for record in found[0].records][-1] == "Exception: Failed to connect to etcd server"


def test_an_indented_line_that_only_mentions_a_line_number_opens_nothing() -> None:
    found = events('    see "setup.py", line 3 for the flag\n', hits_on=('", line ',))
    assert [event.kind for event in found] == ["line"]


CRASH_AFTER = """\
2026-12-01 22:11:46,834 {level} worker: warming up rmsnorm (torch.bfloat16, hidden 4096)
Traceback (most recent call last):
  File "/srv/worker.py", line 45, in <module>
    y = flashinfer.rmsnorm(x, weight, eps=1e-6)
RuntimeError: Ninja build failed.
"""


def test_a_traceback_right_after_a_warning_line_is_logged_at_that_level() -> None:
    # python logging's exc_info: log.warning("optional kernels unavailable", exc_info=True)
    (_, traceback) = events(CRASH_AFTER.format(level="WARNING"), hits_on=("Traceback", "warming up"))
    assert traceback.kind == "traceback" and traceback.level == "warning" and traceback.logged_below_error


def test_a_traceback_right_after_a_progress_line_is_an_uncaught_exception() -> None:
    # an INFO or DEBUG line, then the interpreter's report of the crash that followed it: not a
    # traceback the program logged and carried on from (flashinfer-cxx14-compile-error capture)
    for level in ("INFO", "DEBUG"):
        (_, traceback) = events(CRASH_AFTER.format(level=level), hits_on=("Traceback", "warming up"))
        assert traceback.kind == "traceback" and traceback.level is None and not traceback.logged_below_error
