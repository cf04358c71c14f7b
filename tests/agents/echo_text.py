"""Wait-1 echo of the source words (a text agent for tests that need a finished run quickly)."""
from harness.client.agent import ReadAction, TextAgent, WriteAction


class Echo(TextAgent):
    def policy(self, states):
        if not states.source_finished and len(states.source) <= len(states.target):
            return ReadAction()
        if len(states.target) < len(states.source):
            return WriteAction(states.source[len(states.target)])
        return WriteAction("", finished=True)
