"""One run = one submission x one dataset: `execute_run(spec)` with a Docker or a local backend."""
