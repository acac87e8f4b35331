"""The benchmarks: recall cost against history size, next to the reference's
client-side algorithm, and ingest throughput next to raw `_bulk`.

`python -m bench.run` runs everything and writes BENCHMARKS.md and bench/latency.png;
`python -m bench.run --quick` is the smoke run the test suite uses.
"""


def alias_name(*words: str) -> str:
    """`bench-` and `words` joined by `_`: `setup` refuses an alias with a dash before a
    digit (`core.index_names`), which a size (`raw-1m`) would put there."""
    return "bench-" + "_".join(words).replace("-", "_")
