"""Source text of small agents that several tests write to disk and load."""

WITH_OPTIONS = '''
from harness.client.agent import TextAgent, ReadAction

class WithOptions(TextAgent):
    @staticmethod
    def add_args(parser):
        parser.add_argument("--beam-size", type=int, default=4, help="beams of the decoder")

    def policy(self, states):
        return ReadAction()
'''
