"""The source of a small speech agent for tests that need words written at known moments of the audio."""

from __future__ import annotations


def every_two_reads(words: list[str], compute_s: float = 0.0) -> str:
    """An agent file's text: it writes `words[i]` after its 2(i+1)-th READ (640 ms of audio per word at 320 ms
    segments), the rest when the source ends, spending `compute_s` seconds on each word it writes."""
    return f'''
import time
from harness.client.agent import ReadAction, SpeechAgent, WriteAction

WORDS = {words!r}


class EveryTwoReads(SpeechAgent):
    """Writes a word every second READ, the rest when the source ends; computes {compute_s} s a word."""

    def policy(self, states):
        ex = states.extra
        ex["reads"] = ex.get("reads", 0)
        done = len(states.target)
        if done < len(WORDS) and (states.source_finished or ex["reads"] >= 2 * (done + 1)):
            time.sleep({compute_s!r})
            return WriteAction(WORDS[done])
        if states.source_finished:
            return WriteAction("", finished=True)
        ex["reads"] += 1
        return ReadAction()
'''
