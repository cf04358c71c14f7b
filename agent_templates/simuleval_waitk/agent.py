"""An unmodified SimulEval 1.1.4 agent: wait-k with Apertium en→es as the translator.

Written against SimulEval's own API only (`TextToTextAgent`, its `ReadAction`/`WriteAction`, `@entrypoint`),
so the same file runs under `simuleval --agent agent.py ...` and under the harness, which drives it through
harness/client/simuleval_adapter.py. SimulEval pushes one source word before every policy call; the policy
writes the next word of the translation of the prefix once the source is `--waitk` words ahead.
"""


from simuleval.agents import TextToTextAgent
from simuleval.agents.actions import ReadAction, WriteAction
from simuleval.utils import entrypoint

from harness.baselines.apertium import Apertium


@entrypoint
class SimulEvalWaitkApertium(TextToTextAgent):
    """Wait-k over Apertium prefix translations, as a SimulEval 1.1.4 TextToTextAgent."""

    def __init__(self, args):
        super().__init__(args)
        self.waitk = args.waitk
        self.mt = Apertium(args.apertium_pair)

    @staticmethod
    def add_args(parser):
        parser.add_argument("--waitk", type=int, default=3, help="lag in source words (default 3)")
        parser.add_argument("--apertium-pair", default="eng-spa", help="Apertium direction (default eng-spa)")

    def policy(self, states=None):
        if states is None:
            states = self.states
        translation = None
        if states.source_finished or len(states.source) - len(states.target) >= self.waitk:
            translation = self.mt.translate(" ".join(states.source)).split()
        if states.source_finished:
            return WriteAction(" ".join(translation[len(states.target):]), finished=True)
        if translation is not None and len(translation) > len(states.target):
            return WriteAction(translation[len(states.target)], finished=False)
        return ReadAction()
