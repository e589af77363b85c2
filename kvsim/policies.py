"""Admission policies and victim choice, one class per real engine's behaviour.

* :class:`OptimisticAdmission` — vLLM: admit a waiting request when its prompt
  blocks fit and leave ``watermark`` of the pool free; the answer is not
  reserved. When a running request needs a block and none is free, preempt the
  *last admitted* running request (priority mode: lowest priority, latest
  arrival). Explained in chapter 2.
* :class:`GuaranteedAdmission` — TensorRT-LLM ``GUARANTEED_NO_EVICT``: admit
  only if prompt + ``max_tokens`` blocks, for it and for everything running,
  fit in the pool. It never preempts. Explained in chapter 2.
* :class:`SGLangAdmission` — SGLang's conservative middle way: admit while
  prompt + ``new_token_ratio`` x (remaining answer budget) of every request
  fits; the ratio starts at ``init_new_token_ratio``, decays by
  ``new_token_ratio_decay`` per step down to ``min_new_token_ratio`` and resets
  when a request is retracted; retraction picks the request with the fewest
  generated tokens (ties: the longest prompt). Explained in chapter 2.

The engine asks a policy three questions: may this request be admitted now,
which running request is the victim, and does a blocked queue stay blocked
while the batch only decodes (which lets the engine jump over steps).
"""
from __future__ import annotations

import numpy as np

from .errors import check_float

__all__ = ["OptimisticAdmission", "GuaranteedAdmission", "SGLangAdmission", "make_policy",
           "ADMISSIONS"]


class _Policy:
    name = "base"
    preempts = True
    #: a queue that cannot be admitted stays blocked during pure-decode steps
    #: (free blocks only shrink, the batch size is fixed), so the engine may
    #: jump over them.
    stays_blocked = True

    def bind(self, eng) -> None:
        self.eng = eng

    def max_new(self, rids):
        """The answer length the scheduler plans for: ``max_tokens`` when the
        engine sets it, else the request's own length (a client that knows it)."""
        e = self.eng
        return e.max_tokens if e.max_tokens is not None else e.O[rids]

    def can_admit(self, rid: int, blocks_needed: int) -> bool:
        raise NotImplementedError

    def admitted(self, rid: int) -> None:
        pass

    def released(self, rid: int) -> None:
        pass

    def stepped(self, n_steps: int) -> None:
        pass

    def retracted(self) -> None:
        pass


class OptimisticAdmission(_Policy):
    """vLLM's block-manager check: ``free - needed >= watermark_blocks``."""

    name = "optimistic"

    def can_admit(self, rid, blocks_needed):
        e = self.eng
        return e.free - blocks_needed >= e.watermark_blocks


class GuaranteedAdmission(_Policy):
    """Reserve prompt + max_tokens for every admitted request; never preempt.

    The reservation uses the engine's ``max_tokens`` when it is set; without it
    each request reserves its own true answer length, as if every client sent
    an exact ``max_tokens`` (the best case for this policy).
    """

    name = "guaranteed"
    preempts = False

    def bind(self, eng):
        super().bind(eng)
        self.reserved = 0
        self.resv = {}

    def _reservation(self, rid):
        e = self.eng
        return -(-(int(e.P[rid]) + int(self.max_new(rid))) // e.bs)

    def can_admit(self, rid, blocks_needed):
        e = self.eng
        return self.reserved + self._reservation(rid) <= e.total_blocks and e.free >= blocks_needed

    def admitted(self, rid):
        r = self._reservation(rid)
        self.resv[rid] = r
        self.reserved += r

    def released(self, rid):
        self.reserved -= self.resv.pop(rid)


class SGLangAdmission(_Policy):
    """SGLang-style admission by a decaying ``new_token_ratio``."""

    name = "sglang"
    stays_blocked = False  # the ratio decays every step, so a blocked queue may open

    def __init__(self, init_new_token_ratio=0.7, min_new_token_ratio=0.1,
                 new_token_ratio_decay=None):
        self.init = check_float("init_new_token_ratio", init_new_token_ratio, min=0, max=1)
        self.min = check_float("min_new_token_ratio", min_new_token_ratio, min=0, max=self.init)
        if new_token_ratio_decay is None:
            new_token_ratio_decay = (self.init - self.min) / 600
        self.decay = check_float("new_token_ratio_decay", new_token_ratio_decay, min=0, max=1)

    def bind(self, eng):
        super().bind(eng)
        self.steps_since_reset = 0

    @property
    def ratio(self) -> float:
        return max(self.min, self.init - self.steps_since_reset * self.decay)

    def can_admit(self, rid, blocks_needed):
        e = self.eng
        if not e.running:  # an idle server admits whatever fits (the ratio cannot decay idle)
            return blocks_needed <= e.free
        r = self.ratio
        run = e.running_array()
        remaining = np.maximum(self.max_new(run) - e.generated_array(run), 0)
        need_tokens = blocks_needed * e.bs + r * int(self.max_new(rid))
        return need_tokens + float(remaining.sum()) * r <= e.free * e.bs

    def stepped(self, n_steps):
        self.steps_since_reset += n_steps

    def retracted(self):
        self.steps_since_reset = 0


ADMISSIONS = {"optimistic": OptimisticAdmission, "guaranteed": GuaranteedAdmission,
              "sglang": SGLangAdmission}


def make_policy(name: str, **params) -> _Policy:
    return ADMISSIONS[name](**params)
