"""The lab's four missions: incident tickets, and the one function that scores them.

Explained in chapter 5, *Belgavi's Book Store*. Each mission is a ticket on
one of the lab's scenarios (:mod:`kvsim.runs.scenarios`, ``mission-1-storm`` ...
``mission-4-burst``): a pager line, a dashboard snapshot and a log excerpt
(all three computed from the scenario's own run, never typed in), an explicit
SLO, and the settings (*levers*) the on-call engineer may change::

    from . import missions
    print(missions.ticket(1))
    missions.score(1, {"gpu_memory_utilization": 0.75})

Every mission is scored on a **warm server**: its scenario runs two minutes of
the same traffic that are not scored (the engine's ``warmup_s``), then a ten
minute window (twenty for mission 2), long enough for a queue's trend to show
(:func:`mission_day`).
The missions were once scored on a cold two-minute replay, "a load test that
would have passed" (chapter 5); :func:`cold_trap` computes what that replay
would teach, and :func:`debrief` ends with it. Where a mission's lever could
not fix its steady-state problem the mission's day changed, not its verdict:
mission 1's answers are about 275 tokens (at 350 no memory on the grid ends
the storm), mission 2's V0 server takes 0.9 req/s (at 1.5 it is overloaded
whatever the settings), and its ticket says so.

:func:`score` is the only judge; the notebook calls it and the static site
shows what :func:`mission_grid` precomputed *with it*, so the two cannot
disagree. Stars:

1. the settings meet the SLO on **every** one of :data:`SEEDS` (five
   independent days of traffic); passing on a lucky seed earns nothing;
2. and they use no more of the mission's resource (memory, headroom; for
   mission 3 the extra memory after the cap and the cache dtype) than the least
   that kvsim's own search finds: :func:`search` runs :func:`kvsim.sweep` over
   every lever's grid and every seed;
3. and the prediction committed before running named the root cause (or, in
   mission 4, the band of headroom) correctly.

Everything is deterministic: the same settings always earn the same stars.
Bad settings raise a one-line :class:`~kvsim.KvsimError` naming the value and
the valid range. Progress, completion codes and the leaderboard live in
:mod:`kvsim.lab.progress`.
"""
from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np

from kvsim.engine.result import Table
from kvsim.errors import KvsimError, check_choice, check_float, check_int
from kvsim.runs.scenarios import get_scenario, run_scenario, scenario_parameters
from kvsim.runs.sweeps import sweep

__all__ = ["SEEDS", "SLO", "Lever", "Mission", "MISSIONS", "Score", "get_mission",
           "list_missions", "normalise_settings", "evaluate", "search", "score",
           "mission_grid", "ticket", "ticket_facts", "expert_settings", "pass_band",
           "incident_seed", "check_prediction", "COLD_DAY", "mission_day", "doubled_day",
           "cold_trap", "debrief", "complaint", "WARM_DAY", "answer_key", "HOLDOUT_SEEDS",
           "MARGIN", "margin", "WrongFix", "hint", "LeverValue", "Settings", "RunRow",
           "Prediction", "MissionLike", "row_number"]

#: The days of traffic every setting is scored on (a pass on all of them is one star).
SEEDS = (0, 1, 2, 3, 4)

#: Five days no mission was designed on: tests/test_missions_margin.py re-scores every
#: mission's expert answer and listed wrong fixes on them.
HOLDOUT_SEEDS = (5, 6, 7, 8, 9)

#: The margin a mission's verdict holds by: the expert's settings beat every SLO target by at
#: least this share of the target on every day (of SEEDS and of HOLDOUT_SEEDS), and each
#: listed wrong fix misses some target by at least as much on some day of each set. Ten per
#: cent is more than the spread between neighbouring days of a well-behaved setting (mission
#: 1's expert: 13-16 % on seeds 0-9) and the issue's (29) own figure.
MARGIN = 0.10

#: A lever's value: a number on its grid, one of its choices, or None (no cap).
LeverValue = float | int | str | None
#: A mission's settings: one value per lever, by name.
Settings = dict[str, LeverValue]
#: One run as the missions read it: a summary (:meth:`kvsim.SimResult.summary`) or a search
#: row (the summary's keys with the levers and ``seed``).
RunRow = dict[str, LeverValue]
#: A learner's committed guess: ``{"cause": key}`` or, for mission 4, ``{"band": (low, high)}``.
Prediction = Mapping[str, object]


def _scenario_number(params: Mapping[str, object], key: str, default: float | None = None) -> float:
    """A mission's scenario parameter ``key`` (its default, or the mission's fixed value) as a
    float; ``default`` when the scenario has no such parameter (None: it must have one)."""
    value = params.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise KvsimError(f"{key}={value!r} is not a number: expected a scenario parameter's "
                         f"number")
    return float(value)


def row_number(row: Mapping[str, LeverValue], key: str) -> float:
    """A run's number ``key`` (a summary's metric, a row's lever or seed) as a float."""
    value = row[key]
    if value is None or isinstance(value, str):
        raise KvsimError(f"{key}={value!r} is not a number: expected a run's summary value")
    return float(value)


@dataclass(frozen=True)
class SLO:
    """The ticket's targets; ``None`` leaves a metric out."""

    ttft_p95_s: float | None = None
    preemptions_per_1k: float | None = None
    share_paused_over_1s: float | None = None
    itl_p99_s: float | None = None

    #: (summary key, label, unit scale, unit) in the order tickets print them
    _FIELDS = (("ttft_p95_s", "p95 time to first token", 1.0, "s"),
               ("preemptions_per_1k", "preemptions per 1,000 requests", 1.0, ""),
               ("share_paused_over_1s", "share of users paused > 1 s", 100.0, "%"),
               ("itl_p99_s", "p99 inter-token gap", 1e3, "ms"))

    def items(self) -> Iterator[tuple[str, float, str, float, str]]:
        """``(key, limit, label, scale, unit)`` for every target that is set."""
        for key, label, scale, unit in self._FIELDS:
            limit: float | None = getattr(self, key)
            if limit is not None:
                yield key, limit, label, scale, unit

    def failures(self, summary: Mapping[str, LeverValue]) -> list[str]:
        """The targets one run's summary misses, as short phrases (empty: it meets the SLO)."""
        out: list[str] = []
        for key, limit, label, scale, unit in self.items():
            value = row_number(summary, key)
            if value > limit + 1e-12:
                out.append(f"{label} {_fmt(value * scale)}{unit} > {_fmt(limit * scale)}{unit}")
        return out

    def describe(self) -> str:
        return "; ".join(f"{label} <= {_fmt(limit * scale)}{(' ' + unit) if unit == 's' else unit}"
                         for _, limit, label, scale, unit in self.items())


def _number(value: LeverValue) -> float | None:
    """A numeric lever's value as a float (None: no cap)."""
    if isinstance(value, str):
        raise KvsimError(f"setting {value!r} is not a number: expected a numeric lever's value")
    return None if value is None else float(value)


def _shown(value: LeverValue) -> str:
    """A lever's value as a ticket prints it (numbers as :func:`_fmt`)."""
    if value is None or isinstance(value, str):
        return str(value)
    return _fmt(value)


def _fmt(x: float) -> str:
    if float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:,.3g}" if abs(x) < 100 else f"{x:,.0f}"


