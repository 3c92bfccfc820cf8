# `make demo` and `make test` set up everything they need themselves (scripts/bootstrap.sh).
.PHONY: demo test lint bench clean

demo:
	@scripts/bootstrap.sh demo
	@echo '$$ logsift fixtures/seed-incident/journal.txt'
	@TZ=UTC .venv/bin/logsift --color always fixtures/seed-incident/journal.txt || test $$? -eq 1

test:
	@scripts/bootstrap.sh test
	TZ=UTC .venv/bin/python -m pytest -q

lint:
	@scripts/bootstrap.sh test
	.venv/bin/ruff check logsift tests bench
	.venv/bin/mypy

bench:
	@scripts/bootstrap.sh test
	.venv/bin/python bench/run.py

clean:
	rm -rf .venv build *.egg-info .pytest_cache .mypy_cache .ruff_cache bench/data bench/out
