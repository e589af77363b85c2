"""The traffic: request lengths, workloads, traces and arrivals as the engine consumes them.

``lengths`` (seeded length distributions), ``workload`` (requests, open- and
closed-loop workloads, the Azure trace reader), ``arrivals`` (what the engine
reads of a workload, step by step) and ``libm`` (sampling math that gives the
same bits on every CPU). Imports nothing of kvsim but its errors.
"""
