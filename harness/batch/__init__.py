"""Batch evaluation: every submission x dataset scheduled, resumed, summarized, handed to the results stage."""
