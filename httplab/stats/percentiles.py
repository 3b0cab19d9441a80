"""Percentiles of pooled latency histograms, for the reports' curves: the statistics layer's face of
the nearest-rank rule the tidy frames were built with (parse.percentiles), so that a curve pooled
over runs and each run's own percentiles follow one rule; and the percentile grid oha reports
(parse.oha), the latency suite's curves' x values."""
from __future__ import annotations

from ..parse.oha import PERCENTILES
from ..parse.percentiles import weighted_percentiles

__all__ = ["PERCENTILES", "weighted_percentiles"]
