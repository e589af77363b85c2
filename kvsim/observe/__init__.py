"""A run as an on-call engineer sees it: vLLM's Prometheus metrics, the exporter, alert rules, panels.

``catalogue`` (the metric families per vLLM version), ``series`` (a run as
those series, and its scrapes), ``exposition`` (the text of one scrape),
``promtool_tests`` (the run as a ``promtool test rules`` file),
``introspection`` (what the KV-cache gauge counts, read from the engine),
``exporter`` (the series live on ``/metrics``), ``alerts`` (rule evaluation,
the linter, promtool), ``panels`` (dashboard queries over a scrape),
``rule_timing`` (when one rule goes pending, fires and resolves, as promtool
evaluates it), ``readings`` (a real server's saved scrapes or Prometheus
export, as a window of its life) and ``twin`` (the kvsim configuration that
window implies, and what-ifs on it: ``kvsim twin``).
``metrics`` re-exports the public names of the first five and
``histogram_quantile``, under the path the book uses.
"""
