# `make test` is the README's second Quick-start command and what CI runs (.ci/run).
# It installs the package (editable, with test dependencies) so it works on a clean
# clone, then runs every gate: formatting, lints, types, Rust and Python tests.
PYTHON ?= python3

.PHONY: test install lint bench

install:
	$(PYTHON) -m pip install -q -e '.[test]'

lint:
	cargo fmt --all --check
	cargo clippy --all-targets -- -D warnings
	$(PYTHON) -m ruff check python tests
	$(PYTHON) -m mypy

test: install lint
	cargo test --all-targets
	$(PYTHON) -m pytest -q

bench: install
	tenantnet bench permutation --repeat 5
