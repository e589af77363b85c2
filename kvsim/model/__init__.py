"""The model and the hardware: what a token costs and how much memory holds the cache.

``spec`` (model specs, ``config.json`` parsing, parameter accounting, presets),
``hardware`` (GPU presets: memory as CUDA reports it, calibrated constants),
``memory`` (bytes per token, the KV budget as vLLM computes it at start-up) and
``vllm_defaults`` (the facts of vLLM's the budget and the defaults need).
Imports only :mod:`kvsim.errors` and :mod:`kvsim.units` below it.
"""
