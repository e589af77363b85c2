"""The pieces every chapter's checks are built from: the :class:`Exercise` and
:class:`Prediction` records, the :class:`Verdict` a check returns, and
:func:`plain`, the one way a number is printed to a reader."""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from numbers import Integral, Real

from kvsim.errors import KvsimError

__all__ = ["Verdict", "Exercise", "Prediction", "plain", "Answer", "Solved", "Trap", "Summary",
           "metric", "count"]

#: An exercise's answer: a number, or one of a ``"choice"`` exercise's options.
Answer = float | str
#: What an exercise's ``solve()`` returns: the expected answer, and why it is right.
Solved = tuple[Answer, str]
#: A common slip: the value it leads to (computed from kvsim when checked) and its own hint.
Trap = tuple[Callable[[], Answer], str]
#: A run's summary (:meth:`kvsim.engine.result.SimResult.summary`): a metric to its value.
Summary = Mapping[str, float | int | str]


def metric(summary: Summary, name: str) -> float:
    """A summary's number as it is (a count stays an int)."""
    value = summary[name]
    if isinstance(value, str):
        raise KvsimError(f"summary[{name!r}] = {value!r} is a text: expected a number")
    return value


def count(summary: Summary, name: str) -> int:
    """A summary's count (requests, tokens, preemptions)."""
    value = summary[name]
    if not isinstance(value, int):
        raise KvsimError(f"summary[{name!r}] = {value!r} is not a count: expected an int")
    return value


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

    A ``"choice"`` exercise asks for a decision, not a number: the answer is one
    of ``options`` (a word in quotes, any case), ``solve()`` returns the right
    option, and each wrong option can be a trap with its own hint.

    ``derive=True`` marks an exercise a reader can work by hand (or with a
    calculator) from the chapter's labelled equations and the numbers its text
    gives; its solution dropdown shows that worked step (an ``=``) before any
    kvsim call that confirms it. At least half of each chapter's exercises are
    derivations (``tests/test_exercises.py``).
    """

    id: str
    question: str
    kind: str  # "int", "float" or "choice"
    unit: str
    solve: Callable[[], Solved]
    hint: str
    abs_tol: float = 0.0
    rel_tol: float = 0.0
    traps: tuple[Trap, ...] = field(default_factory=tuple)
    #: For an answer that is right anywhere in a range (a threshold between two
    #: figures): ``between()`` gives ``(low, high)`` from kvsim, and an answer
    #: strictly inside decides instead of the tolerances.
    between: Callable[[], tuple[float, float]] | None = None
    #: The answers a ``"choice"`` exercise offers.
    options: tuple[str, ...] = ()
    #: A derivation by hand from the chapter's equations and the numbers in the text
    #: (the solution derives first, then shows the kvsim call that checks it).
    derive: bool = False

    def __post_init__(self) -> None:
        if self.kind not in ("int", "float", "choice"):
            raise ValueError(f"exercise {self.id}: kind={self.kind!r}: expected int, float or choice")
        if (self.kind == "choice") != bool(self.options):
            raise ValueError(f"exercise {self.id}: options go with kind='choice' and only with it")

    def close(self, answer: Answer, target: Answer) -> bool:
        if self.kind == "choice":
            return answer == target
        number = self.number(answer)
        if self.between is not None:
            low, high = self.between()
            return low < number < high
        goal = self.number(target)
        return abs(number - goal) <= max(self.abs_tol, self.rel_tol * abs(goal))

    def number(self, value: Answer) -> float:
        """``value`` (an answer, a target or a trap's value) of a numeric exercise, as it is."""
        if isinstance(value, str):
            raise KvsimError(f"exercise {self.id}: {value!r} is a text: a {self.kind} exercise "
                             "works with numbers")
        return value


@dataclass(frozen=True)
class Prediction:
    """A predict-first prompt: the reader guesses, then kvsim shows the value.

    ``solve()`` returns ``(value, why)`` from kvsim; a guess within
    ``rel_tol`` of the value counts as close. ``why`` says what decides the
    value, whatever the guess was.

    A prediction whose answer is a band (a median over seeds and their range)
    gives ``band()``, returning ``(low, high)`` from kvsim: a guess inside the
    band (edges included) also counts as close, and the feedback names the band
    as ``band_label`` says what it is.
    """

    id: str
    question: str
    unit: str
    solve: Callable[[], tuple[float, str]]
    rel_tol: float = 0.10
    band: Callable[[], tuple[float, float]] | None = None
    band_label: str = "its range over seeds"


def plain(x: float | Real) -> str:
    """A number as a reader writes it: ``57,344``, ``57,344.4``, ``4.66``, ``0.0125``.

    Never scientific notation; integers and integral floats get thousands
    separators; other numbers keep four significant digits (at least one
    decimal above 1,000).
    """
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, Integral) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e15):
        return f"{int(x):,}"
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    a = abs(x)
    if a >= 1000:
        return f"{x:,.1f}"
    if a == 0:
        return "0"
    decimals = max(0, 3 - int(math.floor(math.log10(a))))
    text = f"{x:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
