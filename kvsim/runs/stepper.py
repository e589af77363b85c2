"""The scheduler, one step at a time: what every request holds after each engine step.

Explained in chapter 2, *Optimistic admission and preemption* (the stepper and
its static twin). The frames come from the real engine (:mod:`kvsim.engine.loop`,
run with ``step_by_step=True``), watched after every step, so the stepper
cannot disagree with :func:`kvsim.simulate`::

    from . import stepper
    frames = stepper.scheduler_frames(stepper.toy_requests(), num_gpu_blocks=20)
    frames[0]["free_blocks"], frames[0]["admitted"]

Each frame is a dict:

``step``
    steps executed so far (1 = after the first step; 0 = before it, with
    ``include_start=True``).
``t_ms``
    simulated time at the end of the step, in milliseconds.
``free_blocks``, ``total_blocks``
    the pool after the step (``free_blocks`` counts cached free blocks too:
    they are reusable).
``requests``
    one dict per request, in id order: ``name`` ("R1", "R2", ...), ``state``
    (one of :data:`STATES`), ``blocks`` held, ``tokens`` whose KV is stored,
    ``generated`` answer tokens, ``output`` answer length, ``preemptions``
    so far, ``recomputed`` and ``rescued`` tokens (prefilled again after a
    preemption; found in the prefix cache instead), ``needs_block`` (its next
    token starts a new block).
``admitted``, ``preempted``, ``finished``
    names of the requests admitted, preempted or finished in this step.
``waiting``
    names in the waiting queue, front first.
``story``
    one line that says what happened in the step.
"""
from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypedDict

from kvsim.engine.loop import Engine, build_engine
from kvsim.engine.scheduler import REQUEST_STATES
from kvsim.errors import KvsimError, check_int
from kvsim.traffic.workload import Request, Workload

if TYPE_CHECKING:
    from kvsim.engine.costs import GPULike, ModelLike

__all__ = ["STATES", "TOY_OUTPUT_TOKENS", "scheduler_frames", "toy_requests", "frame_rows",
           "Frame", "FrameRequest", "FrameRow"]

#: Request states a frame can show, in the order a request meets them.
STATES = REQUEST_STATES

#: The most frames one call records (a stepper, not a simulator).
MAX_FRAMES = 5_000


#: The answer lengths of chapter 2's toy (its five requests, cycled for more).
TOY_OUTPUT_TOKENS = (90, 70, 100, 60, 80)


class FrameRequest(TypedDict):
    """One request in a frame (see the module docstring)."""

    name: str
    state: str
    blocks: int
    tokens: int
    generated: int
    output: int
    preemptions: int
    recomputed: int
    rescued: int
    needs_block: bool


class _StepFacts(TypedDict):
    """A frame's facts, before its story is told."""

    step: int
    t_ms: float
    free_blocks: int
    total_blocks: int
    requests: list[FrameRequest]
    admitted: list[str]
    preempted: list[str]
    finished: list[str]
    waiting: list[str]


class Frame(_StepFacts):
    """The scheduler after one step (see the module docstring)."""

    story: str


class FrameRow(TypedDict):
    """One request in one frame, flat (:func:`frame_rows`)."""

    step: int
    request: str
    state: str
    blocks: int
    tokens: int
    generated: int
    output: int
    preemptions: int
    needs_block: bool


def toy_requests(n: int = 5, *, prompt_tokens: int = 40,
                 output_tokens: int | Sequence[int] = TOY_OUTPUT_TOKENS) -> list[Request]:
    """``n`` requests that all arrive at t = 0: the stepper's default batch.

    ``output_tokens`` is one length for all or a sequence cycled over the
    requests. With the default 20-block pool (blocks of 16) all five prompts
    fit at once and the answers do not: the batch grows into a preemption.
    """
    n = check_int("n", n, min=1, max=26)
    lengths = [output_tokens] if isinstance(output_tokens, int) else list(output_tokens)
    if not lengths:
        raise KvsimError("output_tokens=() is empty: expected a length or a sequence of lengths")
    return [Request(0.0, prompt_tokens, lengths[i % len(lengths)]) for i in range(n)]


def _name(rid: int) -> str:
    return f"R{rid + 1}"


class _Watcher:
    """Called by the engine after every step; turns its state into a frame."""

    def __init__(self, max_frames: int) -> None:
        self.frames: list[Frame] = []
        self.max_frames = max_frames
        self.running_before: set[int] = set()

    def __call__(self, engine: Engine) -> None:
        if len(self.frames) >= self.max_frames:
            raise _Enough
        snap = engine.snapshot()
        requests = [FrameRequest(name=_name(r.rid), state=r.state, blocks=r.blocks,
                                 tokens=r.tokens, generated=r.generated, output=r.output,
                                 preemptions=r.preemptions, recomputed=r.recomputed,
                                 rescued=r.rescued, needs_block=r.needs_block)
                    for r in snap.requests]
        finished = [_name(r.rid) for r in snap.requests if r.finish_s == snap.t_s]
        running = set(snap.running)
        admitted = [_name(r) for r in sorted(running - self.running_before)]
        self.running_before = running
        facts = _StepFacts(step=snap.step, t_ms=snap.t_s * 1e3, free_blocks=snap.free_blocks,
                           total_blocks=snap.total_blocks, requests=requests, admitted=admitted,
                           preempted=[_name(rid) for rid, _mode in snap.preempted],
                           finished=finished, waiting=[_name(r) for r in snap.waiting])
        previous = self.frames[-1]["requests"] if self.frames else None
        self.frames.append({**facts, "story": _story(facts, previous)})


