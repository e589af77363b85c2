"""Sphinx extension: make every page of the book work with the network closed.

The book's pages need three JavaScript libraries that Sphinx, myst-nb and
Altair would otherwise fetch from CDNs:

* the **Vega runtime** for Altair charts (Altair's HTML output skips its CDN
  loader when the runtime is already on the page: see
  :func:`kvsim.book.notebook.vega_runtime_js`);
* the **ipywidgets HTML manager**, which renders saved widget state;
* **MathJax**, for the derivations.

It also adds ``mathjax-bridge.js`` (see its header): the widget manager speaks
MathJax 2, the book loads MathJax 3; and ``charts.css``, which lets charts of
fixed width shrink to a narrow page.

They are vendored once in ``book/_vendor/kvbook/`` (``scripts/vendor_assets.py``
writes them) and this extension copies that folder into the build as
``_static/kvbook/``, adds the Vega runtime to every page (after any require.js,
so it can register itself as an AMD module) and points myst-nb and
``sphinx.ext.mathjax`` at the local copies.

The folder is deliberately *not* a root ``_static/`` (jupyter-book would add
every ``.js`` found there to every page) nor ``_static/vendor/`` (the theme's
own folder).
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError

#: Folder (relative to the Sphinx source directory) holding ``kvbook/``.
VENDOR_DIR = "book/_vendor"
#: Files, relative to ``_static/``.
VEGA_RUNTIME = "kvbook/vega-runtime.js"
WIDGETS_EMBED = "kvbook/widgets/embed.js"
MATHJAX = "kvbook/mathjax/tex-svg-full.js"
#: Hand-written glue shipped with this extension (book/_ext/static/kvbook/).
MATHJAX_BRIDGE = "kvbook/mathjax-bridge.js"
#: The book's stylesheet: charts shrink to a narrow page; the box styles.
BOOK_CSS = "kvbook/book.css"
#: Keeps a reader's committed mission guesses in localStorage (chapter 5's static twins).
MISSIONS_JS = "kvbook/missions.js"
#: The lab on the static site (chapter 5's panels and the hub): the data, the script, its
#: styles, added only to the pages in LAB_PAGES (the data is every mission's grid scored).
LAB_DATA_JS = "kvbook/lab-missions.js"
LAB_JS = "kvbook/lab.js"
LAB_CSS = "kvbook/lab.css"
LAB_PAGES = ("book/ch05-belgavis-book-store", "book/lab-hub")
#: After sphinx's and the theme's scripts and any require.js (default priority 500).
VEGA_PRIORITY = 800


def _vendor_root(app: Sphinx) -> Path:
    return Path(app.confdir) / VENDOR_DIR


def _config_inited(app: Sphinx, config: Config) -> None:
    root = _vendor_root(app)
    missing = [f for f in (VEGA_RUNTIME, WIDGETS_EMBED, MATHJAX) if not (root / f).is_file()]
    if missing:
        raise ExtensionError(
            f"kvbook_offline: vendored files missing under {root}: {', '.join(missing)}; "
            "run `python scripts/vendor_assets.py`"
        )
    static = list(config.html_static_path)
    for folder in (str(root), str(Path(__file__).parent / "static")):
        if folder not in static:
            static.append(folder)
    config.html_static_path = static
    # Saved widget state: the local HTML manager, no require.js, no CDN.
    config.nb_ipywidgets_js = {WIDGETS_EMBED: {}}
    # MathJax from the local copy (sphinx adds it with the page's math only).
    config.mathjax_path = MATHJAX


def _builder_inited(app: Sphinx) -> None:
    if app.builder.format == "html":
        app.add_js_file(VEGA_RUNTIME, priority=VEGA_PRIORITY)
        app.add_js_file(MATHJAX_BRIDGE, priority=VEGA_PRIORITY)
        app.add_css_file(BOOK_CSS)
        app.add_js_file(MISSIONS_JS, priority=VEGA_PRIORITY)


def _lab_assets(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """The lab's data and script on the pages that play it (after predict-reveal.js)."""
    if pagename in LAB_PAGES and app.builder.format == "html":
        app.add_js_file(LAB_DATA_JS, priority=VEGA_PRIORITY + 10)
        app.add_js_file(LAB_JS, priority=VEGA_PRIORITY + 20)
        app.add_css_file(LAB_CSS)


def _script_key(script) -> tuple:
    # An inline script's filename is None or "" depending on when it was added.
    filename = getattr(script, "filename", script) or ""
    attributes = getattr(script, "attributes", {}) or {}
    return str(filename), tuple(sorted((k, str(v)) for k, v in attributes.items()))


def _dedupe_scripts(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Drop scripts added twice to a page (same file or same inline body).

    sphinx-thebe and sphinx-togglebutton add their inline configuration
    scripts once through the application (before the builder exists) and once
    more through the builder; Sphinx stores the first with ``filename=None``
    and the second with ``filename=""``, so its own de-duplication misses
    them, every page carried ``const THEBE_JS_URL = ...`` twice and the browser
    logged "Identifier 'THEBE_JS_URL' has already been declared". Keeping the
    first copy of each script fixes it at the page, whatever registered it.
    """
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            kept.append(script)
    scripts[:] = kept          # in place: later handlers add to this same list


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", _builder_inited)
    # early: a later handler may return a template name, and emit_firstresult stops there
    app.connect("html-page-context", _dedupe_scripts, priority=100)
    app.connect("html-page-context", _lab_assets)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
