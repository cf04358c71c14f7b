"""A long-form test agent that knows the talk: it writes each reference sentence LAG ms after the sentence ends in
the audio, and drops the audio it has consumed (memory stays flat over a long talk)."""
import yaml

from harness.client.agent import ReadAction, SpeechAgent, WriteAction


class Oracle(SpeechAgent):
    def __init__(self, args=None):
        super().__init__(args)
        seg = yaml.safe_load(open(self.args.segmentation, encoding="utf-8"))
        refs = open(self.args.references, encoding="utf-8").read().splitlines()
        lag = self.args.lag_ms
        self.plan = [((s["offset"] + s["duration"]) * 1000 + lag, r) for s, r in zip(seg, refs, strict=True)]

    @staticmethod
    def add_args(parser):
        parser.add_argument("--segmentation", required=True)
        parser.add_argument("--references", required=True)
        parser.add_argument("--lag-ms", type=float, default=500.0)

    def policy(self, states):
        ex = states.extra
        rate = states.source_sample_rate or 16000
        ex["seen"] = ex.get("seen", 0) + len(states.source)
        states.source.clear()  # consumed: a long-form agent keeps only what it still needs
        now = ex["seen"] * 1000.0 / rate
        k = ex.get("next", 0)
        due = []
        while k < len(self.plan) and (self.plan[k][0] <= now or states.source_finished):
            due.append(self.plan[k][1])
            k += 1
        ex["next"] = k
        if due:
            return WriteAction(" ".join(due), finished=states.source_finished and k == len(self.plan))
        if states.source_finished:
            return WriteAction("", finished=True)
        return ReadAction()
