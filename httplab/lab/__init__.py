"""The lab's declarations and run-time side: where things are (paths), what the suites declare
(suites). The lowest layer of the package: it imports nothing else of httplab, and every other
layer may read it."""
