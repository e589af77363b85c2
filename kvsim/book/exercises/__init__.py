"""Answer checks for the book's exercises, and predict-first prompts.

Explained in chapter 1, *Bytes per token and capacity*; every chapter uses it.
Each chapter's checks live in their own module (``ch01``, ``ch02``, ...);
this module is the one way to run them.

Two kinds, both keyed by an id ``"ch01-<slug>"`` that matches the label of the
``{exercise}`` directive (``ex-ch01-<slug>``):

* **Exercises** (:func:`check`): the reader computes an answer, or makes a
  choice between named options (``kind="choice"``). The check prints one
  line: ``Right: ...`` with the reason, ``Not yet: ...`` with a hint (common
  slips get their own), ``Not answered yet: ...`` while the answer is
  ``None``, or ``Not a number: ...`` / ``Not one of the choices: ...``.
* **Predictions** (:func:`predict`): after a section, before running it, the
  reader writes down a guess; the check then runs kvsim and prints one line:
  ``You predicted X; kvsim shows Y ...`` and why. A prediction is never
  "wrong": the gap is the lesson.

The expected value is never typed in here: it is computed from kvsim, with the
functions the chapter calls, when the check runs. Chapters are committed with
every ``answer`` and ``prediction`` set to ``None``, so no result shows on the
site or in Binder before the reader tries; the tests (``tests/test_exercises.py``)
prove each check instead: the worked solution is accepted and each common
slip gets its own hint. Numbers print plainly (``57,344`` and ``57,344.4``,
never ``5.734e+04``)::

    from kvsim.book import exercises
    answer = None
    exercises.check("ch01-gqa-bytes", answer)
"""
from __future__ import annotations

import math
import os
import sys
from numbers import Integral, Real
from typing import TypeVar

from kvsim.errors import KvsimError

from . import ch01, ch02, ch03, ch04, ch05, ch06
from .base import Answer, Exercise, Prediction, Verdict, plain
from .setups import BELGAVI, H100_8B

__all__ = [
    "Exercise", "Prediction", "Verdict", "EXERCISES", "PREDICTIONS", "BELGAVI", "H100_8B",
    "evaluate", "check", "expected", "list_exercises", "list_predictions", "predict",
    "judge_prediction", "plain", "site_data", "hold_unmade_predictions", "waiting_for_guess",
    "not_run_note", "SKIP",
]

CHAPTERS = (ch01, ch02, ch03, ch04, ch05, ch06)


_Item = TypeVar("_Item", Exercise, Prediction)


def _registry(kind: str, items: tuple[list[_Item], ...]) -> dict[str, _Item]:
    table: dict[str, _Item] = {}
    for chapter_items in items:
        for item in chapter_items:
            if item.id in table:
                raise KvsimError(f"{kind[:-1].lower()} id {item.id!r} is registered twice")
            table[item.id] = item
    return table


EXERCISES: dict[str, Exercise] = _registry("EXERCISES", tuple(c.EXERCISES for c in CHAPTERS))
PREDICTIONS: dict[str, Prediction] = _registry("PREDICTIONS", tuple(c.PREDICTIONS for c in CHAPTERS))


def _as_number(answer: object) -> float | None:
    """Return ``answer`` as int or float, or ``None`` when it is not a number."""
    if isinstance(answer, bool):
        return None
    if isinstance(answer, Integral):
        return int(answer)
    if isinstance(answer, Real):
        x = float(answer)
        return x if math.isfinite(x) else None
    return None


def _not_a_number(variable: str, value: object, kind: str, unit: str) -> Verdict:
    """The "invalid" verdict: what was written, its type, and what to write instead."""
    shown = repr(value)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return Verdict("invalid", f"Not a number: {variable} = {shown} is a {type(value).__name__}; "
                              f"write {kind} ({unit}) without quotes.")


def list_exercises() -> list[str]:
    """The ids of every checkable exercise."""
    return list(EXERCISES)


def _get(exercise_id: str) -> Exercise:
    if exercise_id not in EXERCISES:
        raise KvsimError(f"exercise_id={exercise_id!r} is not known: expected one of "
                         f"{', '.join(EXERCISES)}")
    return EXERCISES[exercise_id]


def expected(exercise_id: str) -> Answer:
    """The expected answer of an exercise, computed from kvsim."""
    return _get(exercise_id).solve()[0]


