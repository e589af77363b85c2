"""A twin of a real vLLM server: the kvsim configuration its ``/metrics`` implies, and what-ifs on it.

One job: from a :class:`~kvsim.observe.readings.Window` of a server's series
(one scrape since start, two scrapes, or a Prometheus range export), infer
what kvsim needs to replay that server, say where each figure came from and
which it could not infer (and the default used instead), then run the
what-ifs of chapters 2-5 on the twin. ``kvsim twin`` is the command;
:func:`build_twin` and :func:`what_ifs` the API.

What is read, and from which series (every family under its current, 0.10 or
V0 name, as :mod:`kvsim.observe.catalogue` lists them):

* **the pool** -- ``vllm:cache_config_info``: ``num_gpu_blocks`` (less V1's
  null block: vLLM counts it, kvsim's ``num_gpu_blocks`` option does not),
  ``block_size``, ``cache_dtype`` (``fp8*`` -> an FP8 KV cache),
  ``enable_prefix_caching``, ``gpu_memory_utilization``, and ``max_model_len``
  as ``kv_cache_size_tokens / kv_cache_max_concurrency`` where both exist;
* **the model** -- the ``model_name`` label, matched to a kvsim preset by its
  name or its Hugging Face id (``-Instruct``, ``-chat``, ``-hf`` dropped);
* **the GPU** -- not exported by vLLM: the preset whose memory budget at the
  server's ``gpu_memory_utilization`` gives its ``num_gpu_blocks`` (within
  10 %), else ``h100-80gb``; the step-time fit absorbs the rest;
* **the engine** -- V0 when the families are V0's (``vllm:num_requests_swapped``);
* **the arrival rate** -- finished requests (``vllm:request_success_total``, every
  ``finished_reason``) plus the growth of the running and waiting gauges, over
  the window's seconds; with one scrape and no known uptime, Little's law on
  the gauges at that instant and the mean of ``vllm:e2e_request_latency_seconds``
  (one instant: a rough figure, said so); divided by the number of engines
  (data parallelism: the twin is one engine);
* **prompt and answer lengths** -- ``vllm:request_prompt_tokens`` and
  ``vllm:request_generation_tokens``: the mean from ``_sum / _count`` exactly,
  the shape (fixed, geometric or log-normal from :mod:`kvsim.traffic.lengths`)
  the one whose CDF is closest to the buckets' (largest gap at a bucket edge);
  answers cut by ``max_tokens`` (``finished_reason="length"``) give a geometric
  answer and the cap that cuts that share of them;
* **the step-time scale** -- ``CostModel.step_time_scale`` fitted by simulation
  so that the twin's mean inter-token latency (``vllm:inter_token_latency_seconds``,
  before that ``vllm:time_per_output_token_seconds``) equals the server's:
  a deterministic ratio iteration on the same seeded traffic.

The twin's traffic is Poisson at the inferred rate, with no shared prefixes,
``n = 1`` and no priorities; ``max_num_seqs``, ``max_num_batched_tokens``,
tensor parallelism and the scheduler's other settings are not in ``/metrics``
and keep kvsim's defaults (each is listed as not inferred).

Tolerances, as ``tests/test_twin.py`` pins them (a kvsim run, its exporter's
scrape text, the twin, the twin's run on other random arrivals, for
``belgavi`` and ``belgavi-long`` from one scrape and from a pair after the
warm-up, ``mission-1-storm`` from one scrape, and the healthy first 15 minutes
of ``incident-day`` from a pair; seeds 0-2): the pool, block size,
``max_model_len`` and prefix caching exactly (the pool less the null block),
the model exactly, the GPU one of the two 48 GB presets (they fit alike), the
requests of the window within 2 %, the step-time scale within 0.95-1.06 (the
truth is 1); per seed the median inter-token latency within 15 % and the mean
KV usage within 0.2; over the three seeds' medians the mean KV usage within
0.12, goodput within 15 %, preemptions per 1,000 within 50 or a factor of 1.5,
and p95 TTFT within a factor of 2. The last two swing by large factors between
seeds of one scenario (``belgavi`` sits at the edge of a storm: 0 to 45
preemptions per 1,000 over seeds 0-2), so a twin, which draws new arrivals at
the same rate, matches them only as well as another seed would. A window that
is not a steady state (the second minute of a cold start, a rush inside a
quiet day) is replayed as the steady traffic of its average: the twin is
stationary Poisson.

Explained in chapter 4, *Detecting preemption* (*A twin of your own server*).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from typing import TYPE_CHECKING, TypedDict

import numpy as np

from kvsim.engine.loop import simulate
from kvsim.errors import KvsimError, check_float, check_int
from kvsim.model.hardware import list_gpus
from kvsim.model.memory import kv_budget, kv_bytes_per_token
from kvsim.model.presets import get_model, list_models
from kvsim.model.spec import ModelSpec
from kvsim.traffic.lengths import MAX_LENGTH, Fixed, Geometric, LengthDist, LogNormal
from kvsim.traffic.workload import Workload

from .catalogue import VERSIONS, metric_defs
from .panels import histogram_quantile
from .readings import Histogram, Window
from .series import run_metrics

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from kvsim.engine.result import SimResult

__all__ = ["Finding", "Twin", "build_twin", "what_ifs", "fit_lengths", "match_model",
           "detect_version", "with_seed", "DEFAULT_GPU", "DEFAULT_MODEL", "WHAT_IF_COLUMNS",
           "WORKLOAD_INPUTS", "CORE_INPUTS", "TwinOptions", "Observed", "StepFit"]

#: What the twin assumes when the scrape names no GPU (vLLM exports none) and no preset fits.
DEFAULT_GPU = "h100-80gb"
#: ... and no model preset when ``model_name`` matches none.
DEFAULT_MODEL = "llama-3.1-8b"
#: The summary columns of the what-if table.
WHAT_IF_COLUMNS = ("preemptions_per_1k", "ttft_p95_s", "itl_p50_s", "itl_p99_s",
                   "share_paused_over_1s", "kv_usage_mean", "goodput_tok_s")

#: The findings a what-if's numbers stand on: when one of them is a default, the what-ifs
#: describe kvsim's default, not the server (:attr:`Twin.illustrative`). The GPU counts only
#: when the step time is not fitted either (the fit absorbs the GPU's speed).
WORKLOAD_INPUTS = ("model", "KV pool", "arrival rate", "prompt lengths", "output lengths")
#: The three without which a twin is kvsim's defaults with a server's name on them
#: (:attr:`Twin.mostly_defaults`): ``kvsim twin`` prints no what-ifs on such a twin unless
#: told to (``--allow-defaults``).
CORE_INPUTS = ("model", "KV pool", "arrival rate")

_ITL = ("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds")
_KV_USAGE = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")
_SUCCESS = "vllm:request_success_total"


class TwinOptions(TypedDict, total=False):
    """The engine options a twin sets (:func:`kvsim.simulate`'s names); the rest stay
    kvsim's defaults."""

    engine: str
    block_size: int
    kv_dtype: str
    enable_prefix_caching: bool
    max_model_len: int
    num_gpu_blocks: int
    gpu_memory_utilization: float
    max_tokens: int
    step_time_scale: float


class Observed(TypedDict, total=False):
    """What the server showed, per engine, to compare the twin with (each when readable)."""

    requests: float
    window_s: float | None
    prompt_mean: float
    output_mean: float
    preemptions_per_1k: float
    ttft_mean_s: float
    itl_mean_s: float
    itl_p50_s: float
    kv_usage_at_end: float


class StepFit(TypedDict, total=False):
    """The step-time fit: the server's median inter-token latency, the twin's at the scale
    kept, and how many runs the fit took."""

    target_p50_s: float
    twin_p50_s: float
    runs: int


@dataclass(frozen=True)
class Finding:
    """One figure of the twin: what, its value, the series it came from, and whether it was
    inferred (``inferred=False``: the default used, and ``why``)."""

    what: str
    value: str
    source: str
    inferred: bool
    why: str = ""

    def to_dict(self) -> dict[str, str | bool]:
        return dict(what=self.what, value=self.value, source=self.source,
                    inferred=self.inferred, why=self.why)


@dataclass
class Twin:
    """The kvsim configuration of a real server (see :func:`build_twin`).

    ``options`` are engine options of :func:`kvsim.simulate`; the traffic is
    Poisson at ``rate_per_s`` with ``prompt`` and ``output`` lengths, run for
    ``warmup_s`` then ``duration_s`` measured, with ``seed``.
    """

    model: str
    gpu: str
    options: TwinOptions
    rate_per_s: float
    prompt: LengthDist
    output: LengthDist
    duration_s: float
    warmup_s: float
    seed: int
    version: str
    window: str
    findings: list[Finding] = field(default_factory=list)
    observed: Observed = field(default_factory=Observed)
    fit: StepFit = field(default_factory=StepFit)

    def defaulted(self) -> list[str]:
        """What the twin could not read and took a default for (each finding's ``what``)."""
        return [f.what for f in self.findings if not f.inferred]

    def given(self) -> list[str]:
        """What the caller named (``--model``, ``--gpu``) instead of reading it."""
        return [f.what for f in self.findings if f.source.startswith("--")]

    def weak_inputs(self) -> list[str]:
        """The inputs of :data:`WORKLOAD_INPUTS` (and the GPU with an unfitted step time)
        that are defaults: what makes the what-ifs illustrative."""
        missing = set(self.defaulted())
        weak = [what for what in WORKLOAD_INPUTS if what in missing]
        if "GPU" in missing and "step-time scale" in missing:
            weak.append("GPU")
        return weak

    @property
    def illustrative(self) -> bool:
        """True when a what-if on this twin stands on a default (:meth:`weak_inputs`)."""
        return bool(self.weak_inputs())

    @property
    def mostly_defaults(self) -> bool:
        """True when the model, the pool and the arrival rate are all defaults."""
        return set(CORE_INPUTS) <= set(self.defaulted())

    def workload(self, seed: int | None = None) -> Workload:
        """The twin's traffic: Poisson arrivals over warm-up plus the measured window."""
        # NOTE(twin-stationary): the server's traffic as steady Poisson arrivals at the
        # window's average rate, independent lengths, no shared prefixes
        return Workload.poisson(self.rate_per_s, self.warmup_s + self.duration_s,
                                prompt=self.prompt, output=self.output,
                                seed=self.seed if seed is None else seed)

    def simulate_kwargs(self, **changes: object) -> dict[str, object]:
        """Everything :func:`kvsim.simulate` takes but the workload, ``changes`` applied."""
        opts: dict[str, object] = {**self.options, "warmup_s": self.warmup_s,
                                   "until_s": self.warmup_s + self.duration_s, "seed": self.seed}
        opts.update(changes)
        return {"model": self.model, "gpu": self.gpu, **opts}

    def run(self, seed: int | None = None, **changes: object) -> SimResult:
        """Run the twin (a :class:`~kvsim.SimResult`), engine options ``changes`` applied."""
        kwargs = self.simulate_kwargs(**changes)
        if seed is not None:
            kwargs["seed"] = seed
        del kwargs["model"], kwargs["gpu"]        # passed as the typed fields below
        return simulate(self.workload(seed), model=self.model, gpu=self.gpu, **kwargs)

    def command(self, trace: str = "twin-trace.csv") -> str:
        """The ``kvsim simulate`` command line that runs the twin, its traffic saved at ``trace``
        (``Twin.workload().to_csv(trace)``; ``kvsim twin --trace-out`` writes it)."""
        kw = self.simulate_kwargs()
        parts = [f"kvsim simulate --trace {trace} --model {self.model} --gpu {self.gpu}",
                 f"--num-gpu-blocks {kw.pop('num_gpu_blocks')}"]
        for flag in ("model", "gpu"):
            kw.pop(flag)
        for k, v in kw.items():
            parts.append(f"--set {k}={_cli_value(v)}")
        return " ".join(parts)

    def to_dict(self) -> dict[str, object]:
        return dict(model=self.model, gpu=self.gpu, options=dict(self.options),
                    rate_per_s=self.rate_per_s, prompt=self.prompt.describe(),
                    output=self.output.describe(), prompt_mean=self.prompt.mean,
                    output_mean=self.output.mean, duration_s=self.duration_s,
                    warmup_s=self.warmup_s, seed=self.seed, version=self.version,
                    window=self.window, findings=[f.to_dict() for f in self.findings],
                    observed=dict(self.observed), fit=dict(self.fit),
                    command=self.command(), defaulted=self.defaulted(),
                    illustrative=self.illustrative, weak_inputs=self.weak_inputs())


def _cli_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "none"
    if isinstance(v, float):
        return repr(round(v, 6))
    return str(v)


# --- what the series say -------------------------------------------------------------------

def detect_version(window: Window) -> tuple[str, int, int]:
    """The kvsim catalogue version (``v1``, ``v1-0.10``, ``v0``) whose families cover most of the
    window's vLLM series: ``(version, families matched, vLLM families present)``."""
    present = {n for n, _ in window.end if n.startswith("vllm:")}
    best = ("v1", -1, len(present))
    for version in VERSIONS:                                  # v1 first: it wins ties
        names = {s for d in metric_defs(version) for s in d.scraped_names}
        names |= {d.name + "_info" for d in metric_defs(version) if d.kind == "info"}
        hit = len(present & names)
        if hit > best[1]:
            best = (version, hit, len(present))
    return best


def _norm(name: str) -> str:
    base = name.strip().rstrip("/").split("/")[-1].lower()
    if base.startswith("meta-llama-"):
        base = base[len("meta-"):]
    changed = True
    while changed:
        changed = False
        for suffix in ("-instruct", "-chat", "-hf", "-it", "-base"):
            if base.endswith(suffix):
                base, changed = base[: -len(suffix)], True
    return base


def match_model(names: Iterable[str]) -> tuple[str | None, str | None]:
    """The kvsim preset a ``model_name`` label names: ``(preset, the label matched)``, or
    ``(None, None)``. Matched by the preset's name or its Hugging Face id, case-insensitively,
    with ``-Instruct``/``-chat``/``-hf``/``-it`` dropped."""
    keys: dict[str, str] = {}
    for preset in list_models():
        keys.setdefault(_norm(preset), preset)
        keys.setdefault(_norm(get_model(preset).source.split()[0]), preset)
    for name in names:
        if _norm(name) in keys:
            return keys[_norm(name)], name
    return None, None


def _int_label(labels: dict[str, str], key: str) -> int | None:
    try:
        v = int(float(labels.get(key, "")))
    except (TypeError, ValueError):
        return None
    return v if v > 0 else None


def _float_label(labels: dict[str, str], key: str) -> float | None:
    try:
        v = float(labels.get(key, ""))
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None


def _cdf(dist: LengthDist, edges: NDArray[np.float64]) -> NDArray[np.float64]:
    """P(L <= e) at integer-valued edges ``e`` (exact for each family's integer law)."""
    e = np.floor(edges)
    if isinstance(dist, Fixed):
        return (e >= dist.n).astype(float)
    if isinstance(dist, Geometric):
        if dist.mean == 1.0:
            return (e >= 1).astype(float)
        return np.where(e >= 1, 1.0 - (1.0 - dist.p) ** np.maximum(e, 0), 0.0)
    assert isinstance(dist, LogNormal)
    nd = NormalDist()
    return np.array([0.0 if x < 1 else nd.cdf((math.log(x + 0.5) - dist.mu) / dist.sigma)
                     for x in e])


def fit_lengths(edges: Sequence[float], cumulative: Sequence[float], count: float,
                total: float) -> tuple[LengthDist, float]:
    """The length distribution a histogram's buckets and ``_sum / _count`` imply.

    Every candidate has the histogram's mean exactly (``total / count``); of a
    fixed length, a geometric and a log-normal (its ``sigma`` on a fixed grid),
    the one whose CDF is closest to the buckets' (the largest gap at a finite
    bucket edge, a Kolmogorov distance) wins, the simpler family when within
    0.01 of the best. Returns ``(distribution, that distance)``.
    """
    count = check_float("count", count, min=0, min_open=True)
    if len(edges) != len(cumulative):
        raise KvsimError(f"cumulative has {len(cumulative)} counts for {len(edges)} edges: expected "
                         "one count per bucket edge")
    mean = check_float("mean length", total / count, min=1, max=MAX_LENGTH)
    e = np.array([x for x in edges if math.isfinite(x)], dtype=float)
    c = np.array([y for x, y in zip(edges, cumulative, strict=True) if math.isfinite(x)],
                 dtype=float)
    observed = c / count
    cands: list[LengthDist] = [Fixed(int(round(mean))), Geometric(mean)]
    cands += [LogNormal.from_mean_sigma(mean, float(s)) for s in np.geomspace(0.03, 3.0, 80)]
    dists = [float(np.max(np.abs(_cdf(d, e) - observed))) if e.size else 0.0 for d in cands]
    best = min(dists)
    for i, d in enumerate(dists):
        if d <= best + 0.01:
            if isinstance(cands[i], LogNormal):          # the best sigma, not the first close one
                i = int(np.argmin(dists))
            return cands[i], dists[i]
    raise AssertionError("unreachable: one candidate is the best")


def _missing(window: Window, names: Iterable[str]) -> str:
    """Why no histogram of ``names`` is usable: absent, incomplete, or empty in the window."""
    for n in names:
        if window.has(n + "_bucket") or window.has(n + "_count") or window.has(n + "_sum"):
            if window.histogram(n) is None:
                return f"{n} is incomplete (its _bucket, _count and _sum are not all there)"
            return f"{n} saw no observation in the window"
    return "no " + " or ".join(names)


def _histogram(window: Window, names: Iterable[str]) -> tuple[str, Histogram] | tuple[None, None]:
    for n in names:
        h = window.histogram(n)
        if h is not None and h.observations > 0:
            return n, h
    return None, None


def _gpu_for(model: str, blocks: int, util: float, kv_dtype: str | None, block_size: int,
             engine: str) -> tuple[str | None, float, str]:
    """The GPU preset whose budget at ``util`` gives ``blocks`` vLLM blocks (closest, within
    10 %): (name or None, relative error, a note on a close second)."""
    fits = []
    for g in list_gpus():
        try:
            b = kv_budget(g, model, gpu_memory_utilization=util, kv_dtype=kv_dtype,
                          block_size=block_size, engine=engine)
        except KvsimError:
            continue
        fits.append((abs(b.vllm_blocks - blocks) / blocks, g))
    if not fits:
        return None, math.inf, ""
    fits.sort()
    err, g = fits[0]
    if err > 0.10:
        return None, err, ""
    close = [n for e, n in fits[1:] if e <= err + 0.02]
    return g, err, (f"; {', '.join(close)} fit about as well" if close else "")


# --- building the twin ---------------------------------------------------------------------

#: A step's text for ``build_twin``'s and ``what_ifs``' ``progress`` callback.
Progress = Callable[[str], None]


def _no_progress(text: str) -> None:
    """The ``progress`` callback that shows nothing."""


class _Log:
    """The findings of :func:`build_twin`, in the order they are made."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []

    def said(self, what: str, value: str, source: str, inferred: bool = True,
             why: str = "") -> None:
        self.findings.append(Finding(what, value, source, inferred, why))


@dataclass
class _CacheConfig:
    """What ``vllm:cache_config_info`` says (or its defaults): the pool's settings."""

    present: bool
    options: TwinOptions
    block_size: int
    kv_dtype: str | None
    util: float | None
    vllm_blocks: int | None


def _infer_engine(window: Window, log: _Log) -> tuple[str, str, int]:
    """The metric names' version, the engine (V0 or V1) and the number of engines."""
    version, hit, present = detect_version(window)
    engine = "v0" if version == "v0" else "v1"
    log.said("metric names", f"{version} ({hit} of {present} vLLM series names in kvsim's "
             f"catalogue of that version)", "every vllm: series")
    engines = window.label_values("engine")
    n_engines = max(1, len(engines))
    log.said("engine mode", f"{engine} (vLLM {'V0' if engine == 'v0' else 'V1'})",
             "the families present (V0 has vllm:num_requests_swapped)")
    if n_engines > 1:
        log.said("engines", f"{n_engines} (engine={','.join(engines)}): the twin is one of them, "
                 f"with 1/{n_engines} of the traffic", "the engine label")
    return version, engine, n_engines


def _infer_model(window: Window, model: str | None, log: _Log) -> str:
    """The model preset: ``model`` when given, else the one the ``model_name`` label names."""
    if model is not None:
        name = get_model(model).name
        log.said("model", name, "--model", True)
        return name
    names = window.label_values("model_name")
    preset, label = match_model(names)
    if preset is not None:
        log.said("model", f"{preset} (model_name {label!r})", "the model_name label")
        return preset
    why = (f"model_name {', '.join(map(repr, names))} matches no kvsim preset"
           if names else "no model_name label")
    log.said("model", DEFAULT_MODEL, "", False, why + "; pass --model")
    return DEFAULT_MODEL


def _infer_cache_config(window: Window, spec: ModelSpec, engine: str, log: _Log) -> _CacheConfig:
    """Block size, KV dtype, prefix caching, utilisation and max_model_len from
    ``vllm:cache_config_info``."""
    info = window.info("vllm:cache_config_info")
    labels = info[0] if info else {}
    opts = TwinOptions(engine=engine)
    block_size = _int_label(labels, "block_size")
    if block_size:
        opts["block_size"] = block_size
        log.said("block_size", f"{block_size} tokens", "vllm:cache_config_info{block_size}")
    else:
        block_size = 16
        log.said("block_size", "16 tokens", "", False, "no block_size in vllm:cache_config_info")
    dtype_label = labels.get("cache_dtype")
    kv_dtype = None
    if dtype_label is not None:
        kv_dtype = "fp8" if dtype_label.startswith("fp8") else None
        log.said("KV cache dtype", f"{kv_dtype or spec.dtype} (cache_dtype={dtype_label!r})",
                 "vllm:cache_config_info{cache_dtype}")
    else:
        log.said("KV cache dtype", spec.dtype, "", False,
                 "no cache_dtype label: the model's dtype")
    if kv_dtype:
        opts["kv_dtype"] = kv_dtype
    caching = labels.get("enable_prefix_caching")
    if caching in ("True", "False"):
        opts["enable_prefix_caching"] = caching == "True"
        log.said("prefix caching", caching.lower().replace("true", "on").replace("false", "off"),
                 "vllm:cache_config_info{enable_prefix_caching}")
    else:
        log.said("prefix caching", "the engine's default", "", False,
                 "no enable_prefix_caching label")
    util = _float_label(labels, "gpu_memory_utilization")
    if util is not None and util <= 1:
        log.said("gpu_memory_utilization", f"{util:g}",
                 "vllm:cache_config_info{gpu_memory_utilization}")
    else:
        util = None
    _infer_max_model_len(labels, spec, opts, log)
    return _CacheConfig(bool(info), opts, block_size, kv_dtype, util,
                        _int_label(labels, "num_gpu_blocks"))


def _infer_max_model_len(labels: dict[str, str], spec: ModelSpec, opts: TwinOptions,
                         log: _Log) -> None:
    """``kv_cache_size_tokens / kv_cache_max_concurrency``, when both are there and fit."""
    size_tokens = _float_label(labels, "kv_cache_size_tokens")
    concurrency = _float_label(labels, "kv_cache_max_concurrency")
    if size_tokens and concurrency:
        mml = int(round(size_tokens / concurrency))
        if 1 <= mml <= spec.max_model_len:
            opts["max_model_len"] = mml
            log.said("max_model_len", f"{mml:,}", "vllm:cache_config_info{kv_cache_size_tokens / "
                     "kv_cache_max_concurrency}")
    if "max_model_len" not in opts:
        log.said("max_model_len", f"{spec.max_model_len:,} (the model's)", "", False,
                 "no kv_cache_size_tokens and kv_cache_max_concurrency in "
                 "vllm:cache_config_info")


def _infer_gpu(gpu: str | None, cache: _CacheConfig, model_name: str, engine: str,
               log: _Log) -> str:
    """``gpu`` when given, else the preset whose budget gives the pool (vLLM exports no GPU)."""
    if gpu is not None:
        log.said("GPU", gpu, "--gpu")
        return gpu
    blocks, util = cache.vllm_blocks, cache.util
    if not (blocks and util):
        log.said("GPU", DEFAULT_GPU, "", False, "vLLM exports no GPU (and without num_gpu_blocks "
                 "and gpu_memory_utilization kvsim cannot tell it from the pool); pass --gpu")
        return DEFAULT_GPU
    found, err, close = _gpu_for(model_name, blocks, util, cache.kv_dtype, cache.block_size,
                                 engine)
    if found is None:
        log.said("GPU", DEFAULT_GPU, "", False, "vLLM exports no GPU and no preset's budget "
                 f"gives {blocks:,} blocks at {util:g} within 10 %; pass --gpu")
        return DEFAULT_GPU
    log.said("GPU", f"{found} (its budget at {util:g} gives {blocks:,} blocks within "
             f"{100 * err:.1f} %{close})", "num_gpu_blocks and gpu_memory_utilization of "
             "vllm:cache_config_info, with the model")
    return found


def _infer_pool(cache: _CacheConfig, gpu_name: str, model_name: str, engine: str,
                log: _Log) -> None:
    """The usable KV blocks (``num_gpu_blocks`` less V1's null block), else kvsim's budget;
    then the scheduler settings /metrics does not carry."""
    opts = cache.options
    null_blocks = 1 if engine == "v1" else 0
    if cache.vllm_blocks:
        usable = max(cache.vllm_blocks - null_blocks, 1)
        opts["num_gpu_blocks"] = usable
        log.said("KV pool", f"{usable:,} usable blocks of {cache.block_size} "
                 f"({usable * cache.block_size:,} tokens)"
                 + (" (num_gpu_blocks less V1's null block)" if null_blocks else ""),
                 "vllm:cache_config_info{num_gpu_blocks}")
    else:
        util = cache.util or 0.9
        budget = kv_budget(gpu_name, model_name, gpu_memory_utilization=util,
                           kv_dtype=cache.kv_dtype, block_size=cache.block_size, engine=engine)
        opts["num_gpu_blocks"] = budget.blocks
        log.said("KV pool", f"{budget.blocks:,} blocks (kvsim's budget of {model_name} on "
                 f"{gpu_name} at {util:g})", "", False,
                 "no num_gpu_blocks in vllm:cache_config_info" if cache.present else
                 "no vllm:cache_config_info")
    opts["gpu_memory_utilization"] = cache.util or 0.9
    for what in ("max_num_seqs", "max_num_batched_tokens", "tensor_parallel_size"):
        log.said(what, "kvsim's default", "", False, "not in /metrics")


def _in_flight(window: Window, at: str) -> float:
    return sum(window.gauge(g, at) or 0.0 for g in ("vllm:num_requests_running",
                                                    "vllm:num_requests_waiting"))


def _infer_rate(window: Window, n_engines: int, observed: Observed, log: _Log) -> float:
    """Requests per second per engine: finished plus the change in flight over the window's
    seconds; else Little's law at one instant; else 1 req/s, said so."""
    seconds = window.seconds
    finished = window.total(_SUCCESS)
    in_flight_end = _in_flight(window, "end")
    in_flight_start = 0.0 if window.start is None else _in_flight(window, "start")
    if finished is not None and seconds:
        arrived = finished + in_flight_end - in_flight_start
        rate = max(arrived, 0.0) / seconds / n_engines
        observed["requests"] = arrived / n_engines
        log.said("arrival rate", f"{rate:.4g} req/s" + (" per engine" if n_engines > 1 else ""),
                 f"{_SUCCESS} (every finished_reason) plus the change of num_requests_running "
                 f"and _waiting, over {seconds:,.6g} s ({window.seconds_from})")
    else:
        e2e = window.histogram("vllm:e2e_request_latency_seconds")
        why = ("no " + _SUCCESS) if finished is None else \
            "the window's length is unknown (one scrape: give --uptime S)"
        if e2e is not None and e2e.observations > 0 and in_flight_end > 0:
            rate = in_flight_end / (e2e.observed_sum / e2e.observations) / n_engines
            log.said("arrival rate", f"{rate:.4g} req/s (rough)",
                     "Little's law: num_requests_running + _waiting at the scrape over the mean "
                     "of vllm:e2e_request_latency_seconds (one instant)", True, why)
        else:
            rate = 1.0
            log.said("arrival rate", "1 req/s", "", False, why + ", and no busy gauges with "
                     "vllm:e2e_request_latency_seconds for Little's law")
    if not rate > 0:
        raise KvsimError(f"{window.where}: no request arrived or finished in the window "
                         "(vllm:request_success_total and the running and waiting gauges are "
                         "flat): expected a window with traffic")
    observed["window_s"] = seconds
    return rate


def _infer_lengths(window: Window, observed: Observed, log: _Log) -> dict[str, LengthDist]:
    """Prompt and answer lengths: the family closest to each histogram, at its exact mean."""
    finished = window.total(_SUCCESS)
    lengths: dict[str, LengthDist] = {}
    for what, fam, default in (("prompt", "vllm:request_prompt_tokens", Fixed(850)),
                               ("output", "vllm:request_generation_tokens", Geometric(250))):
        h = window.histogram(fam)
        if h is None or not h.observations > 0:
            lengths[what] = default
            log.said(f"{what} lengths", default.describe(), "", False, _missing(window, [fam]))
            continue
        edges, cum, count, total = h
        mean_from = f"{fam}_sum / _count"
        tokens = window.total("vllm:generation_tokens_total")
        if what == "output" and tokens and finished:
            # every token emitted in the window over the answers finished in it: the
            # mean answer of a steady server, and the exact (censored) maximum-likelihood
            # mean of a geometric one from a cold start, where the histogram alone sees
            # only the answers short enough to have finished
            total, count = tokens, finished
            mean_from = f"vllm:generation_tokens_total / {_SUCCESS}"
        dist, ks = fit_lengths(edges, [c * count / h.observations for c in cum], count, total)
        lengths[what] = dist
        if what == "prompt":
            observed["prompt_mean"] = total / count
        else:
            observed["output_mean"] = total / count
        log.said(f"{what} lengths", f"{dist.describe()} (CDF within {ks:.3f} of the buckets)",
                 f"{fam} (the buckets), mean {mean_from}")
    return lengths


def _infer_max_tokens(window: Window, lengths: dict[str, LengthDist], observed: Observed,
                      opts: TwinOptions, log: _Log) -> None:
    """The ``max_tokens`` cap that cuts the share of answers ``finished_reason="length"`` counts
    (the answers then geometric before the cap)."""
    finished = window.total(_SUCCESS)
    cut = window.total(_SUCCESS, finished_reason="length")
    if cut and finished and "output_mean" in observed:
        share = cut / finished
        mean = observed.get("output_mean", lengths["output"].mean)
        if 0 < share < 1 and mean > 1:
            q = (mean - 1) / (mean - share)
            cap = int(round(1 + math.log(share) / math.log(q))) if 0 < q < 1 else None
            if cap and cap >= 1:
                lengths["output"] = Geometric(min(1 / (1 - q), MAX_LENGTH))
                opts["max_tokens"] = cap
                log.said("max_tokens", f"{cap:,} ({100 * share:.1f} % of answers cut; answers "
                         f"{lengths['output'].describe()} before the cap)",
                         f"{_SUCCESS}{{finished_reason=\"length\"}} with the answers' mean")
    if "max_tokens" not in opts:
        log.said("max_tokens", "none (answers end on their own)", "" if not finished else
                 f"{_SUCCESS}{{finished_reason=\"length\"}} is 0",
                 finished is not None and not cut,
                 "" if finished is not None and not cut else "no answer cut by length is "
                 "countable here")


def _observe_server(window: Window, n_engines: int,
                    observed: Observed) -> tuple[str, Histogram] | tuple[None, None]:
    """What the server showed, to compare the twin with; returns the inter-token histogram
    ``(its name, (edges, cumulative, count, sum))`` or ``(None, None)``."""
    preemptions = window.total("vllm:num_preemptions_total")
    requests = observed.get("requests")
    if preemptions is not None and requests:
        observed["preemptions_per_1k"] = 1000 * preemptions / n_engines / requests
    ttft = window.histogram("vllm:time_to_first_token_seconds")
    if ttft is not None and ttft.observations > 0:
        observed["ttft_mean_s"] = ttft.observed_sum / ttft.observations
    found = _histogram(window, _ITL)
    itl = found[1]
    if itl is not None:
        observed["itl_mean_s"] = itl.observed_sum / itl.observations
        observed["itl_p50_s"] = _p50(itl)
    kv = next((window.gauge(n) for n in _KV_USAGE if window.gauge(n) is not None), None)
    if kv is not None:
        observed["kv_usage_at_end"] = kv / n_engines
    return found


def _run_span(window: Window, duration_s: float | None) -> tuple[float, float]:
    """``(measured seconds, warm-up seconds)`` of the twin's runs: a since-start window is
    replayed from cold; a slice of a warm server after two minutes of the same traffic."""
    if duration_s is not None:
        measured = check_float("duration_s", duration_s, min=1, max=86_400)
    else:
        measured = min(max(window.seconds or 600.0, 60.0), 3600.0)
    return float(measured), 0.0 if window.start is None else 120.0


def _check_runs(twin: Twin) -> None:
    """Run the twin's first simulated second: a bad label gives a one-line error here."""
    try:
        twin.run(until_s=min(twin.warmup_s + 1.0, twin.warmup_s + twin.duration_s))
    except KvsimError as e:
        raise KvsimError(f"the twin's configuration is not valid: {e}") from None


def _infer_step_scale(twin: Twin, window: Window, itl_name: str | None, itl: Histogram | None,
                      fit_scale: bool,
                      log: _Log, progress: Progress) -> None:
    """``step_time_scale`` fitted so that the twin's median inter-token latency is the
    server's (1 when not fitted, said why)."""
    target = twin.observed.get("itl_p50_s", math.nan)
    if itl is not None and fit_scale and math.isfinite(target):
        twin.options["step_time_scale"] = _fit_scale(twin, itl.edges, target, progress)
        fit = twin.fit
        log.said("step-time scale", f"{twin.options['step_time_scale']:.4g} (the twin's median "
                 f"inter-token latency {1000 * fit['twin_p50_s']:.4g} ms vs the server's "
                 f"{1000 * fit['target_p50_s']:.4g} ms on the same buckets, {fit['runs']} "
                 f"run(s))", f"{itl_name} (the buckets' median, as histogram_quantile(0.5, ...))")
    else:
        twin.options["step_time_scale"] = 1.0
        log.said("step-time scale", f"1 ({twin.gpu} as kvsim models it)", "", False,
                 "not fitted (--no-fit)" if itl is not None else _missing(window, _ITL))


def build_twin(window: Window, *, model: str | None = None, gpu: str | None = None,
               seed: int = 0, duration_s: float | None = None, fit_scale: bool = True,
               progress: Progress | None = None) -> Twin:
    """The kvsim configuration that reproduces the server ``window`` was read from.

    ``model`` and ``gpu`` override what the series imply (vLLM exports no GPU);
    ``duration_s`` the measured length of the twin's runs (default: the
    window's, between 60 s and 3,600 s); ``fit_scale=False`` skips the
    step-time fit (scale 1); ``progress`` is called with each step's text (the
    fit's runs take seconds). Deterministic: the same window and arguments give
    the same twin. See the module docstring for what is read from where;
    :meth:`Twin.defaulted` and :attr:`Twin.illustrative` say what was not read.
    """
    if not isinstance(window, Window):
        raise KvsimError(f"window={type(window).__name__} is not supported: expected a "
                         "kvsim.observe.readings.Window")
    seed = check_int("seed", seed, min=0, max=2**63 - 1)
    progress = progress or _no_progress
    progress("reading the series")
    log = _Log()
    observed = Observed()
    version, engine, n_engines = _infer_engine(window, log)
    model_name = _infer_model(window, model, log)
    cache = _infer_cache_config(window, get_model(model_name), engine, log)
    gpu_name = _infer_gpu(gpu, cache, model_name, engine, log)
    _infer_pool(cache, gpu_name, model_name, engine, log)
    rate = _infer_rate(window, n_engines, observed, log)
    lengths = _infer_lengths(window, observed, log)
    _infer_max_tokens(window, lengths, observed, cache.options, log)
    itl_name, itl = _observe_server(window, n_engines, observed)
    measured, warmup = _run_span(window, duration_s)
    twin = Twin(model_name, gpu_name, cache.options, rate, lengths["prompt"], lengths["output"],
                measured, warmup, seed, version, f"{window.kind} of {window.where}",
                log.findings, observed)
    progress("checking the twin's configuration")
    _check_runs(twin)
    _infer_step_scale(twin, window, itl_name, itl, fit_scale, log, progress)
    return twin


def _p50(hist: Histogram) -> float:
    """The median of a histogram, as PromQL's ``histogram_quantile(0.5, ...)`` computes it."""
    edges, cum = hist.edges, hist.cumulative
    finite = [e for e in edges if math.isfinite(e)]
    counts = [c for e, c in zip(edges, cum, strict=True) if math.isfinite(e)] + [cum[-1]]
    return histogram_quantile(0.5, finite, counts)


def _itl_p50(twin: Twin, result: SimResult, edges: Sequence[float]) -> float:
    """The median inter-token latency of the twin's measured window, on the server's buckets."""
    rm = run_metrics(result)
    t0, t1 = twin.warmup_s, result.simulated_s
    defs = {d.source: d for d in rm.defs}
    counts, count, _ = rm.hists["itl"].at(np.array([t0, t1]))
    own = list(defs["itl"].buckets) + [math.inf]
    cum = [float(c[1] - c[0]) for c in counts] + [float(count[1] - count[0])]
    # the server's edges are vLLM's; read the twin's cumulative counts at them
    at = [cum[own.index(e)] if e in own else math.nan for e in edges]
    if any(math.isnan(x) for x in at):
        at = [float(np.interp(e, own[:-1], cum[:-1])) if math.isfinite(e) else cum[-1]
              for e in edges]
    return _p50(Histogram(list(edges), at, at[-1], 0.0))


def _fit_scale(twin: Twin, edges: Sequence[float], target: float, progress: Progress = _no_progress) -> float:
    """The step_time_scale at which the twin's median inter-token latency is ``target``
    (both on the server's buckets): a ratio iteration from 1 on the same seeded traffic (at
    most 8 runs, within 0.5 %). The median, not the mean: a preemption's pause is one long
    sample that moves the mean by as much as the step time does, and the twin's preemptions
    are not the server's."""
    scale = 1.0
    best: tuple[float, float, float] | None = None
    runs = 0
    for attempt in range(1, 9):
        progress(f"fitting the step-time scale (run {attempt}, at most 8)")
        p50 = _itl_p50(twin, twin.run(step_time_scale=scale), edges)
        runs += 1
        if not math.isfinite(p50) or p50 <= 0:
            break
        err = abs(math.log(p50 / target))
        if best is None or err < best[0]:
            best = (err, scale, p50)
        if err < 0.005:
            break
        scale = min(max(scale * target / p50, 0.01), 100.0)
    if best is None:
        twin.fit = StepFit(target_p50_s=target, twin_p50_s=math.nan, runs=runs)
        return 1.0
    twin.fit = StepFit(target_p50_s=target, twin_p50_s=best[2], runs=runs)
    return round(best[1], 6)


# --- what-ifs ------------------------------------------------------------------------------

def what_ifs(twin: Twin, seed: int | None = None,
             progress: Progress | None = None) -> list[dict[str, object]]:
    """The twin and the what-ifs of chapters 2-5, one row each: ``case``, ``change`` (the
    engine options changed) and the summary columns :data:`WHAT_IF_COLUMNS`.

    * more memory (chapter 5, mission 1): ``gpu_memory_utilization`` 0.1 higher (at most
      0.95) on the twin's GPU, as more blocks; 25 % more blocks without a known utilisation;
    * an FP8 KV cache (chapter 1): the same bytes hold twice the tokens (skipped if FP8);
    * a ``max_num_seqs`` cap (chapter 2): as many requests as the pool holds at the mean
      prompt plus answer;
    * a watermark (chapter 5, mission 4): 5 % of the blocks kept free at admission.

    ``progress`` is called before each run (``what-if 2 of 5: ...``). The rows describe
    the server only as far as the twin does: see :attr:`Twin.illustrative`.
    """
    o = twin.options
    blocks, bs = int(o["num_gpu_blocks"]), int(o.get("block_size", 16))
    util = o.get("gpu_memory_utilization")
    cases: list[tuple[str, dict[str, object]]] = [("twin (baseline)", {})]
    more: tuple[str, dict[str, object]] | None = None
    if util is not None and util < 0.95:
        up = min(util + 0.1, 0.95)
        try:
            gain = (kv_budget(twin.gpu, twin.model, gpu_memory_utilization=up,
                              kv_dtype=o.get("kv_dtype"), block_size=bs, engine=o["engine"]).blocks
                    - kv_budget(twin.gpu, twin.model, gpu_memory_utilization=util,
                                kv_dtype=o.get("kv_dtype"), block_size=bs,
                                engine=o["engine"]).blocks)
            if gain > 0:
                more = (f"more memory (utilisation {util:g} -> {up:g})",
                        {"num_gpu_blocks": blocks + gain})
        except KvsimError:
            more = None
    cases.append(more or ("more memory (25 % more KV blocks)",
                          {"num_gpu_blocks": int(blocks * 1.25)}))
    if not str(o.get("kv_dtype") or "").startswith("fp8"):
        ratio = kv_bytes_per_token(twin.model) / kv_bytes_per_token(twin.model, "fp8")
        cases.append(("FP8 KV cache", {"kv_dtype": "fp8",
                                       "num_gpu_blocks": int(blocks * ratio)}))
    per_request = math.ceil(twin.prompt.mean + twin.output.mean)
    cap = max(1, blocks * bs // per_request)
    cases.append((f"max_num_seqs {cap} (the pool at the mean length)", {"max_num_seqs": cap}))
    cases.append(("watermark 0.05", {"watermark": 0.05}))
    rows: list[dict[str, object]] = []
    progress = progress or _no_progress
    for number, (case, change) in enumerate(cases, 1):
        progress(f"what-if {number} of {len(cases)}: {case}")
        s = twin.run(seed=seed, **change).summary()
        rows.append(dict(case=case, change=dict(change),
                         **{k: s[k] for k in WHAT_IF_COLUMNS}))
    return rows


def with_seed(twin: Twin, seed: int) -> Twin:
    """The same twin with other random arrivals (``seed``), its fit kept."""
    return replace(twin, seed=check_int("seed", seed, min=0, max=2**63 - 1))
