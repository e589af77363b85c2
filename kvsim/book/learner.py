"""Learner copies of the chapters: what Binder, a laptop and a workshop room open in JupyterLab.

The chapters in ``book/`` are committed executed (strict nbval compares every
output, and the static site shows them). Opened as they are in JupyterLab,
they would answer every Predict box before the reader guessed: the saved
charts and printouts after each prediction cell, and the saved values of the
prose's inline numbers (``jupyterlab-myst`` shows them). They would also show
MyST's book-wide references raw (a citation key, a glossary term that links
nowhere, another chapter's equation label) and load the chart library from a
CDN. A learner copy is the same chapter with, in this order:

* **every Predict region blank** -- from each prediction cell to the next
  Predict box or section, as the site veils it: code outputs cleared, and each
  inline number of the prose shown as ``…`` until its cell is run again;
* **a run that waits for a guess** -- the set-up cell calls
  ``setup(learner=True)``, so that ``exercises.predict(id, None)`` holds *Run
  All* at the first prediction not yet made, with a note saying what to do,
  and the cells below it show that they wait instead of running
  (:func:`kvsim.book.exercises.hold_unmade_predictions`); a guess, or
  ``prediction = "skip"``, and the run goes on with the kernel's feedback;
* **references as the site shows them** -- citations as "(Kwon et al., 2023)"
  from ``book/references.bib``, glossary terms as plain words, equations
  numbered as on the site (``\\tag{N}`` on each labelled equation, "(N)" for a
  reference to it, in any chapter), links to other chapters as links to their
  copies and to the book's other pages by title;
* **charts that draw offline** -- the Vega runtime saved in the set-up cell's
  output (and drawn again whenever that cell runs), so the saved charts draw
  with no network and no environment variable;
* **nothing to save on opening** -- ``language_info.version`` set to the
  running Python's (JupyterLab fills it in from the kernel and would mark the
  chapter modified), and the copy trusted (signed) for this user, so its
  saved charts draw.

``python -m kvsim.book.learner OUT`` writes the copies (and the ``data/`` and
``alerts/`` folders the chapters read) into ``OUT``; Binder's ``postBuild`` runs
``python -m kvsim.book.learner --in-place book`` in its image. Explained on the
book's *Learner set-up* page.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from kvsim.book.notebook import NOT_YET
from kvsim.errors import KvsimError

__all__ = ["BookContext", "learner_notebook", "write_learner_copies", "predict_regions",
           "PLACEHOLDER", "main"]

#: What an inline number of a Predict region shows until its cell runs (the kernel's own
#: placeholder for a number not glued yet).
PLACEHOLDER = NOT_YET
#: Folders next to the chapters that their cells read (relative paths).
RESOURCES = ("data", "alerts")
#: The set-up call a chapter makes, and what a learner copy makes instead.
SETUP_CALL = "kvsim.book.notebook.setup()"
LEARNER_SETUP_CALL = "kvsim.book.notebook.setup(learner=True)"

_PREDICT_CELL = re.compile(r"""exercises\.predict\(\s*["'](ch\d\d-predict-[\w-]+)["']""")
_PREDICT_BOX = re.compile(r"^[`:]{3,}\{admonition\}\s*Predict\s*\n:class:\s*kvbook-predict", re.M)
_HEADING = re.compile(r"^#{1,3} ", re.M)
_ROLE = re.compile(r"\{(cite:p|cite:t|term|eq|doc)\}`([^`]+)`")
_LABELLED_EQUATION = re.compile(r"\$\$(.*?)\$\$[ \t]*\((eq-[\w-]+)\)", re.S)
_TARGET = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)


# --------------------------------------------------------------------------
# What a copy needs to know about the whole book.

def _bib_entries(text: str) -> dict[str, dict[str, str]]:
    """``{key: {field: value}}`` from a BibTeX file (the fields this module reads)."""
    entries: dict[str, dict[str, str]] = {}
    for m in re.finditer(r"@\w+\s*\{\s*([^,\s]+)\s*,(.*?)\n\}", text, re.S):
        fields = {}
        for f in re.finditer(r"(\w+)\s*=\s*\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}", m.group(2)):
            fields[f.group(1).lower()] = f.group(2)
        entries[m.group(1)] = fields
    return entries


def _detex(text: str) -> str:
    """BibTeX text as a reader sees it: accents applied, braces and escapes dropped."""
    accents = {"'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303"}
    text = re.sub(r"\{?\\([\'`^\"~])\{?(\w)\}?\}?",
                  lambda m: __import__("unicodedata").normalize("NFC", m.group(2) + accents[m.group(1)]),
                  text)
    return re.sub(r"\s+", " ", text.replace("{", "").replace("}", "").replace("\\&", "&")).strip()


def _surnames(author_field: str) -> list[str]:
    out = []
    for person in re.split(r"\s+and\s+", author_field.strip()):
        person = person.strip()
        if person.startswith("{") and person.endswith("}"):       # an organisation
            out.append(_detex(person))
        elif "," in person:
            out.append(_detex(person.split(",", 1)[0]))
        else:
            out.append(_detex(person.split()[-1]))
    return out


def citation_label(fields: dict[str, str]) -> tuple[str, str]:
    """``(who, year)`` as the site's author-year style prints a citation."""
    names = _surnames(fields.get("author", "")) if fields.get("author") else []
    if not names:
        who = _detex(fields.get("title", "?"))
    elif len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    return who, _detex(fields.get("year", "")) or "n.d."        # no year: "no date", as the site


class CellMetadata(TypedDict, total=False):
    """The part of a cell's metadata the copies change: the saved inline expressions."""
    user_expressions: list[dict[str, object]]


class NotebookCell(TypedDict, total=False):
    """A notebook cell as nbformat's JSON has it (the fields the copies read or set)."""
    cell_type: str
    source: str | list[str]
    outputs: list[dict[str, object]]
    execution_count: int | None
    metadata: CellMetadata


class Notebook(TypedDict, total=False):
    """A notebook as nbformat's JSON has it (the fields the copies read or set)."""
    cells: list[NotebookCell]
    metadata: dict[str, dict[str, object]]


@dataclass
class BookContext:
    """The book-wide facts a chapter's references need."""

    #: ``{key: (who, year)}`` for every BibTeX entry.
    citations: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: ``{label: number}`` for every labelled equation, numbered as the site numbers them.
    equations: dict[str, int] = field(default_factory=dict)
    #: ``{docname: title}`` of the book's pages (chapters and the rest).
    titles: dict[str, str] = field(default_factory=dict)
    #: The chapters that get copies (docnames relative to the book folder, no suffix).
    chapters: tuple[str, ...] = ()

    @classmethod
    def from_book(cls, book: Path, chapters: list[Path]) -> BookContext:
        bib = book / "references.bib"
        entries = _bib_entries(bib.read_text(encoding="utf-8")) if bib.is_file() else {}
        citations = {k: citation_label(v) for k, v in entries.items()}
        equations: dict[str, int] = {}
        for path in chapters:               # in the table of contents' order, as the site
            for cell in _cells(path):
                if cell["cell_type"] == "markdown":
                    for m in _LABELLED_EQUATION.finditer(_source(cell)):
                        equations.setdefault(m.group(2), len(equations) + 1)
        titles = {}
        for page in sorted(book.glob("*.md")) + chapters:
            text = (page.read_text(encoding="utf-8") if page.suffix == ".md"
                    else "\n".join(_source(c) for c in _cells(page) if c["cell_type"] == "markdown"))
            heading = re.search(r"^# (.+)$", text, re.M)
            if heading:
                titles[page.stem] = heading.group(1).strip()
        return cls(citations, equations, titles, tuple(p.stem for p in chapters))


def _cells(path: Path) -> list[NotebookCell]:
    notebook: Notebook = json.loads(path.read_text(encoding="utf-8"))
    return notebook["cells"]


def _source(cell: NotebookCell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _set_source(cell: NotebookCell, text: str) -> None:
    cell["source"] = text.splitlines(keepends=True)


# --------------------------------------------------------------------------
# One chapter.

def predict_regions(cells: list[NotebookCell]) -> list[tuple[str, list[int]]]:
    """``[(prediction id, [cell index, ...])]``: each prediction cell's region, the cells after
    it up to the next Predict box, prediction cell or section -- what the site veils
    (``predict-reveal.js``). A markdown cell whose prose runs into a new section is the region's
    last (its inline numbers are all blanked: the ones after the heading show once it runs)."""
    regions = []
    for i, cell in enumerate(cells):
        m = _PREDICT_CELL.search(_source(cell)) if cell["cell_type"] == "code" else None
        if not m:
            continue
        region = []
        for j in range(i + 1, len(cells)):
            text = _source(cells[j])
            if cells[j]["cell_type"] == "code" and _PREDICT_CELL.search(text):
                break
            if cells[j]["cell_type"] == "markdown":
                if _PREDICT_BOX.search(text) or _HEADING.match(text.lstrip("\n")):
                    break
                if _HEADING.search(text):      # prose, then a new section: the prose is the answer's
                    region.append(j)
                    break
            region.append(j)
        regions.append((m.group(1), region))
    return regions


def _blank(cell: NotebookCell) -> None:
    """A Predict region's cell as it is before it runs: no outputs, inline numbers as ``…``."""
    if cell["cell_type"] == "code":
        cell["outputs"] = []
        cell["execution_count"] = None
    else:
        for saved in cell.get("metadata", {}).get("user_expressions", []):
            saved["result"] = {"status": "ok", "data": {"text/plain": PLACEHOLDER}, "metadata": {}}


def _references(text: str, ctx: BookContext, chapter: str) -> str:
    """The chapter's MyST references as the site renders them (see the module docstring)."""
    def equation(m: re.Match[str]) -> str:
        body, label = m.group(1), m.group(2)
        if label not in ctx.equations:
            raise KvsimError(f"{chapter}: equation label {label!r} is not numbered")
        return f"$${body.rstrip()}\n\\tag{{{ctx.equations[label]}}}\n$$"

    def role(m: re.Match[str]) -> str:
        kind, content = m.group(1), " ".join(m.group(2).split())
        if kind in ("cite:p", "cite:t"):
            keys = [k.strip() for k in content.split(",")]
            missing = [k for k in keys if k not in ctx.citations]
            if missing:
                raise KvsimError(f"{chapter}: citation {missing[0]!r} is not in references.bib")
            if kind == "cite:p":
                return "(" + "; ".join(f"{w}, {y}" for w, y in (ctx.citations[k] for k in keys)) + ")"
            return "; ".join(f"{w} ({y})" for w, y in (ctx.citations[k] for k in keys))
        target = _TARGET.match(content)
        shown, ref = (target.group(1), target.group(2)) if target else (content, content)
        if kind == "term":
            return shown
        if kind == "eq":
            if ref not in ctx.equations:
                raise KvsimError(f"{chapter}: equation reference {ref!r} has no labelled equation")
            return f"({ctx.equations[ref]})"
        # doc: another chapter's copy sits beside this one; any other page by its title
        page = ref.split("/")[-1]
        if page in ctx.chapters:
            return f"[{shown}]({page}.ipynb)"
        title = ctx.titles.get(page, page)
        return shown if target else f"*{title}* (a page of the book's site)"

    return _ROLE.sub(role, _LABELLED_EQUATION.sub(equation, text))


def learner_notebook(nb: Notebook, ctx: BookContext, chapter: str, *,
                     runtime_js: str | None = None) -> Notebook:
    """The learner copy of one executed chapter (a new notebook; ``nb`` is not changed)."""
    out = copy.deepcopy(nb)
    cells = out["cells"]
    for _, region in predict_regions(cells):
        for j in region:
            _blank(cells[j])
    set_up = False
    for cell in cells:
        text = _source(cell)
        if cell["cell_type"] == "markdown":
            new = _references(text, ctx, chapter)
            if new != text:
                _set_source(cell, new)
        elif SETUP_CALL in text and not set_up:
            _set_source(cell, text.replace(SETUP_CALL, LEARNER_SETUP_CALL, 1))
            if runtime_js is not None:
                cell["outputs"] = [{"output_type": "display_data", "metadata": {},
                                    "data": {"text/html": f"<script>{runtime_js}</script>",
                                             "text/plain": "<IPython.core.display.HTML object>"}}]
            set_up = True
    if not set_up:
        raise KvsimError(f"{chapter}: no cell calls {SETUP_CALL}: it is not one of the book's chapters")
    meta = out.setdefault("metadata", {})
    meta.setdefault("language_info", {})["version"] = ".".join(map(str, sys.version_info[:3]))
    meta.setdefault("kvbook", {})["learner_copy"] = True
    return out


# --------------------------------------------------------------------------
# The copies.

def _chapters(book: Path) -> list[Path]:
    """The book's chapters, in the table of contents' order."""
    toc = book.parent / "_toc.yml"
    names = re.findall(r"file:\s*book/(ch\d\d-[\w-]+)", toc.read_text(encoding="utf-8")) if toc.is_file() else []
    paths = [book / f"{n}.ipynb" for n in names if (book / f"{n}.ipynb").is_file()]
    return paths or sorted(book.glob("ch[0-9][0-9]-*.ipynb"))


def _sign(path: Path) -> bool:
    """Trust the copy for this user, as ``jupyter trust`` does (False where nbformat is missing)."""
    try:
        import nbformat
        from nbformat.sign import NotebookNotary
    except ImportError:
        return False
    # (nbformat's notary and reader have no annotations)
    notary = NotebookNotary()  # type: ignore[no-untyped-call]
    notary.sign(nbformat.read(path, as_version=4))  # type: ignore[no-untyped-call]
    return True


def write_learner_copies(out: Path | None, *, book: Path, in_place: bool = False) -> list[Path]:
    """Write a learner copy of every chapter of ``book`` into ``out`` (with the folders the
    chapters read), or over the chapters themselves with ``in_place`` (Binder's image only).

    Refuses, in one line, a destination that holds files it did not write (anything but
    learner copies and the copied folders) and any chapter that is not an executed one.
    """
    book = Path(book)
    if not book.is_dir():
        raise KvsimError(f"book={str(book)!r} is not a folder: expected the book's chapters (the "
                         f"book/ folder of a checkout; give it with --book PATH)")
    chapters = _chapters(book)
    if not chapters:
        raise KvsimError(f"book={str(book)!r} holds no chapters (chNN-*.ipynb)")
    if in_place:
        target = book
    else:
        if out is None:
            raise KvsimError("no destination: give a folder for the learner copies (or in_place=True)")
        target = Path(out)
        if target.resolve() == book.resolve():
            raise KvsimError(f"{str(target)!r} is the book itself: give another folder, or "
                             f"--in-place in a disposable copy (Binder's image)")
        if target.exists() and not target.is_dir():
            raise KvsimError(f"{str(target)!r} is not a folder: expected a new or learner-copy folder")
        if target.is_dir():
            _check_ours(target, chapters)
        target.mkdir(parents=True, exist_ok=True)
    from kvsim.book.notebook import vega_runtime_js  # (Altair and vl-convert: only when writing)

    ctx = BookContext.from_book(book, chapters)
    runtime = vega_runtime_js()
    written = []
    for path in chapters:
        nb = json.loads(path.read_text(encoding="utf-8"))
        if not any(c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code"):
            raise KvsimError(f"{path.name} has no outputs: run make execute first (a learner "
                             f"copy is made from an executed chapter)")
        copy_path = target / path.name
        tmp = copy_path.with_suffix(".ipynb.tmp")
        tmp.write_text(json.dumps(learner_notebook(nb, ctx, path.stem, runtime_js=runtime),
                                  indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, copy_path)
        _sign(copy_path)
        written.append(copy_path)
    if not in_place:
        for name in RESOURCES:
            if (book / name).is_dir():
                shutil.copytree(book / name, target / name, dirs_exist_ok=True)
    return written


def _check_ours(target: Path, chapters: list[Path]) -> None:
    """An existing destination holds only what this writes (never write over a reader's files)."""
    names = {p.name for p in chapters} | set(RESOURCES) | {".ipynb_checkpoints"}
    for entry in target.iterdir():
        if entry.name in names and entry.suffix == ".ipynb":
            meta = json.loads(entry.read_text(encoding="utf-8")).get("metadata", {})
            if not meta.get("kvbook", {}).get("learner_copy"):
                raise KvsimError(f"{str(entry)!r} is not a learner copy: choose an empty folder")
        elif entry.name not in names:
            raise KvsimError(f"{str(target)!r} holds {entry.name!r}, which is not a learner copy: "
                             f"choose an empty folder (your own notebooks are never written over)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kvsim.book.learner",
        description="Write learner copies of the book's chapters for JupyterLab: no Predict answer "
                    "before a guess, references as on the site, charts offline.")
    parser.add_argument("out", nargs="?", help="the folder to write into (new, or one it wrote before)")
    parser.add_argument("--book", default=None, help="the book's folder (default: book/ of this checkout)")
    parser.add_argument("--in-place", action="store_true",
                        help="replace the chapters themselves (Binder's image only: never in a checkout "
                             "you commit from)")
    args = parser.parse_args(argv)
    book = Path(args.book) if args.book else Path(__file__).resolve().parents[2] / "book"
    if args.in_place and args.out:
        parser.error("give a folder or --in-place, not both")
    if not args.in_place and not args.out:
        parser.error("give the folder to write the copies into (for example: learn)")
    try:
        written = write_learner_copies(Path(args.out) if args.out else None, book=book,
                                       in_place=args.in_place)
    except (KvsimError, OSError) as exc:
        print(f"python -m kvsim.book.learner: {exc}", file=sys.stderr)
        return 2
    where = book if args.in_place else Path(args.out)
    print(f"wrote {len(written)} learner copies to {where}; open them with: jupyter lab {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
