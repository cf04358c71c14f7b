"""harness.data"""
