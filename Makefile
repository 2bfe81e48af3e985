# The two commands a new user needs. Both create .venv and install everything first.
VENV ?= .venv
PYTEST_ARGS ?=
TEST_WORKERS ?= 2

.PHONY: install demo lint format test test-slow test-vllm bench constraints clean

install:
	bash scripts/install.sh

demo: install
	$(VENV)/bin/servops demo

# ruff's settings live in pyproject.toml. `make test` runs `lint` first, so CI fails on style too.
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: install
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# Two runs: everything but the live-vLLM tier on two pytest-xdist workers (whole files per worker, so a
# module's shared setup still runs once), then the vLLM tier alone, one test at a time: a real vLLM on a
# 2-core box needs both cores, and its tests hold loads whose timing a neighbour would disturb.
test: lint
	$(VENV)/bin/python -m pytest -q -m "not slow and not vllm" -n $(TEST_WORKERS) --dist loadfile --durations=20 $(PYTEST_ARGS)
	$(VENV)/bin/python -m pytest -q -m "vllm and not slow" --durations=10 $(PYTEST_ARGS)

test-slow: install
	$(VENV)/bin/python -m pytest -q -m slow $(PYTEST_ARGS)

test-vllm: install
	$(VENV)/bin/python -m pytest -q -rs -m vllm $(PYTEST_ARGS)

# Each benchmark times a named baseline and servops' candidate on the same input; the run ends
# with a table of baseline mean / candidate mean per group (tests/benchmarks/conftest.py).
bench: install
	mkdir -p bench-out
	$(VENV)/bin/python -m pytest -q tests/benchmarks --benchmark-enable --benchmark-json bench-out/bench.json

# The versions install.sh holds both venvs to, rewritten from the newest releases (docs/install.md).
constraints:
	bash scripts/update_constraints.sh

clean:
	rm -rf $(VENV) .venv-vllm .pytest_cache build *.egg-info
