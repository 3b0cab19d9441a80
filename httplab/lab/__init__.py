"""The lab's declarations and run-time side: the suite and server registries (suites, manifest), the
servers' display names and colours, the run schedule, the host probe, hosts.json, paths, and the
idle-connection client. It sits above parse (whose exception types and JSON readers it uses) and
below tidy, stats and report, which may all read it."""
