"""kvsim: a fast, faithful simulator of a paged KV-cache LLM serving engine.

The public contract (names may gain options, never lose them)::

    kvsim.kv_bytes_per_token(model, kv_dtype=None) -> int
    kvsim.get_model(name) / kvsim.ModelSpec.from_hf_config(path_or_dict) / kvsim.list_models()
    kvsim.get_gpu(name) / kvsim.list_gpus()
    kvsim.kv_budget(gpu, model, *, gpu_memory_utilization, ...) -> KVBudget
    kvsim.simulate(workload, *, model, gpu, **engine_options) -> SimResult
    kvsim.get_scenario(name, **overrides) / kvsim.run_scenario(name, **overrides) / kvsim.list_scenarios()
    kvsim.sweep(base, grid, *, seeds=None, executor=None, chunk_size=None) -> Table
    kvsim.plan(base, grid, *, slo, seeds=(0, 1, 2), ..., prices=None, executor=None) -> Plan

Packages by concern, each importing only those before it (``tests/test_layers.py``
checks the direction):

* ``kvsim.errors``, ``kvsim.units``: validation, bytes and their units;
* ``kvsim.model``: model specs and ``config.json`` parsing, GPU presets, the memory budget;
* ``kvsim.traffic``: request lengths, workloads and traces, arrivals;
* ``kvsim.engine``: options, the block pool, vLLM's scheduler, policies, the cost model,
  the loop, the result;
* ``kvsim.runs``: scenarios, sweeps (on any executor, in batches), the capacity planner, the stepper;
* ``kvsim.observe``: a run as vLLM's Prometheus series, the exporter, alert rules, panels;
* ``kvsim.lab``: chapter 5's missions and a learner's progress;
* ``kvsim.book``: the book's charts, widgets, exercises and notebook set-up;
* ``kvsim.cli``: the ``kvsim`` command (a module per subcommand).

The names above are importable from ``kvsim`` itself, and so are the modules the
book's readers reach for by their short names (``from kvsim import charts``).
"""
from __future__ import annotations

import importlib

# name -> module that defines it. Imports are lazy so that `kvsim --help` and
# the engine start fast and never pull in the book-only modules (Altair,
# ipywidgets).
_EXPORTS = {
    "KvsimError": "errors",
    "format_bytes": "units",
    "ModelSpec": "model.spec", "get_model": "model.presets", "list_models": "model.presets",
    "GPUSpec": "model.hardware", "get_gpu": "model.hardware", "list_gpus": "model.hardware",
    "kv_bytes_per_token": "model.memory", "kv_budget": "model.memory", "KVBudget": "model.memory",
    "KV_DTYPES": "model.memory",
    "Request": "traffic.workload", "Workload": "traffic.workload",
    "Fixed": "traffic.lengths", "Uniform": "traffic.lengths", "Geometric": "traffic.lengths",
    "LogNormal": "traffic.lengths", "BoundedPareto": "traffic.lengths",
    "Empirical": "traffic.lengths", "Capped": "traffic.lengths", "as_lengths": "traffic.lengths",
    "describe_scenario": "runs.scenarios",
    "ENGINE_DEFAULTS": "engine.options",
    "CostModel": "engine.costs",
    "simulate": "engine.loop",
    "SimResult": "engine.result",
    "get_scenario": "runs.scenarios", "run_scenario": "runs.scenarios",
    "list_scenarios": "runs.scenarios",
    "sweep": "runs.sweeps",
    "plan": "runs.planner", "Plan": "runs.planner",
}

#: Short names of the modules the book and its readers use (``from kvsim import charts``).
_MODULES = {
    "charts": "book.charts", "exercises": "book.exercises", "widgets": "book.widgets",
    "notebook": "book.notebook", "lab_charts": "book.lab_charts", "lab_panel": "book.lab_panel",
    "stepper": "runs.stepper", "scenarios": "runs.scenarios", "sweeps": "runs.sweeps",
    "planner": "runs.planner",
    "metrics": "observe.metrics", "alerts": "observe.alerts", "panels": "observe.panels",
    "twin": "observe.twin", "readings": "observe.readings",
    "missions": "lab.missions", "mission_progress": "lab.progress",
}

# (built from _EXPORTS, so that the two never disagree: a computed __all__, which PLE0605 flags)
__all__ = sorted(_EXPORTS) + ["__version__"]  # noqa: PLE0605

#: The installed distribution's version: set by __getattr__ on first use (a declaration only,
#: so that the lookup happens).
__version__: str


def _version() -> str:
    """The installed distribution's version (pyproject.toml's ``version``: its one source)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kvsim")
    except PackageNotFoundError:     # a source tree on sys.path that was never pip-installed
        return "0+unknown"


def __getattr__(name: str) -> object:
    """The name's value, imported on first use and then kept as a module global."""
    value: object
    if name == "__version__":        # read on first use: `import kvsim` stays fast
        value = _version()
    elif name in _MODULES:
        value = importlib.import_module(f".{_MODULES[name]}", __name__)
    else:
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module 'kvsim' has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__ + sorted(_MODULES)
