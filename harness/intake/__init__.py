"""Intake: `submission.yaml` schema and the static checks of a submission folder (nothing built or run)."""
