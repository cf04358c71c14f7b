"""harness.client"""
