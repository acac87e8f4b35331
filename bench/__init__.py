"""The benchmarks: recall cost against history size, next to the reference's
client-side algorithm, and ingest throughput next to raw `_bulk`.

`python -m bench.run` runs everything and writes BENCHMARKS.md and bench/latency.png;
`python -m bench.run --quick` is the smoke run the test suite uses.
"""
