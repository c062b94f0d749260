"""What the embedding and lexical kinds share: the answer compared with the reference, the similarity mapped onto
the metric's scale."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from rageval_desktop.core.base.vocab import MetricSpec
from rageval_desktop.core.judges import embedded
from rageval_desktop.core.judges.kinds import LocalKind, Scored, Target

if TYPE_CHECKING:
    from rageval_desktop.core.judges.judge import Judge
    from rageval_desktop.core.store.project import Project


class SimilarityKind(LocalKind):
    """A kind that scores how alike the answer and the reference are (0..1), then maps it onto the scale."""
    reads_passages = False

    def can_judge(self, spec: MetricSpec) -> str | None:
        if spec.level != "row" or not spec.needs_reference:
            return (f"embedded judges compare the answer with the reference; they cannot score {spec.name} (use "
                    "correctness or correctness_binary)")
        return None

    def similarities(self, project: Project, judge: Judge, pairs: list[tuple[str, str]]) -> list[float]:
        raise NotImplementedError

    def score(self, project: Project, judge: Judge, targets: Sequence[Target]) -> Iterator[Scored]:
        pairs = [(t.fields["answer"], t.fields["reference"]) for t in targets]
        began = time.perf_counter()
        sims = self.similarities(project, judge, pairs)
        each_ms = (time.perf_counter() - began) * 1000 / max(1, len(pairs))
        low, high = judge.spec.low, judge.spec.high
        for sim in sims:
            score = embedded.to_scale(sim, low, high, binary_threshold=judge.params.get("threshold", 0.5))
            yield Scored(score, None, f"{judge.model_id} similarity {sim:.3f}", latency_ms=each_ms)
