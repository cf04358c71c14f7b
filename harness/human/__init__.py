"""Human judgments beside the automatic scores (SiMuST-C §3): blind rating sheets out, 1–5 ratings in.

`harness human sample` writes a sheet with the systems hidden and the items shuffled, and keeps the key in
RESULTS/human/; `harness human import` validates ratings row by row, adds them to RESULTS/human/ratings.jsonl and
writes RESULTS/human/summary.json: per-system means with bootstrap intervals, Krippendorff's alpha, and the
system-level correlation of every automatic metric with the human score. Scores that exist are never rewritten.
"""
