"""`logsift watch`: the alerting sidecar. Follows the journal, raises one alert per incident, resolves
it when the unit is healthy again, and resumes exactly where it stopped after any restart.

`logsift -f` (triage's follow mode) is the same machinery printing to the terminal: `follow`.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click

from logsift.cli.options import patterns_option, rules_from
from logsift.exceptions import UsageError
from logsift.read import selection as selecting
from logsift.read import sources as batch_sources
from logsift.records import Severity
from logsift.report import REGISTRY as REPORTERS
from logsift.rules import RuleSet
from logsift.sinks import Sink, SinkOptions, build_sink
from logsift.watch.follower import IDLE, WINDOW, Follower
from logsift.watch.loop import LoopOptions, Watch
from logsift.watch.metrics import Metrics
from logsift.watch.outbox import RETRY_MAX, Outbox
from logsift.watch.sources import JournalSource, Source, Start, StreamSource
from logsift.watch.state import StateDir
from logsift.watch.tracker import SETTLE, Tracker

LOOKBACK = timedelta(minutes=10)  # the live journal with no saved cursor and no --since: this far back


def _seconds(minimum: float = 0.0) -> click.FloatRange:
    return click.FloatRange(min=minimum)


class WatchCommand(click.Command):
    """Triage's habits typed at `logsift watch` get a pointer rather than click's "no such option"."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        for arg in args:
            if arg == "--":
                break
            name = arg.split("=", 1)[0]
            if name in ("-f", "--follow"):
                raise UsageError("logsift watch always follows: leave out -f")
            if name in ("-o", "--output", "--format") or (arg.startswith("-o") and arg[2:].isalpha()):
                raise UsageError("logsift watch sends state changes to sinks: --sink stdout prints them as JSON "
                                 "lines, --sink terminal as the report's blocks")
        return super().parse_args(ctx, args)


