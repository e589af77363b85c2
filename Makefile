# The project's commands. The two the README leads with:
#   make book   build the static site from scratch (warnings are errors)
#   make test   every test: unit, property, scenario and engine tests, the clean
#               -W build, strict nbval over the notebooks and the offline
#               browser test of the built site
# Set-up first: pip install -r requirements.txt

# Compiled bytecode is written even where the environment says not to: pytest
# then rewrites the test modules' asserts once, not on every run (185 modules,
# about 6 s a run), and kvsim's modules are compiled once for every kernel.
unexport PYTHONDONTWRITEBYTECODE
# The run cache (kvsim/runs/summary_cache.py): a sweep's runs, kept on disk by the
# fingerprint of the engine's code, so the lab's grids and the chapters' sweeps
# are run once per change of the engine and then shared by the tests, every
# notebook kernel (nbval, JupyterLab, Binder) and make execute.
# (Not for make bench, which times the runs themselves.)
RUN_CACHE ?= $(CURDIR)/.cache/kvsim-runs
test unit execute site-data lab-data: export KVSIM_RUN_CACHE ?= $(RUN_CACHE)
# Tests run on both cores (pytest-xdist): a test module, or a notebook, stays
# on one worker, in order (--dist loadscope), and the modules start in the order
# tests/conftest.py gives them, the longest first (not xdist's own, by test count).
WORKERS ?= 2
XDIST := -n $(WORKERS) --dist loadscope --no-loadscope-reorder

PYTHON ?= python3
HOST ?= 127.0.0.1
PORT ?= 8000
SITE := _build/html
JUPYTER_BOOK ?= jupyter-book
BUILD := $(JUPYTER_BOOK) build . --all -W -n --keep-going
NBVAL := --nbval --nbval-current-env --nbval-cell-timeout=600 \
         --nbval-sanitize-with tests/nbval_sanitize.cfg

.PHONY: help book serve test test-full unit durations lint typecheck compile execute bench bench-compare vendor site-data lab-data clean

help:
	@echo "make book     build the book into $(SITE)/ (clean build, -W -n)"
	@echo "make serve    serve $(SITE)/ on http://$(HOST):$(PORT)/ (builds first if needed)"
	@echo "make test     build, then run every test (unit, nbval, site, ...)"
	@echo "make test-full  make test, with the checks that run only when their inputs change run anyway"
	@echo "make unit     the fast loop: lint, types, and the tests under 0.3 s (no build, nbval, browser, promtool)"
	@echo "make durations  re-measure the tests and rewrite tests/durations.json (which are slow)"
	@echo "make lint     ruff over kvsim, the tests, scripts and benchmarks"
	@echo "make typecheck  mypy, strict, over all of kvsim"
	@echo "make compile  rebuild the compiled engine in place (after editing an engine module)"
	@echo "make execute  re-execute the notebooks in place (commit the result)"
	@echo "make bench    run the benchmarks"
	@echo "make bench-compare REV=...  the engine's speed against REV, interleaved"
	@echo "make vendor   refresh the vendored JavaScript in book/_vendor/"
	@echo "make site-data  the site's data: every mission's grid scored, every check (commit both files)"
	@echo "make lab-data   only the missions' file"
	@echo "make clean    remove _build/"

# The data the static site reads (the build never runs kvsim): the missions' scores
# (book/_ext/static/kvbook/lab-missions.js, every grid point scored by score()) and the
# exercises' checks (checks-data.js). After a change to the engine, a mission or an
# exercise, run it and commit both (make execute runs it after the notebooks).
site-data:
	$(PYTHON) scripts/site_data.py
lab-data:
	$(PYTHON) scripts/site_data.py lab

# A clean build every time: -W on an incremental build can pass over a cached failure.
book:
	rm -rf _build
	@$(PYTHON) scripts/timed.py book -- $(BUILD)
	@echo
	@echo "Book built: open $(CURDIR)/$(SITE)/index.html"
	@echo "or run 'make serve' and visit http://$(HOST):$(PORT)/"

$(SITE)/index.html:
	$(MAKE) book

serve: $(SITE)/index.html
	@echo "Serving $(SITE)/ at http://$(HOST):$(PORT)/ (Ctrl-C stops)"
	$(PYTHON) -m http.server --bind $(HOST) --directory $(SITE) $(PORT)

