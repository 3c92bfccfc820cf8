"""Benchmarks and the generator of realistic GPU-host journals (see BENCHMARKS.md).

Run the scripts from the checkout: `python bench/generate.py`, `python bench/run.py`.
"""
