"""kvsim's packages are layers, and imports run one way only.

The folders of ``kvsim/`` are its layers, bottom to top::

    errors, units, files  <  model  <  traffic  <  engine  <  runs  <  observe  <  lab  <  book  <  cli

A module may import its own layer and the layers below it, never one above
(the engine never imports a chart, a widget or the lab), and no set of modules
imports each other in a loop. Every import counts: at the top of a module or
inside a function, absolute or relative, and ``from kvsim import name`` counts
as an import of the module that defines ``name`` (``kvsim/__init__.py`` only
hands names on, lazily, and is not itself a layer).

A name that starts with ``_`` is its module's own: no other kvsim module
imports it (a helper two modules need gets a public name, or its user moves
beside it). Dunders such as ``__version__`` are public.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kvsim

PACKAGE = Path(kvsim.__file__).resolve().parent
LAYERS = [("errors", "units", "files"), ("model",), ("traffic",), ("engine",), ("runs",), ("observe",),
          ("lab",), ("book",), ("cli", "__main__")]
RANK = {name: i for i, names in enumerate(LAYERS) for name in names}


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> int | None:
    """The layer of ``kvsim.x...``; ``None`` for the package's face, ``kvsim`` itself."""
    parts = module.split(".")
    return None if len(parts) == 1 else RANK[parts[1]]


def _resolve(name: str) -> str:
    """The module ``name`` refers to: itself, or its package when it is a name in one."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def imports_of(module: str) -> set[str]:
    """Every kvsim module ``module`` imports, anywhere in its file."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {_resolve(a.name) for a in node.names if a.name.split(".")[0] == "kvsim"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != "kvsim":
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if full in MODULES:                                   # a submodule
                    found.add(full)
                elif source == "kvsim" and alias.name in kvsim._EXPORTS:   # a name the face hands on
                    found.add("kvsim." + kvsim._EXPORTS[alias.name])
                elif source == "kvsim" and alias.name in kvsim._MODULES:
                    found.add("kvsim." + kvsim._MODULES[alias.name])
                else:
                    found.add(_resolve(source))
    found.discard(module)
    return found


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports_of(module: str) -> list[str]:
    """``source.name`` for every private name ``module`` imports from another kvsim module."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != "kvsim":
                continue
            found += [f"{source}.{a.name}" for a in node.names
                      if _is_private(a.name) or any(_is_private(p) for p in source.split("."))]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "kvsim"
                      and any(_is_private(p) for p in a.name.split("."))]
    return found


GRAPH = {m: imports_of(m) for m in MODULES}


def test_every_module_has_a_layer():
    unknown = sorted(m for m in MODULES if m != "kvsim" and m.split(".")[1] not in RANK)
    assert not unknown, f"modules outside every layer (add the package to LAYERS): {unknown}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != "kvsim"))
def test_imports_run_downward_only(module):
    mine = layer(module)
    upward = sorted(t for t in GRAPH[module] if layer(t) is not None and layer(t) > mine)
    assert not upward, (f"{module} (layer {LAYERS[mine][0]}) imports a higher layer: "
                        + ", ".join(f"{t} ({LAYERS[layer(t)][0]})" for t in upward))


def test_no_import_cycles():
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []
    counter = [0]

    def visit(v):                     # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH.get(v, ()):
            if w not in MODULES or w == "kvsim":
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for m in MODULES:
        if m not in index and m != "kvsim":
            visit(m)
    assert not cycles, f"modules that import each other in a loop: {cycles}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_private_name_is_imported_across_modules(module):
    private = private_imports_of(module)
    assert not private, (f"{module} imports private names of other kvsim modules (make the helper "
                         f"public, or move its user beside it): {', '.join(private)}")


def test_the_checker_sees_a_private_import(tmp_path, monkeypatch):
    """Planted private imports, relative and absolute, are caught; dunders and aliases are not."""
    fake = tmp_path / "kvsim"
    (fake / "observe").mkdir(parents=True)
    for f in ("__init__.py", "observe/__init__.py", "observe/metrics.py"):
        (fake / f).write_text("")
    (fake / "observe" / "panels.py").write_text(
        "from __future__ import annotations\n"
        "from .metrics import ITL_BUCKETS, _le\n"
        "from kvsim.observe.metrics import _scrape_times as scrape_times\n"
        "from kvsim import __version__\n"
        "from kvsim.observe.metrics import histogram_quantile as _hq\n"
        "def f():\n    from . import _helpers\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", fake)
    monkeypatch.setattr(__import__(__name__), "MODULES", {module_name(p): p for p in fake.rglob("*.py")})
    assert private_imports_of("kvsim.observe.panels") == [
        "kvsim.observe.metrics._le", "kvsim.observe.metrics._scrape_times", "kvsim.observe._helpers"]


def test_the_checker_sees_an_upward_import(tmp_path, monkeypatch):
    """A planted engine -> book import is caught (the test above can fail)."""
    fake = tmp_path / "kvsim"
    (fake / "engine").mkdir(parents=True)
    (fake / "book").mkdir()
    for f in ("__init__.py", "engine/__init__.py", "book/__init__.py", "book/charts.py"):
        (fake / f).write_text("")
    (fake / "engine" / "loop.py").write_text("def f():\n    from ..book import charts\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", fake)
    monkeypatch.setattr(__import__(__name__), "MODULES", {module_name(p): p for p in fake.rglob("*.py")})
    assert imports_of("kvsim.engine.loop") == {"kvsim.book.charts"}
    assert layer("kvsim.book.charts") > layer("kvsim.engine.loop")


def test_kvsim_and_the_books_short_names_still_import():
    for name in sorted(kvsim._EXPORTS):
        assert getattr(kvsim, name) is not None, name
    for name, target in sorted(kvsim._MODULES.items()):
        assert getattr(kvsim, name).__name__ == "kvsim." + target


# ------------------------------------------------ the one block arithmetic
ENGINE = PACKAGE / "engine"
KV_LAYER = ENGINE / "blocks"
BLOCK_SIZE_NAMES = {"bs", "block_size"}


def _block_arithmetic(path: Path) -> list[str]:
    """Lines of ``path`` that divide by a block size, take a remainder by one, or call
    ``cdiv`` (tokens to blocks done by hand)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.FloorDiv, ast.Mod, ast.Div)):
            names = {n.id if isinstance(n, ast.Name) else n.attr
                     for n in ast.walk(node.right) if isinstance(n, (ast.Name, ast.Attribute))}
            if names & BLOCK_SIZE_NAMES:
                found.append(f"{path.name}:{node.lineno}")
        elif isinstance(node, ast.Name) and node.id == "cdiv":
            found.append(f"{path.name}:{node.lineno} (cdiv)")
        elif isinstance(node, ast.ImportFrom) and any(a.name == "cdiv" for a in node.names):
            found.append(f"{path.name}:{node.lineno} (imports cdiv)")
    return found


def test_only_the_kv_layer_counts_blocks():
    """Tokens to blocks is done in kvsim/engine/blocks/ only (blocks_for, block_position, the
    KV cache manager): no other engine module divides by a block size."""
    outside = [p for p in sorted(ENGINE.rglob("*.py")) if KV_LAYER not in p.parents]
    assert len(outside) > 10
    found = [hit for p in outside for hit in _block_arithmetic(p)]
    assert not found, f"block arithmetic outside kvsim/engine/blocks/: {found}"
    inside = [hit for p in sorted(KV_LAYER.rglob("*.py")) for hit in _block_arithmetic(p)]
    assert inside, "the scan finds nothing even in the KV layer: it no longer sees block arithmetic"
