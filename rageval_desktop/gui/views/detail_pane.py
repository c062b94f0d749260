"""The row detail pane: question, answer, reference and passages, gold ones marked.

Everything is inserted with QTextCursor.insertText, which never interprets markup: imported text is
attacker-controlled and must render as the characters it holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QColor, QFont, QTextCharFormat, QTextCursor, QTextFrameFormat
from PySide6.QtWidgets import QTextEdit, QWidget

from rageval_desktop.gui.appearance import is_dark

if TYPE_CHECKING:
    from rageval_desktop.core.review.targets import TargetCard
    from rageval_desktop.core.store.queries import RowDetail

SHOWN_PASSAGES = 10  # the top of the ranking, plus every gold passage wherever it ranked


def gold_colours() -> tuple[QColor, QColor, QColor]:
    """(tint, label and border, text) of a gold passage's box: a light green tint with dark text in the light theme,
    a dark one with light text in the dark theme (a light box lit up the dark card). Text ≥ 4.5:1 on its tint."""
    if is_dark():
        return QColor("#173a26"), QColor("#81c995"), QColor("#e8eaed")
    return QColor("#e6f4ea"), QColor("#1f7a4d"), QColor("#202124")


TARGET_FG = QColor("#3b78e7")   # the accent: readable on light and dark themes


class DetailPane(QTextEdit):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setAcceptRichText(False)
        self.setObjectName("detailPane")
        self.setPlaceholderText("Select a row to see its question, answer and retrieved passages.")
        self.detail: RowDetail | None = None
        self.target: TargetCard | None = None
        self.show_raw = False
        self.fold_passages: str | None = None   # set: only the gold passages are shown; says why (a review card)
        self.calls: dict[str, str] = {}   # judge -> whether its selective licence decides the row (licence.row_calls)

    def set_show_raw(self, on: bool) -> None:
        """Show or hide the judges' raw outputs: the same row, target and calls redrawn where it was scrolled."""
        if on == self.show_raw:
            return
        self.show_raw = on
        self.show_detail(self.detail, self.target, self.calls, force=True)

    def show_detail(self, detail: RowDetail | None, target: TargetCard | None = None,
                    calls: dict[str, str] | None = None, *, force: bool = False) -> None:
        """Redraw only when what is shown changed (a job committing judgments refreshes the window every few
        hundred ms); the same row redrawn keeps its scroll position, another row starts at the top. `target` is
        what a reviewer rates on this row (a passage, a nugget, a citation), shown first; `calls`, what each
        selectively licensed judge does with the row (decides it, or leaves it to people)."""
        calls = calls or {}
        if not force and detail == self.detail and target == self.target and calls == self.calls and (
                detail is not None or self.document().isEmpty()):
            return
        self.calls = calls
        same_row = detail is not None and self.detail is not None and (detail.kind, detail.title) == (
            self.detail.kind, self.detail.title) and target == self.target
        scroll = self.verticalScrollBar().value() if same_row else 0
        self.detail = detail
        self.target = target
        self.clear()
        if detail is None:
            return
        cur = self.textCursor()
        cur.beginEditBlock()  # one layout pass for the whole document, not one per insertion
        try:
            self._build(cur, detail)
        finally:
            cur.endEditBlock()
        self.moveCursor(QTextCursor.MoveOperation.Start)
        self.verticalScrollBar().setValue(scroll)

    def _build(self, cur: QTextCursor, detail: RowDetail) -> None:
        base = QTextCharFormat()
        heading = QTextCharFormat()
        heading.setFontWeight(QFont.Weight.DemiBold)
        heading.setForeground(QColor("#9aa0a6" if is_dark() else "#5f6368"))  # ≥ 4.5:1 on either theme's pane
        title = QTextCharFormat()
        title.setFontWeight(QFont.Weight.Bold)
        title.setFontPointSize(self.font().pointSizeF() * 1.15)

        def section(name: str, text: str | None) -> None:
            cur.insertText(f"\n{name}\n", heading)
            cur.insertText((text if text else "—") + "\n", base)

        cur.insertText(detail.title, title)
        facts = "  ·  ".join(f"{k}: {_fmt(v)}" for k, v in
                             {"slice": detail.slice_tag or "—", **detail.facts}.items())
        cur.insertText(f"\n{facts}\n", heading)
        if self.target is not None:
            self._target(cur, self.target, heading, base)
        section("QUESTION", detail.question)
        if detail.kind == "run":
            section("ANSWER", detail.answer)
        section("REFERENCE ANSWER", detail.gold_answer)
        if detail.nuggets:
            cur.insertText(f"\nNUGGETS ({detail.nugget_status}: used by every run)\n", heading)
            for i, n in enumerate(detail.nuggets, start=1):
                cur.insertText(f"{i}. [{n.get('importance')}] {n.get('text')}\n", base)
        if detail.judgments:
            self._judgments(cur, detail, heading, base)
        self._passages(cur, detail, heading, base)

    def _passages(self, cur: QTextCursor, detail: RowDetail, heading: QTextCharFormat,
                  base: QTextCharFormat) -> None:
        """The retrieved passages (a golden row's gold chunks), gold ones framed and tinted; the rest folded or cut
        at SHOWN_PASSAGES, with a line saying how many and why."""
        gold = ", ".join(detail.gold_chunk_ids) or "none"
        what = "RETRIEVED PASSAGES" if detail.kind == "run" else "GOLD CHUNKS"
        cur.insertText(f"\n{what} ({len(detail.passages)}; gold chunks: {gold})\n", heading)
        folded = self.fold_passages is not None and detail.kind == "run"
        shown = [p for p in detail.passages if p.is_gold or (not folded and p.rank <= SHOWN_PASSAGES)]
        tint, gold_fg, gold_text = gold_colours()
        for p in shown:
            frame = QTextFrameFormat()
            frame.setPadding(6)
            frame.setBorder(1 if p.is_gold else 0)
            frame.setBorderBrush(gold_fg)
            if p.is_gold:
                frame.setBackground(tint)
            cur.insertFrame(frame)
            mark = "★ GOLD  " if p.is_gold else ""
            score = "" if p.score is None else f"  score {p.score:.3f}"
            label = QTextCharFormat(heading)
            if p.is_gold:
                label.setForeground(gold_fg)
            cur.insertText(f"{mark}#{p.rank}  {p.chunk_id or '(no chunk id)'}{score}\n", label)
            body = QTextCharFormat(base)
            if p.is_gold:
                body.setForeground(gold_text)
            cur.insertText(p.text or "", body)
            cur.movePosition(QTextCursor.MoveOperation.End)
        hidden = len(detail.passages) - len(shown)
        if hidden and folded:
            cur.insertText(f"\n… {hidden} other passage(s) folded: {self.fold_passages} (P shows them)\n", heading)
        elif hidden:
            cur.insertText(f"\n… {hidden} more retrieved passages below rank {SHOWN_PASSAGES} (none of them gold)\n",
                           heading)


    def _target(self, cur: QTextCursor, target: TargetCard, heading: QTextCharFormat,
                base: QTextCharFormat) -> None:
        """The thing being rated, boxed in the accent colour, above the row it belongs to."""
        label = QTextCharFormat(heading)
        label.setForeground(TARGET_FG)
        cur.insertText(f"\nRATE THIS {target.unit.upper()} · {target.title}\n", label)
        cur.insertText(target.question + "\n", heading)
        for title, text in ((None, target.text), (target.context_title, target.context)):
            if not text:
                continue
            frame = QTextFrameFormat()
            frame.setPadding(8)
            frame.setBorder(2)
            frame.setBorderBrush(TARGET_FG)
            cur.insertFrame(frame)
            if title:
                cur.insertText(title + "\n", label)
            strong = QTextCharFormat(base)
            strong.setFontWeight(QFont.Weight.DemiBold)
            cur.insertText(text, strong)
            cur.movePosition(QTextCursor.MoveOperation.End)

    def _judgments(self, cur: QTextCursor, detail: RowDetail, heading: QTextCharFormat,
                   base: QTextCharFormat) -> None:
        cur.insertText("\nJUDGMENTS\n", heading)
        mono = QTextCharFormat(base)
        mono.setFontFamilies(["monospace"])
        for j in detail.judgments:
            if j.items and j.passage_rank:   # a nugget's or a citation's own judgment: shown with its row's
                continue
            target = f" · passage #{j.passage_rank}" if j.passage_rank else ""
            retired = " (retired: not counted)" if j.judge_status == "retired" else ""
            line = QTextCharFormat(base)
            line.setFontWeight(QFont.Weight.DemiBold)
            if j.status == "ok":
                value = f"{j.score:g}" + (f" {j.label}" if j.label else "")
            else:
                line.setForeground(QColor("#b3261e"))
                value = f"{j.status.upper()}" + (f" ({j.error_kind})" if j.error_kind else "")
            cur.insertText(f"{j.judge} · {j.metric}{target}: {value}{retired}\n", line)
            if j.judge in self.calls and not j.passage_rank and j.status == "ok":
                call = QTextCharFormat(base)
                call.setForeground(TARGET_FG if self.calls[j.judge].startswith("decides") else QColor("#b06000"))
                call.setFontItalic(True)
                cur.insertText(self.calls[j.judge] + "\n", call)
            if j.rationale:
                cur.insertText(j.rationale.strip() + "\n", base)
            if j.status == "ok" and isinstance(j.detail, dict):
                self._structured(cur, j.detail, base)
            if self.show_raw and j.raw_output:
                cur.insertText(j.raw_output.strip() + "\n", mono)


    def _structured(self, cur: QTextCursor, detail: dict, base: QTextCharFormat) -> None:
        """Nuggets with their importance and assignment; citations with their support; HHEM's sentences."""
        mark = {"support": "✓", "partial_support": "◐", "not_support": "✗", "full_support": "✓", "no_support": "✗"}
        colour = {"✓": QColor("#1f7a4d"), "◐": QColor("#b06000"), "✗": QColor("#b3261e")}

        def line(symbol: str, text: str) -> None:
            sign = QTextCharFormat(base)
            sign.setForeground(colour.get(symbol, QColor("#80868b")))
            sign.setFontWeight(QFont.Weight.Bold)
            cur.insertText(f"  {symbol} ", sign)
            cur.insertText(text + "\n", base)

        if "nuggets" in detail:
            listed = detail.get("list") or {}
            cur.insertText(f"  nuggets ({listed.get('status', 'generated')} list):\n", base)
            for n in detail["nuggets"]:
                line(mark.get(n.get("assignment"), "?"), f"[{n.get('importance')}] {n.get('text')} — "
                                                          f"{n.get('assignment')}")
            scores = detail.get("scores") or {}
            cur.insertText("  " + "  ·  ".join(f"{k.removeprefix('nugget_')} {'—' if v is None else f'{v:.0f}'}"
                                               for k, v in scores.items()) + "\n", base)
        elif "pairs" in detail:
            sentences = detail.get("statements") or []
            for p in detail["pairs"]:
                text = sentences[p["statement"]]["text"] if p["statement"] < len(sentences) else "?"
                note = f" ({p['note']})" if p.get("note") else ""
                line(mark.get(p.get("label"), "?"), f"[{p['passage']}] {text} — {p.get('label')}{note}")
            for s in sentences:
                if not s.get("cites"):
                    line("✗", f"{s['text']} — cites nothing")
        elif "claims" in detail:
            for c in detail["claims"]:
                line("✓" if c["score"] >= 0.5 else "✗", f"{c['text']} — {c['score']:.2f} (best: passage "
                                                         f"{c['passage']})")


def _fmt(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.6g}"
    return str(value)
