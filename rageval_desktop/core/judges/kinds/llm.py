"""The LLM kind: a rubric sent to a model at an OpenAI-compatible endpoint. Its calls are made by the LLM engine of
core/jobs (the request cache, the limiter, the Batch API, and the nugget and citation chains that several calls per
row need)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from rageval_desktop.core.base.errors import JudgeConfigError
from rageval_desktop.core.base.vocab import METRICS, MetricSpec
from rageval_desktop.core.judges import rubrics
from rageval_desktop.core.judges.kinds import Scored, Settings, Target
from rageval_desktop.core.judges.registry import get_judge
from rageval_desktop.core.judges.secrets import check_base_url, check_key_ref, check_model_name

if TYPE_CHECKING:
    from rageval_desktop.core.judges.judge import Judge
    from rageval_desktop.core.store.project import Project


class LLMKind:
    name = "llm"
    label = "an LLM at an OpenAI-compatible endpoint, with a rubric"
    calls_llm = True
    reads_passages = True
    takes_endpoint = True
    choices: dict[str, dict[str, str]] = {}
    needs = "an OpenAI-compatible endpoint and a model (a key by environment variable or keyring, if it needs one)"

    def can_judge(self, spec: MetricSpec) -> str | None:
        return None if "llm" in spec.kinds else f"{spec.name} is scored by a local model, not by an LLM rubric"

    def check(self, project: Project, settings: Settings) -> Settings:
        if not settings.model:
            raise JudgeConfigError("an LLM judge needs a model name", cli_hint="give it with --model",
                                   gui_hint="fill in Model")
        metric = settings.metric
        settings.api_key_ref = check_key_ref(settings.api_key_ref)
        check_model_name(settings.model, settings.api_key_ref)
        settings.base_url = check_base_url(settings.base_url)
        spec = METRICS[metric]
        sure = settings.params.get("confidence")
        if sure not in (None, "logprobs"):
            raise JudgeConfigError(f"an LLM judge's confidence comes from 'logprobs' (the endpoint's token "
                                   f"log-probabilities), not '{sure}'; without it, from repeated asks or the score")
        if sure and (spec.level != "row" or spec.items):
            raise JudgeConfigError(f"{metric} is judged in several calls per row: a confidence from log-"
                                   "probabilities is for judges of one verdict per row")
        base = rubrics.library().get(settings.rubric or spec.default_rubric or "")
        if base is None:
            raise JudgeConfigError(f"no rubric named '{settings.rubric}' (bundled: {', '.join(rubrics.library())})")
        if base.metric != metric:
            raise JudgeConfigError(f"rubric '{base.name}' scores {base.metric}, not {metric}")
        if spec.items == "nugget":
            if base.output_format != "assignment_labels":
                raise JudgeConfigError(f"rubric '{base.name}' is a step of the nugget chain, not its assignment "
                                       f"rubric (use nugget_assignment)")
            settings.helpers = {role: rubrics.library()[f"nugget_{role}"] for role in ("creation", "importance")}
            grader = settings.params.get("grader")
            if grader and get_judge(project, grader).metric != "passage_relevance":
                raise JudgeConfigError(f"the grader '{grader}' must be a passage_relevance (UMBRELA) judge")
        settings.base_rubric = base
        return settings

    def model_id(self, judge: Judge) -> str:
        return f"llm:{judge.model}"   # the endpoint may move (a new vLLM host) without changing the judge

    def plan(self, judge: Judge, row: dict[str, Any]) -> dict[str, Any] | None:
        return None                   # the engine plans the chains (nuggets, citations) itself

    def score(self, project: Project, judge: Judge, targets: Sequence[Target]) -> Iterator[Scored]:
        raise NotImplementedError("LLM judges are judged by the job's LLM engine")

    def outside_parts(self, judge: Judge) -> dict[str, str]:
        return {}


KIND = LLMKind()
