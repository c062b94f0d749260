"""The row detail pane: question, answer, reference and passages, gold ones marked.

Everything is inserted with QTextCursor.insertText, which never interprets markup: imported text is
attacker-controlled and must render as the characters it holds.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QTextCharFormat, QTextCursor, QTextFrameFormat
from PySide6.QtWidgets import QTextEdit, QWidget

from rageval_desktop.core.store.queries import RowDetail

GOLD_BG = QColor("#e6f4ea")
GOLD_FG = QColor("#1f7a4d")


class DetailPane(QTextEdit):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setAcceptRichText(False)
        self.setObjectName("detailPane")
        self.setPlaceholderText("Select a row to see its question, answer and retrieved passages.")
        self.detail: RowDetail | None = None

    def show_detail(self, detail: RowDetail | None) -> None:
        self.detail = detail
        self.clear()
        if detail is None:
            return
        cur = self.textCursor()
        base = QTextCharFormat()
        heading = QTextCharFormat()
        heading.setFontWeight(QFont.Weight.DemiBold)
        heading.setForeground(QColor("#5f6368"))
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
        section("QUESTION", detail.question)
        if detail.kind == "run":
            section("ANSWER", detail.answer)
        section("REFERENCE ANSWER", detail.gold_answer)
        gold = ", ".join(detail.gold_chunk_ids) or "none"
        what = "RETRIEVED PASSAGES" if detail.kind == "run" else "GOLD CHUNKS"
        cur.insertText(f"\n{what} ({len(detail.passages)}; gold chunks: {gold})\n", heading)
        for p in detail.passages:
            frame = QTextFrameFormat()
            frame.setPadding(6)
            frame.setBorder(1 if p.is_gold else 0)
            frame.setBorderBrush(GOLD_FG)
            if p.is_gold:
                frame.setBackground(GOLD_BG)
            cur.insertFrame(frame)
            mark = "★ GOLD  " if p.is_gold else ""
            score = "" if p.score is None else f"  score {p.score:.3f}"
            label = QTextCharFormat(heading)
            if p.is_gold:
                label.setForeground(GOLD_FG)
            cur.insertText(f"{mark}#{p.rank}  {p.chunk_id or '(no chunk id)'}{score}\n", label)
            cur.insertText(p.text or "", base)
            cur.movePosition(QTextCursor.MoveOperation.End)
        self.moveCursor(QTextCursor.MoveOperation.Start)


def _fmt(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.6g}"
    return str(value)
