"""Chapter 2's scheduler stepper as a static chart: every request's blocks, frame by frame.

The frames come from :func:`kvsim.runs.stepper.step_frames` (the real engine,
watched after every step); the live widget is :func:`kvsim.book.widgets.scheduler_stepper`.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypedDict

from kvsim.errors import KvsimError, check_int

from .theme import NEUTRAL, PALETTE, Width, check_width, finish_chart, fit_page

if TYPE_CHECKING:
    import altair as alt

    from kvsim.runs.stepper import Frame


class StepperBar(TypedDict):
    """A bar of the stepper: a request's (or the pool's free) blocks at one event."""
    moment: int
    step: int
    row: str
    state: str
    blocks: int
    label: str


class StepperNote(TypedDict):
    """The story told at one event, and the queue then."""
    moment: int
    step: int
    story: str
    queue: str


class StepperData(TypedDict):
    """:func:`stepper_data`'s result, :func:`stepper_chart`'s input."""
    bars: list[StepperBar]
    notes: list[StepperNote]
    steps: int
    events: list[int]
    first_step: int
    total_blocks: int

# --- the scheduler stepper ------------------------------------------------------------

#: The stepper's states, drawn in this order with these colours (and a text label each);
#: "swapped" only with ``engine="v0", preemption_mode="swap"``.
STEPPER_STATES = ("decoding", "prefilling", "waiting", "preempted", "swapped", "finished",
                  "not arrived")
#: Each state's colour, in the chart and in the widget's HTML bars.
STATE_COLOURS = dict(zip(STEPPER_STATES, [PALETTE[0], PALETTE[5], PALETTE[1], PALETTE[3],
                                          PALETTE[4], NEUTRAL, PALETTE[6]], strict=True))


#: Characters per line of a step's story: 13 px text, a phone's page (about 330 px).
STORY_WIDTH = 44


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width))


def _quiet(frame: Frame, before: Frame | None) -> bool:
    """A step in which nothing but decoding happens: nobody admitted, preempted or finished,
    the same free blocks and queue as the step before, and no request about to need a block."""
    return (before is not None and not (frame["admitted"] or frame["preempted"]
                                        or frame["finished"])
            and frame["free_blocks"] == before["free_blocks"]
            and frame["waiting"] == before["waiting"]
            and not any(r["needs_block"] for r in frame["requests"]))


def stepper_data(frames: Sequence[Frame]) -> StepperData:
    """Rows for :func:`stepper_chart` from :func:`kvsim.runs.stepper.scheduler_frames`.

    Returns ``{"bars": rows, "notes": rows, "steps": n, "events": [step, ...],
    "first_step": k, "total_blocks": n}``. Only the steps in which something
    happens are kept (``events``: an admission, a preemption, a finish, a
    change of the free blocks or the queue, a request about to need a block);
    a run of quiet steps before one is summed up in its story ("Steps 11-24:
    every running request gained a token."), so the static slider has a
    position per event (32 for chapter 2's toy, not 149 steps: usable on a
    phone). Each row carries its ``moment`` (the index of its event; not "event",
    a name Vega keeps for its own). One bar row per request per
    event (the pool's free blocks as a last row named "free"), one note row per
    event (the story, wrapped to :data:`STORY_WIDTH` characters, so it fits a
    phone's page). ``first_step`` is 0 when the frames start before the first
    step (``scheduler_frames(..., include_start=True)``), else 1.
    """
    frames = list(frames)
    if not frames:
        raise KvsimError("stepper_data: frames=[] is empty: expected frames from "
                         "kvsim.runs.stepper.scheduler_frames")
    bars: list[StepperBar] = []
    notes: list[StepperNote] = []
    events: list[int] = []
    before: Frame | None = None
    quiet: list[Frame] = []     # quiet: the steps skipped since the last event
    for f in frames:
        if _quiet(f, before):
            quiet.append(f)
            before = f
            continue
        story = f["story"]
        if quiet:
            first, last = quiet[0]["step"], quiet[-1]["step"]
            steps = f"Step {last}" if last == first else f"Steps {first}-{last}"
            # what those steps did, in their own words (the same for each), or in general
            said = {re.sub(r"^Step \d+: |\s*Free blocks: \d+\.$", "", q["story"]) for q in quiet}
            did = said.pop() if len(said) == 1 else "the running requests went on"
            story = f"{steps}: {did.rstrip('.')}. {story}"
        quiet, before = [], f
        event = len(events)
        events.append(f["step"])
        for r in f["requests"]:
            if r["state"] == "preempted":
                label = f"preempted ({r['preemptions']}x), waiting with 0 blocks"
            elif r["blocks"]:
                label = f"{r['state']}, {r['blocks']} blocks, {r['tokens']} tokens"
                if r["needs_block"]:
                    label += "; its next token needs a block"
            else:
                label = r["state"]
            bars.append({"moment": event, "step": f["step"], "row": r["name"],
                         "state": r["state"], "blocks": r["blocks"], "label": label})
        bars.append({"moment": event, "step": f["step"], "row": "free", "state": "free",
                     "blocks": f["free_blocks"], "label": f"{f['free_blocks']} free blocks"})
        queue = ", ".join(f["waiting"]) if f["waiting"] else "empty"
        notes.append({"moment": event, "step": f["step"], "story": _wrap(story, STORY_WIDTH),
                      "queue": f"queue, front first: {queue}"})
    return {"bars": bars, "notes": notes, "steps": len(frames), "events": events,
            "first_step": frames[0]["step"], "total_blocks": frames[0]["total_blocks"]}


def stepper_chart(data: StepperData, *, title: str, subtitle: str | None = None,
                  start: int | None = None, width: Width = "container") -> alt.TopLevelMixin:
    """The scheduler stepper's static twin: one event (a step in which something happens)
    per slider tick.

    The slider opens at ``start``, an engine step that is one of ``data["events"]``,
    by default the first (step 0 with ``scheduler_frames(..., include_start=True)``:
    a view that answers no question yet). ``width``: ``"container"`` (the default)
    follows the page.

    ``data`` comes from :func:`stepper_data`. For the event the slider picks, a
    bar per request shows the blocks it holds (colour and a text label both
    give its state), a last bar the pool's free blocks, and above them the
    step's story: who was admitted, who needed a block, the victim and where it
    went.
    """
    import altair as alt

    for key in ("bars", "notes", "events", "total_blocks"):
        if key not in data:
            raise KvsimError(f"stepper_chart: data lacks {key!r}: build it with stepper_data")
    events = list(data["events"])
    if start is None:
        start = events[0]
    start = check_int("start", start, min=events[0], max=events[-1],
                      why="the precomputed steps; the static slider keeps to them")
    if start not in events:
        raise KvsimError(f"start={start} is not a step in which something happens: expected "
                         f"one of {', '.join(map(str, events))}")
    width = check_width(width, "stepper_chart")
    rows = sorted({b["row"] for b in data["bars"] if b["row"] != "free"},
                  key=lambda name: int(name[1:])) + ["free"]
    p_moment = alt.param(name="moment", value=events.index(start),
                        bind=alt.binding_range(min=0, max=len(events) - 1, step=1,
                                               name=f"Event (of {len(events)}) "))
    states = list(STEPPER_STATES) + ["free"]
    colours = list(STATE_COLOURS.values()) + [PALETTE[2]]
    x_max = max(data["total_blocks"], max(b["blocks"] for b in data["bars"]))
    base = (alt.Chart(alt.InlineData(values=list(data["bars"])))
            .transform_filter("datum.moment == moment"))
    y = alt.Y("row:N", sort=rows, title=None)
    bars = base.mark_bar(height=14, yOffset=-9).encode(
        x=alt.X("blocks:Q", title=f"KV blocks held (of the pool's {data['total_blocks']})",
                scale=alt.Scale(domain=[0, x_max])),
        y=y, color=alt.Color("state:N", scale=alt.Scale(domain=states, range=colours),
                             legend=None),
        tooltip=[alt.Tooltip("row:N", title="request"), alt.Tooltip("label:N", title="state")])
    # each label under its bar, from the left edge: it never runs past a phone's page
    labels = base.mark_text(align="left", baseline="middle", yOffset=8).encode(
        x=alt.value(0), y=y, text="label:N")
    panel = alt.layer(bars, labels).properties(width=width, height=40 * len(rows))
    notes = (alt.Chart(alt.InlineData(values=list(data["notes"])))
             .transform_filter("datum.moment == moment"))
    story = notes.mark_text(align="left", baseline="top", lineBreak="\n", fontSize=13).encode(
        x=alt.value(0), y=alt.value(0), text="story:N")
    queue = notes.mark_text(align="left", baseline="top", fontSize=13, fontWeight="bold").encode(
        x=alt.value(0), y=alt.value(72), text="queue:N")
    lines = max(n["story"].count("\n") + 1 for n in data["notes"])
    queue = queue.encode(y=alt.value(18 * lines + 4))
    header = alt.layer(story, queue).properties(width=width, height=18 * lines + 24,
                                                view={"stroke": None})
    chart = alt.vconcat(header, panel, spacing=4).add_params(p_moment)
    return finish_chart(fit_page(chart) if width == "container" else chart, title, subtitle)