@dataclass(frozen=True)
class Lever:
    """One setting the learner may change: its valid range and the grid kvsim searches.

    ``kind`` is ``"float"``, ``"int"`` (``allow_none``: ``None`` means "no
    cap") or ``"choice"``. ``start`` is the value in the ticket's config.
    """

    name: str
    kind: str
    start: LeverValue
    grid: tuple[LeverValue, ...]
    lo: float | None = None
    hi: float | None = None
    choices: tuple[str, ...] = ()
    allow_none: bool = False
    label: str = ""
    #: why moving this lever away from the ticket's value does not fix the mission's
    #: mechanism (a score that fails with it moved says so: a reasoned miss)
    miss: str = ""

    def check(self, value: object) -> LeverValue:
        """``value`` as this lever's type, or a one-line KvsimError naming the valid range."""
        if self.kind == "choice":
            return check_choice(self.name, value, self.choices)
        if value is None and self.allow_none:
            return None
        number: float
        if self.kind == "int":
            if self.lo is None or self.hi is None:
                raise KvsimError(f"lever {self.name}: an int lever has no range: expected lo "
                                 f"and hi")
            try:
                number = check_int(self.name, value, min=int(self.lo), max=int(self.hi))
            except KvsimError as e:
                if self.allow_none:
                    raise KvsimError(f"{e} (or None for no cap)") from None
                raise
        else:
            number = round(check_float(self.name, value, min=self.lo, max=self.hi), 6)
        if not any(isinstance(g, int | float) and abs(number - g) < 1e-9 for g in self.grid):
            # a verdict between grid points would be one day's noise, not a finer answer
            raise KvsimError(f"{self.name}={number} is not one of the mission's settings: expected "
                             f"{self.grid_text()}")
        return number

    def grid_text(self) -> str:
        """The grid in words: ``0.6 to 0.95 in steps of 0.05``, or the values listed."""
        values = self.numbers()
        steps = {round(b - a, 9) for a, b in itertools.pairwise(values)}
        if len(values) >= 5 and len(steps) == 1:
            text = f"{_fmt(values[0])} to {_fmt(values[-1])} in steps of {_fmt(steps.pop())}"
        else:
            text = ", ".join(_fmt(v) for v in values)
        return text + (" (or None for no cap)" if None in self.grid else "")

    def check_number(self, value: object) -> float:
        """``value`` checked (:meth:`check`) as a number: a band edge of the resource."""
        checked = self.check(value)
        if not isinstance(checked, int | float):
            raise KvsimError(f"{self.name}={checked!r} is not a number: expected {self.describe()}")
        return checked

    def numbers(self) -> list[float]:
        """The grid's numbers, in grid order (without None, "no cap")."""
        return [g for g in self.grid if isinstance(g, int | float)]

    def describe(self) -> str:
        if self.kind == "choice":
            return f"{self.name}: one of {', '.join(self.choices)}"
        if self.kind == "int":
            # the few values the mission scores (256, 32, 16), not the type's 1 to 1,024
            return f"{self.name}: {self.grid_text()}"
        if self.lo is None or self.hi is None:
            return f"{self.name}: {self.grid_text()}"
        rng = f"{_fmt(self.lo)} to {_fmt(self.hi)}"
        return f"{self.name}: {rng}" + (" or None (no cap)" if self.allow_none else "")


@dataclass(frozen=True)
class WrongFix:
    """A fix an on-call engineer plausibly tries that does not end the incident: ``settings``
    (the levers it moves; the rest as the ticket's) and ``why`` (the mechanism it misses).
    tests/test_missions_margin.py holds each to :data:`MARGIN` on both sets of days."""

    name: str
    settings: Settings
    why: str


@dataclass(frozen=True)
class Mission:
    """One incident ticket (see the module docstring)."""

    number: int
    key: str
    scenario: str
    title: str
    pager: str
    complaint: str
    slo: SLO
    levers: tuple[Lever, ...]
    resource: str              # the lever the two-star search minimises (or maximises)
    direction: str             # "min" or "max"
    causes: Mapping[str, str]  # root-cause key -> the sentence a learner picks
    cause: str                 # the right key
    fixed: Mapping[str, object] = field(default_factory=dict)
    band: bool = False         # mission 4: the prediction is the pass band of the resource
    debrief: str = ""
    flags: str = ""            # the vllm serve flags / request field the fix corresponds to
    #: SLO key -> the direction and mechanism a miss on that target points to (never a value)
    hints: Mapping[str, str] = field(default_factory=dict)
    wrong_fixes: tuple[WrongFix, ...] = ()

    def lever(self, name: str) -> Lever:
        for lv in self.levers:
            if lv.name == name:
                return lv
        raise KvsimError(f"mission {self.number}: setting {name!r} is not a lever: expected one "
                         f"of {', '.join(lv.name for lv in self.levers)}")

    @property
    def start(self) -> Settings:
        return {lv.name: lv.start for lv in self.levers}

    @property
    def step(self) -> float:
        """The grid step of the resource (the tolerance of a band prediction)."""
        g = self.lever(self.resource).numbers()
        return float(min(np.diff(sorted(g)))) if len(g) > 1 else 0.0


def _frange(lo: float, hi: float, step: float) -> tuple[float, ...]:
    n = int(round((hi - lo) / step))
    return tuple(round(lo + i * step, 6) for i in range(n + 1))


def _util_lever(start: float, grid: tuple[float, ...]) -> Lever:
    """The memory lever: ``gpu_memory_utilization`` from 0.60 to 0.95 on ``grid``."""
    return Lever("gpu_memory_utilization", kind="float", start=start, grid=grid, lo=0.60, hi=0.95,
                 label="memory for the server (gpu_memory_utilization)")


def _max_num_seqs() -> Lever:
    """The concurrency cap the debriefs and the fixes table name, offered so that trying it is
    scored, not refused. 256 is vLLM's default on the lab's 48 GB card (V0 and V1:
    :func:`kvsim.model.vllm_defaults.batch_defaults`); 32 is just above the ~28 requests a warm
    Belgavi server runs at the memory that ends mission 1's storm (0.90, seed 3), 16 below it."""
    return Lever("max_num_seqs", kind="int", start=256, grid=(256, 32, 16), lo=1, hi=1024,
                 label="max_num_seqs (requests running at once)",
                 miss=("A lower max_num_seqs admits fewer requests at once: preemptions fall, but "
                       "the waiting queue grows and the time to first token pays for it. It adds "
                       "no KV capacity, so it moves the wait instead of ending it."))


#: A mission's day: two minutes of its traffic that are not scored (the engine's
#: ``warmup_s``), then ten scored minutes (``duration_s``), or more where a mission's traffic
#: needs them (mission 2: twenty). The scenarios themselves stay cold two-minute replays
#: (chapters 3 and 4 use them); a mission sets its day in ``fixed``.
WARM_DAY = {"warmup_s": 120.0, "duration_s": 600.0}

MISSIONS: dict[int, Mission] = {}
#: A mission as the functions take it: itself, its number (1-4) or its key (``"storm"``).
MissionLike = Mission | int | str


def _add(m: Mission) -> None:
    MISSIONS[m.number] = m