# One pytest run collects tests/ (unit, property, scenario, engine, the
# notebook guard and the site test) and, through nbval, the notebooks in book/.
# KVBOOK_REQUIRE_SITE=1: the site test fails instead of skipping when the
# built site or chromium is missing; KVBOOK_REQUIRE_PROMETHEUS=1: the alert-rule
# tests fail instead of skipping when promtool or prometheus is missing.
# Each phase prints its time (scripts/timed.py); pytest prints its 20 slowest
# tests and the time of each kind of test (tests/conftest.py).
test: lint typecheck book
	@$(PYTHON) scripts/timed.py pytest -- env KVBOOK_REQUIRE_SITE=1 KVBOOK_REQUIRE_PROMETHEUS=1 \
	  $(if $(wildcard ../shared/data),KVSIM_REQUIRE_DATA=1,) $(PYTHON) -m pytest tests book $(NBVAL) \
	  $(XDIST) --durations=20
	@$(PURE_ENGINE_TESTS)

# The few tests that patch the engine's internals (marked pure_engine) skip on the compiled
# engine, whose classes refuse it: make test and make unit run them again on the pure one.
PURE_ENGINE_TESTS = $(PYTHON) scripts/timed.py pure-engine-tests -- env KVSIM_PURE=1 \
	  $(PYTHON) -m pytest tests -q -m pure_engine -p no:xdist

# Binder's environment runs only when binder/, the pins or the imports change
# (tests/stamps.json); test-full runs it anyway.
test-full:
	KVBOOK_FULL=1 $(MAKE) test

# The fast loop while working: tests/ without the book build, nbval, the site
# and JupyterLab browser tests, the promtool/prometheus tests, the wheel test and
# every test measured over 0.3 s (tests/durations.json; make durations). make test runs all.
# One process, as make durations measures them: on two workers the tests that fill
# an in-process cache (a mission's grid) would not be the ones marked slow, and the
# second worker's start costs more CPU than it saves wall time.
UNIT_MARKERS := not site and not notebooks and not jupyterlab and not promtool \
                and not packaging and not slow
unit: lint typecheck
	@$(PYTHON) scripts/timed.py unit-tests -- $(PYTHON) -m pytest tests -q -m "$(UNIT_MARKERS)" -p no:xdist
	@$(PURE_ENGINE_TESTS)

durations:
	$(PYTHON) scripts/test_durations.py

# Undefined or unused names, unsorted imports, bugbear, pyupgrade, a complexity cap and the
# rest of pyproject.toml's [tool.ruff] rules, everywhere; `ruff check --fix ...` sorts the imports.
LINTED := kvsim tests scripts benchmarks book/_ext
lint:
	@$(PYTHON) scripts/timed.py lint -- $(PYTHON) -m ruff check $(LINTED)

# All of kvsim under mypy's strict flags (pyproject.toml's [tool.mypy]).
typecheck:
	@$(PYTHON) scripts/timed.py typecheck -- $(PYTHON) -m mypy

# The compiled engine (kvsim/engine/native.py): the editable install again, which compiles the
# engine's hot modules with mypyc into kvsim/_compiled/ (about a minute). After an edit to an
# engine module the pure modules run until this is run again; kvsim never runs a stale build.
compile:
	@mkdir -p build
	@$(PYTHON) -m pip install --no-deps -v -e . > build/compile.log 2>&1 \
	  || { tail -n 20 build/compile.log; echo "make compile: pip failed (build/compile.log)"; exit 1; }
	@grep -h "kvsim build:" build/compile.log | sed 's/^ *//'
	@$(PYTHON) -c "import kvsim.engine as e; print('kvsim engine:', e.build_note())"

execute:
	$(PYTHON) scripts/execute_notebooks.py
	$(PYTHON) scripts/site_data.py

bench:
	$(PYTHON) benchmarks/run.py

# Speed against another revision, interleaved on this machine: make bench-compare REV=HEAD~3
REV ?= HEAD
bench-compare:
	$(PYTHON) benchmarks/compare.py $(REV)

vendor:
	$(PYTHON) scripts/vendor_assets.py

clean:
	rm -rf _build
