"""Curating the golden set: edit a row (with a reason, gold chunks picked from the corpus by search), versions and
their diffs, near-duplicates. Every change goes through core ops, which keep who, when, why, before and after."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from rageval_desktop.gui.views.common import ButtonBar

if TYPE_CHECKING:
    from rageval_desktop.core.golden.synth import SynthStats
    from rageval_desktop.core.ops import AddGoldenRow, EditGoldenRow
    from rageval_desktop.core.store.project import Project

T = TypeVar("T")


class GoldenRowDialog(QDialog):
    """Add or edit one golden row. Validation runs in core when saved; problems come back as messages."""

    def __init__(self, project: Any, slices: list[str], row: dict[str, Any] | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project, self.row = project, row
        self.setWindowTitle("Edit golden row" if row else "Add a golden row")
        self.resize(820, 640)
        form = QFormLayout(self)
        self.question = QPlainTextEdit(row["question"] if row else "")
        self.question.setFixedHeight(70)
        form.addRow("&Question:", self.question)
        self.answer = QPlainTextEdit((row or {}).get("gold_answer") or "")
        self.answer.setFixedHeight(90)
        form.addRow("&Reference answer:", self.answer)
        self.slice_box = QComboBox()
        for s in slices:
            self.slice_box.addItem(s, s)
        if row and row.get("slice_tag"):
            self.slice_box.setCurrentIndex(max(self.slice_box.findData(row["slice_tag"]), 0))
        form.addRow("&Slice:", self.slice_box)
        self.gold = QListWidget()
        self.gold.setFixedHeight(110)
        self.gold.setWordWrap(True)
        ids = (row or {}).get("gold_chunk_ids", [])
        texts = _chunk_texts(project, ids)
        for cid in ids:
            self.add_gold(cid, texts.get(cid))
        remove = QPushButton("Remove selected gold chunk")
        remove.clicked.connect(lambda: [self.gold.takeItem(self.gold.row(i)) for i in self.gold.selectedItems()])
        box = QVBoxLayout()
        box.addWidget(self.gold)
        box.addWidget(remove)
        form.addRow("Gold chunks:", box)
        self.search = QLineEdit()
        self.search.setPlaceholderText("search the corpus: words of the passage, or a chunk id; Enter to search")
        self.results = QListWidget()
        self.results.setWordWrap(True)
        self.results.itemActivated.connect(self.add_chunk)
        self.search.returnPressed.connect(self._search)
        form.addRow("&Find chunks:", self.search)
        form.addRow("", self.results)
        self.reason = QLineEdit()
        self.reason.setPlaceholderText("why this change (kept in the row's history)")
        form.addRow("Re&ason:", self.reason)
        self.problem = QLabel()
        self.problem.setObjectName("problem")
        self.problem.setWordWrap(True)
        form.addRow(self.problem)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)

    def _search(self) -> None:
        from rageval_desktop.core.golden import edits

        self.results.clear()
        for hit in edits.search_chunks(self.project, self.search.text()):
            item = QListWidgetItem(f"{hit['chunk_id']} — {' '.join(hit['text'].split())[:160]}")
            item.setData(Qt.ItemDataRole.UserRole, hit["chunk_id"])
            item.setData(Qt.ItemDataRole.UserRole + 1, hit["text"])
            self.results.addItem(item)
        if not self.results.count():
            self.results.addItem("(no chunk matches)")

    def add_chunk(self, item: QListWidgetItem) -> None:
        cid = item.data(Qt.ItemDataRole.UserRole)
        if cid and cid not in self.chunk_ids():
            self.add_gold(cid, item.data(Qt.ItemDataRole.UserRole + 1))

    def add_gold(self, cid: str, text: str | None) -> None:
        """A gold chunk with the start of its text (the id alone says little); the whole text as its tooltip."""
        shown = " ".join((text or "(not in the project's corpus)").split())
        item = QListWidgetItem(f"{cid} — {shown[:140]}{'…' if len(shown) > 140 else ''}")
        item.setData(Qt.ItemDataRole.UserRole, cid)
        item.setToolTip((text or "")[:2000])
        self.gold.addItem(item)

    def chunk_ids(self) -> list[str]:
        return [self.gold.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.gold.count())]

    def values(self) -> dict[str, Any]:
        return {"question": self.question.toPlainText().strip(),
                "gold_answer": self.answer.toPlainText().strip() or None,
                "gold_chunk_ids": self.chunk_ids(), "slice_tag": self.slice_box.currentData()}

    def operation(self) -> AddGoldenRow | EditGoldenRow:
        """The undoable operation of core (core/ops) that saves the dialog: add a row, or edit this one."""
        from rageval_desktop.core.ops import AddGoldenRow, EditGoldenRow

        values, reason = self.values(), self.reason.text().strip()
        if self.row is None:
            return AddGoldenRow(self.question.toPlainText().strip(), self.answer.toPlainText().strip() or None,
                                self.chunk_ids(), self.slice_box.currentData(), reason or "added by hand")
        return EditGoldenRow(self.row["id"], values, reason)

def _chunk_texts(project: Project, ids: list[str]) -> dict[str, str]:
    from rageval_desktop.core.golden.edits import chunk_texts

    return chunk_texts(project, ids) if project is not None and ids else {}


def diff_text(d: dict[str, Any]) -> str:
    lines = [f"{d['from']} → {d['to']}: {len(d['added'])} added, {len(d['removed'])} removed, "
             f"{len(d['changed'])} changed", ""]
    lines += [f"+ {g}" for g in d["added"]] + [f"- {g}" for g in d["removed"]]
    for c in d["changed"]:
        lines.append(f"~ {c['id']}")
        for field, change in c["fields"].items():
            lines.append(f"    {field}: {change['before']!r}\n         → {change['after']!r}")
    return "\n".join(lines)


def duplicates_text(pairs: list[dict[str, Any]], questions: dict[str, str]) -> str:
    if not pairs:
        return "No near-duplicate questions above the threshold."
    out = [f"{len(pairs)} pair(s) above the threshold — merge (retire one) or keep both:", ""]
    for p in pairs:
        out += [f"cosine {p['cosine']:.3f}", f"  {p['a']}: {questions.get(p['a'], '')}",
                f"  {p['b']}: {questions.get(p['b'], '')}", ""]
    return "\n".join(out)


class GoldenBarActions(Protocol):
    """The golden-set actions the bar's buttons start (gui/golden_actions.py, an object the window holds)."""

    def edit_golden(self, golden_id: str | None) -> None: ...
    def selected_golden_id(self) -> str | None: ...
    def retire_golden(self) -> None: ...
    def save_golden_version(self) -> None: ...
    def diff_golden(self) -> None: ...
    def find_duplicates(self) -> None: ...
    def approve_golden(self) -> None: ...
    def generate_golden(self) -> None: ...
    def retrieval_lab(self) -> None: ...
    def promote_current_row(self) -> None: ...


