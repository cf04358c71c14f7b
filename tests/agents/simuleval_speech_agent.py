"""A SimulEval 1.1.4 speech agent for the driver tests: one word per second of new audio; once the source is
finished it writes two more words, one per step, then finishes. Its writes are `TextSegment`s with `tgt_lang`
(SimulEval 1.1.4's service cannot serialize the default one), added to the states by the agent itself."""

from simuleval.agents import SpeechToTextAgent
from simuleval.agents.actions import ReadAction, WriteAction
from simuleval.data.segments import TextSegment
from simuleval.utils import entrypoint


@entrypoint
class WordPerSecond(SpeechToTextAgent):
    def _write(self, states, text, finished):
        segment = TextSegment(content=text, finished=finished, tgt_lang="es")
        states.update_target(segment)
        return WriteAction(segment, finished=finished)

    def policy(self, states=None):
        states = states or self.states
        written = len(states.target)
        seconds = int(len(states.source) / 16000)
        if states.source_finished:
            if written < seconds + 2:
                return self._write(states, f"w{written}", False)
            return self._write(states, "", True)
        if seconds > written:
            return self._write(states, f"w{written}", False)
        return ReadAction()
