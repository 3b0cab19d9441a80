"""The numbers layer: runs frame in, estimates and comparisons out; no formatting of prose.

May import: numpy, scipy, pandas, and httplab's lower layers (errors, bounds, servers, the tidy
schema). Must not import the report layer. Modules:
  methods   the interval methods (log-scale t; paired by rep or Welch), chosen by measured coverage
  coverage  the simulation that measures their coverage (coverage_table.csv is its committed output)
  multiple  Holm's adjustment and rank ranges
  cells     MeanCI / RatioCI, the per-cell objects the report code formats
"""
from .cells import (MINUS, MIN_RUNS, NEEDS_RUNS, MeanCI, RatioCI, format_delta, mean_ci, ratio_ci,
                    ratio_ci_by_rep, signed_mean_ci, tail_ratio, tail_ratio_ci)
from .methods import DEFAULT_CONFIDENCE, Estimate, Ratio, center, ratio_by_rep, ratio_paired, ratio_welch

__all__ = ["MINUS", "MIN_RUNS", "NEEDS_RUNS", "MeanCI", "RatioCI", "format_delta", "mean_ci", "ratio_ci",
           "ratio_ci_by_rep", "signed_mean_ci", "tail_ratio", "tail_ratio_ci", "DEFAULT_CONFIDENCE", "Estimate", "Ratio",
           "center", "ratio_by_rep", "ratio_paired", "ratio_welch"]
