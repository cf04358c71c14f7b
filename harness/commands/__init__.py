"""harness.commands"""
