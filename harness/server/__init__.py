"""harness.server"""
