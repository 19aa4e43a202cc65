"""docs/report.md's histogram bins, computed independently of shardpack: a value v > 0 falls into bin
floor(log2(v) * steps); zeros are counted apart. Shared by tests/cli/check_golden_figures.py and
tests/interop/report_browser_test.py."""

import math


class Edge(float):
    """A bin edge 2^(k/steps): equal to another within 1e-12 (exp2 and pow may differ in the last bit)."""

    def __eq__(self, other):
        return math.isclose(self, other, rel_tol=1e-12)

    __hash__ = float.__hash__


def log_histogram(values, steps):
    """The histogram as stat --json spells it: from the lowest bin that holds a value to the highest."""
    bins = [math.floor(math.log2(v) * steps) for v in values if v > 0]
    first = min(bins)
    counts = [0] * (max(bins) - first + 1)
    for b in bins:
        counts[b - first] += 1
    return {"steps_per_octave": steps, "first": first, "counts": counts,
            "edges": [Edge(2 ** ((first + k) / steps)) for k in range(len(counts) + 1)],
            "zero": sum(1 for v in values if v <= 0)}
