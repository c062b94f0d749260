"""The lexical kind: token F1, token recall of the reference, or ROUGE-L between answer and reference."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rageval_desktop.core.judges import embedded
from rageval_desktop.core.judges.kinds.similarity import SimilarityKind

if TYPE_CHECKING:
    from rageval_desktop.core.judges.judge import Judge
    from rageval_desktop.core.store.project import Project


class LexicalKind(SimilarityKind):
    name = "lexical"
    label = "token overlap of the answer with the reference (F1, recall or ROUGE-L); no model, no calls"
    needs = ""
    choices = {"measure": {"f1": "token F1 (SQuAD)", "recall": "token recall of the reference",
                           "rougeL": "ROUGE-L (longest common subsequence)"}}

    def model_id(self, judge: Judge) -> str:
        return f"lexical:{judge.params.get('measure') or judge.params.get('model') or 'default'}"

    def similarities(self, project: Project, judge: Judge, pairs: list[tuple[str, str]]) -> list[float]:
        measure = embedded.LEXICAL[judge.params.get("measure") or "f1"]
        return [measure(a, r) for a, r in pairs]


KIND = LexicalKind()
