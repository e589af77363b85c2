"""A run as an on-call engineer sees it: vLLM's Prometheus metrics, the exporter, alert rules, panels.

``metrics`` (the metric catalogue per vLLM version, series, exposition),
``exporter`` (them live on ``/metrics``), ``alerts`` (rule evaluation, the
linter, promtool) and ``panels`` (dashboard queries over a run).
"""
