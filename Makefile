# make lab   - set up, then start JupyterLab on notebooks/
# make teach - set up, then start JupyterLab on teachers/ (the teacher copies, with solutions)
# make test  - set up, then run the tests and check the notebooks with nbval
# make setup - create .venv, install the kit, check Java 17+ and Graphviz
#
# Everything runs from .venv/bin; no activation needed. `setup` reinstalls only when
# pyproject.toml changed since the last install, so repeated runs are quick.

SHELL  := /bin/bash
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# Extra arguments for pytest, e.g. `make test PYTEST_ARGS="-k pins -x"`.
PYTEST_ARGS ?=
# Notebook folders, if present (a fresh checkout has both; pytest fails on a missing path):
# the student notebooks and the teacher copies they are generated from, both run under nbval.
NOTEBOOKS := $(wildcard notebooks teachers)
# jupyter refuses to start as root without --allow-root (containers, CI).
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

# Spark binds to loopback: no hostname lookup warnings, nothing exposed.
export SPARK_LOCAL_IP := 127.0.0.1

.PHONY: setup system lab teach test clean

setup: system $(STAMP)

system:
	@PYTHON="$(PYTHON)" bash scripts/check_system.sh

$(BIN)/python: | system
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | system $(BIN)/python
	$(BIN)/python -m pip install --progress-bar off -e ".[test]"
	@touch $@

lab: setup
	@mkdir -p notebooks
	@echo
	@echo "Starting JupyterLab on notebooks/ (Ctrl-C to stop)."
	@echo "Open the URL that Jupyter prints below (http://127.0.0.1:8888/lab?token=...) in your browser."
	@echo
	$(BIN)/jupyter lab --ip=127.0.0.1 --no-browser --ServerApp.root_dir=notebooks $(ALLOW_ROOT)

# The teacher copies hold the solutions: they live outside notebooks/, which `lab` serves.
teach: setup
	@echo
	@echo "Starting JupyterLab on teachers/ (Ctrl-C to stop): the teacher copies, with solutions."
	@echo "Open the URL that Jupyter prints below in your browser; see teachers/README.md."
	@echo
	$(BIN)/jupyter lab --ip=127.0.0.1 --no-browser --ServerApp.root_dir=teachers $(ALLOW_ROOT)

test: setup
	PYTHONHASHSEED=0 $(BIN)/python -m pytest tests $(NOTEBOOKS) \
	    --nbval --nbval-current-env --nbval-sanitize-with tests/sanitize.cfg $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
