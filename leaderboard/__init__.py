"""Static HTML leaderboard: results layout (docs/formats.md) → an offline site of tables, plots and decoding views."""
