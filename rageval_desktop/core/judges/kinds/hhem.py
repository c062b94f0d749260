"""The HHEM kind: Vectara's HHEM-2.1-Open, a local model registered from a folder, scores whether the answer is
supported by the retrieved passages (1 consistent, under 0.5 hallucinated)."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.errors import JudgeConfigError, RagevalError
from rageval_desktop.core.base.vocab import MetricSpec
from rageval_desktop.core.judges import hhem
from rageval_desktop.core.judges.kinds import KindUnavailable, LocalKind, Scored, Settings, Target, check_choices

if TYPE_CHECKING:
    from rageval_desktop.core.judges.judge import Judge
    from rageval_desktop.core.store.project import Project


class HHEMKind(LocalKind):
    name = "hhem"
    label = "HHEM-2.1-Open, a local hallucination model (registered with: rageval models add hhem PATH)"
    choices = {"mode": {"whole": "whole answer against the joined passages (open-rag-eval)",
                        "claims": "each sentence against each passage, best passage per sentence"}}
    needs = "a registered HHEM model folder (rageval models add hhem PATH), torch and transformers"

    def can_judge(self, spec: MetricSpec) -> str | None:
        return None if "hhem" in spec.kinds else f"{spec.name} is not what HHEM scores (it scores hallucination)"

    def check(self, project: Project, settings: Settings) -> Settings:
        if settings.api_key_ref or settings.base_url or settings.model:
            raise JudgeConfigError("an HHEM judge runs the local model registered with `rageval models add hhem "
                                   "PATH`, so it takes no model, endpoint or key",
                                   cli_hint="drop --model, --base-url and --api-key-env",
                                   gui_hint="clear Model, the endpoint and the key")
        return check_choices(self, settings)

    def model_id(self, judge: Judge) -> str:
        return f"hhem:{judge.params.get('model') or 'registered'}"

    def outside_parts(self, judge: Judge) -> dict[str, str]:
        """The registered model folders (paths and what was registered): another model is another judge."""
        found = hhem.registered()
        return {"hhem model": hashlib.sha256(json.dumps(found, sort_keys=True).encode()).hexdigest()[:16]}

    def plan(self, judge: Judge, row: dict[str, Any]) -> dict[str, Any] | None:
        return {"passages": [(r, t) for r, t, _ in row["passages"] if t.strip()]}

    def score(self, project: Project, judge: Judge, targets: Sequence[Target]) -> Iterator[Scored]:
        try:
            model = hhem.load()
        except RagevalError as exc:
            raise KindUnavailable(str(exc)) from None
        mode = judge.params.get("mode", "whole")
        for target in targets:
            began = time.perf_counter()
            score, detail, note = hhem.score_row(model, target.fields["answer"],
                                                 [t for _, t in target.meta["passages"]], mode)
            yield Scored(score, "consistent" if score >= hhem.THRESHOLD else "hallucinated", note, detail,
                         (time.perf_counter() - began) * 1000)


KIND = HHEMKind()
