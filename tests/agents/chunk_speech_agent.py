"""A cheap deterministic speech agent for the SimulStream tests: it acts once per `--chunk-ms` of audio.

Every full chunk of new audio it writes one word picked from the chunk's loudness; every third chunk it revises
the word before (re-translation); at the end of the source it writes `fin` and finishes. Its decisions depend only
on the audio at chunk boundaries, so it writes the same words at the same source positions whether the harness
serves it segments of a divisor of `--chunk-ms` (native interface) or SimulStream hands it whole chunks.
"""

from __future__ import annotations

import math

from harness.client.agent import Action, AgentStates, ReadAction, ReviseAction, SpeechAgent, WriteAction

WORDS = ("la", "de", "y", "el", "a", "en", "los", "que", "derecho", "toda", "persona", "libertad")


class ChunkWords(SpeechAgent):
    @staticmethod
    def add_args(parser) -> None:  # noqa: ANN001
        parser.add_argument("--chunk-ms", type=int, default=1000)

    def policy(self, states: AgentStates) -> Action:
        step = int((states.source_sample_rate or 16000) * self.args.chunk_ms / 1000)
        n = states.extra.get("chunks", 0)
        if len(states.source) >= (n + 1) * step:
            chunk = states.source[n * step:(n + 1) * step]
            n = states.extra["chunks"] = n + 1
            word = WORDS[int(1000 * math.sqrt(sum(x * x for x in chunk) / len(chunk))) % len(WORDS)]
            if n % 3 == 0 and states.target:
                return ReviseAction(" ".join([*states.target[:-1], f"{states.target[-1]}s", word]))
            return WriteAction(word)
        if states.source_finished:
            return WriteAction("fin", finished=True)
        return ReadAction()
