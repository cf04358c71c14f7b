"""harness.orchestrator"""
