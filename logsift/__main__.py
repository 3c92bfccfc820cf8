from logsift.cli import entry

entry()
