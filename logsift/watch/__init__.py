"""Follow mode: `logsift watch` (the alerting sidecar) and `logsift -f`.

    sources.py  the live input, read on a thread of its own
    follower.py the batch stages fed as the journal grows -> alert state changes
    tracker.py  runs -> incidents as alerts (opened, failed again, cause changed, resolved)
    changes.py  what a sink is sent (the change contract, version 1)
    state.py    the state directory: checkpoint and outbox, written atomically
    outbox.py   delivery to the sinks (logsift/sinks/), in order, retried
    metrics.py  Prometheus metrics (prometheus-client, imported only when asked for)
    loop.py     the main loop tying them together, and what a restart does
"""