def evaluate(exercise_id: str, answer: object) -> Verdict:
    """Judge ``answer`` to an exercise without printing (see :func:`check`)."""
    ex = _get(exercise_id)
    if answer is None:
        return Verdict("unanswered", f"Not answered yet: replace None with your answer "
                                     f"({ex.unit}) and run the cell again.")
    if ex.kind == "choice":
        return _evaluate_choice(ex, answer)
    x = _as_number(answer)
    if x is None:
        return _not_a_number("answer", answer,
                             "a whole number" if ex.kind == "int" else "a number", ex.unit)
    target, why = ex.solve()
    if ex.close(x, target):
        return Verdict("right", f"Right: {why}.")
    for value_fn, trap_hint in ex.traps:
        trap = ex.number(value_fn())
        if not ex.close(trap, target) and abs(x - trap) <= max(ex.abs_tol, ex.rel_tol * abs(trap), 1e-9 * abs(trap)):
            return Verdict("wrong", f"Not yet: {plain(x)} is not it; hint: {trap_hint}.")
    return Verdict("wrong", f"Not yet: {plain(x)} is not it; hint: {ex.hint}.")


def _evaluate_choice(ex: Exercise, answer: object) -> Verdict:
    """A decision: one of the exercise's options, in quotes (any case, spaces trimmed)."""
    listed = ", ".join(repr(o) for o in ex.options)
    if not isinstance(answer, str) or answer.strip().lower() not in ex.options:
        shown = repr(answer)
        if len(shown) > 40:
            shown = shown[:37] + "..."
        return Verdict("invalid", f"Not one of the choices: answer = {shown}; write one of "
                                  f"{listed}, in quotes.")
    pick = answer.strip().lower()
    target, why = ex.solve()
    if pick == target:
        return Verdict("right", f"Right: {why}.")
    for value_fn, trap_hint in ex.traps:
        if pick == value_fn():
            return Verdict("wrong", f"Not yet: {pick!r} is not it; hint: {trap_hint}.")
    return Verdict("wrong", f"Not yet: {pick!r} is not it; hint: {ex.hint}.")


def check(exercise_id: str, answer: object) -> None:
    """Print one line: right (and why), wrong (with a hint), or not answered yet."""
    print(evaluate(exercise_id, answer).message)


def list_predictions() -> list[str]:
    """The ids of every predict-first prompt."""
    return list(PREDICTIONS)


def judge_prediction(prediction_id: str, guess: object) -> Verdict:
    """Compare a guess with kvsim without printing (see :func:`predict`).

    ``status`` is ``"close"`` (within the prompt's tolerance), ``"off"``,
    ``"unanswered"`` or ``"invalid"``.
    """
    if prediction_id not in PREDICTIONS:
        raise KvsimError(f"prediction_id={prediction_id!r} is not known: expected one of "
                         f"{', '.join(PREDICTIONS)}")
    p = PREDICTIONS[prediction_id]
    if guess is None:
        return Verdict("unanswered", f"Not predicted yet: set prediction to your guess "
                                     f"({p.unit}) and run the cell.")
    if isinstance(guess, str) and guess.strip().lower() == SKIP:
        value, why = p.solve()
        return Verdict("skipped", f"You chose to see the answer without guessing: kvsim shows "
                                  f"{plain(value)} {p.unit}. Why: {why}.")
    x = _as_number(guess)
    if x is None:
        return _not_a_number("prediction", guess, "a number", p.unit)
    value, why = p.solve()
    head = f"You predicted {plain(x)} {p.unit}; kvsim shows {plain(value)} {p.unit}"
    if p.band is not None:
        low, high = p.band()
        head += f" ({p.band_label}: {plain(low)} to {plain(high)})"
        if low <= x <= high:
            return Verdict("close", f"{head}: inside kvsim's band. Why: {why}.")
    if abs(x - value) <= p.rel_tol * abs(value):
        return Verdict("close", f"{head}: a close estimate. Why: {why}.")
    if x > 0 and value > 0:
        ratio = value / x
        if 0.5 <= ratio <= 2:
            gap = f"{abs(ratio - 1) * 100:.0f}% {'above' if ratio > 1 else 'below'} your guess"
        elif ratio > 2:
            gap = f"{plain(round(ratio, 1))} times your guess"
        else:
            gap = f"{plain(round(1 / ratio, 1))} times smaller than your guess"
    else:
        gap = "far from your guess"
    return Verdict("off", f"{head}, {gap}. Why: {why}.")


