"""A pull request's attempts at the gate: retries are spent, not free.

CI runs a pull request's gate on every push and every "re-run job", and an LLM answers differently each time. A gate
that fails a drop of its tolerance with 80% power passes it 20% of the time: re-run until green, a pull request that
truly regresses ships with probability 1 - 0.8^k after k tries (59% after 4). So a pull request's k-th attempt may
spend only a share of each error budget:

    share(k) = 6 / (pi^2 k^2)          (0.61, 0.15, 0.068, 0.038, ...; their sum over every k is 1)

Attempt k tests for a regression at alpha_k = alpha * share(k). A configured cell passes two ways — shown within its
tolerance, or no drop shown by a test powerful enough at the tolerance — and each way may pass a drop of exactly the
tolerance, so each gets half of the pass-side budget: the "within" bound at level (1 - power) * share(k) / 2 and the
power 1 - (1 - power) * share(k) / 2 (`levels`). Over any number of attempts an unchanged pull request is then
failed at most alpha of the time and one whose every attempt regresses by the tolerance is passed at most 1 - power
of the time (Bonferroni over the attempts and the two ways: each attempt's answers are drawn anew, and the union
bound needs no independence). Without a configuration a cell passes only when shown within the limit, at alpha_k.
The price: a later attempt needs more evidence, so after many retries a cell the first attempt could settle says
"cannot tell" — the honest answer to retrying.
bench/bench_gate.py measures both rates over 20 attempts.

The gate knows the attempt from a ledger kept outside the project (a JSONL file the CI keeps between runs, e.g. in
its cache: `rageval gate --attempts FILE`), read for the pull request's key (`--pr KEY`, or the one the CI's
environment names: GitHub's pull-request number, GitLab's merge request), and never below the CI's own count of
re-runs (GITHUB_RUN_ATTEMPT)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.paths import read_small_text
from rageval_desktop.core.metrics.compare import GateUsageError

FORMAT = "rageval-gate-attempt"
MOST = 10_000          # attempts a ledger may hold for one pull request (a bigger number is a damaged file)


def share(attempt: int) -> float:
    """The share of each error budget attempt `attempt` (1, 2, ...) may spend: 6 / (pi^2 k^2)."""
    return 6.0 / (math.pi ** 2 * max(1, attempt) ** 2)


def levels(alpha: float, power: float | None, attempt: int, spends: bool) -> tuple[float, float, float | None]:
    """(the regression test's level, the "shown within" bound's level, the power needed at a tolerance) of an attempt:
    see the module's note; `power` None: no configuration (a cell passes only when shown within, at alpha);
    `spends` False: every attempt at the full levels (a configuration from before 0.9)."""
    part = share(attempt) if spends else 1.0
    if power is None:
        return alpha * part, alpha * part, None
    if not spends:
        return alpha, alpha, power
    return alpha * part, (1 - power) * part / 2, 1 - (1 - power) * part / 2


def pr_from_env(env: Mapping[str, str] | None = None) -> str | None:
    """The pull request the CI's environment names: 'github:OWNER/REPO#N' (a pull_request event's GITHUB_REF,
    refs/pull/N/merge), 'gitlab:GROUP/PROJECT!N' (a merge request pipeline); None outside one."""
    env = os.environ if env is None else env
    ref = env.get("GITHUB_REF", "")
    if env.get("GITHUB_ACTIONS") == "true" and ref.startswith("refs/pull/"):
        number = ref.split("/")[2]
        if number.isdigit():
            return f"github:{env.get('GITHUB_REPOSITORY', '')}#{number}"
    iid = env.get("CI_MERGE_REQUEST_IID", "")
    if env.get("GITLAB_CI") == "true" and iid.isdigit():
        return f"gitlab:{env.get('CI_PROJECT_PATH', '')}!{iid}"
    return None


def ci_reruns(env: Mapping[str, str] | None = None) -> int:
    """The CI's own count of this run's attempts (GitHub's GITHUB_RUN_ATTEMPT), 1 when it keeps none."""
    env = os.environ if env is None else env
    found = env.get("GITHUB_RUN_ATTEMPT", "1")
    return int(found) if found.isdigit() and 0 < int(found) < MOST else 1


@dataclass(frozen=True)
class Attempt:
    """This run's place among its pull request's attempts."""

    pr: str | None          # None: no pull request named (retries are not counted)
    number: int = 1
    earlier: int = 0        # attempts the ledger holds for it
    ledger: str | None = None

    @property
    def share(self) -> float:
        return share(self.number)

    def describe(self) -> str:
        if self.pr is None:
            return ("no pull request named, so taken as a first attempt and its retries not counted (pass --pr KEY "
                    "with --attempts FILE, or run in GitHub or GitLab CI with --attempts FILE)")
        where = f"{self.earlier} earlier in {self.ledger}" if self.ledger else "no ledger of earlier attempts"
        return f"attempt {self.number} of {self.pr} ({where}): it spends {self.share:.3f} of each error budget"


def _entries(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    try:
        text = read_small_text(path, "the gate's ledger of attempts", 64 * 1024 * 1024)
    except RagevalError as exc:
        raise GateUsageError(str(exc)) from None
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            raise GateUsageError(f"{path}, line {number}: not an attempt of the gate's ledger (not JSON)") from None
        if not isinstance(entry, dict) or entry.get("format") != FORMAT or not isinstance(entry.get("pr"), str):
            raise GateUsageError(f"{path}, line {number}: not an attempt of the gate's ledger")
        out.append(entry)
    return out


def locate(pr: str | None, ledger: str | Path | None, env: Mapping[str, str] | None = None) -> Attempt:
    """This run's attempt: one more than the ledger holds for `pr` (default: the CI's pull request), never below the
    CI's own re-run count."""
    pr = pr or pr_from_env(env)
    if pr is None:
        return Attempt(None)
    earlier = 0 if ledger is None else sum(1 for e in _entries(Path(ledger)) if e["pr"] == pr)
    if earlier >= MOST:
        raise GateUsageError(f"{ledger} holds {earlier:,} attempts of {pr}: not a ledger this app wrote")
    return Attempt(pr, max(earlier + 1, ci_reruns(env)), earlier, None if ledger is None else str(ledger))


def remember(attempt: Attempt, decision: str, candidate: str, when: str) -> None:
    """Add this attempt to its ledger (nothing when no pull request or ledger is named)."""
    if attempt.pr is None or attempt.ledger is None:
        return
    line = json.dumps({"format": FORMAT, "pr": attempt.pr, "attempt": attempt.number, "decision": decision,
                       "candidate": candidate, "when": when}, ensure_ascii=False)
    try:
        with Path(attempt.ledger).open("a", encoding="utf-8") as out:
            out.write(line + "\n")
    except OSError as exc:
        raise RagevalError(f"cannot add the attempt to {attempt.ledger}: {exc.strerror or exc}") from None
