"""Finding -> Run -> Incident: which run of which unit each finding belongs to, the root cause
of each failed run, and incidents across consecutive failed runs.

`lifecycle` reads systemd's own lines (run boundaries); `runs` holds the `Diagnoser`, fed
matched events in input order.
"""

from logsift.diagnosis.runs import Diagnoser, Diagnosis, Noted, diagnose

__all__ = ["Diagnoser", "Diagnosis", "Noted", "diagnose"]