_add(Mission(
    1, "storm", "mission-1-storm", "Preemption storm after the lunch rush",
    # at the scenario's 350-token answers no memory on the grid ends the storm on a warm
    # server (the server is overloaded); at about 275 memory does
    fixed=dict(WARM_DAY, output_mean=275),
    pager="[P2] kvsim-belgavi: {preemptions_per_1k:.0f} preemptions per 1,000 requests over "
          "{minutes:.0f} minutes",
    complaint=("Answers have grown to about {output_mean} tokens. Streams stop mid-answer and "
               "restart; the embedding team can give back memory, but every point of "
               "gpu_memory_utilization they give is one they lose."),
    slo=SLO(ttft_p95_s=2.0, preemptions_per_1k=10.0, share_paused_over_1s=0.01),
    levers=(_util_lever(start=0.60, grid=_frange(0.60, 0.95, 0.01)),
            _max_num_seqs()),
    resource="gpu_memory_utilization", direction="min",
    hints={k: ("KV usage pinned at the top while the waiting queue grows is the memory-bound "
               "signature: the cache is too small for this traffic, and every preemption trades "
               "one request for another. Only more KV capacity ends it.")
           for k in ("preemptions_per_1k", "share_paused_over_1s", "ttft_p95_s")},
    # measured on seeds 0-9 (scripts: tests/test_missions_margin.py): a cap of 32 misses a
    # target by over 1,000 % on each set of days (queueing); 0.75 holds on quiet days and storms
    # on busy ones (worst target missed by 384 % on seed 3, 257 % on seed 9)
    wrong_fixes=(WrongFix("cap concurrency", {"max_num_seqs": 32},
                          "fewer running requests, a longer queue"),
                 WrongFix("memory for an average day", {"gpu_memory_utilization": 0.75},
                          "enough KV for the quiet days storms on the busy ones")),
    causes={"kv-too-small": "the KV cache is too small for the traffic: memory-bound",
            "compute-bound": "the GPU is out of compute: batches are too big to run fast",
            "swap-link": "swap copies over PCIe freeze the streams",
            "queue-cap": "max_num_seqs is too low, so requests queue"},
    cause="kv-too-small",
    flags="--gpu-memory-utilization (vllm serve); the co-located service must shrink by as much",
    debrief=("KV usage pinned at the top while the waiting queue grows is the memory-bound "
             "signature: every preemption frees one request's blocks for another. Only added "
             "capacity escapes the trade-off. Ask for memory in the smallest step that ends the "
             "storm on every day of traffic, not on the lucky one."),
))

_add(Mission(
    2, "slow-pcie", "mission-2-slow-pcie", "Every stream stutters when the cache is full",
    # at 1.5 req/s a V0 server with 450-token answers is overloaded over ten minutes whatever
    # the settings (p95 TTFT of minutes); at 0.9 req/s swap costs memory that recompute saves.
    # Twenty scored minutes: day 3's traffic bursts between minutes 10 and 20, and an answer
    # found on ten minutes (recompute at 0.80) fails there; 0.85 holds over forty.
    # The link: at the scenario's 4 GB/s one victim's swap-out (~1,300 tokens, 650 MB, ~160 ms)
    # costs about its recompute (~156 ms of prefill at 0.12 ms/token), so on this model the mode
    # barely mattered (seeds 0-9: swap at 0.85 p99 gap 196 ms, recompute 166 ms) and the
    # verdict rested on one seed; at 2 GB/s (a x4 link shared with a NIC) the copy costs twice
    # the recompute, and swap needs a step more memory than recompute on every set of days.
    fixed=dict(WARM_DAY, rate_per_s=0.9, duration_s=1200.0, pcie_bytes_per_s=2e9),
    pager="[P2] kvsim-belgavi-v0: p99 inter-token gap {itl_p99_ms:.0f} ms, every stream stutters",
    complaint=("A legacy vLLM V0 deployment preempts by swapping to CPU memory; the host's PCIe "
               "link is shared with a network card (about {pcie_gb_s:.0f} GB/s effective). It "
               "serves {rate_per_s} req/s of the traffic with {output_mean}-token answers: at "
               "Belgavi's full 1.5 req/s a V0 server with these answers is overloaded whatever "
               "its settings, so the fix here is for the share it has."),
    # Measured with kvsim on this day, seeds 0-9 (tests/test_missions_margin.py holds it):
    # itl_p99 200 ms: V0's p99 gap with no preemption at all is 170-175 ms (prefill steps stall
    # decode; recompute at 0.95), so 200 ms is that floor plus the 10 % margin, and a swap
    # freeze breaks it (swap at 0.85: 260-310 ms). ttft 30 s and 100 per 1,000: the worst day
    # of recompute at 0.80 (seed 3: 24 s, 86 per 1,000) with the 10 % margin, rounded up;
    # recompute at 0.75 misses them by 84 % (seed 3) and 25 % (seed 9).
    slo=SLO(ttft_p95_s=30.0, preemptions_per_1k=100.0, share_paused_over_1s=0.05,
            itl_p99_s=0.20),
    levers=(Lever("preemption_mode", kind="choice", start="swap", grid=("swap", "recompute"),
                  choices=("swap", "recompute"), label="preemption mode"),
            # 5-point steps: the p99 gap of one day swings by tens of ms between neighbouring
            # 1-point settings (one long resume chunk more or less), finer than a ticket can act on
            _util_lever(start=0.60, grid=_frange(0.60, 0.95, 0.05))),
    resource="gpu_memory_utilization", direction="min",
    causes={"swap-link": "swap copies over the slow link freeze every stream",
            "kv-too-small": "the KV cache is simply too small (and swap has nothing to do with it)",
            "compute-bound": "the GPU is out of compute",
            "answers-longer": "the answers got longer"},
    cause="swap-link",
    hints={"itl_p99_s": ("Every stream's worst gaps are the steps in which a victim's blocks "
                         "cross the slow link: the copy runs inside the step and all streams wait "
                         "for it. Look at how the server preempts, not only at how often."),
           "ttft_p95_s": ("The queue and the preemptions come from a pool too small for the "
                          "traffic; the preemption mode decides what each one costs."),
           "preemptions_per_1k": ("The queue and the preemptions come from a pool too small "
                                  "for the traffic; the preemption mode decides what each one "
                                  "costs."),
           "share_paused_over_1s": ("Pauses over a second are preempted requests waiting to "
                                    "resume: a bigger pool preempts fewer, and the preemption "
                                    "mode decides how long each waits.")},
    # measured on seeds 0-9: swap at the memory recompute needs misses a target by 60-79 % on
    # each set of days, swap with one step more by 31-56 %; swap holds one step above that
    wrong_fixes=(WrongFix("swap, recompute's memory",
                          {"preemption_mode": "swap", "gpu_memory_utilization": 0.80},
                          "each swap freezes every stream for a copy twice a recompute"),
                 WrongFix("swap, a step more memory",
                          {"preemption_mode": "swap", "gpu_memory_utilization": 0.85},
                          "fewer swaps, but each still freezes every stream")),
    flags="--preemption-mode recompute (vLLM V0 only; V1 always recomputes and has no swap), "
          "then --gpu-memory-utilization",
    debrief=("Swap copies run inside the step: on a shared 2 GB/s link one victim's blocks "
             "take twice as long to copy out as to recompute, they come back the same way, and "
             "every stream waits for both (chapter 3 computes the freeze). Recompute spends "
             "GPU time instead, so the tail of every stream shortens; memory then ends the "
             "queue. Keeping swap and buying more memory is a legitimate fix too: it ends the "
             "incident, at the price of more memory than recompute needs (one star, not two). "
             "vLLM V1 removed swap: upgrading is the recompute fix."),
))