class _Enough(Exception):
    pass


def _story(frame: _StepFacts, previous: list[FrameRequest] | None) -> str:
    parts = []
    if frame["preempted"]:
        victims = ", ".join(frame["preempted"])
        parts.append(f"no free block for the batch's next tokens: {victims} (the last admitted) "
                     f"is preempted, its blocks freed, and it goes to the front of the waiting "
                     f"queue")
    by_name = {r["name"]: r for r in frame["requests"]}
    fresh = [n for n in frame["admitted"] if not by_name[n]["preemptions"]]
    if fresh:
        parts.append(f"admitted {', '.join(fresh)}: the prompt's blocks fit")
    for name in frame["admitted"]:
        r = by_name[name]
        if not r["preemptions"]:
            continue
        before = next(p for p in previous if p["name"] == name) if previous else r
        redo = r["recomputed"] - before["recomputed"]
        found = r["rescued"] - before["rescued"]
        parts.append(f"{name} is re-admitted: its {redo + found:,} tokens are restored, "
                     + (f"{found:,} found in the prefix cache and {redo:,} prefilled again"
                        if found else "every one prefilled again"))
    if frame["finished"]:
        parts.append(f"{', '.join(frame['finished'])} finished and freed its blocks")
    if not parts:
        growing = [r["name"] for r in frame["requests"] if r["needs_block"]]
        parts.append("every running request gained a token" +
                     (f"; {', '.join(growing)} will need a new block next step" if growing else ""))
    return f"Step {frame['step']}: " + "; ".join(parts) + f". Free blocks: {frame['free_blocks']}."


def scheduler_frames(requests: Workload | Sequence[Request], *, model: ModelLike = "llama-3.1-8b",
                     gpu: GPULike = "a40-48gb", num_gpu_blocks: int = 20,
                     max_frames: int = 1_000, include_start: bool = False,
                     **engine_options: object) -> list[Frame]:
    """Run ``requests`` step by step and return one frame per engine step (see the module doc).

    ``requests`` is a list of :class:`kvsim.Request` or a :class:`kvsim.Workload`;
    ``num_gpu_blocks`` sets the pool (a small one makes every block visible);
    other keyword arguments are engine options, as for :func:`kvsim.simulate`.
    Stops after ``max_frames`` frames (at most 5,000). ``include_start=True``
    puts a frame for step 0 first: the moment the first step is scheduled, the
    requests that have arrived waiting in arrival order, the pool free (a view
    that answers nothing yet).
    """
    max_frames = check_int("max_frames", max_frames, min=1, max=MAX_FRAMES)
    if isinstance(requests, Workload):
        workload = requests
    elif isinstance(requests, (list, tuple)) and requests and \
            all(isinstance(r, Request) for r in requests):
        workload = Workload.from_requests(list(requests))
    else:
        raise KvsimError(f"requests={type(requests).__name__} is not supported: expected a "
                         "non-empty list of kvsim.Request or a kvsim.Workload")
    if include_start is not True and include_start is not False:
        raise KvsimError(f"include_start={include_start!r}: expected True or False")
    if include_start:           # step 0 shows who waits for the first step: known in advance
        workload.open_columns("include_start=True")
    if engine_options.get("step_by_step") is False:
        raise KvsimError("step_by_step=False is not supported by the stepper: it shows every step")
    # a toy whose requests could never run says so, rather than showing an empty pool
    options = dict({"unfit_requests": "error"}, **engine_options, step_by_step=True,
                   num_gpu_blocks=num_gpu_blocks)
    engine = build_engine(workload, model, gpu, options)
    watcher = _Watcher(max_frames)
    with contextlib.suppress(_Enough):       # the watcher stops the run at max_frames
        engine.run(after_step=watcher)
    if include_start and watcher.frames:
        return [_start_frame(workload, watcher.frames[0])] + watcher.frames
    return watcher.frames


def _start_frame(workload: Workload, first: Frame) -> Frame:
    """Step 0: the engine idles until the first arrival, then schedules; who waits then."""
    arrivals = [float(a) for a in workload.open_columns("include_start=True").arrival_s]
    t0 = min(arrivals)
    order = sorted((a, i) for i, a in enumerate(arrivals) if a <= t0)
    here = {i for _, i in order}
    requests = [FrameRequest(name=r["name"], state="waiting" if i in here else "not arrived",
                             blocks=0, tokens=0, generated=0, output=r["output"], preemptions=0,
                             recomputed=0, rescued=0, needs_block=False)
                for i, r in enumerate(first["requests"])]
    waiting = [_name(i) for _, i in order]
    story = (f"Step 0, before the first step: {len(waiting)} request"
             f"{'s' if len(waiting) != 1 else ''} wait{'s' if len(waiting) == 1 else ''} "
             f"in the queue, and all {first['total_blocks']} blocks are free.")
    return Frame(step=0, t_ms=t0 * 1e3, free_blocks=first["total_blocks"],
                 total_blocks=first["total_blocks"], requests=requests, admitted=[],
                 preempted=[], finished=[], waiting=waiting, story=story)


def frame_rows(frames: list[Frame]) -> list[FrameRow]:
    """Flat rows (one per request per frame) for a chart: step, request, state, blocks, ..."""
    rows = []
    for f in frames:
        for r in f["requests"]:
            rows.append(FrameRow(step=f["step"], request=r["name"], state=r["state"],
                                 blocks=r["blocks"], tokens=r["tokens"], generated=r["generated"],
                                 output=r["output"], preemptions=r["preemptions"],
                                 needs_block=r["needs_block"]))
    return rows
