"""kvsim: a fast, faithful simulator of a paged KV-cache LLM serving engine.

The public contract (names may gain options, never lose them)::

    kvsim.kv_bytes_per_token(model, kv_dtype=None) -> int
    kvsim.get_model(name) / kvsim.ModelSpec.from_hf_config(path_or_dict) / kvsim.list_models()
    kvsim.get_gpu(name) / kvsim.list_gpus()
    kvsim.kv_budget(gpu, model, *, gpu_memory_utilization, ...) -> KVBudget
    kvsim.simulate(workload, *, model, gpu, **engine_options) -> SimResult
    kvsim.get_scenario(name, **overrides) / kvsim.run_scenario(name, **overrides) / kvsim.list_scenarios()
    kvsim.sweep(base, grid, *, seeds=None, executor=None) -> Table

Modules, one concept each: ``models`` (model specs and config.json parsing),
``hardware`` (GPU presets), ``memory`` (bytes per token, the KV budget),
``workload`` (requests, arrivals, lengths, traces), ``policies`` (admission and
victim choice), ``costs`` (step time, swap, recompute), ``engine`` (the loop),
``result`` (metrics and summary), ``scenarios``, ``sweeps`` (grids of runs on any
executor), ``stepper`` (the engine watched one step at a time), ``metrics`` (a
run as vLLM's Prometheus series), ``exporter`` (them live on ``/metrics``),
``alerts`` (rule linting, promtool), ``cli``; for the
book: ``charts``, ``widgets``, ``exercises``.
"""
from __future__ import annotations

import importlib

# name -> module that defines it. Imports are lazy so that `kvsim --help` and
# the engine start fast and never pull in the book-only modules (Altair,
# ipywidgets).
_EXPORTS = {
    "KvsimError": "errors",
    "format_bytes": "units",
    "ModelSpec": "models", "get_model": "models", "list_models": "models",
    "GPUSpec": "hardware", "get_gpu": "hardware", "list_gpus": "hardware",
    "kv_bytes_per_token": "memory", "kv_budget": "memory", "KVBudget": "memory",
    "KV_DTYPES": "memory",
    "Request": "workload", "Workload": "workload",
    "Fixed": "lengths", "Uniform": "lengths", "Geometric": "lengths", "LogNormal": "lengths",
    "BoundedPareto": "lengths", "Empirical": "lengths", "Capped": "lengths",
    "as_lengths": "lengths",
    "describe_scenario": "scenarios",
    "ENGINE_DEFAULTS": "options",
    "CostModel": "costs",
    "simulate": "engine",
    "SimResult": "result",
    "get_scenario": "scenarios", "run_scenario": "scenarios", "list_scenarios": "scenarios",
    "sweep": "sweeps",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def _version() -> str:
    """The installed distribution's version (pyproject.toml's ``version``: its one source)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kvsim")
    except PackageNotFoundError:     # a source tree on sys.path that was never pip-installed
        return "0+unknown"


def __getattr__(name: str):
    if name == "__version__":        # read on first use: `import kvsim` stays fast
        globals()[name] = value = _version()
        return value
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kvsim' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