_add(Mission(
    3, "longer-answers", "mission-3-longer-answers", "Answers grew overnight",
    fixed=dict(WARM_DAY),
    pager="[P1] kvsim-belgavi: {paused_pct:.0f}% of users paused > 1 s since the prompt release",
    complaint=("Last night's prompt release made answers more detailed: about 600 tokens on "
               "average, with no cap. Traffic is unchanged. Product says answers longer than "
               "400 tokens are never needed; FP8 KV passed the accuracy check this morning."),
    slo=SLO(ttft_p95_s=2.0, preemptions_per_1k=10.0, share_paused_over_1s=0.01),
    levers=(Lever("max_tokens", kind="int", start=None, allow_none=True, lo=400, hi=4096,
                  grid=(400, 500, 600, 800, None), label="max_tokens (the product needs 400)"),
            Lever("kv_dtype", kind="choice", start="fp16", grid=("fp16", "fp8"),
                  choices=("fp16", "fp8"), label="KV cache dtype"),
            _util_lever(start=0.60, grid=_frange(0.60, 0.95, 0.05)),
            _max_num_seqs()),
    resource="gpu_memory_utilization", direction="min",
    hints={k: ("Each request now holds more KV than before the release: lower what each one "
               "holds (the answer cap the product allows, a smaller KV dtype) before buying "
               "memory or admitting fewer.")
           for k in ("preemptions_per_1k", "share_paused_over_1s", "ttft_p95_s")},
    # measured on seeds 0-9: each misses its worst target by over 100 % on every set of days
    wrong_fixes=(WrongFix("FP8 alone", {"kv_dtype": "fp8"},
                          "twice the tokens per byte, but uncapped answers still outgrow it"),
                 WrongFix("memory alone", {"gpu_memory_utilization": 0.95},
                          "the most memory the card has holds too few uncapped answers"),
                 WrongFix("concurrency first", {"max_num_seqs": 16},
                          "no preemption, but a queue of minutes"),
                 WrongFix("cap, then concurrency", {"max_tokens": 400, "max_num_seqs": 32},
                          "the cap helps; the lower max_num_seqs turns the rest into queueing")),
    causes={"answers-longer": "the answers got longer: each request now holds more KV",
            "memory-lost": "the GPU lost memory overnight (the same traffic, a smaller pool)",
            "traffic-up": "traffic went up",
            "compute-bound": "the GPU is out of compute"},
    cause="answers-longer",
    flags="max_tokens on every request (or --max-model-len / a client default), then "
          "--kv-cache-dtype fp8, then --gpu-memory-utilization, and only then --max-num-seqs",
    debrief=("A prompt change that doubles the answer length halves effective concurrency with "
             "no change in traffic. Fix it in the source's order: cap max_tokens at what the "
             "product needs, then FP8 KV (twice the tokens per byte), then memory, and only "
             "then a lower max_num_seqs, which trades preemption for queueing."),
))

_add(Mission(
    4, "burst", "mission-4-burst", "A burst on the shared GPU",
    # Base traffic 1.2 req/s (the scenario's 1.0 left the band's upper edge to one seed's p95
    # TTFT: +1.5 s per 0.02 of headroom against a 8-44 s spread between days). At 1.2 the
    # queue's cost of headroom grows faster (seed 3: 41 s at 0.05, 106 s at 0.30).
    fixed=dict(WARM_DAY, base_rate_per_s=1.2),
    pager="[P2] kvsim-belgavi: {preemptions_per_1k:.0f} preemptions per 1,000 requests in the 09:00 burst",
    complaint=("A campaign email brings {burst_x:.1f} times the usual traffic for "
               "{burst_s:.0f} seconds. Memory is fixed at 60% (the "
               "embedding service cannot give any back). The only knob left is how much of the "
               "cache admission keeps free (the headroom, V0's watermark). The burst cannot be "
               "served without queueing; the business accepts a p95 TTFT of {ttft_slo:.0f} s over "
               "the {minutes:.0f} minutes around it."),
    # p95 TTFT 60 s, measured on seeds 0-9 (tests/test_missions_margin.py holds it): the worst
    # day of the least headroom that ends the storm (0.05: 46.9 s, seed 5) clears it by 22 %;
    # the most headroom (0.30) misses it by 19-76 % on each set of days. 10 per 1,000 and 1 %:
    # no headroom misses them 3-31x; 0.05 keeps them at 0-7 per 1,000 and 0-0.6 %.
    slo=SLO(ttft_p95_s=60.0, preemptions_per_1k=10.0, share_paused_over_1s=0.01),
    # 0.05 steps: neighbouring 0.01 steps moved one seed's p95 TTFT by about 0.5 s, under the
    # day-to-day spread; a band prediction is right within one step of each edge
    levers=(Lever("watermark", kind="float", start=0.0, lo=0.0, hi=0.30,
                  grid=_frange(0.0, 0.30, 0.05), label="admission headroom (watermark)"),),
    resource="watermark", direction="min", band=True,
    hints={"preemptions_per_1k": ("Running requests are evicted mid-answer: admission fills "
                                  "the cache to the brim during the burst. Keep more of it free."),
           "share_paused_over_1s": ("Running requests are evicted mid-answer: admission fills "
                                    "the cache to the brim during the burst. Keep more of it "
                                    "free."),
           "ttft_p95_s": ("New requests wait in the queue while blocks sit free: admission keeps "
                          "more headroom than the burst needs. Keep less of it free.")},
    wrong_fixes=(WrongFix("no headroom", {"watermark": 0.0},
                          "the burst fills the cache and running requests are evicted"),
                 WrongFix("all the headroom", {"watermark": 0.30},
                          "no evictions, but the queue holds the burst for minutes")),
    causes={"headroom": "admission fills the cache to the brim, so running requests are evicted"},
    cause="headroom",
    flags="V0's block manager kept a 1% watermark; vLLM V1 had none until a `watermark` "
          "scheduler option (PR #44594, mid-2026, off by default): on older V1 releases "
          "approximate it with --max-num-seqs, stepped down from the value that preempts",
    debrief=("Too little headroom and running requests are evicted mid-answer; too much and "
             "new requests queue while blocks sit free. Between them lies a band; its edges "
             "move with the burst and the answer lengths, which is why another team's limits "
             "rarely fit. In a real server, step max_num_seqs down from the value that preempts "
             "and stop at the first that holds the preemption counter near zero."),
))


def list_missions() -> list[int]:
    return list(MISSIONS)


def get_mission(mission: object) -> Mission:
    """A mission by number (1-4), by key (``"storm"``) or as itself."""
    if isinstance(mission, Mission):
        return mission
    if isinstance(mission, str):
        for m in MISSIONS.values():
            if mission in (m.key, str(m.number), m.scenario):
                return m
    elif isinstance(mission, int | np.integer) and not isinstance(mission, bool) \
            and int(mission) in MISSIONS:
        return MISSIONS[int(mission)]
    raise KvsimError(f"mission={mission!r} is not known: expected 1, 2, 3 or 4 "
                     f"({', '.join(m.key for m in MISSIONS.values())})")


def normalise_settings(mission: MissionLike, settings: Mapping[str, object] | None) -> Settings:
    """Every lever's value (the ticket's own where ``settings`` leaves one out), checked."""
    m = get_mission(mission)
    if settings is None:
        settings = {}
    if not isinstance(settings, Mapping):
        raise KvsimError(f"settings={settings!r} is a {type(settings).__name__}: expected a dict "
                         f"such as {{{m.levers[0].name!r}: {m.levers[0].start!r}}}")
    out = m.start
    for name, value in settings.items():
        out[name] = m.lever(name).check(value)
    return out


