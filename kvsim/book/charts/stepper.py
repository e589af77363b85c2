"""Chapter 2's scheduler stepper as a static chart: every request's blocks, frame by frame.

The frames come from :func:`kvsim.runs.stepper.step_frames` (the real engine,
watched after every step); the live widget is :func:`kvsim.book.widgets.scheduler_stepper`.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from kvsim.errors import KvsimError, check_int

from .theme import NEUTRAL, PALETTE, altair, check_width, finish_chart, fit_page

# --- the scheduler stepper ------------------------------------------------------------

#: The stepper's states, drawn in this order with these colours (and a text label each);
#: "swapped" only with ``engine="v0", preemption_mode="swap"``.
STEPPER_STATES = ("decoding", "prefilling", "waiting", "preempted", "swapped", "finished",
                  "not arrived")
#: Each state's colour, in the chart and in the widget's HTML bars.
STATE_COLOURS = dict(zip(STEPPER_STATES, [PALETTE[0], PALETTE[5], PALETTE[1], PALETTE[3],
                                          PALETTE[4], NEUTRAL, PALETTE[6]]))


#: Characters per line of a step's story: 13 px text, a phone's page (about 330 px).
STORY_WIDTH = 44


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width))


def stepper_data(frames: Sequence[Mapping]) -> dict:
    """Rows for :func:`stepper_chart` from :func:`kvsim.runs.stepper.scheduler_frames`.

    Returns ``{"bars": rows, "notes": rows, "steps": n, "first_step": k,
    "total_blocks": n}``: one bar row per request per step (the pool's free
    blocks as a last row named "free"), one note row per step (the story,
    wrapped to :data:`STORY_WIDTH` characters, so it fits a phone's page).
    ``first_step`` is 0 when the frames start before the first step
    (``scheduler_frames(..., include_start=True)``), else 1.
    """
    frames = list(frames)
    if not frames:
        raise KvsimError("stepper_data: frames=[] is empty: expected frames from "
                         "kvsim.runs.stepper.scheduler_frames")
    bars, notes = [], []
    for f in frames:
        for r in f["requests"]:
            if r["state"] == "preempted":
                label = f"preempted ({r['preemptions']}x), waiting with 0 blocks"
            elif r["blocks"]:
                label = f"{r['state']}, {r['blocks']} blocks, {r['tokens']} tokens"
                if r["needs_block"]:
                    label += "; its next token needs a block"
            else:
                label = r["state"]
            bars.append({"step": f["step"], "row": r["name"], "state": r["state"],
                         "blocks": r["blocks"], "label": label})
        bars.append({"step": f["step"], "row": "free", "state": "free",
                     "blocks": f["free_blocks"], "label": f"{f['free_blocks']} free blocks"})
        queue = ", ".join(f["waiting"]) if f["waiting"] else "empty"
        notes.append({"step": f["step"], "story": _wrap(f["story"], STORY_WIDTH),
                      "queue": f"queue, front first: {queue}"})
    return {"bars": bars, "notes": notes, "steps": len(frames),
            "first_step": frames[0]["step"], "total_blocks": frames[0]["total_blocks"]}


def stepper_chart(data: Mapping, *, title: str, subtitle: str | None = None,
                  start: int | None = None, width="container"):
    """The scheduler stepper's static twin: one engine step per slider tick.

    The slider opens at ``start``, by default the first frame (step 0 with
    ``scheduler_frames(..., include_start=True)``: a view that answers no
    question yet). ``width``: ``"container"`` (the default) follows the page.

    ``data`` comes from :func:`stepper_data`. For the step the slider picks, a
    bar per request shows the blocks it holds (colour and a text label both
    give its state), a last bar the pool's free blocks, and above them the
    step's story: who was admitted, who needed a block, the victim and where it
    went.
    """
    alt = altair()
    for key in ("bars", "notes", "steps", "total_blocks"):
        if key not in data:
            raise KvsimError(f"stepper_chart: data lacks {key!r}: build it with stepper_data")
    steps = check_int("steps", data["steps"], min=1, max=100_000)
    first = check_int("first_step", data.get("first_step", 1), min=0, max=1)
    last = first + steps - 1
    start = first if start is None else check_int(
        "start", start, min=first, max=last,
        why="the precomputed steps; the static slider keeps to them")
    width = check_width(width, "stepper_chart")
    rows = sorted({b["row"] for b in data["bars"] if b["row"] != "free"},
                  key=lambda name: int(name[1:])) + ["free"]
    p_step = alt.param(name="step", value=start,
                       bind=alt.binding_range(min=first, max=last, step=1, name="Engine step "))
    states = list(STEPPER_STATES) + ["free"]
    colours = list(STATE_COLOURS.values()) + [PALETTE[2]]
    x_max = max(data["total_blocks"], max(b["blocks"] for b in data["bars"]))
    base = (alt.Chart(alt.InlineData(values=list(data["bars"])))
            .transform_filter("datum.step == step"))
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
             .transform_filter("datum.step == step"))
    story = notes.mark_text(align="left", baseline="top", lineBreak="\n", fontSize=13).encode(
        x=alt.value(0), y=alt.value(0), text="story:N")
    queue = notes.mark_text(align="left", baseline="top", fontSize=13, fontWeight="bold").encode(
        x=alt.value(0), y=alt.value(72), text="queue:N")
    lines = max(n["story"].count("\n") + 1 for n in data["notes"])
    queue = queue.encode(y=alt.value(18 * lines + 4))
    header = alt.layer(story, queue).properties(width=width, height=18 * lines + 24,
                                                view={"stroke": None})
    chart = alt.vconcat(header, panel, spacing=4).add_params(p_step)
    return finish_chart(fit_page(chart) if width == "container" else chart, title, subtitle)
