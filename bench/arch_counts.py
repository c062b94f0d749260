"""Counts for the shape of the code (issue 29): arrows up a floor, cycles between core's folders, imports hidden in
functions, `Any` lines, `kind ==` sites, and pages reaching into the window.

    python bench/arch_counts.py [--json]

Reads the source only (AST); imports nothing of the app.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "rageval_desktop"
# the floors, bottom first (the order the layers contract writes top first)
FLOORS = ["base", "store", "judges", "review", "metrics", "golden", "jobs", "importers", "reports", "ops", "demo"]


def _package_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["rageval_desktop", "core"] or len(parts) < 3:
        return None
    sub = parts[2]
    return sub if sub in FLOORS else "base"   # core/__init__ is the ground floor too


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[str, bool, str]]:
    """(imported module, inside a function?, the line) for every import of the app in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = _module_name(path)
    is_pkg = path.name == "__init__.py"
    out: list[tuple[str, bool, str]] = []

    def visit(node: ast.AST, in_func: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_func or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.startswith("rageval_desktop"):
                        out.append((alias.name, in_func, ast.unparse(child)))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = me.split(".")
                    base = base if is_pkg else base[:-1]
                    base = base[: len(base) - (child.level - 1)]
                    mod = ".".join(base + ([child.module] if child.module else []))
                else:
                    mod = child.module or ""
                if mod.startswith("rageval_desktop"):
                    if child.module is None or mod.count(".") < 2:
                        for alias in child.names:
                            out.append((f"{mod}.{alias.name}", in_func, ast.unparse(child)))
                    else:
                        out.append((mod, in_func, ast.unparse(child)))
            visit(child, inner)

    visit(tree, False)
    return out


def _source_line(path: Path, statement: str) -> str:
    """The line of `path` that starts the import statement (comments are not in the AST)."""
    head = statement.split(" import ")[0]
    return next((line for line in path.read_text(encoding="utf-8").splitlines() if line.strip().startswith(head)
                 and " # heavy:" in line), "")


LONG = 50            # a function over this many lines is a long one
COMPLEX = 10         # McCabe complexity over this is a complex one (ruff's C901 counts it)


def complex_functions() -> list[str]:
    """The functions whose McCabe complexity is over COMPLEX, as ruff's C901 finds them (None: ruff not here)."""
    import shutil
    import subprocess

    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    found = subprocess.run([ruff, "check", "--select", "C901", "--config", f"lint.mccabe.max-complexity={COMPLEX}",
                            "--output-format", "concise", "--no-cache", "--exit-zero", str(ROOT)],
                           capture_output=True, text=True, check=True).stdout
    return [line.split(" C901 ")[0].replace(str(ROOT) + "/", "") + " " + line.split("`")[1]
            for line in found.splitlines() if " C901 " in line]


def counts() -> dict:
    files = sorted(ROOT.rglob("*.py"))
    total = inside = 0
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in files:
        me = _module_name(path)
        src_pkg = _package_of(me)
        for mod, in_func, line in _imports(path):
            total += 1
            inside += in_func
            dst_pkg = _package_of(mod)
            if src_pkg and dst_pkg and src_pkg != dst_pkg:
                edges[(src_pkg, dst_pkg)].append(f"{me}: {line}{' (in a function)' if in_func else ''}")
    up = {k: v for k, v in edges.items() if FLOORS.index(k[1]) > FLOORS.index(k[0])}
    cycles = sorted({tuple(sorted(k)) for k in edges if (k[1], k[0]) in edges})
    core_files = [p for p in files if "core" in p.relative_to(ROOT).parts[:1]]
    any_lines = sum(
        1 for p in files for line in p.read_text(encoding="utf-8").splitlines() if re.search(r"\bAny\b", line)
    )
    any_core = sum(
        1 for p in core_files for line in p.read_text(encoding="utf-8").splitlines() if re.search(r"\bAny\b", line)
    )
    any_by_area: dict[str, int] = defaultdict(int)   # core, gui, cli, and the package's top-level modules
    for p in files:
        parts = p.relative_to(ROOT).parts
        area = parts[0] if len(parts) > 1 else "top"
        any_by_area[area] += sum(1 for line in p.read_text(encoding="utf-8").splitlines()
                                 if re.search(r"\bAny\b", line))
    kind_eq = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in files
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if (re.search(r"""kind["']?\]?\s*(==|!=|not in|in)\s*[\(\[{]*\s*["'](llm|embedding|lexical|hhem)["']""", line)
            or re.search(r"""\bkind\s*(=|!=|<>|IN|in)\s*\(?\s*'(llm|embedding|lexical|hhem)'""", line)
            and not str(p).endswith("schema.py"))     # (an SQL comparison; the schema's history may name them)
        and "/kinds/" not in str(p)
    ]
    window_reach = sum(
        len(re.findall(r"self\.window\.|self\._window\.|self\.main_window\.", p.read_text(encoding="utf-8")))
        for p in (ROOT / "gui").rglob("*.py")
    )
    core_inside = [
        f"{_module_name(p)}: {line}"
        for p in core_files
        for _mod, in_func, line in _imports(p)
        if in_func and "# heavy:" not in _source_line(p, line)
    ]
    long_functions = [
        f"{p.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for p in files for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno + 1 > LONG
    ]
    return {
        "imports": total,
        "long_functions": long_functions,
        "complex_functions": complex_functions(),
        "core_inside_functions": core_inside,
        "inside_functions": inside,
        "arrows_up": sum(len(v) for v in up.values()),
        "arrows_up_detail": {f"{a}->{b}": v for (a, b), v in sorted(up.items())},
        "cycles": [f"{a}<->{b}" for a, b in cycles],
        "any_lines": any_lines,
        "any_lines_core": any_core,
        "any_lines_by_area": dict(sorted(any_by_area.items())),
        "kind_comparisons": kind_eq,
        "window_reach": window_reach,
    }


if __name__ == "__main__":
    c = counts()
    if "--json" in sys.argv:
        print(json.dumps(c, indent=1))
    else:
        for key in ("imports", "inside_functions", "arrows_up", "any_lines", "any_lines_core", "window_reach"):
            print(f"{key:18} {c[key]}")
        print(f"{'in core functions':18} {len(c['core_inside_functions'])}")
        print(f"{'long functions':18} {len(c['long_functions'])} (over {LONG} lines)")
        print(f"{'complex functions':18} {len(c['complex_functions'])} (McCabe over {COMPLEX})")
        print(f"{'cycles':18} {len(c['cycles'])}: {', '.join(c['cycles'])}")
        print(f"{'kind comparisons':18} {len(c['kind_comparisons'])}")
        for k, v in c["arrows_up_detail"].items():
            print(f"  {k}: {len(v)}")
            for line in v:
                print(f"      {line}")