#: The cold day every mission used to be scored on: two minutes from an empty server, "a load
#: test that would have passed" (chapter 5). Only :func:`cold_trap` still replays it.
COLD_DAY = {"warmup_s": 0.0, "duration_s": 120.0}


def mission_day(mission: MissionLike) -> dict[str, float]:
    """The scored day: ``warmup_s`` (a warm-up of the same traffic that is not scored) and
    ``duration_s`` (the scored window), as the mission sets them (:data:`WARM_DAY`)."""
    m = get_mission(mission)
    params = {**scenario_parameters(m.scenario), **m.fixed}
    return {"warmup_s": _scenario_number(params, "warmup_s"),
            "duration_s": _scenario_number(params, "duration_s")}


#: A day's overrides (``warmup_s``, ``duration_s``) and a setting, as hashable cache keys.
_DayKey = tuple[tuple[str, float], ...]
_SettingsKey = tuple[tuple[str, LeverValue], ...]


def _day_key(day: Mapping[str, float] | None) -> _DayKey:
    return tuple(sorted((day or {}).items()))


def _base(m: Mission, settings: Mapping[str, LeverValue],
          day: Mapping[str, float] | None = None) -> dict[str, object]:
    return dict(m.fixed, scenario=m.scenario, **dict(day or {}), **settings)


def _rows(table: Table) -> list[RunRow]:
    cols = table.columns
    return [{k: (table[k][i].item() if hasattr(table[k][i], "item") else table[k][i])
             for k in cols} for i in range(table.num_rows)]


def _sweep(base: Mapping[str, object], grid: Mapping[str, list[LeverValue]] | None, *,
           seeds: Sequence[int], executor: Executor | None) -> Table:
    return sweep(base, grid, seeds=seeds, executor=executor, progress=False)


def _point_key(m: Mission, settings: Mapping[str, LeverValue]) -> tuple[LeverValue, ...]:
    return tuple(settings[lv.name] for lv in m.levers)


def evaluate(mission: MissionLike, settings: Mapping[str, object] | None = None, *,
             executor: Executor | None = None, day: Mapping[str, float] | None = None,
             seeds: Sequence[int] | None = None) -> list[RunRow]:
    """One summary per seed of :data:`SEEDS` (or ``seeds``, e.g. :data:`HOLDOUT_SEEDS`) for
    ``settings`` on the mission's day (``day`` overrides ``warmup_s`` / ``duration_s``). Runs
    already made by :func:`search` are reused: the day is deterministic, so a room's every
    attempt after the first is a look-up."""
    m = get_mission(mission)
    s = normalise_settings(m, settings)
    days = SEEDS if seeds is None else tuple(int(x) for x in seeds)
    key = (m.number, _day_key(day))
    if key in _SEARCH and days == SEEDS:
        runs = [dict(r) for r in _SEARCH[key] if _point_key(m, r) == _point_key(m, s)]
        if runs:
            return runs
    return _evaluate_cached(m.number, _day_key(day), tuple(sorted(s.items(), key=str)),
                            executor, days)


@functools.lru_cache(maxsize=1024)
def _evaluate_rows(number: int, day: _DayKey, settings: _SettingsKey,
                   seeds: tuple[int, ...] = SEEDS) -> tuple[RunRow, ...]:
    """The deterministic day of one setting (kept: a room scores the same few settings)."""
    return tuple(_run_rows(MISSIONS[number], dict(day), dict(settings), None, seeds))


def _run_rows(m: Mission, day: dict[str, float], settings: Settings, executor: Executor | None,
              seeds: tuple[int, ...] = SEEDS) -> list[RunRow]:
    return _rows(_sweep(_base(m, settings, day), None, seeds=seeds, executor=executor))


def _evaluate_cached(number: int, day: _DayKey, settings: _SettingsKey,
                     executor: Executor | None, seeds: tuple[int, ...] = SEEDS) -> list[RunRow]:
    if executor is None:
        return [dict(r) for r in _evaluate_rows(number, day, settings, seeds)]
    return _run_rows(MISSIONS[number], dict(day), dict(settings), executor, seeds)


def margin(mission: MissionLike, summary: Mapping[str, LeverValue]) -> float:
    """How far one run's summary clears the mission's SLO, as a share of the target: the
    least over the targets of ``(limit - value) / limit`` (0.1: every target beaten by 10 %;
    negative: some target missed by that share). Compared with :data:`MARGIN`."""
    m = get_mission(mission)
    return min((limit - row_number(summary, key)) / limit for key, limit, *_ in m.slo.items())


def hint(mission: MissionLike, settings: Mapping[str, object] | None,
         failures: Sequence[str] | None = None) -> str:
    """The direction and mechanism a failing attempt points to, never a value: a lever moved
    away from the ticket's that cannot fix the mechanism says why (:attr:`Lever.miss`);
    otherwise the mission's hint for the first target missed."""
    m = get_mission(mission)
    s = normalise_settings(m, settings)
    for lv in m.levers:
        if lv.miss and s[lv.name] != lv.start:
            return lv.miss
    keys = [key for key, *_ in m.slo.items()]
    labels = {label: key for key, _, label, *_ in m.slo.items()}
    for f in failures or ():
        for label, key in labels.items():
            if f.startswith(label) and key in m.hints:
                return m.hints[key]
    return next((m.hints[k] for k in keys if k in m.hints), "")


_SEARCH: dict[tuple[int, _DayKey], list[RunRow]] = {}


def search(mission: MissionLike, *, executor: Executor | None = None,
           day: Mapping[str, float] | None = None) -> list[RunRow]:
    """kvsim's own search: every point of every lever's grid, on every seed, on the mission's
    day (``day`` overrides ``warmup_s`` / ``duration_s``).

    Returns one row per run (the levers, ``seed`` and the summary keys), in
    grid order. The result is kept for the session (it is deterministic).
    """
    sweep = _sweep
    m = get_mission(mission)
    key = (m.number, _day_key(day))
    if key not in _SEARCH:
        grid = {lv.name: list(lv.grid) for lv in m.levers}
        # max_tokens=None cannot ride in a numpy column beside ints: sweep it as its own point
        table_rows: list[RunRow] = []
        none_levers = [lv for lv in m.levers if None in lv.grid]
        if none_levers:
            lv = none_levers[0]
            for value in lv.grid:
                sub = dict(grid, **{lv.name: [value]})
                if value is None:
                    sub.pop(lv.name)
                rows = _rows(sweep(_base(m, {}, day), sub, seeds=SEEDS, executor=executor))
                for r in rows:
                    r[lv.name] = value
                table_rows.extend(rows)
            order = [lv_.name for lv_ in m.levers]
            rank = {v: i for i, v in enumerate(lv.grid)}

            def sort_key(r: RunRow) -> tuple[int, ...]:
                return tuple(rank[r[n]] if n == lv.name else m.lever(n).grid.index(r[n])
                             for n in order) + (int(row_number(r, "seed")),)
            table_rows.sort(key=sort_key)
        else:
            table_rows = _rows(sweep(_base(m, {}, day), grid, seeds=SEEDS, executor=executor))
        _SEARCH[key] = table_rows
    return [dict(r) for r in _SEARCH[key]]


