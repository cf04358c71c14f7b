"""The campaign portal (`harness portal`): teams submit to the organizer's machines and follow their runs.

A top stage above `batch/`: it keeps the campaign's state (teams, tokens, submissions, jobs, the audit log) in one
database behind `store.Store`, turns checked uploads into submission folders, and evaluates them through the same
`harness evaluate` into `STATE/results`, the results folder every other command reads. Nothing below imports it.
"""
