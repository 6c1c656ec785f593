"""Figures of the latency benches (a helper, not a script)."""

from __future__ import annotations

__all__ = ["percentile"]


def percentile(values: list[float], fraction: float) -> float:
    """The value at ``fraction`` (0-1) of the sorted values, nearest rank (no
    interpolation): 0.5 the median, 1.0 the largest."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]
