"""Contrast measured on rendered pixels (WCAG 2.1): each visible widget that shows text is grabbed, its background
is its most common colour and its text the pixel that differs most from it; the ratio of their relative
luminances is what a reader gets, whatever the style sheet, the palette or the platform style drew."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QStatusBar,
    QTextEdit,
    QWidget,
)

NORMAL, LARGE = 4.5, 3.0


def luminance(c: QColor) -> float:
    def channel(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(c.red()) + 0.7152 * channel(c.green()) + 0.0722 * channel(c.blue())


def ratio(a: QColor, b: QColor) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _pixels(image: QImage) -> Any:
    """The image as an array of 0xRRGGBB integers (rows × columns)."""
    import numpy as np

    img = image.convertToFormat(QImage.Format.Format_RGB32)
    raw = np.frombuffer(img.constBits(), dtype=np.uint32, count=img.bytesPerLine() // 4 * img.height())
    return raw.reshape(img.height(), img.bytesPerLine() // 4)[:, :img.width()] & 0xFFFFFF


def _linear(rgb: Any) -> Any:
    import numpy as np

    c = np.stack([(rgb >> 16) & 255, (rgb >> 8) & 255, rgb & 255], axis=-1) / 255.0
    c = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return c @ np.array([0.2126, 0.7152, 0.0722])


def measure(image: QImage | Any, region: tuple[int, int, int, int] | None = None) -> tuple[float, QColor, QColor]:
    """(contrast, background, text) of an image (or a region of it): the most common colour against the colour
    that contrasts with it most, among pixels seen at least twice (anti-aliasing makes one-offs)."""
    import numpy as np

    pixels = _pixels(image) if isinstance(image, QImage) else image
    x0, y0, x1, y1 = region or (0, 0, pixels.shape[1], pixels.shape[0])
    part = pixels[y0:y1, x0:x1].ravel()
    if part.size == 0:
        return 21.0, QColor(), QColor()
    colours, counts = np.unique(part, return_counts=True)
    bg = int(colours[np.argmax(counts)])
    seen = colours[counts >= 2]
    lum = _linear(seen)
    lb = float(_linear(np.array([bg]))[0])
    ratios = (np.maximum(lum, lb) + 0.05) / (np.minimum(lum, lb) + 0.05)
    best = int(np.argmax(ratios))
    return float(ratios[best]), QColor(bg | 0xFF000000), QColor(int(seen[best]) | 0xFF000000)


@dataclass
class Finding:
    where: str
    text: str
    contrast: float
    needed: float
    background: str
    foreground: str


def _text(w: QWidget) -> str:
    if isinstance(w, (QLabel, QAbstractButton)):
        return w.text()
    if isinstance(w, QComboBox):
        return w.currentText()
    if isinstance(w, QLineEdit):
        return w.text() or w.placeholderText()
    if isinstance(w, (QPlainTextEdit, QTextEdit)):
        return w.toPlainText() or w.placeholderText()
    return ""


def audit_widget_tree(root: QWidget, name: str) -> list[Finding]:
    """The findings below AA (see `measured`)."""
    return [f for f in measured(root, name) if f.contrast < f.needed]


def lowest(root: QWidget, name: str) -> Finding | None:
    """The text with the lowest contrast relative to what it needs."""
    found = measured(root, name)
    return min(found, key=lambda f: f.contrast / f.needed) if found else None


def measured(root: QWidget, name: str) -> list[Finding]:
    """Every visible, enabled widget under `root` that shows text, measured in a grab of the whole window (so a
    transparent label is measured on what is behind it)."""
    out = []
    window = root.window()
    image = window.grab().toImage()
    shot = _pixels(image)
    scale = image.width() / max(1, window.width())
    for w in [root, *root.findChildren(QWidget)]:
        if not w.isVisible() or not w.isEnabled() or w.width() < 8 or w.height() < 8:
            continue
        text = _text(w).replace("&", "").strip()
        icon = isinstance(w, QAbstractButton) and not text and not w.icon().isNull()   # the toolbar's » chevron
        if isinstance(w, QStatusBar):
            text = w.currentMessage()
        elif icon:
            text = "(icon)"
        if not text or not isinstance(w, (QLabel, QAbstractButton, QComboBox, QLineEdit, QPlainTextEdit, QTextEdit,
                                          QStatusBar)):
            continue
        if isinstance(w, (QPlainTextEdit, QTextEdit)) and w.toPlainText():
            continue          # rich documents (the detail pane) are measured by their own test
        top_left = w.mapTo(window, w.rect().topLeft())
        x0, y0 = int(top_left.x() * scale), int(top_left.y() * scale)
        x1, y1 = min(shot.shape[1], x0 + int(w.width() * scale)), min(shot.shape[0], y0 + int(w.height() * scale))
        if x1 - x0 < 4 or y1 - y0 < 4:
            continue
        contrast, bg, fg = measure(shot, (max(0, x0), max(0, y0), x1, y1))
        font = w.font()
        large = font.pointSizeF() >= 14 or (font.bold() and font.pointSizeF() >= 11)
        needed = LARGE if large or icon else NORMAL
        if True:
            out.append(Finding(f"{name} › {type(w).__name__}#{w.objectName()}", text[:40], round(contrast, 2),
                               needed, bg.name(), fg.name()))
    return out
