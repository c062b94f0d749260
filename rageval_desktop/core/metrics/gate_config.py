"""A gate's configuration: per cell, the drop it must rule out and how, kept in the project or in a file in the
repository (`rageval gate plan` proposes one; `rageval gate` reads it).

Each configured cell — a slice, a merged group of slices, or 'all', times a metric — has:

- `tolerance`: the drop the cell must rule out, in points on the 0-100 scale;
- `allowed`: a drop shown to exceed this fails the gate (`gate plan` proposes 1 point; 0 if absent);
- the configuration's `power`: the cell passes when no drop beyond `allowed` is shown and the test, with this pull
  request's own spread, catches a drop of `tolerance` with at least that power (or when the drop is shown to stay
  within `tolerance`). So a configured pass says: had the cell dropped by its tolerance, the gate would have failed
  it with probability >= power; an unchanged pull request fails with probability <= alpha. With `"retries":
  "spent"` (what `gate plan` writes; power 0.95) both hold however often a pull request is retried: attempt k
  spends a share of alpha and of 1 - power (core.metrics.attempts). A configuration without it (before 0.9) holds
  them per attempt only (power 0.8: a pull request retried until green passes a drop of its tolerance 59% of the
  time after 4 tries), and the gate says so.

Without a configuration every cell's tolerance and allowed drop are the command's limit (`--max-slice-drop`) and a
cell passes only when its drop is shown to stay within it (an equivalence test): the strictest reading, which on
slices of tens of questions rarely settles — `gate plan` says what would.

Its perimeter: `not_gated` names each metric deliberately left ungated, and why (a metric judged on both runs that
is neither gated nor listed makes the gate "cannot tell"); `new_slices` says how a slice only the candidate has
counts ("cannot tell" until the configuration says "named"); `missing` how a baseline question the candidate did not
answer counts ("fail" on every metric, the default, or "leave out": only its coverage cell counts it).

The file is JSON (`format`: "rageval-gate-config", `version`: 1); it is validated as a whole when read, so a bad
file is refused with what is wrong, never half-applied."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.metrics.compare import MISSING_RULES, GateUsageError
from rageval_desktop.core.store.changes import Area
from rageval_desktop.core.store.project import Project

FORMAT = "rageval-gate-config"
VERSION = 1
META_KEY = "gate_config"
POWER = 0.8
ALPHA = 0.05
# a slice only the candidate has questions of: until the configuration says how it counts, the gate cannot tell;
# "named" lists it in every output and decides without it
NEW_SLICES = ("cannot tell", "named")
MISSING = tuple(MISSING_RULES)
RETRIES = ("each", "spent")


class ConfigError(GateUsageError):
    """A gate configuration that cannot be used (the CLI's exit 2: a request that cannot be made)."""


@dataclass(frozen=True)
class CellRule:
    """How one cell is decided (see the module's note)."""

    tolerance: float
    allowed: float
    power: float | None = None         # None: only "shown within the tolerance" passes (the unconfigured gate)

    def as_dict(self) -> dict[str, Any]:
        return {"tolerance": self.tolerance, "allowed": self.allowed, "power": self.power}


@dataclass(frozen=True)
class GateConfig:
    cells: dict[tuple[str, str], CellRule]            # (slice or group, metric) -> its rule
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict)   # merged slices: name -> its slices
    alpha: float = ALPHA
    power: float = POWER
    min_slice_n: int = 1
    planned: dict[str, Any] = field(default_factory=dict)   # how it was made (baseline, spread assumed, when)
    source: str = ""                                     # where it was read from, for messages
    not_gated: dict[str, str] = field(default_factory=dict)  # metrics deliberately not gated -> why
    new_slices: str = "cannot tell"                      # a slice only the candidate has: NEW_SLICES
    missing: str = "fail"                                # an unanswered question (compare.MISSING_RULES)
    retries: str = "each"     # "spent": attempt k spends a share of alpha and of 1 - power (core.metrics.attempts);
    #                           "each": every attempt at the full alpha and power (configurations before 0.9)

    @property
    def metrics(self) -> list[str]:
        return list(dict.fromkeys(m for _, m in self.cells))

    def as_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, "alpha": self.alpha, "power": self.power,
                "min_slice_n": self.min_slice_n, "groups": {k: list(v) for k, v in self.groups.items()},
                "cells": [{"slice": s, "metric": m, "tolerance": r.tolerance, "allowed": r.allowed}
                          for (s, m), r in self.cells.items()],
                "not_gated": dict(self.not_gated), "new_slices": self.new_slices, "missing": self.missing,
                "retries": self.retries,
                "planned": self.planned}


def _number(value: Any, what: str, low: float, high: float, *, closed_high: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"{what} must be a number (got {value!r})")
    if not (low <= value and (value <= high if closed_high else value < high)):
        raise ConfigError(f"{what} must lie between {low:g} and {high:g} (got {value:g})")
    return float(value)


def from_dict(data: Any, source: str = "") -> GateConfig:
    """The configuration in `data`, checked whole; ConfigError says what is wrong and where."""
    where = f"{source}: " if source else ""
    try:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ConfigError(f"not a gate configuration (its \"format\" must be \"{FORMAT}\")")
        if data.get("version") != VERSION:
            raise ConfigError(f"version {data.get('version')!r} is not one this app reads ({VERSION})")
        alpha = _number(data.get("alpha", ALPHA), "alpha", 0.0, 0.5, closed_high=False)
        if alpha <= 0:
            raise ConfigError("alpha must be above 0")
        power = _number(data.get("power", POWER), "power", 0.5, 1.0, closed_high=False)
        min_n = data.get("min_slice_n", 1)
        if isinstance(min_n, bool) or not isinstance(min_n, int) or min_n < 1:
            raise ConfigError(f"min_slice_n must be a whole number, 1 or more (got {min_n!r})")
        groups = _groups(data.get("groups") or {})
        cells = _cells(data.get("cells"), power)
        planned = data.get("planned") or {}
        if not isinstance(planned, dict):
            raise ConfigError("planned must be an object")
        not_gated, new_slices, missing = _perimeter(data, cells)
        retries = data.get("retries", "each")
        if retries not in RETRIES:
            raise ConfigError(f"retries must be one of {', '.join(map(repr, RETRIES))} (got {retries!r})")
    except ConfigError as exc:
        raise ConfigError(where + str(exc), cli_hint="write a new one with rageval gate plan") from None
    return GateConfig(cells, groups, alpha, power, min_n, planned, source, not_gated, new_slices, missing,
                      str(retries))


