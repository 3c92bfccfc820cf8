"""Proof that the rules and the diagnosis are right: each rule on its samples (`samples`), the
whole library (`library`: `logsift patterns check|test`), its catalogue (`catalogue`:
docs/patterns.md), accuracy on a labelled corpus (`corpus`: `logsift eval`), and why one event
got its class (`explain`: `logsift explain`).
"""
