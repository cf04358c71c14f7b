"""The fetch step: a submission's `fetch:` command, run once per image and command before any data is seen.

It runs in a container of the submission's image on an internal network whose only other member is the
harness's allow-listing proxy (`proxy.py`, the one way out, to `fetch.allow` hosts), with the organizer's
`secrets:` in its environment and nothing else of the task; it writes a Docker volume (`cache.py`) that every
later container of the submission (prepare, run) gets read-only at `FETCH_ROOT`, named by `FETCH_ENV`. The
volume is a cache keyed by image digest and command; `step.py` runs the step, `secrets.py` keeps the tokens
out of everything the harness writes, `ship.py` makes the volume an image for swarm nodes that do not have it
(filled there by `run.swarm.fetch_fill`).
"""

FETCH_ROOT = "/fetched"
FETCH_ENV = "HARNESS_FETCH_DIR"
