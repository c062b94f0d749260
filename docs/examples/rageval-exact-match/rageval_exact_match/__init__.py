"""A judge kind of your own: exact match (SQuAD's EM) — the answer, normalised, contains the reference."""

import re
import time

from rageval_desktop.core.judges.kinds import LocalKind, Scored


def normalise(text):
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


class ExactMatch(LocalKind):
    name = "exact_match"
    label = "the answer contains the reference, after normalising case and punctuation"
    reads_passages = False          # answer and reference are enough: the job loads no passages

    def can_judge(self, spec):
        return None if spec.needs_reference and spec.level == "row" else f"{spec.name} has no reference to match"

    def model_id(self, judge):      # part of each verdict's idempotency key: change it when the method changes
        return f"exact_match:{judge.params.get('strict', False)}"

    def score(self, project, judge, targets):
        low, high = judge.spec.low, judge.spec.high
        for target in targets:
            began = time.perf_counter()
            answer, reference = normalise(target.fields["answer"]), normalise(target.fields["reference"])
            hit = answer == reference if judge.params.get("strict") else reference in answer
            yield Scored(high if hit else low, "match" if hit else "no match", None,
                         latency_ms=(time.perf_counter() - began) * 1000)


KIND = ExactMatch()