class GoldenBarHost(Protocol):
    """What the golden bar reads of the window it sits in: the project and the read lane."""

    @property
    def project(self) -> Project | None: ...
    def run_read(self, page: str, fn: Callable[..., T], *args: object, on_done: Callable[[T], object],
                 announce: bool = True) -> None: ...


def _balance(project: Project, ctx: object = None) -> dict[str, Any]:
    from rageval_desktop.core.golden import edits

    return edits.balance(project)


class GoldenBar(QWidget):
    """The golden set's tools, shown above its table; its balance line is read on the read lane (it was read on the
    GUI thread)."""

    def __init__(self, actions: GoldenBarActions, window: GoldenBarHost, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.window_ = window
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.buttons = {}
        for key, text in (("add", "&Add row…"), ("edit", "&Edit row…"), ("approve", "A&pprove"),
                          ("retire", "&Retire row…"), ("version", "Save &version…"), ("diff", "&Diff…"),
                          ("dupes", "Find d&uplicates"), ("synth", "&Generate…"), ("lab", "Retrieval la&b…")):
            self.buttons[key] = QPushButton(text)
        outer.addWidget(ButtonBar(list(self.buttons.values()), self))
        self.balance = QLabel()
        self.balance.setObjectName("hint")
        self.balance.setWordWrap(True)
        outer.addWidget(self.balance)
        self.buttons["add"].clicked.connect(lambda: actions.edit_golden(None))
        self.buttons["edit"].clicked.connect(lambda: actions.edit_golden(actions.selected_golden_id()))
        self.buttons["retire"].clicked.connect(actions.retire_golden)
        self.buttons["version"].clicked.connect(actions.save_golden_version)
        self.buttons["diff"].clicked.connect(actions.diff_golden)
        self.buttons["dupes"].clicked.connect(actions.find_duplicates)
        self.buttons["approve"].clicked.connect(actions.approve_golden)
        self.buttons["synth"].clicked.connect(actions.generate_golden)
        self.buttons["lab"].clicked.connect(actions.retrieval_lab)

    def refresh(self) -> None:
        project = self.window_.project
        if project is not None:
            self.window_.run_read("golden balance", _balance, project, on_done=self._show_balance, announce=False)

    def _show_balance(self, b: dict[str, Any]) -> None:
        parts = [f"{k} {v['rows']}" + (f"/{v['target']}" if v["target"] else "") for k, v in b["slices"].items()]
        self.balance.setText(" · ".join(parts) + f" · {b['production_failure_share'] * 100:.0f}% from production "
                             f"failures · {b['drafts']} drafts")


def lab_text(data: dict[str, Any]) -> str:
    lines = [f"{data['questions']} approved golden questions with gold chunks; overlap {data['overlap']:.0%}", "",
             f"{'configuration':<16}{'model':<20}{'chunks':>8}{'hit@5':>10}{'hit@10':>11}{'hit@50':>11}"
             f"{'MRR':>8}"]
    for c in data["configs"]:
        a = c["slices"]["all"]
        lines.append(f"{c['config']:<16}{c['model']:<20}{c['chunks']:>8}{a['hit@5']:>10.1f}{a['hit@10']:>11.1f}"
                     f"{a['hit@50']:>11.1f}{a['mrr']:>8.1f}")
    lines += ["", "hit@5 per slice:"]
    slices = [s for s in data["configs"][0]["slices"] if s != "all"]
    lines.append(f"{'configuration':<16}" + "".join(f"{s[:14]:>16}" for s in slices))
    for c in data["configs"]:
        lines.append(f"{c['config']:<16}" + "".join(f"{c['slices'][s]['hit@5']:>16.1f}" for s in slices))
    return "\n".join(lines)


def synth_text(stats: SynthStats) -> str:
    rejected = "\n".join(f"  {why}: {n}" for why, n in sorted(stats.rejected.items())) or "  none"
    return (f"{stats.chunks} chunks sampled → {stats.candidates} candidate questions → {stats.kept} draft golden rows "
            f"waiting for approval.\n\nRejected:\n{rejected}\n\n{stats.calls} calls, {stats.cache_hits} from the "
            f"cache, ${stats.cost_usd:.4f}, {stats.seconds:.1f} s" + (f"\n\nStopped: {stats.message}"
                                                                     if stats.message else ""))
