# The README's two Quick-start commands: `make demo` installs tenantnet (what the demo
# needs, nothing more) and runs `tenantnet demo`; `make test` is what CI runs
# (.ci/run): it installs the test tools too, then runs every gate: formatting, lints,
# types, Rust and Python tests (the documentation site included).
PYTHON ?= python3

.PHONY: demo test install install-test lint bench docs

demo: install
	tenantnet demo

install:
	$(PYTHON) scripts/install.py

install-test:
	$(PYTHON) scripts/install.py test
	@# ns-3's wheel for `tenantnet crosscheck ns3`: its headers and libraries, without
	@# the Python bindings' dependencies (cppyy), which a C++ build does not need
	$(PYTHON) -m pip install -q --no-deps 'ns3==3.44.*'
	@# tshark, which reads the pcap files a capture writes (Debian's package; root)
	@command -v tshark >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install \
	  -y -q --no-install-recommends tshark >/dev/null || echo "tshark not installed: \
	  the pcap test will be skipped (apt-get install tshark as root)"

lint:
	cargo fmt --all --check
	cargo clippy --all-targets -- -D warnings
	$(PYTHON) -m ruff check python tests scripts
	$(PYTHON) -m mypy

# pytest twice: everything but the `serial` tests on every core (pytest-xdist), then the
# `serial` ones (real namespaces and wall-clock rates) alone, so that nothing else
# competes for the CPU while they measure
test: install-test lint
	cargo test --all-targets
	$(PYTHON) -m pytest -q -n auto --dist loadfile -m "not serial" --durations=5
	$(PYTHON) -m pytest -q -m serial --durations=3

docs: install-test
	$(PYTHON) -m mkdocs build --strict

bench: install
	tenantnet bench permutation --repeat 5