def _points(m: Mission, rows: Sequence[Mapping[str, LeverValue]]) -> list[tuple[Settings, list[RunRow]]]:
    """Group search rows into ``(settings, per-seed summaries)`` in grid order."""
    names = [lv.name for lv in m.levers]
    out: list[tuple[Settings, list[RunRow]]] = []
    index: dict[tuple[LeverValue, ...], int] = {}
    for r in rows:
        k = tuple(r[n] for n in names)
        if k not in index:
            index[k] = len(out)
            out.append(({n: r[n] for n in names}, []))
        out[index[k]][1].append(dict(r))
    return out


def _least_point(m: Mission, executor: Executor | None = None) -> Settings | None:
    """The first passing grid point in the order of the resource (least first for ``min``),
    then grid order of the other levers: the same point as the least resource over the
    whole search, found without running the points above it. With the search already
    made (the notebook's grids), a look-up."""
    res = m.lever(m.resource)
    values = list(res.grid) if m.direction == "min" else list(res.grid)[::-1]
    others = [lv for lv in m.levers if lv.name != m.resource]
    for v in values:
        for combo in itertools.product(*(lv.grid for lv in others)):
            point = {lv.name: (v if lv.name == m.resource else
                               combo[[o.name for o in others].index(lv.name)])
                     for lv in m.levers}
            if all(not m.slo.failures(r) for r in evaluate(m, point, executor=executor)):
                return point
    return None


def pass_band(mission: MissionLike, *, executor: Executor | None = None,
              day: Mapping[str, float] | None = None) -> list[tuple[float, float]]:
    """The resource's values where the best choice of the other levers passes, as intervals
    (on the mission's day, or ``day``)."""
    m = get_mission(mission)
    rows = search(m, executor=executor, day=day)
    ok: dict[LeverValue, bool] = {}
    for s, runs in _points(m, rows):
        v = s[m.resource]
        ok[v] = ok.get(v, False) or all(not m.slo.failures(r) for r in runs)
    values = m.lever(m.resource).numbers()
    bands: list[tuple[float, float]] = []
    start: float | None = None
    prev: float | None = None
    for v in values:
        if ok.get(v):
            start = v if start is None else start
            prev = v
        elif start is not None and prev is not None:
            bands.append((start, prev))
            start = None
    if start is not None and prev is not None:
        bands.append((start, prev))
    return bands


@dataclass(frozen=True)
class Score:
    """What :func:`score` found: ``stars`` (0-3) and why."""

    mission: int
    settings: Settings
    stars: int
    seeds_passed: int
    seeds: int
    failures: dict[int, list[str]]      # seed -> list of missed targets
    best: LeverValue                    # kvsim's least (or most) resource that passes
    prediction_right: bool | None
    message: str
    runs: list[RunRow] = field(default_factory=list, repr=False)

    def __str__(self) -> str:
        return self.message


def check_prediction(mission: MissionLike, prediction: object) -> dict[str, object] | None:
    """``prediction`` checked (a one-line KvsimError if it is not one this mission takes)."""
    m = get_mission(mission)
    _judge_prediction(m, prediction, None)
    if not isinstance(prediction, Mapping):        # None: _judge_prediction refused the rest
        return None
    if "band" in prediction:
        lo, hi = prediction["band"]
        return {"band": (m.lever(m.resource).check(lo), m.lever(m.resource).check(hi))}
    return dict(prediction)


def _judge_prediction(m: Mission, prediction: object,
                      band: list[tuple[float, float]] | None) -> bool | None:
    if prediction is None:
        return None
    if not isinstance(prediction, Mapping) or len(prediction) != 1:
        raise KvsimError(f"prediction={prediction!r}: expected {{'cause': one of "
                         f"{', '.join(m.causes)}}}" + (" or {'band': (low, high)}" if m.band else ""))
    (kind, value), = prediction.items()
    if kind == "cause":
        return check_choice("prediction cause", value, list(m.causes)) == m.cause
    if kind == "band" and m.band:
        if (not isinstance(value, (tuple, list)) or len(value) != 2):
            raise KvsimError(f"prediction band={value!r}: expected (low, high) in "
                             f"{m.lever(m.resource).describe()}")
        lo, hi = (m.lever(m.resource).check_number(v) for v in value)
        if lo > hi:
            raise KvsimError(f"prediction band=({lo}, {hi}): expected low <= high")
        if not band:
            return False
        tol = m.step + 1e-9
        widest = max(band, key=lambda b: b[1] - b[0])
        return abs(lo - widest[0]) <= tol and abs(hi - widest[1]) <= tol
    raise KvsimError(f"prediction kind {kind!r} is not known for mission {m.number}: expected "
                     + ("'cause' or 'band'" if m.band else "'cause'"))


def score(mission: MissionLike, settings: Mapping[str, object] | None = None, *,
          prediction: Prediction | None = None, runs: Sequence[RunRow] | None = None,
          executor: Executor | None = None) -> Score:
    """Score ``settings`` for ``mission`` (0-3 stars; see the module docstring).

    ``prediction`` is what the learner committed before running: ``{"cause":
    key}`` (one of the mission's ``causes``) or, for mission 4, ``{"band":
    (low, high)}`` (right within one grid step of each edge). ``runs`` may pass
    the per-seed summaries when they were already computed (as
    :func:`mission_grid` does, from the same search): the verdict is the same.
    """
    m = get_mission(mission)
    s = normalise_settings(m, settings)
    if runs is None:
        runs = evaluate(m, s, executor=executor)
    least = _least_point(m, executor)        # runs only the points below the answer, once
    best = None if least is None else _number(least[m.resource])
    band = pass_band(m) if m.band else None
    right = _judge_prediction(m, prediction, band)
    fails = {int(row_number(r, "seed")): m.slo.failures(r) for r in runs}
    passed = sum(1 for f in fails.values() if not f)
    stars = 0
    value = _number(s[m.resource])
    if passed == len(runs):
        stars = 1
        if best is not None and value is not None and (
                value <= best + 1e-9 if m.direction == "min" else value >= best - 1e-9):
            stars = 2
            if right:
                stars = 3
    res = m.lever(m.resource)
    if stars == 0:
        worst = next(sd for sd, f in fails.items() if f)
        msg = (f"Mission {m.number}: 0 stars. The SLO holds on {passed} of {len(runs)} days of "
               f"traffic; on seed {worst}: {fails[worst][0]}.")
        if passed:
            msg += " A pass on some days is luck, not a fix."
        why = hint(m, s, fails[worst])
        if why:
            msg += f" {why}"
    elif stars == 1:
        # a direction, never the value: the search is the learner's to make
        msg = (f"Mission {m.number}: 1 star. The SLO holds on all {len(runs)} days, but kvsim's "
               f"search holds it with {'less' if m.direction == 'min' else 'more'} {res.name}: "
               f"step {'down' if m.direction == 'min' else 'up'} and find the "
               f"{'least' if m.direction == 'min' else 'most'} that still holds on every day.")
    else:
        msg = (f"Mission {m.number}: {stars} stars. The SLO holds on all {len(runs)} days with "
               f"{res.name}={_fmt(value or 0.0)}, the least kvsim's search finds.")
        if stars == 2 and prediction is None:
            msg += " Commit a prediction before running for the third."
        elif stars == 2:
            msg += " Your prediction was not right: see the debrief."
    return Score(m.number, s, stars, passed, len(runs), fails, best, right, msg, list(runs))


