"""Answer checks for the book's exercises.

Explained in chapter 1, *Bytes per token and capacity* (the exercises at the
end of each chapter call :func:`check`).

Each exercise has an id ``"ch01-<slug>"`` that matches the label of its
``{exercise}`` directive in the book (``ex-ch01-<slug>``). The expected answer
is never typed in here: it is computed from kvsim, with the same functions the
chapter calls, when the check runs. A check prints exactly one line:

* ``Right: ...`` with a one-line reason,
* ``Not yet: ...`` with a hint (some common slips get a hint of their own),
* ``Not answered yet: ...`` while the answer is still ``None``,
* ``Not a number: ...`` when the answer has the wrong type (a string, a list).

::

    import kvsim.exercises
    answer = None
    kvsim.exercises.check("ch01-qwen-bytes", answer)
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Callable

from .errors import KvsimError
from .units import GB, MB, GiB, MiB, format_bytes

__all__ = [
    "Exercise", "Verdict", "EXERCISES", "BELGAVI", "H100_8B",
    "evaluate", "check", "expected", "list_exercises",
]

#: The seed article's Belgavi's Book Store set-up (seed 000, "KV Cache
#: Preemption in vLLM"): a 7B model on a 48 GB card shared at 60 %,
#: 850-token prompts and 250-token answers. The card is the measured A40
#: (the seeds name none); the activation reserve is what vLLM V1's profiling
#: run needs (kvsim's estimate), not the seed's round "2 GB".
BELGAVI = {
    "gpu": "a40-48gb",
    "model": "llama-2-7b",
    "gpu_memory_utilization": 0.60,
    "prompt_tokens": 850,
    "output_tokens": 250,
}

#: Seed 003 ("Throughput collapse under load"): Llama-3.1-8B on an 80 GB H100
#: at ``gpu_memory_utilization=0.90``, sized for a p95 request of a 2k prompt
#: plus a 4k answer, against the seed's ``max_num_seqs`` of 256 (vLLM V1's
#: default on an H100 is 1,024).
H100_8B = {
    "gpu": "h100-80gb",
    "model": "llama-3.1-8b",
    "gpu_memory_utilization": 0.90,
    "p95_prompt_tokens": 2_000,
    "p95_output_tokens": 4_000,
    "default_max_num_seqs": 1024,
    "seed_max_num_seqs": 256,
}


def _belgavi_budget(kv_dtype=None):
    from .memory import kv_budget

    return kv_budget(BELGAVI["gpu"], BELGAVI["model"],
                     gpu_memory_utilization=BELGAVI["gpu_memory_utilization"], kv_dtype=kv_dtype)


def _h100_budget(kv_dtype=None):
    from .memory import kv_budget

    return kv_budget(H100_8B["gpu"], H100_8B["model"],
                     gpu_memory_utilization=H100_8B["gpu_memory_utilization"],
                     kv_dtype=kv_dtype)


@dataclass(frozen=True)
class Verdict:
    """The outcome of one check: ``status`` is ``"right"``, ``"wrong"``,
    ``"unanswered"`` or ``"invalid"``; ``message`` is the single line printed."""

    status: str
    message: str

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Exercise:
    """One checkable exercise.

    ``solve()`` returns ``(expected, why)`` computed from kvsim; an answer is
    right when it is within ``abs_tol`` or ``rel_tol`` of ``expected``.
    ``traps`` are ``(value_fn, hint)`` pairs for common slips: an answer near
    ``value_fn()`` (and not right) gets that hint instead of the general one.
    """

    id: str
    question: str
    kind: str  # "int" or "float"
    unit: str
    solve: Callable[[], tuple[float, str]]
    hint: str
    abs_tol: float = 0.0
    rel_tol: float = 0.0
    traps: tuple = field(default_factory=tuple)

    def close(self, answer: float, target: float) -> bool:
        return abs(answer - target) <= max(self.abs_tol, self.rel_tol * abs(target))


# --- the exercises of chapter 1 -------------------------------------------------

def _qwen_bytes():
    from .memory import kv_bytes_per_token
    from .models import get_model

    m = get_model("qwen2.5-7b")
    n = kv_bytes_per_token(m)
    return n, (f"2 x {m.kv_layers} layers x {m.num_kv_heads} KV heads x {m.head_dim} x 2 B "
               f"= {n:,} B ({format_bytes(n, 'KiB', 0)}) per token")


def _qwen_as_mha():
    from .models import get_model

    m = get_model("qwen2.5-7b")
    return _qwen_bytes()[0] * m.num_attention_heads // m.num_kv_heads


def _mla_ratio():
    from .memory import kv_bytes_per_token

    big, mla = kv_bytes_per_token("llama-3.1-70b"), kv_bytes_per_token("deepseek-v3")
    r = big / mla
    return r, f"{big:,} B / {mla:,} B = {r:.2f}; MLA caches one latent, not K and V"


def _mla_ratio_with_factor_two():
    return _mla_ratio()[0] / 2


def _pool_gib():
    b = _belgavi_budget()
    v = b.kv_bytes / GiB
    return v, f"{b.kv_bytes:,} B / 2**30 = {v:.2f} GiB ({format_bytes(b.kv_bytes, 'GB')})"


def _pool_gb():
    return _belgavi_budget().kv_bytes / GB


def _fp8_tokens():
    b = _belgavi_budget("fp8")
    return b.tokens, (f"{b.blocks:,} blocks of {b.block_size} = {b.tokens:,} tokens at "
                      f"{b.kv_bytes_per_token:,} B each, twice the 16-bit pool")


def _fp8_tokens_decimal():
    # the pool / 0.25 MB, reading the 0.25 MiB per token as 0.25 MB.
    b = _belgavi_budget("fp8")
    return b.kv_bytes / (b.kv_bytes_per_token / MiB * MB)


def _bf16_tokens():
    return _belgavi_budget().tokens


def _blocks_held():
    b = _belgavi_budget()
    length = BELGAVI["prompt_tokens"] + 600
    n = b.blocks_for(length)
    return n, (f"ceil({length:,} / {b.block_size}) = {n}; the last block has "
               f"{n * b.block_size - length} empty slots but is held whole")


def _blocks_floor():
    b = _belgavi_budget()
    return (BELGAVI["prompt_tokens"] + 600) // b.block_size


def _longer_answers():
    b = _belgavi_budget()
    length = BELGAVI["prompt_tokens"] + 600
    n = b.max_concurrent(length)
    per = b.blocks_for(length)
    return n, f"{b.blocks:,} blocks // {per} blocks per request = {n} requests"


def _longer_answers_decimal():
    # The seed's reading: the pool / 0.5 MB per token / 1,450 tokens.
    b = _belgavi_budget()
    return math.floor(b.kv_bytes / (b.kv_bytes_per_token / MiB * MB)
                      / (BELGAVI["prompt_tokens"] + 600))


def _max_num_seqs_fp8():
    b = _h100_budget("fp8")
    seq = H100_8B["p95_prompt_tokens"] + H100_8B["p95_output_tokens"]
    n = b.max_concurrent(seq)
    return n, (f"{b.blocks:,} blocks // {b.blocks_for(seq)} per request = {n}, "
               f"twice the 16-bit figure")


def _max_num_seqs_bf16():
    b = _h100_budget()
    return b.max_concurrent(H100_8B["p95_prompt_tokens"] + H100_8B["p95_output_tokens"])


EXERCISES: dict[str, Exercise] = {e.id: e for e in [
    Exercise(
        id="ch01-qwen-bytes",
        question="KV cache bytes per token of Qwen2.5-7B with a bf16 cache",
        kind="int", unit="bytes", solve=_qwen_bytes,
        hint="2 (K and V) x layers x KV heads x head_dim x 2 bytes; "
             "see kvsim.get_model('qwen2.5-7b')",
        traps=((lambda: _qwen_bytes()[0] // 2,
                "that is half the answer: every token stores a key AND a value"),
               (_qwen_as_mha,
                "you used the attention (query) heads; the cache stores only the KV heads (GQA)")),
    ),
    Exercise(
        id="ch01-mla-ratio",
        question="how many times more KV bytes per token Llama-3.1-70B needs than DeepSeek-V3",
        kind="float", unit="a ratio", solve=_mla_ratio, rel_tol=0.02,
        hint="divide kvsim.kv_bytes_per_token('llama-3.1-70b') by the same for 'deepseek-v3'",
        traps=((_mla_ratio_with_factor_two,
                "MLA stores one latent per layer, not a K and a V: no factor 2 on its side"),),
    ),
    Exercise(
        id="ch01-pool-gib",
        question="the Belgavi KV pool in GiB",
        kind="float", unit="GiB", solve=_pool_gib, abs_tol=0.02,
        hint="take kv_budget(...).kv_bytes and divide by 2**30, not by 10**9",
        traps=((_pool_gb, "that is the pool in GB (10**9 bytes); a GiB is 2**30 bytes"),),
    ),
    Exercise(
        id="ch01-fp8-tokens",
        question="tokens in the Belgavi KV pool with an FP8 cache",
        kind="int", unit="tokens", solve=_fp8_tokens, rel_tol=0.005,
        hint="call kv_budget with kv_dtype='fp8' and read .tokens",
        traps=((_bf16_tokens, "that is the 16-bit pool; pass kv_dtype='fp8'"),
               (_fp8_tokens_decimal,
                "that is the decimal reading (0.25 MB per token); a token costs 0.25 MiB = 262,144 B")),
    ),
    Exercise(
        id="ch01-blocks-held",
        question="KV blocks held by one finished Belgavi request with a 600-token answer",
        kind="int", unit="blocks", solve=_blocks_held,
        hint="a request of L tokens holds ceil(L / block_size) blocks; L is prompt plus answer",
        traps=((_blocks_floor, "a partly filled last block is still a whole block: round up"),),
    ),
    Exercise(
        id="ch01-longer-answers",
        question="concurrent Belgavi requests that fit with 600-token answers",
        kind="int", unit="requests", solve=_longer_answers,
        hint="use budget.max_concurrent(prompt + answer) on the Belgavi budget",
        traps=((_longer_answers_decimal,
                "that is the seed's decimal reading (0.5 MB per token); kvsim counts "
                "524,288 B per token and whole blocks"),),
    ),
    Exercise(
        id="ch01-max-num-seqs",
        question="max_num_seqs for Llama-3.1-8B on an H100 80 GB at 0.90 with an FP8 cache, p95 6k",
        kind="int", unit="sequences", solve=_max_num_seqs_fp8, abs_tol=1,
        hint="build the H100 budget with kv_dtype='fp8', then .max_concurrent(6000)",
        traps=((_max_num_seqs_bf16, "that is the bf16 figure; the question asks for an FP8 cache"),),
    ),
]}


def list_exercises() -> list[str]:
    """The ids of every checkable exercise."""
    return list(EXERCISES)


def _get(exercise_id: str) -> Exercise:
    if exercise_id not in EXERCISES:
        raise KvsimError(f"exercise_id={exercise_id!r} is not known: expected one of "
                         f"{', '.join(EXERCISES)}")
    return EXERCISES[exercise_id]


def expected(exercise_id: str):
    """The expected answer of an exercise, computed from kvsim."""
    return _get(exercise_id).solve()[0]


def _as_number(answer):
    """Return ``answer`` as int or float, or ``None`` when it is not a number."""
    if isinstance(answer, bool):
        return None
    if isinstance(answer, Integral):
        return int(answer)
    if isinstance(answer, Real):
        x = float(answer)
        return x if math.isfinite(x) else None
    return None


def _show(x) -> str:
    if isinstance(x, int):
        return f"{x:,}"
    return f"{x:,.4g}"


def evaluate(exercise_id: str, answer) -> Verdict:
    """Judge ``answer`` to an exercise without printing (see :func:`check`)."""
    ex = _get(exercise_id)
    if answer is None:
        return Verdict("unanswered", f"Not answered yet: replace None with your answer "
                                     f"({ex.unit}) and run the cell again.")
    x = _as_number(answer)
    if x is None:
        kind = "a whole number" if ex.kind == "int" else "a number"
        shown = repr(answer)
        if len(shown) > 40:
            shown = shown[:37] + "..."
        return Verdict("invalid", f"Not a number: answer = {shown} is a "
                                  f"{type(answer).__name__}; write {kind} ({ex.unit}) "
                                  f"without quotes.")
    target, why = ex.solve()
    if ex.close(x, target):
        return Verdict("right", f"Right: {why}.")
    for value_fn, trap_hint in ex.traps:
        trap = value_fn()
        if not ex.close(trap, target) and abs(x - trap) <= max(ex.abs_tol, ex.rel_tol * abs(trap), 1e-9 * abs(trap)):
            return Verdict("wrong", f"Not yet: {_show(x)} is not it; hint: {trap_hint}.")
    return Verdict("wrong", f"Not yet: {_show(x)} is not it; hint: {ex.hint}.")


def check(exercise_id: str, answer) -> None:
    """Print one line: right (and why), wrong (with a hint), or not answered yet."""
    print(evaluate(exercise_id, answer).message)
