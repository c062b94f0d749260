"""Hallucination scores from Vectara's HHEM-2.1-Open, a local model, with no network and no remote code.

Users download the model folder (vectara/hallucination_evaluation_model) and its foundation, flan-t5-base (config
and tokenizer), themselves, then register them: `rageval models add hhem HHEM_DIR --foundation FLAN_T5_DIR`. The
folders are recorded in the user's settings (models.json in the data folder), never in a project.

HHEM ships custom code (`trust_remote_code`), which we never run. Its predict path is re-implemented here: the
premise/hypothesis prompt from its config, a T5 token-classification head built from the foundation's config with
the checkpoint's `t5.*` weights, and the softmax of the first token's logits — class 1 = consistent. Score 0-1;
under 0.5 = hallucinated.

Two modes:
- `whole` (open-rag-eval's way): the whole answer against the retrieved passages joined (cut to MAX_CHARS
  characters, as open-rag-eval does — the judgment says when passages were cut);
- `claims`: each sentence of the answer against each passage, the best passage per sentence; the row's score is
  the mean over sentences, and the weakest sentence is named.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.paths import user_config_dir
from rageval_desktop.core.base.scoring.citations import marker_free, statements

MISSING = ("the HHEM model needs the packages torch and transformers, which this installation does not have "
           "(install them with: pip install torch==2.13.0 transformers, or the app's local extra: pip install "
           "'rageval-desktop[local]'; torch's CPU build is enough)")

PROMPT = "<pad> Determine if the hypothesis is true given the premise?\n\nPremise: {text1}\n\nHypothesis: {text2}"
MODES = ("whole", "claims")
MAX_CHARS = 8192          # open-rag-eval cuts the joined passages here
# HHEM's own predict feeds the whole prompt, untruncated (T5's relative positions take any length; HHEM-2.1-Open is
# made for 4k): up to this many tokens we do the same, so scores equal its own; past it (a long answer), the premise is
# cut first and the hypothesis kept whole. At 2,048, inputs between the two differed from HHEM's by up to 0.028.
MAX_TOKENS = 4096
BATCH = 8
THRESHOLD = 0.5
HOW_TO_ADD = ("no HHEM model is registered. Download Vectara's model folder (huggingface.co/vectara/"
              "hallucination_evaluation_model) and google/flan-t5-base (its config and tokenizer files) on a machine "
              "with a network, copy them here, then run: rageval models add hhem HHEM_DIR --foundation FLAN_T5_DIR")
_LOCK = threading.Lock()
_LOADED: dict[tuple[str, str], HHEM] = {}


class ModelMissing(RagevalError):
    pass


def registry_path() -> Path:
    return user_config_dir() / "models.json"


def registered() -> dict[str, dict[str, str]]:
    path = registry_path()
    if not path.exists():
        return {}
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RagevalError(f"{path}: the model registry cannot be read ({exc}); fix or delete it") from None
    return found if isinstance(found, dict) else {}


def _weights(folder: Path) -> Path | None:
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (folder / name).is_file():
            return folder / name
    return None


def check_folders(model_dir: Path, foundation_dir: Path | None) -> tuple[Path, Path]:
    """(model folder, foundation folder), or a message naming what is missing."""
    model_dir = Path(model_dir).expanduser().resolve()
    if not model_dir.is_dir():
        raise RagevalError(f"{model_dir}: no such folder")
    if not (model_dir / "config.json").is_file() or _weights(model_dir) is None:
        raise RagevalError(f"{model_dir}: not an HHEM model folder (it needs config.json and model.safetensors)")
    if foundation_dir is None:   # beside it or inside it, named as its config names it (google/flan-t5-base)
        try:
            name = json.loads((model_dir / "config.json").read_text(encoding="utf-8")).get("foundation") or ""
        except ValueError:
            raise RagevalError(f"{model_dir / 'config.json'}: not valid JSON") from None
        short = name.rsplit("/", 1)[-1] or "flan-t5-base"
        for candidate in (model_dir / short, model_dir.parent / short, model_dir / "foundation"):
            if (candidate / "config.json").is_file():
                foundation_dir = candidate
                break
        else:
            raise RagevalError(f"the foundation model ({name or 'flan-t5-base'}) was not found beside {model_dir}; "
                               "give its folder too", cli_hint="add --foundation FLAN_T5_DIR")
    foundation_dir = Path(foundation_dir).expanduser().resolve()
    if not (foundation_dir / "config.json").is_file():
        raise RagevalError(f"{foundation_dir}: not a model folder (no config.json)")
    if not any((foundation_dir / n).is_file() for n in ("tokenizer.json", "spiece.model", "vocab.txt")):
        raise RagevalError(f"{foundation_dir}: no tokenizer files (tokenizer.json or spiece.model)")
    return model_dir, foundation_dir


def register(model_dir: str | Path, foundation_dir: str | Path | None = None) -> dict[str, str]:
    """Record the folders in the user's settings (checked first)."""
    model, foundation = check_folders(Path(model_dir), Path(foundation_dir) if foundation_dir else None)
    found = registered()
    found["hhem"] = {"model": str(model), "foundation": str(foundation)}
    _save(found)
    return found["hhem"]


def unregister() -> bool:
    found = registered()
    if "hhem" not in found:
        return False
    del found["hhem"]
    _save(found)
    return True


def _save(found: dict[str, dict[str, str]]) -> None:
    """Write the registry whole or not at all (a temporary file, then a rename)."""
    path = registry_path()
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(found, indent=2), encoding="utf-8")
    os.replace(tmp, path)