@click.command(cls=WatchCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("source", required=False, metavar="[FILE|-]")
@click.option("--file", "journal_files", multiple=True, metavar="FILE",
              help="Follow a native .journal file that another process keeps writing (repeatable).")
@click.option("-D", "--directory", metavar="DIR", help="Follow the journal files under DIR (rotation is followed).")
@click.option("-u", "--unit", "units", multiple=True, metavar="UNIT",
              help="Only this unit, with systemd's own lines about it (repeatable).")
@click.option("-S", "--since", metavar="TIME",
              help="With no saved cursor, start at TIME (default: 10 minutes ago on the live journal, "
              "the beginning of --file/-D, FILE and stdin).")
@click.option("-i", "--input-format", default="auto", show_default=True, metavar="NAME",
              help="Format of FILE or stdin (journalctl -o name); auto-detected.")
@click.option("--journal-reader", type=click.Choice(batch_sources.BACKENDS), default="auto", show_default=True,
              help="Read the journal through systemd-python or a journalctl --follow child.")
@click.option("--state", "state_dir", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Keep the cursor, the open incidents and the outbox here, to resume after a restart "
              "with nothing lost or doubled (the systemd unit uses its StateDirectory).")
@click.option("--sink", "sink_specs", multiple=True, metavar="SINK",
              help="Where state changes go (repeatable): stdout (JSON lines, the default), webhook=URL, "
              "alertmanager=URL, terminal.")
@click.option("--metrics-listen", metavar="HOST:PORT", help="Serve Prometheus metrics on HOST:PORT/metrics.")
@click.option("--idle", type=_seconds(0.01), default=IDLE, show_default=True, metavar="SECONDS",
              help="Close an event (a traceback, build output) nothing has continued for this long.")
@click.option("--settle", type=_seconds(), default=SETTLE, show_default=True, metavar="SECONDS",
              help="Input without systemd's lines: a fatal error counts as a failed run after this long.")
@click.option("--repost", type=_seconds(0.1), default=60.0, show_default=True, metavar="SECONDS",
              help="Re-post firing alerts to Alertmanager this often.")
@click.option("--retry-max", type=_seconds(0.01), default=RETRY_MAX, show_default=True, metavar="SECONDS",
              help="Longest wait between attempts to deliver to a sink that is down.")
@click.option("--sink-timeout", type=_seconds(0.1), default=5.0, show_default=True, metavar="SECONDS",
              help="Timeout of one HTTP request to a sink.")
@click.option("--runbook-url", metavar="TEMPLATE",
              help="The runbook annotation, e.g. 'https://wiki.example/runbooks/{class}' ({class}, {unit}, "
              "{host}); default: the rule's first reference.")
@click.option("--replay-window", type=_seconds(), default=WINDOW.total_seconds(), show_default=True,
              metavar="SECONDS", help="After a restart, read again at most this much journal time to rebuild "
              "runs still undecided.")
@click.option("--checkpoint-interval", type=_seconds(0.01), default=1.0, show_default=True, metavar="SECONDS",
              help="Save the cursor at least this often while lines arrive.")
@patterns_option
@click.option("--model/--no-model", "use_model", default=None,
              help="Ask the learned fallback about failures no rule names (default: when available).")
@click.option("-q", "--quiet", is_flag=True, help="No notes on stderr (warnings and errors still show).")
def watch(source: str | None, journal_files: tuple[str, ...], directory: str | None, units: tuple[str, ...],
          since: str | None, input_format: str, journal_reader: str, state_dir: Path | None,
          sink_specs: tuple[str, ...], metrics_listen: str | None, idle: float, settle: float, repost: float,
          retry_max: float, sink_timeout: float, runbook_url: str | None, replay_window: float,
          checkpoint_interval: float, pattern_dirs: tuple[Path, ...], use_model: bool | None, quiet: bool) -> int:
    """Follow the journal and alert once per incident: firing when a run fails, updated as further
    runs fail, resolved when the unit comes up healthy.

    \b
      logsift watch --state /var/lib/logsift-watch --sink alertmanager=http://am:9093
      logsift watch -u sglang-k26 --sink webhook=https://hooks.example/logsift
      logsift watch --file node7.journal --sink stdout
      journalctl -f -o json | logsift watch -

    Reads the live journal unless given --file, -D, FILE or - (stdin). With --state, a restart
    goes on from the saved cursor: no alert lost, none raised twice (a change delivered again
    carries the same key). Stops on SIGTERM or at the end of stdin; exit 0, or 2 on bad input.
    """
    rules = rules_from(pattern_dirs)
    feed = _source(source, journal_files, directory, units, since, input_format, journal_reader)
    options = SinkOptions(timeout=sink_timeout, repost=repost)
    sinks = build_sinks(sink_specs or ("stdout",), options)
    metrics: Metrics
    if metrics_listen:
        from logsift.watch.metrics import PrometheusMetrics

        metrics = PrometheusMetrics(metrics_listen)
    else:
        metrics = Metrics()
    state = StateDir(state_dir) if state_dir is not None else None
    log = _log(quiet)
    try:
        tracker = Tracker(rules, runbook=runbook_url, settle=settle)
        follower = Follower(rules, tracker, _fallback(rules, use_model, quiet), idle=idle,
                            window=timedelta(seconds=replay_window))
        outbox = Outbox(sinks, state, metrics, repost=repost, retry_max=retry_max, log=log)
        loop = Watch(feed, follower, outbox, state, metrics, log,
                     LoopOptions(checkpoint_every=checkpoint_interval, ignore_own_pid=_live(feed)))
        where = f", state in {state_dir}" if state_dir else ""
        return _run(loop, lambda: log(f"note: watching {_describe(feed)}; sinks: "
                                      f"{', '.join(sink.name for sink in sinks)}{where}"))
    finally:
        if state is not None:
            state.close()


def follow(files: tuple[str, ...], journal: dict[str, Any], output: str, input_format: str, journal_reader: str,
           pattern_dirs: tuple[Path, ...], use_model: bool | None, fail_on: str, color: bool, width: int,
           utc: bool, quiet: bool) -> int:
    """`logsift -f`: triage that streams, printing each incident as it opens, changes and resolves."""
    if output not in ("terminal", "json"):
        raise UsageError(f"-f prints the terminal report or JSON lines (-o json), not {output}")
    if files and files[0] in REPORTERS and not os.path.exists(files[0]):
        # `logsift -f json FILE`: -f once meant --format.
        raise UsageError(f"-f is --follow now (and there is no file {files[0]!r} to follow); for the report "
                         f"format use -o/--output {files[0]}")
    if len(files) > 1:
        raise UsageError("-f follows one FILE (or stdin, or the journal)")
    for option, value in (("-U/--until", journal.get("until")), ("-n/--lines", journal.get("last")),
                          ("--after-cursor", journal.get("after_cursor")), ("-t/--identifier", journal.get("identifiers")),
                          ("-p/--priority", journal.get("priority"))):
        if value:
            raise UsageError(f"{option} cannot be combined with -f/--follow")
    rules = rules_from(pattern_dirs)
    source = files[0] if files else None
    if source is None and not (journal.get("journal_files") or journal.get("directory") or journal.get("units")
                               or journal.get("since") or journal.get("boot") is not None):
        source = "-"
    if source == "-" and sys.stdin.isatty():
        raise UsageError("no input: pipe a log in (journalctl -f -o json | logsift -f), name a file, or use -u UNIT")
    feed = _source(source, tuple(journal.get("journal_files") or ()), journal.get("directory"),
                   tuple(journal.get("units") or ()), journal.get("since"), input_format, journal_reader,
                   journal.get("boot"))
    sinks = build_sinks(("terminal" if output == "terminal" else "stdout",),
                        SinkOptions(color=color, width=width, utc=utc))
    threshold = Severity.parse(fail_on)
    worst: list[bool] = [False]

    def seen(change: dict[str, Any]) -> None:
        severity = change.get("severity")
        if change.get("state") == "firing" and severity and Severity.parse(str(severity)) >= threshold:
            worst[0] = True

    follower = Follower(rules, Tracker(rules), _fallback(rules, use_model, quiet))
    loop = Watch(feed, follower, Outbox(sinks, log=_log(quiet)), log=_log(quiet),
                 options=LoopOptions(ignore_own_pid=_live(feed)), on_change=seen)
    _run(loop, lambda: _log(quiet)(f"note: following {_describe(feed)} (Ctrl-C to stop)"))
    return 1 if worst[0] else 0


def build_sinks(specs: tuple[str, ...], options: SinkOptions) -> list[Sink]:
    sinks: list[Sink] = []
    names: dict[str, int] = {}
    for spec in specs:
        sink = build_sink(spec, options)
        count = names[sink.name] = names.get(sink.name, 0) + 1
        if count > 1:
            sink.name = f"{sink.name}-{count}"  # two webhooks: each keeps its own place in the outbox
        sinks.append(sink)
    return sinks


def _source(path: str | None, journal_files: tuple[str, ...], directory: str | None, units: tuple[str, ...],
            since: str | None, input_format: str, backend: str, boot: str | None = None) -> Source:
    if path is not None:
        if journal_files or directory or units or boot is not None:
            raise UsageError("FILE or - cannot be combined with --file, --directory or -u; "
                             "filter with journalctl first: journalctl -f -u UNIT -o json | logsift watch -")
        stream = StreamSource(path, input_format)
        if since:
            raise UsageError("--since selects journal entries: give --file, -D or the live journal")
        return stream
    chosen = selecting.select(files=journal_files, directory=directory, units=units, since=since, boot=boot)
    if since:
        start = Start("since")
    elif chosen.files or chosen.directory or boot is not None:
        start = Start("head")  # of the files, or of the boot (-b)
    else:
        back = datetime.now(UTC) - LOOKBACK
        chosen = selecting.select(units=units, since=f"@{back.timestamp():.6f}")
        start = Start("since")
    return JournalSource(chosen, backend, start)


def _describe(source: Source) -> str:
    if isinstance(source, JournalSource):
        selection = source.selection
        where = selection.source if selection.files or selection.directory else "this machine's journal"
        return where + (f" (-u {', '.join(selection.units)})" if selection.units else "")
    return "stdin" if source.name == "-" else source.name


def _live(source: Source) -> bool:
    return isinstance(source, JournalSource) and not source.selection.files and not source.selection.directory


def _fallback(rules: RuleSet, use_model: bool | None, quiet: bool) -> Any:
    if use_model is False:
        return None
    from logsift.learn.classifier import ModelFallback

    return ModelFallback(rules, required=use_model is True, notify=_log(quiet))


def _log(quiet: bool) -> Any:
    def log(message: str) -> None:
        if quiet and message.startswith("note: "):
            return
        click.echo(f"logsift: {message}", err=True)

    return log


def _run(loop: Watch, started: Any = None) -> int:
    """Run until the input ends or SIGTERM/SIGINT; the handlers only ask the loop to stop.
    `started` is called once they are in place (it says so on stderr)."""
    stop = threading.Event()
    previous = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGINT)}

    def asked(number: int, frame: object) -> None:
        stop.set()

    in_main = threading.current_thread() is threading.main_thread()
    if in_main:
        for number in previous:
            signal.signal(number, asked)
    if started is not None:
        started()
    try:
        return loop.run(stop)
    finally:
        if in_main:
            for number, handler in previous.items():
                signal.signal(number, handler)
