"""The editable price table: USD per million tokens by model (project first, bundled list prices next).

A model served locally (vLLM, Ollama, llama.cpp) costs nothing: set its price to 0 0.

Replies that came through a provider's Batch API are priced at the model's batch price: the project's batch column
where set, else `BATCH_SHARE` of the live price (the providers' usual discount).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from rageval_desktop.core.base.clock import utcnow
from rageval_desktop.core.base.paths import resources_dir
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project

if TYPE_CHECKING:
    from rageval_desktop.core.judges.llm import Reply


def bundled() -> dict[str, tuple[float, float]]:
    data = json.loads((resources_dir() / "prices.json").read_text())
    return {k: (float(v[0]), float(v[1])) for k, v in data.items() if not k.startswith("_")}


BATCH_SHARE = 0.5


def price(project: Project, model: str | None) -> tuple[float, float] | None:
    if not model:
        return None
    row = project.reader().execute("SELECT input_per_mtok, output_per_mtok FROM prices WHERE model = ?",
                                   (model,)).fetchone()
    return (row[0], row[1]) if row else bundled().get(model)


def batch_price(project: Project, model: str | None) -> tuple[float, float] | None:
    """The price of a reply that came through the Batch API."""
    if not model:
        return None
    row = project.reader().execute("SELECT batch_input_per_mtok, batch_output_per_mtok FROM prices WHERE model = ?",
                                   (model,)).fetchone()
    live = price(project, model)
    if live is None:
        return None
    if row is None or (row[0] is None and row[1] is None):
        return (live[0] * BATCH_SHARE, live[1] * BATCH_SHARE)
    return (live[0] * BATCH_SHARE if row[0] is None else row[0], live[1] * BATCH_SHARE if row[1] is None else row[1])


def set_price(project: Project, model: str, input_per_mtok: float, output_per_mtok: float,
              batch_input: float | None = None, batch_output: float | None = None) -> None:
    """Live prices (and, optionally, batch prices; left out: half the live price)."""
    with project.write("set price", changed=(Area.PRICES,)) as conn:
        conn.execute("INSERT INTO prices (model, input_per_mtok, output_per_mtok, batch_input_per_mtok, "
                     "batch_output_per_mtok, updated_at) VALUES (?, ?, ?, ?, ?, ?) "
                     "ON CONFLICT (model) DO UPDATE SET input_per_mtok = excluded.input_per_mtok, "
                     "output_per_mtok = excluded.output_per_mtok, "
                     "batch_input_per_mtok = excluded.batch_input_per_mtok, "
                     "batch_output_per_mtok = excluded.batch_output_per_mtok, updated_at = excluded.updated_at",
                     (model, input_per_mtok, output_per_mtok, batch_input, batch_output, utcnow()))
        project.audit(conn, "set price", "model", model, input=input_per_mtok, output=output_per_mtok,
                      batch_input=batch_input, batch_output=batch_output)


def all_prices(project: Project) -> dict[str, dict[str, float]]:
    """Every priced model: live and batch prices per million tokens."""
    table = {m: {"input_per_mtok": i, "output_per_mtok": o, "batch_input_per_mtok": i * BATCH_SHARE,
                 "batch_output_per_mtok": o * BATCH_SHARE, "batch_set": False} for m, (i, o) in bundled().items()}
    for model, i, o, bi, bo in project.reader().execute(
            "SELECT model, input_per_mtok, output_per_mtok, batch_input_per_mtok, batch_output_per_mtok FROM prices"):
        table[model] = {"input_per_mtok": i, "output_per_mtok": o,
                        "batch_input_per_mtok": i * BATCH_SHARE if bi is None else bi,
                        "batch_output_per_mtok": o * BATCH_SHARE if bo is None else bo,
                        "batch_set": bi is not None or bo is not None}   # False: half the live price, whatever it is
    return table


def cost(p: tuple[float, float] | None, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
    if p is None or prompt_tokens is None:
        return None
    return (prompt_tokens * p[0] + (completion_tokens or 0) * p[1]) / 1e6


CHARS_PER_TOKEN = 4    # the plain rule for a text's tokens, where no tokenizer (or no server) says
MESSAGE_OVERHEAD = 4   # tokens a chat message costs beyond its text (role, separators)


def text_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def reply_cost(p: tuple[float, float] | None, reply: Reply, messages: list[dict]) -> tuple[float | None, bool]:
    """(cost, estimated) of one reply at price `p`: from the tokens its server stated; a server that states none (no
    `usage` in its reply) is not a free call — its cost is estimated from the request's and the reply's length, so a
    budget still binds and a total is not silently short."""
    if reply.prompt_tokens is not None or p is None:      # (no price: no cost, stated or estimated)
        return cost(p, reply.prompt_tokens, reply.completion_tokens), False
    prompt = sum(text_tokens(str(m.get("content") or "")) + MESSAGE_OVERHEAD for m in messages)
    return cost(p, prompt, text_tokens(reply.content or "")), True


def estimated_note(n: int) -> str | None:
    """What a user must know about a cost shown: how much of it is estimated (None: the servers stated all of it)."""
    if not n:
        return None
    return (f"{n:,} {'reply' if n == 1 else 'replies'} stated no token usage (the server sent none): "
            f"{'its' if n == 1 else 'their'} cost is estimated from the text's length ({CHARS_PER_TOKEN} characters "
            "a token)")
