"""What the simulated units of one GPU host share: the clock's cached time strings, PIDs, bursts.

A unit is a generator of `Burst`s: lines it logs at one instant. The journal writer in
generate.py merges the units' bursts by time and renders each line in the chosen journalctl
format. Time strings are formatted once per second and reused, which keeps the generator fast
enough to write a gigabyte in a minute or two.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Iterator, NamedTuple, Sequence

# (identifier, pid or None, message): what journald stores for one entry.
Entry = tuple[str, "int | None", str]

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


class Stamps(NamedTuple):
    """One second, in every spelling the units and journalctl use."""

    iso: str  # journalctl short-iso: 2026-05-25T20:11:02+00:00
    short: str  # journalctl short: May 25 20:11:02
    dash: str  # python logging / SGLang: 2026-05-25 20:11:02
    mmdd: str  # vLLM: 05-25 20:11:02
    rfc: str  # Go slog / tracing, without fraction: 2026-05-25T20:11:02
    gin: str  # gin: 2026/05/25 - 20:11:02
    glog: str  # c10 / glog: 0525 20:11:02


class Clock:
    """Cached Stamps per whole second (UTC)."""

    def __init__(self) -> None:
        self._cache: dict[int, Stamps] = {}

    def __call__(self, t: float) -> Stamps:
        second = int(t)
        found = self._cache.get(second)
        if found is None:
            if len(self._cache) > 512:
                self._cache.clear()
            tm = time.gmtime(second)
            ymd = f"{tm.tm_year:04d}-{tm.tm_mon:02d}-{tm.tm_mday:02d}"
            hms = f"{tm.tm_hour:02d}:{tm.tm_min:02d}:{tm.tm_sec:02d}"
            found = Stamps(
                iso=f"{ymd}T{hms}+00:00",
                short=f"{MONTHS[tm.tm_mon - 1]} {tm.tm_mday:02d} {hms}",
                dash=f"{ymd} {hms}",
                mmdd=f"{tm.tm_mon:02d}-{tm.tm_mday:02d} {hms}",
                rfc=f"{ymd}T{hms}",
                gin=f"{tm.tm_year:04d}/{tm.tm_mon:02d}/{tm.tm_mday:02d} - {hms}",
                glog=f"{tm.tm_mon:02d}{tm.tm_mday:02d} {hms}",
            )
            self._cache[second] = found
        return found


class Burst(NamedTuple):
    """Lines a unit logs at time `t`. `busy`: the unit is inside a start-up, stop or failure
    sequence after these lines (the writer does not cut the journal there). `mark`: the kind of
    an injected failure whose first line this burst holds, for the manifest."""

    t: float
    entries: Sequence[Entry]
    busy: bool
    mark: str | None = None


@dataclass
class Host:
    """The machine: its name, clock, and PID counter (PIDs only grow, as on a real host)."""

    name: str
    clock: Clock
    next_pid: int = 1800

    def pid(self, rng: random.Random) -> int:
        self.next_pid += rng.randint(3, 60)
        if self.next_pid > 4_000_000:
            self.next_pid = 1800
        return self.next_pid


class Unit:
    """Base of the simulated units: lifecycle lines, timing, failure injection."""

    # Set by subclasses.
    unit = "x.service"
    description = "X"
    failure_kinds: tuple[str, ...] = ()

    def __init__(self, host: Host, rng: random.Random, start: float, restart_every: float) -> None:
        self.host = host
        self.rng = rng
        self.t = start
        self.restart_every = restart_every
        self.busy = True
        self.inject: str | None = None  # set by the writer: fail at the next chance
        self.cpu = 0.0
        self._sub_second = -1
        self._sub_last = 0

    # -- timing ------------------------------------------------------------------------------

    def at(self, delay: float, entries: Sequence[Entry], mark: str | None = None) -> Burst:
        """`entries` happen now (their own time strings were made with the current time);
        the unit's next lines come `delay` seconds later."""
        burst = Burst(self.t, entries, self.busy, mark)
        self.t += delay
        return burst

    def stamps(self) -> Stamps:
        return self.host.clock(self.t)

    def micros(self) -> int:
        """Microseconds within the current second for an application's own timestamp: increasing
        from one line to the next, as a program's clock is."""
        second = int(self.t)
        value = int((self.t - second) * 1e6)
        if second == self._sub_second and value <= self._sub_last:
            value = min(self._sub_last + self.rng.randint(40, 4000), 999_999)
        self._sub_second, self._sub_last = second, value
        return value

    # -- systemd -----------------------------------------------------------------------------

    def sd(self, text: str) -> Entry:
        return ("systemd", 1, text)

    def started(self) -> Entry:
        return self.sd(f"Started {self.unit} - {self.description}.")

    def consumed(self) -> Entry:
        self.cpu += self.rng.uniform(30, 4000)
        seconds = self.cpu
        hours, rest = divmod(seconds, 3600)
        minutes, secs = divmod(rest, 60)
        parts = []
        if hours:
            parts.append(f"{int(hours)}h")
        if minutes:
            parts.append(f"{int(minutes)}min")
        parts.append(f"{secs:.3f}s")
        self.cpu = 0.0
        return self.sd(f"{self.unit}: Consumed {' '.join(parts)} CPU time.")

    def stop_lines(self) -> tuple[list[Entry], list[Entry]]:
        """systemd's lines of a clean stop: before and after the service's own goodbye."""
        return (
            [self.sd(f"Stopping {self.unit} - {self.description}...")],
            [
                self.sd(f"{self.unit}: Deactivated successfully."),
                self.sd(f"Stopped {self.unit} - {self.description}."),
                self.consumed(),
            ],
        )

    def failed_lines(self, code: str, status: str, result: str) -> list[Entry]:
        return [
            self.sd(f"{self.unit}: Main process exited, code={code}, status={status}"),
            self.sd(f"{self.unit}: Failed with result '{result}'."),
            self.consumed(),
        ]

    def restart_lines(self, counter: int) -> list[Entry]:
        return [
            self.sd(f"{self.unit}: Scheduled restart job, restart counter is at {counter}."),
            self.sd(f"Stopped {self.unit} - {self.description}."),
            self.started(),
        ]

    # -- life --------------------------------------------------------------------------------

    def life(self) -> Iterator[Burst]:
        """Start, serve, now and then restart (or fail when told to), forever."""
        self.busy = True
        yield self.at(0.0, [self.started()])
        yield from self.start()
        while True:
            self.busy = False
            restart_at = self.t + self.rng.expovariate(1.0 / self.restart_every)
            while self.t < restart_at and self.inject is None:
                yield from self.serve()
            self.busy = True
            if self.inject is not None:
                kind, self.inject = self.inject, None
                yield from self.fail(kind)
            else:
                yield from self.stop()
                yield self.at(self.rng.uniform(2, 40), [self.started()])
                yield from self.start()

    def start(self) -> Iterator[Burst]:
        raise NotImplementedError

    def serve(self) -> Iterator[Burst]:
        raise NotImplementedError

    def goodbye(self) -> list[Entry]:
        """What the service itself says when systemd stops it."""
        return []

    def stop(self) -> Iterator[Burst]:
        before, after = self.stop_lines()
        yield self.at(self.rng.uniform(0.5, 5), before)
        goodbye = self.goodbye()
        if goodbye:
            yield self.at(self.rng.uniform(0.1, 1.0), goodbye)
        yield self.at(self.rng.uniform(0.5, 8), after)

    def fail(self, kind: str) -> Iterator[Burst]:
        """An injected failure: a failed run (or more), then a healthy one again."""
        raise NotImplementedError

    def restart_after_failure(self, counter: int = 1) -> Iterator[Burst]:
        yield self.at(self.rng.uniform(5, 30), self.restart_lines(counter))
        yield from self.start()


def pick(rng: random.Random, items: tuple[str, ...] | list[str]) -> str:
    return items[rng.randrange(len(items))]


def ip(rng: random.Random) -> str:
    return f"10.{rng.randint(0, 3)}.{rng.randint(0, 9)}.{rng.randint(2, 250)}:{rng.randint(30000, 65000)}"


def hexid(rng: random.Random, digits: int) -> str:
    return f"{rng.getrandbits(digits * 4):0{digits}x}"


# uvicorn access-log tails of the OpenAI-compatible servers (SGLang, vLLM), most of them chat.
CHAT = '"POST /v1/chat/completions HTTP/1.1" 200 OK'
ROUTES = (CHAT, CHAT, CHAT, CHAT, '"POST /v1/completions HTTP/1.1" 200 OK', '"POST /generate HTTP/1.1" 200 OK',
          '"GET /v1/models HTTP/1.1" 200 OK', '"POST /v1/chat/completions HTTP/1.1" 400 Bad Request')
