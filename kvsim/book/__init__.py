"""What the book's notebooks use: charts in one theme, widgets, exercises, the notebook set-up.

``charts`` (Altair, one theme), ``lab_charts`` and ``lab_panel`` (chapter 5's),
``widgets`` (ipywidgets over live runs), ``exercises`` (the checks) and
``notebook`` (``setup()``, glued numbers). Altair and ipywidgets are imported
only here.
"""
