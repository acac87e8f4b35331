"""A second round of the vector list, seeded by the first's best hits (Rocchio-style
feedback): for a question whose answer lies in two places (LoCoMo's multi-hop), the
first hits name one; the turns near them in meaning may hold the other.

The query's vector is moved towards the mean of the seeds' stored vectors, normalised:

    q' = (q + weight * mean(seeds)) / |q + weight * mean(seeds)|

Pure: no request.
"""

import math
from collections.abc import Sequence


def seeded(
    query: Sequence[float], seeds: Sequence[Sequence[float]], *, weight: float
) -> list[float]:
    """`query` moved towards the mean of `seeds` by `weight`, of unit length; `query`
    as it is when there is no seed."""
    if not seeds or weight <= 0:
        return list(query)
    dims = len(query)
    mean = [sum(seed[i] for seed in seeds) / len(seeds) for i in range(dims)]
    moved = [q + weight * m for q, m in zip(query, mean, strict=True)]
    norm = math.sqrt(sum(x * x for x in moved)) or 1.0
    return [x / norm for x in moved]