#: What a prediction cell takes to show kvsim's value without a guess.
SKIP = "skip"

#: The environment variable that turns the hold off in a learner copy run unattended.
HOLD_ENV_VAR = "KVBOOK_PREDICT_HOLD"

_hold = False
#: The prediction a learner copy's run waits at, until a guess (or a skip) is made.
_waiting: str | None = None


def hold_unmade_predictions(on: bool = True) -> None:
    """Make a prediction not yet made hold the run (learner copies call it through
    ``setup(learner=True)``; ``KVBOOK_PREDICT_HOLD=0`` keeps it off, for a copy run
    unattended): :func:`predict` then says the run waits for the guess, and until one is made
    the cells below do not run (``kvsim.book.notebook`` skips them, see :func:`waiting_for_guess`)."""
    global _hold, _waiting
    _hold = bool(on) and os.environ.get(HOLD_ENV_VAR, "").strip() != "0"
    _waiting = None


def waiting_for_guess() -> str | None:
    """The prediction a learner copy's run waits at (``None``: it waits at none)."""
    return _waiting


def not_run_note() -> str:
    """What a cell below a prediction not yet made shows instead of running."""
    return (f"Not run: the run waits for your guess at {_waiting} above. Make it there (or "
            f"set prediction = {SKIP!r}), run that cell, then the cells below it.")


def predict(prediction_id: str, guess: object) -> None:
    """Print one line: "You predicted X; kvsim shows Y" and why (or a reminder to guess first).

    In a learner copy (:func:`hold_unmade_predictions`), a prediction not yet made holds the
    run instead: the line says so (on stderr, as JupyterLab shows a warning), and the cells
    below do not run until a guess or a skip is made here.
    """
    global _waiting
    verdict = judge_prediction(prediction_id, guess)
    if verdict.status == "unanswered" and _hold:
        if _waiting is None:
            _waiting = prediction_id
        unit = PREDICTIONS[prediction_id].unit
        print(f"Waiting for your guess: the cells below answer the Predict box above, so they "
              f"wait too. Set prediction to your guess ({unit}), or to {SKIP!r} to see the "
              f"answer without one, run this cell, then the cells below it "
              f"(Run > Run Selected Cell and All Below).", file=sys.stderr)
        return
    if verdict.status in ("close", "off", "skipped"):
        _waiting = None
    print(verdict.message)


def _json_number(x: Answer) -> float:
    """An exercise's number as JSON keeps it: ints as ints, everything else as a float."""
    return int(x) if isinstance(x, Integral) and not isinstance(x, bool) else float(x)


def site_data() -> dict[str, object]:
    """Every check and prediction as data, for the static site's checks (``checks.js``).

    The site runs the same rules as :func:`evaluate` and :func:`judge_prediction`,
    in the browser, on what kvsim computes here: each exercise's expected answer and
    why, its tolerances (or its range), its general hint and the traps that can fire
    (a trap within the tolerance of the right answer never does, so it is left out),
    each prediction's value and why. ``tests/test_site_checks.py`` runs both on the
    same answers and compares every message.
    """
    exercises = {}
    for ex in EXERCISES.values():
        target, why = ex.solve()
        entry = {"kind": ex.kind, "unit": ex.unit, "hint": ex.hint, "why": why,
                 "question": ex.question, "derive": ex.derive}
        if ex.kind == "choice":
            entry.update(options=list(ex.options), expected=target,
                         traps=[[value_fn(), hint] for value_fn, hint in ex.traps])
        else:
            traps = []
            for value_fn, hint in ex.traps:
                trap = value_fn()
                if not ex.close(trap, target):
                    traps.append([_json_number(trap), hint])
            entry.update(expected=_json_number(target), abs_tol=float(ex.abs_tol),
                         rel_tol=float(ex.rel_tol), traps=traps,
                         between=[float(v) for v in ex.between()] if ex.between else None)
        exercises[ex.id] = entry
    predictions = {}
    for p in PREDICTIONS.values():
        value, why = p.solve()
        predictions[p.id] = {"unit": p.unit, "value": _json_number(value), "value_text": plain(value),
                             "why": why, "rel_tol": float(p.rel_tol), "question": p.question}
        if p.band is not None:
            low, high = p.band()
            predictions[p.id].update(band=[float(low), float(high)], band_label=p.band_label,
                                     band_text=[plain(low), plain(high)])
    return {"format": "kvbook-checks", "exercises": exercises, "predictions": predictions}
