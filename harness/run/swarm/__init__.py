"""The swarm backend: a run as services on a per-run overlay network of a Docker swarm (`--backend swarm`).

`backend` runs one run; `services` names and starts its services; `gpus` places participants on GPU workers;
`registry` pushes images to the organizer's registry; `settle` waits for the engine to forget what a run left;
`spares` keeps warm networks for the next runs.
"""