def expert_settings(mission: MissionLike) -> Settings:
    """The settings an expert lands on: the least resource kvsim's search passes with.

    Among the passing points with that resource, the first in grid order (so
    for mission 3 the cap at what the product needs and FP8 before memory).
    """
    m = get_mission(mission)
    point = _least_point(m)
    if point is None:
        raise KvsimError(f"mission {m.number}: no setting on the grid meets the SLO")
    return point


def mission_grid(mission: MissionLike, *, executor: Executor | None = None) -> list[RunRow]:
    """Rows for the static twin: every grid point scored by :func:`score` itself.

    One row per grid point: the levers, ``stars`` (0-2; the third needs a
    prediction), ``seeds_passed``, ``passes`` and, for each SLO metric, the
    worst and median value over the seeds (``<key>_worst``, ``<key>_median``).
    """
    m = get_mission(mission)
    rows = search(m, executor=executor)
    out: list[RunRow] = []
    for s, runs in _points(m, rows):
        sc = score(m, s, runs=runs)
        row: RunRow = dict(s)
        row.update(stars=sc.stars, seeds_passed=sc.seeds_passed, passes=sc.stars >= 1)
        for key, *_ in m.slo.items():
            vals = [row_number(r, key) for r in runs]
            row[f"{key}_worst"] = round(max(vals), 4)
            row[f"{key}_median"] = round(float(np.median(vals)), 4)
        out.append(row)
    return out


def doubled_day(mission: MissionLike) -> dict[str, float]:
    """The mission's day with its scored window twice as long (the warm-up unchanged): an
    answer that holds only for the window it was found on is not steady state."""
    d = mission_day(mission)
    return dict(d, duration_s=2 * d["duration_s"])


class ColdTrap(TypedDict):
    """What :func:`cold_trap` finds (see there)."""

    settings: Settings | None
    cold_passed: int
    warm_passed: int
    warm_failure: tuple[int, str] | None
    line: str


def cold_trap(mission: MissionLike) -> ColdTrap:
    """What a cold two-minute replay (:data:`COLD_DAY`, how the missions were once scored)
    would have taught, and what the warm day says of it.

    ``settings``: the expert's settings with the resource lowered to the least
    value that passes all of :data:`SEEDS` cold (the other levers as the
    expert's); ``cold_passed`` and ``warm_passed``: the days it passes cold and
    on the mission's day; ``warm_failure``: the first warm day it fails and
    why (``None`` if it holds); ``line``: all of it in one sentence.
    """
    m = get_mission(mission)
    expert = expert_settings(m)
    res = m.lever(m.resource)
    values = [v for v in res.grid if v is not None]
    if m.direction != "min":
        values = values[::-1]
    trap = None
    for v in values:
        s = dict(expert, **{m.resource: v})
        if all(not m.slo.failures(r) for r in evaluate(m, s, day=COLD_DAY)):
            trap = s
            break
    cold_minutes = COLD_DAY["duration_s"] / 60
    warm = mission_day(m)
    if trap is None:
        line = (f"Mission {m.number}: a cold {cold_minutes:.0f}-minute replay passes nothing on "
                f"the grid either.")
        return ColdTrap(settings=None, cold_passed=0, warm_passed=0, warm_failure=None,
                        line=line)
    runs = evaluate(m, trap)
    fails = [(int(row_number(r, "seed")), m.slo.failures(r)) for r in runs]
    warm_passed = sum(1 for _, f in fails if not f)
    failure = next(((sd, f[0]) for sd, f in fails if f), None)
    shown = f"{res.name}={_shown(trap[m.resource])}"
    after = (f"after a {warm['warmup_s'] / 60:.0f}-minute warm-up over "
             f"{warm['duration_s'] / 60:.0f} minutes")
    head = (f"Replayed cold ({cold_minutes:.0f} minutes from an empty server, as this mission "
            f"once was), {shown} passes on all {len(SEEDS)} days")
    answer = f"{res.name}={_shown(expert[m.resource])}"
    if m.band:
        cold_band, warm_band = pass_band(m, day=COLD_DAY), pass_band(m)

        def text(b: list[tuple[float, float]]) -> str:
            return " and ".join(f"{_fmt(lo)} to {_fmt(hi)}" for lo, hi in b) or "empty"
        line = (f"{head}; the cold band is {text(cold_band)}, the warm band {text(warm_band)} "
                f"({after}): a band found cold is not the band.")
    elif trap == expert:
        line = f"{head}, and here the warm day agrees: it holds on {warm_passed} of {len(SEEDS)} {after}."
    elif warm_passed < len(SEEDS) and failure is not None:
        line = (f"The trap: {head[0].lower()}{head[1:]}; {after} it holds on {warm_passed} of "
                f"{len(SEEDS)} (seed {failure[0]}: {failure[1]}). The answer is {answer}.")
    else:
        line = (f"{head}, and it holds {after} too, but the warm day's least is {answer}.")
    return ColdTrap(settings=trap, cold_passed=len(SEEDS), warm_passed=warm_passed,
                    warm_failure=failure, line=line)


def answer_key() -> list[dict[str, object]]:
    """The instructor's answer key, one row per mission, every value from :func:`score`.

    ``mission``, ``title``; ``prediction``: the right one (``{"cause": key}``,
    or mission 4's ``{"band": (lo, hi)}`` from :func:`pass_band`) and
    ``cause_text``, the sentence a learner picks; ``expert``: the settings
    (:func:`expert_settings`) and ``expert_stars``, what :func:`score` gives
    them with the right prediction; ``ticket``: the ticket's own settings,
    ``ticket_stars`` and ``ticket_days`` (days passed of ``days``); ``trap``:
    :func:`cold_trap`'s settings (``None`` when a cold replay passes nothing)
    and ``trap_warm_days``, the days they pass warm.
    """
    rows: list[dict[str, object]] = []
    for n, m in MISSIONS.items():
        expert = expert_settings(m)
        pred = {"band": pass_band(m)[0]} if m.band else {"cause": m.cause}
        best = score(m, expert, prediction=pred)
        start = score(m, m.start)
        trap = cold_trap(m)
        rows.append(dict(mission=n, title=m.title, prediction=pred,
                         cause_text=m.causes[m.cause], expert=expert, expert_stars=best.stars,
                         ticket=dict(m.start), ticket_stars=start.stars,
                         ticket_days=start.seeds_passed, days=start.seeds,
                         trap=trap["settings"], trap_warm_days=trap["warm_passed"]))
    return rows


def debrief(mission: MissionLike) -> str:
    """The mission's debrief, then :func:`cold_trap`'s line (computed, not typed in)."""
    m = get_mission(mission)
    return f"{m.debrief} {cold_trap(m)['line']}"


def _story(m: Mission) -> dict[str, object]:
    """The scenario's facts a ticket's text names (answer length, rate, link, window)."""
    p = {**scenario_parameters(m.scenario), **m.fixed}
    opts = get_scenario(m.scenario, **m.fixed)
    return dict(output_mean=p.get("output_mean"), rate_per_s=p.get("rate_per_s"),
                pcie_gb_s=float(opts.get("pcie_bytes_per_s", 0.0)) / 1e9,
                minutes=mission_day(m)["duration_s"] / 60,
                ttft_slo=m.slo.ttft_p95_s or 0.0,
                burst_x=_scenario_number(p, "burst_rate_per_s", 0.0)
                / _scenario_number(p, "base_rate_per_s", 1.0),
                burst_s=_scenario_number(p, "burst_s", 0.0))


def complaint(mission: MissionLike) -> str:
    """The ticket's WHAT line, with the scenario's own numbers."""
    m = get_mission(mission)
    return m.complaint.format(**_story(m))


