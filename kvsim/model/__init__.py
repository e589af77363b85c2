"""The model and the hardware: what a token costs and how much memory holds the cache.

``spec`` (the :class:`~kvsim.model.spec.ModelSpec` dataclass, built from a
``config.json`` by ``ModelSpec.from_hf_config``), ``presets`` (the named models,
lookup by name), reading a ``config.json`` bottom to top: ``config_json`` (the
file and its fields), ``dtypes`` (number formats), ``layer_kinds`` (what each
decoder layer is), ``layer_state`` (the stateful layers' fixed state),
``architecture`` (the figures a spec needs), ``parameters`` (parameter
accounting and the compute shape, in named steps), ``layer_weights`` (each
module of a decoder layer, matmul by matmul), ``checkpoint`` (a checkpoint's weight
bytes); ``hardware`` (GPU presets: memory as CUDA reports it, calibrated
constants), ``memory`` (bytes per token, the KV budget as vLLM computes it at
start-up) and ``vllm_defaults`` (the facts of vLLM's the budget and the
defaults need). Imports only :mod:`kvsim.errors` and :mod:`kvsim.units` below it.
"""
