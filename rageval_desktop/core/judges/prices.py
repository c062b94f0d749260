"""The editable price table: USD per million tokens by model (project first, bundled list prices next).

A model served locally (vLLM, Ollama, llama.cpp) costs nothing: set its price to 0 0.
"""

from __future__ import annotations

import json

from rageval_desktop.core.paths import resources_dir
from rageval_desktop.core.store.project import Project, utcnow


def bundled() -> dict[str, tuple[float, float]]:
    data = json.loads((resources_dir() / "prices.json").read_text())
    return {k: (float(v[0]), float(v[1])) for k, v in data.items() if not k.startswith("_")}


def price(project: Project, model: str | None) -> tuple[float, float] | None:
    if not model:
        return None
    row = project.reader().execute("SELECT input_per_mtok, output_per_mtok FROM prices WHERE model = ?",
                                   (model,)).fetchone()
    return (row[0], row[1]) if row else bundled().get(model)


def set_price(project: Project, model: str, input_per_mtok: float, output_per_mtok: float) -> None:
    with project.write("set price", changed=("prices",)) as conn:
        conn.execute("INSERT INTO prices (model, input_per_mtok, output_per_mtok, updated_at) VALUES (?, ?, ?, ?) "
                     "ON CONFLICT (model) DO UPDATE SET input_per_mtok = excluded.input_per_mtok, "
                     "output_per_mtok = excluded.output_per_mtok, updated_at = excluded.updated_at",
                     (model, input_per_mtok, output_per_mtok, utcnow()))
        project.audit(conn, "set price", "model", model, input=input_per_mtok, output=output_per_mtok)


def all_prices(project: Project) -> dict[str, tuple[float, float]]:
    table = bundled()
    for model, i, o in project.reader().execute("SELECT model, input_per_mtok, output_per_mtok FROM prices"):
        table[model] = (i, o)
    return table


def cost(p: tuple[float, float] | None, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
    if p is None or prompt_tokens is None:
        return None
    return (prompt_tokens * p[0] + (completion_tokens or 0) * p[1]) / 1e6
