"""Layer 1, parse: the load tools' and probes' raw outputs in, typed records out (wrk's text and
done() JSON, h2load's text and --log-file, the TLS probe, /proc snapshots, GNU time, host state).
Each parser names the file and line of what it cannot read (errors.RawFormatError).

May import: the standard library and numpy; within httplab, only parse/ itself.
"""