def _groups(raw: object) -> dict[str, tuple[str, ...]]:
    """The slice groups (gated together), checked: two or more slices each, no slice in two."""
    if not isinstance(raw, dict):
        raise ConfigError("groups must map a group's name to the list of its slices")
    groups: dict[str, tuple[str, ...]] = {}
    member: dict[str, str] = {}
    for name, slices in raw.items():
        if not isinstance(slices, list) or len(slices) < 2 or not all(isinstance(s, str) for s in slices):
            raise ConfigError(f"group '{name}' must list two or more slices by name")
        for s in slices:
            if s in member:
                raise ConfigError(f"slice '{s}' is in two groups ('{member[s]}' and '{name}')")
            member[s] = name
        groups[str(name)] = tuple(slices)
    return groups


def _cells(raw: object, power: float) -> dict[tuple[str, str], CellRule]:
    """The gated cells, checked: each names its slice and metric once, with a tolerance above its allowed drop."""
    if not isinstance(raw, list) or not raw:
        raise ConfigError("cells must list at least one cell: {\"slice\", \"metric\", \"tolerance\"}")
    cells: dict[tuple[str, str], CellRule] = {}
    for i, cell in enumerate(raw, 1):
        if not isinstance(cell, dict) or not isinstance(cell.get("slice"), str) or \
                not isinstance(cell.get("metric"), str):
            raise ConfigError(f"cell {i} must name its slice and metric")
        key = (cell["slice"], cell["metric"])
        if key in cells:
            raise ConfigError(f"cell {i} ({key[0]}, {key[1]}) is listed twice")
        tolerance = _number(cell.get("tolerance"), f"cell {i}'s tolerance", 0.0, 100.0)
        allowed = _number(cell.get("allowed", 0.0), f"cell {i}'s allowed drop", 0.0, 100.0)
        if allowed >= tolerance:
            raise ConfigError(f"cell {i} ({key[0]}, {key[1]}): the allowed drop ({allowed:g}) must be below "
                              f"the tolerance ({tolerance:g}) — the gate must be able to tell them apart")
        cells[key] = CellRule(tolerance, allowed, power)
    return cells


def _perimeter(data: dict[str, object], cells: dict[tuple[str, str], CellRule]) -> tuple[dict[str, str], str, str]:
    """The configuration's perimeter, checked: the metrics not gated (each with why), and the rules for new slices
    and unanswered questions (see the module's note)."""
    not_gated = data.get("not_gated") or {}
    if not isinstance(not_gated, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.strip()
                                                  for k, v in not_gated.items()):
        raise ConfigError("not_gated must map each metric deliberately not gated to why (a sentence)")
    both = sorted(set(not_gated) & {m for _, m in cells})
    if both:
        raise ConfigError(f"{', '.join(both)} is both gated and listed as not gated")
    chosen = []
    for key, allowed_values in (("new_slices", NEW_SLICES), ("missing", MISSING)):
        value = data.get(key, allowed_values[0])
        if value not in allowed_values:
            raise ConfigError(f"{key} must be one of {', '.join(map(repr, allowed_values))} (got {value!r})")
        chosen.append(str(value))
    return dict(not_gated), chosen[0], chosen[1]


def read_file(path: str | Path) -> GateConfig:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the gate configuration {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a gate configuration (not UTF-8 text)") from None
    if len(text) > 5_000_000:
        raise ConfigError(f"{path}: too large for a gate configuration ({len(text):,} characters)")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"{path}: not JSON ({exc})") from None
    return from_dict(data, str(path))


def write_file(config: GateConfig, path: str | Path) -> Path:
    path = Path(path)
    try:
        path.write_text(json.dumps(config.as_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise RagevalError(f"cannot write the gate configuration to {path}: {exc.strerror or exc}") from None
    return path


def saved(project: Project) -> GateConfig | None:
    """The configuration kept in the project (`gate plan --save`), or None."""
    text = project.meta(META_KEY)
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        raise ConfigError("the gate configuration kept in the project is not JSON",
                          cli_hint="save a new one with rageval gate plan --save") from None
    return from_dict(data, "the project's gate configuration")


def resolve(project: Project, choice: GateConfig | str | Path | bool | None) -> GateConfig | None:
    """The configuration a gate runs under: a GateConfig as given, a path's file, False none (the limits decide),
    None (or True) the one saved in the project, if any. `rageval gate`, the API and the Compare page ask here."""
    if choice is False:
        return None
    if choice is None or choice is True:
        return saved(project)
    return choice if isinstance(choice, GateConfig) else read_file(choice)


def save(project: Project, config: GateConfig | None) -> None:
    """Keep `config` in the project (None removes it); one write, in the audit log."""
    with project.write("save the gate configuration", changed=(Area.SETTINGS,)) as conn:
        project.set_meta(conn, META_KEY, "" if config is None else json.dumps(config.as_dict()))
        project.audit(conn, "gate configuration", "project", "gate",
                      cells=0 if config is None else len(config.cells))
