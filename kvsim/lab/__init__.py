"""Chapter 5's lab: the missions, their scoring and tickets, the lab's day, a learner's progress.

``missions`` (tickets, grids, scoring), ``replay`` (the lab's day of traffic
and the on-call numbers), ``progress`` (the progress file, export and import)
and ``codes`` (completion codes, the room key, the leaderboard). No charts and
no widgets: those are :mod:`kvsim.book`'s.
"""

from .replay import (
                     LAB_BASE,
                     LAB_DEFAULTS,
                     TWIN_GRID,
                     TWIN_MODES,
                     commit_guess,
                     lab_settings,
                     oncall_numbers,
                     oncall_text,
                     run_lab,
                     show,
                     twin_runs,
                     twin_settings,
                     wrapped,
)

__all__ = ["LAB_BASE", "LAB_DEFAULTS", "TWIN_GRID", "TWIN_MODES", "commit_guess", "lab_settings",
           "oncall_numbers", "oncall_text", "run_lab", "show", "twin_runs", "twin_settings", "wrapped"]
