"""httplab: analysis side of the HTTP server benchmark lab (raw runs -> tidy frames, statistics,
seed-style tables, plots, reports). See DESIGN.md §3–§5."""
from .errors import NoRunError, RawConsistencyError, RawFormatError
from .rawrun import build_frames, load_run, load_verify, read_meta, write_tidy
from .runs_select import default_run_dir, list_runs
from .stats import format_delta, mean_ci, ratio_ci

__all__ = ["NoRunError", "RawConsistencyError", "RawFormatError", "build_frames", "load_run",
           "load_verify", "read_meta", "write_tidy", "default_run_dir", "list_runs", "format_delta",
           "mean_ci", "ratio_ci"]
__version__ = "0.1.0"