# ---------------------------------------------------------------------------- tickets

def incident_seed(mission: MissionLike) -> int:
    """The day the pager went off: of :data:`SEEDS`, the one whose run with the ticket's
    settings misses the SLO by the most (the first on a tie)."""
    m = get_mission(mission)
    runs = evaluate(m, m.start)

    def badness(r: Mapping[str, LeverValue]) -> float:
        return max((row_number(r, k) / limit if limit else row_number(r, k))
                   for k, limit, *_ in m.slo.items())
    return int(row_number(max(runs, key=badness), "seed"))


class LogWindow(TypedDict):
    """Ten seconds of the incident day, as vLLM's periodic stats log line reports them."""

    t_s: float
    running: int
    waiting: int
    swapped: int
    kv_usage: float
    preemptions: int
    prompt_tok_s: float
    gen_tok_s: float


class TicketFacts(TypedDict):
    """What :func:`ticket_facts` reads from the incident day (see there)."""

    summary: dict[str, float | int | str]
    peak: LogWindow
    log: list[str]
    seed: int
    pager: str


def ticket_facts(mission: MissionLike) -> TicketFacts:
    """The dashboard snapshot: the incident day's run (:func:`incident_seed`) with the
    ticket's settings.

    Keys: ``summary`` (that run's summary), ``peak`` (the 10-second window with
    the most preemptions: ``t_s``, ``running``, ``waiting``, ``kv_usage``) and
    ``log`` (lines in the form vLLM prints them).
    """

    m = get_mission(mission)
    seed = incident_seed(m)
    result = run_scenario(m.scenario, **dict(m.fixed, **m.start, seed=seed))
    summary = result.summary()
    tl = result.timeline
    t = tl["t_s"]
    window = 10.0      # vLLM logs its stats every 10 s (VLLM_LOG_STATS_INTERVAL)
    start = mission_day(m)["warmup_s"]      # the dashboard shows the scored window only
    edges = np.arange(start + window, float(t[-1]) + window, window)
    idx = np.searchsorted(t, edges, side="right") - 1
    lines: list[LogWindow] = []
    peak: LogWindow | None = None
    best_pre = -1
    prev = int(np.searchsorted(t, start, side="left"))
    for e, i in zip(edges, idx, strict=True):
        i = int(max(i, 0))
        sl = slice(prev, i + 1)
        prompt = float(tl["prefill_tokens"][sl].sum()) / window
        gen = float(tl["emitted_tokens"][sl].sum()) / window
        pre = int(tl["preemptions"][sl].sum())
        kv = float(tl["kv_blocks_used"][i]) / result.total_blocks
        row = LogWindow(t_s=float(e), running=int(tl["running"][i]),
                        waiting=int(tl["waiting"][i]), swapped=int(tl["swapped"][i]),
                        kv_usage=kv, preemptions=pre, prompt_tok_s=prompt, gen_tok_s=gen)
        if pre > best_pre:
            best_pre, peak = pre, row
        lines.append(row)
        prev = i + 1
    if peak is None:
        raise KvsimError(f"mission {m.number}: the incident day ends before its scored window "
                         f"({start:g} s): expected a day with at least one 10-second window")
    k = lines.index(peak)
    shown = lines[max(k - 1, 0):k + 2]
    log: list[str] = []
    if summary["engine"] == "v1":
        hit = 100 * row_number(summary, "prefix_cache_hit_rate")
        for r in shown:
            log.append(f"[t={r['t_s']:4.0f} s] INFO loggers.py: Engine 000: Avg prompt throughput: "
                       f"{r['prompt_tok_s']:.1f} tokens/s, Avg generation throughput: "
                       f"{r['gen_tok_s']:.1f} tokens/s, Running: {r['running']} reqs, Waiting: "
                       f"{r['waiting']} reqs, GPU KV cache usage: {100 * r['kv_usage']:.1f}%, "
                       f"Prefix cache hit rate: {hit:.1f}%")
    else:
        ev = result.events
        mode = "SWAP" if m.start.get("preemption_mode", "recompute") == "swap" else "RECOMPUTE"
        for n in range(0, ev.num_rows, 50):     # V0 warns on every 50th preemption
            log.append(f"[t={float(ev['t_s'][n]):4.0f} s] WARNING scheduler.py: Sequence group "
                       f"{int(ev['request'][n])} is preempted by PreemptionMode.{mode} mode "
                       f"because there is not enough KV cache space. This can affect the "
                       f"end-to-end performance. Increase gpu_memory_utilization or "
                       f"tensor_parallel_size to provide more KV cache memory. "
                       f"total_num_cumulative_preemption={n + 1}")
            if len(log) == 2:
                break
        for r in shown[:2]:
            log.append(f"[t={r['t_s']:4.0f} s] INFO metrics.py: Avg prompt throughput: "
                       f"{r['prompt_tok_s']:.1f} tokens/s, Avg generation throughput: "
                       f"{r['gen_tok_s']:.1f} tokens/s, Running: {r['running']} reqs, Swapped: "
                       f"{r['swapped']} reqs, Pending: {r['waiting']} reqs, GPU KV cache usage: "
                       f"{100 * r['kv_usage']:.1f}%")
    pager = m.pager.format(preemptions_per_1k=summary["preemptions_per_1k"],
                           minutes=mission_day(m)["duration_s"] / 60,
                           itl_p99_ms=1e3 * row_number(summary, "itl_p99_s"),
                           paused_pct=100 * row_number(summary, "share_paused_over_1s"))
    return dict(summary=summary, peak=peak, log=log, seed=seed, pager=pager)


def ticket(mission: MissionLike) -> str:
    """The incident ticket as text: pager, complaint, dashboard, log, SLO, levers."""
    m = get_mission(mission)
    f = ticket_facts(m)
    s, peak = f["summary"], f["peak"]
    day = mission_day(m)
    dash = (f"preemptions per 1,000: {s['preemptions_per_1k']:.0f} | p95 TTFT: "
            f"{s['ttft_p95_s']:.1f} s | p99 inter-token gap: {1e3 * row_number(s, 'itl_p99_s'):.0f} ms | "
            f"paused > 1 s: {100 * row_number(s, 'share_paused_over_1s'):.1f}% of users | KV usage at the "
            f"worst 10 s: {100 * peak['kv_usage']:.0f}% with {peak['running']} running and "
            f"{peak['waiting']} waiting")
    config = ", ".join(f"{k}={v}" for k, v in m.start.items())
    levers = "; ".join(lv.describe() for lv in m.levers)
    return "\n".join([
        f"Mission {m.number}: {m.title}",
        f"PAGER  {f['pager']}",
        f"WHAT   {complaint(m)}",
        f"NOW    {config} (scenario {m.scenario}, vLLM {str(s['engine']).upper()}; the dashboard "
        f"shows seed {f['seed']}, the worst of the {len(SEEDS)} days, over the "
        f"{day['duration_s'] / 60:.0f} minutes after a {day['warmup_s'] / 60:.0f}-minute "
        f"warm-up)",
        f"DASH   {dash}",
        "LOG",
        *(f"  {line}" for line in f["log"]),
        f"SLO    on every one of {len(SEEDS)} days of traffic (seeds "
        f"{', '.join(map(str, SEEDS))}), each a warm server scored over "
        f"{day['duration_s'] / 60:.0f} minutes: {m.slo.describe()}",
        f"LEVERS {levers}",
    ])

