"""harness.metrics: latency (SimulEval semantics), quality (sacrebleu), stability (NE) and significance."""
