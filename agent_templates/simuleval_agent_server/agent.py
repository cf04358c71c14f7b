"""An IWSLT 2023–25 style submission: SimulEval 1.1.4's own agent service serving a wait-k agent.

The image's command is SimulEval's `simuleval --standalone --remote-port 2023 --agent agent.py ...`; the harness
drives it over HTTP (interface `simuleval-agent-server`). The agent is plain SimulEval 1.1.4 API: wait-k over
Apertium en→es prefix translations. Its writes are `TextSegment`s with `tgt_lang` set: SimulEval 1.1.4's service
answers 500 to a plain-string write (the default `tgt_lang` of its `TextSegment` is not JSON-serializable); and
SimulEval adds a written Segment to the states only when it made the segment itself, so the agent does it.
"""

from simuleval.agents import TextToTextAgent
from simuleval.agents.actions import ReadAction, WriteAction
from simuleval.data.segments import TextSegment
from simuleval.utils import entrypoint

from harness.baselines.apertium import Apertium


@entrypoint
class WaitkApertiumService(TextToTextAgent):
    """Wait-k over Apertium prefix translations (the same policy as agent_templates/simuleval_waitk)."""

    def __init__(self, args):
        super().__init__(args)
        self.waitk = args.waitk
        self.tgt_lang = args.tgt_lang
        self.mt = Apertium(args.apertium_pair)

    @staticmethod
    def add_args(parser):
        parser.add_argument("--waitk", type=int, default=3, help="lag in source words (default 3)")
        parser.add_argument("--apertium-pair", default="eng-spa", help="Apertium direction (default eng-spa)")
        parser.add_argument("--tgt-lang", default="es", help="target language of the written segments")

    def _write(self, states, text, finished):
        # a Segment written as is is not added to the states by SimulEval: the agent records its own target
        segment = TextSegment(content=text, finished=finished, tgt_lang=self.tgt_lang)
        states.update_target(segment)
        return WriteAction(segment, finished=finished)

    def policy(self, states=None):
        if states is None:
            states = self.states
        translation = None
        if states.source_finished or len(states.source) - len(states.target) >= self.waitk:
            translation = self.mt.translate(" ".join(states.source)).split()
        if states.source_finished:
            return self._write(states, " ".join(translation[len(states.target):]), True)
        if translation is not None and len(translation) > len(states.target):
            return self._write(states, translation[len(states.target)], False)
        return ReadAction()
