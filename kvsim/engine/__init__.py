"""The serving engine: vLLM's scheduler over a paged KV cache, priced by a cost model.

``options`` (engine options, V0/V1 defaults), ``blocks`` (the block pool and
the prefix cache: the only place blocks are counted), ``scheduler`` (vLLM's
Scheduler), ``policies`` (admission and victim choice), ``waiting``,
``swapping``, ``requests``, ``decoding`` (the decode group in closed form),
``costs`` (step time: the one formula), ``calibration`` (its constants fitted to
measured kernels), ``fit`` (requests that can never run), ``timeline`` (the
recorder), ``result`` (the run's tables and summary) and ``loop`` (the clock,
the steps, the jumps: :func:`kvsim.simulate`). Built on :mod:`kvsim.model` and
:mod:`kvsim.traffic`; never imports a chart, a widget or the lab. ``native`` says which
modules mypyc compiles and uses the compiled build only when it matches the sources
(:func:`compiled`, :func:`build_note`).
"""
from __future__ import annotations

from .native import build_note, compiled, install

__all__ = ["build_note", "compiled"]

# Before any engine module is imported: the compiled modules, if their build matches the
# sources on disk (kvsim/engine/native.py), else the pure ones.
install()
