"""Expectations for the book's simulated numbers, written out from kvsim's cost model by hand.

The tests of the book's and the missions' numbers compare a simulation with these instead of
with the figure the last engine printed, so a change to the engine moves the expectation with
it. Each is a fluid (average) picture: no queue fluctuation, no order of events, only the
step time that :class:`kvsim.engine.costs.StepCost` gives for the batch a formula predicts.

* :func:`mean_blocks_held` -- blocks a running request holds at a random moment: its prompt,
  the answer tokens it has so far and, on average, half a block of a partly filled last one.
  With geometric answers of mean ``m`` a random moment most likely falls in a long answer
  (size-biased sampling): the tokens generated so far average ``m - 1/2``, so a request holds
  about ``(prompt + answer) / block + 1/2`` blocks.
* :func:`fluid_running` -- Little's law, ``N = rate x W``, with ``W`` the time ``answer``
  decode steps take at a batch of ``N``: solved for ``N`` (a fixed point). Each arrival's
  prefill lengthens one step by what a prompt adds to a decode step; over a second that
  stretches every request's decode by ``1 / (1 - rate x extra)``.
* :func:`service_rate` -- an overloaded server: the cache is pinned, so the batch is what the
  pool holds (:func:`mean_blocks_held`), and it finishes ``mu = N / (answer x step + N x
  extra)`` requests a second (each finish took ``answer`` steps of ``N`` sequences; each
  admission lengthened one step by ``extra``). Goodput is then ``mu x answer``.
* :func:`closed_loop_goodput` -- seed 003's closed loop with every user running: ``users``
  sequences, each request ``answer`` decode steps and one prefill.
"""
from __future__ import annotations

import kvsim
from kvsim.engine.costs import StepCost, attention_pairs


def mean_blocks_held(prompt: float, answer: float, block_size: int = 16) -> float:
    """Blocks a running request holds on average (size-biased geometric answers, see above)."""
    return (prompt + answer) / block_size + 0.5


def prefill_extra_s(cost: StepCost, n: int, context: int, prompt: int) -> float:
    """What one ``prompt``-token prefill adds to a decode step of ``n`` sequences."""
    plain = cost.step_s(n, n, decode_context=context)
    mixed = cost.step_s(n + prompt, n + 1, decode_context=context,
                        prefill_pairs=attention_pairs(0, prompt), prefill_kv_tokens=prompt)
    return mixed - plain


def fluid_running(model: str, gpu: str, *, rate: float, prompt: int, answer: float,
                  **cost_options) -> float:
    """Little's law's running count ``N = rate x W(N)`` (module docstring), from StepCost."""
    cost = StepCost(kvsim.get_model(model), kvsim.get_gpu(gpu), **cost_options)
    n = 1.0
    for _ in range(200):
        k = max(1, round(n))
        context = round(k * (prompt + answer))
        step = cost.step_s(k, k, decode_context=context)
        busy = rate * prefill_extra_s(cost, k, context, prompt)
        assert busy < 1, "prefill alone saturates the GPU: no steady state"
        n_next = rate * answer * step / (1 - busy)
        if abs(n_next - n) < 1e-9:
            break
        n = n_next
    return n


def decode_step_s(model: str, gpu: str, n: int, tokens_each: float, **cost_options) -> float:
    """One decode step of ``n`` sequences of ``tokens_each`` tokens (StepCost, the run's default)."""
    cost = StepCost(kvsim.get_model(model), kvsim.get_gpu(gpu), **cost_options)
    return cost.step_s(n, n, decode_context=round(n * tokens_each))


def service_rate(budget, *, prompt: int, answer: float) -> tuple[float, float]:
    """``(mu, n)``: requests finished per second and the batch of a pinned cache (see above)."""
    cost = StepCost(budget.model, budget.gpu, kv_bytes_per_token=budget.kv_bytes_per_token)
    n = budget.blocks / mean_blocks_held(prompt, answer, budget.block_size)
    k, context = int(n), round(n * (prompt + answer))
    step = cost.step_s(k, k, decode_context=context)
    return n / (answer * step + n * prefill_extra_s(cost, k, context, prompt)), n


def geometric_capped_mean(mean: float, cap: int) -> float:
    """E[min(G, cap)] for G geometric on 1, 2, ... with this mean (a ``max_tokens`` cap)."""
    p = 1.0 / mean
    return (1 - (1 - p) ** cap) / p


def closed_loop_goodput(model: str, gpu: str, *, users: int, prompt: float,
                        answer: float) -> float:
    """Tokens a second ``users`` closed-loop clients receive when every one of them runs."""
    cost = StepCost(kvsim.get_model(model), kvsim.get_gpu(gpu))
    step = cost.step_s(users, users, decode_context=round(users * (prompt + answer / 2)))
    return users * answer / (answer * step + cost.prefill_s(round(prompt)))
