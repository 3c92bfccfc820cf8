"""logsift: read the systemd journal, find the line that explains a failure, say what to do."""

__version__ = "0.1.0"