class HHEM:
    """The loaded model: `predict(pairs)` gives P(consistent) for each (premise, hypothesis)."""

    def __init__(self, model_dir: Path, foundation_dir: Path) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        try:
            import torch
            from transformers import AutoTokenizer, T5Config, T5ForTokenClassification
        except ImportError:
            raise RagevalError(MISSING) from None

        self.torch = torch
        meta = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        self.prompt = meta.get("prompt") or PROMPT
        config = T5Config.from_pretrained(str(foundation_dir), local_files_only=True, num_labels=2)
        model = T5ForTokenClassification(config)
        weights = _weights(model_dir)
        assert weights is not None   # check_folders found them
        state = _load_state(weights)
        state = {k[3:]: v for k, v in state.items() if k.startswith("t5.")} or state
        result = model.load_state_dict(state, strict=False)
        missing = [k for k in result.missing_keys if not k.endswith("embed_tokens.weight")]
        if missing or result.unexpected_keys:
            raise RagevalError(f"{model_dir}: the weights do not fit a T5 token classifier built from "
                               f"{foundation_dir} (missing {missing[:3]}, unexpected {result.unexpected_keys[:3]})")
        if any(k.endswith("embed_tokens.weight") for k in result.missing_keys):
            model.transformer.encoder.embed_tokens = model.transformer.shared
        model.eval()
        self.model = model
        self.tokenizer = AutoTokenizer.from_pretrained(str(foundation_dir), local_files_only=True)

    def fit(self, premise: str, hypothesis: str) -> tuple[str, bool]:
        """The premise as HHEM gets it: whole when the prompt fits MAX_TOKENS (as HHEM's own predict, which never
        truncates), else cut by tokens so that it fits with the hypothesis whole (the tokenizer's truncation cuts
        from the end: the hypothesis went first); and whether it was cut. A decoded cut can tokenize longer in
        context, so the prompt is measured again until it fits."""
        tokens = self.tokenizer

        def size(text: str) -> int:
            return len(tokens(self.prompt.format(text1=text, text2=hypothesis))["input_ids"])

        if size(premise) <= MAX_TOKENS:
            return premise, False
        ids = tokens(premise, add_special_tokens=False)["input_ids"]
        room = MAX_TOKENS - size("")
        while room > 0:
            cut = str(tokens.decode(ids[:room], skip_special_tokens=True))
            over = size(cut) - MAX_TOKENS
            if over <= 0:
                return cut, True
            room -= over
        return "", True

    def predict(self, pairs: list[tuple[str, str]]) -> list[float]:
        torch = self.torch
        out: list[float] = []
        for start in range(0, len(pairs), BATCH):
            chunk = [(self.fit(p, h)[0], h) for p, h in pairs[start:start + BATCH]]
            texts = [self.prompt.format(text1=p, text2=h) for p, h in chunk]
            # (truncation only binds when the hypothesis alone is longer than MAX_TOKENS: the premise is cut already)
            inputs = self.tokenizer(texts, return_tensors="pt", padding=True, truncation=True, max_length=MAX_TOKENS)
            inputs.pop("token_type_ids", None)
            with torch.no_grad():
                logits = self.model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"]).logits
            probs = torch.softmax(logits[:, 0, :], dim=-1)[:, 1]
            out.extend(float(p) for p in probs)
        return out


def _load_state(path: Path) -> dict[str, Any]:
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        return load_file(str(path))
    import torch

    weights: dict[str, Any] = torch.load(str(path), map_location="cpu", weights_only=True)
    return weights


def load() -> HHEM:
    """The registered model, loaded once per process."""
    entry = registered().get("hhem")
    if not entry:
        raise ModelMissing(HOW_TO_ADD)
    model_dir, foundation_dir = check_folders(Path(entry["model"]), Path(entry["foundation"]))
    key = (str(model_dir), str(foundation_dir))
    with _LOCK:
        if key not in _LOADED:
            _LOADED[key] = HHEM(model_dir, foundation_dir)
        return _LOADED[key]


def score_row(model: HHEM, answer: str, passages: list[str], mode: str) -> tuple[float, dict[str, Any], str]:
    """(score 0-1, detail, rationale) of one answer against its passages."""
    if mode == "whole":
        joined = " ".join(passages)
        cut = len(joined) > MAX_CHARS
        answer = marker_free(answer)           # as open-rag-eval does: "[2]" is not a claim the passages support
        score = model.predict([(joined[:MAX_CHARS], answer)])[0]
        note = f"HHEM {score:.3f} (whole answer against {len(passages)} passages"
        note += f"; passages cut to {MAX_CHARS} of {len(joined)} characters)" if cut else ")"
        return score, {"mode": mode, "truncated": cut, "chars": len(joined)}, note

    claims = [s.text for s in statements(answer)] or [answer]
    pairs = [(p[:MAX_CHARS], c) for c in claims for p in passages]
    scores = model.predict(pairs)
    per_claim: list[dict[str, Any]] = []
    for i, claim in enumerate(claims):
        row = scores[i * len(passages):(i + 1) * len(passages)]
        best = max(range(len(row)), key=row.__getitem__)
        per_claim.append({"text": claim, "score": row[best], "passage": best + 1})
    score = sum(c["score"] for c in per_claim) / len(per_claim)
    weakest = min(per_claim, key=lambda c: c["score"])
    below = sum(c["score"] < THRESHOLD for c in per_claim)
    note = (f"HHEM {score:.3f} (mean over {len(claims)} sentences, each against its best passage; {below} under "
            f"{THRESHOLD}; weakest {weakest['score']:.3f}: {weakest['text'][:80]})")
    return score, {"mode": mode, "claims": per_claim}, note
