"""A chart's PNG is decoded in the worker that drew it: decoding it on the GUI thread took 8 ms of the dashboard's
12 ms redraw while a judge job ran (bench/bench_gui.py --only stall)."""

from __future__ import annotations

from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtGui import QColor, QImage

from rageval_desktop.gui import chart_process, operations
from rageval_desktop.gui.views.analysis_views import ChartLabel


def _png(width: int, height: int) -> bytes:
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("steelblue"))
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data.data())


def test_a_chart_comes_decoded_from_its_worker_and_the_label_shows_it(qapp, monkeypatch):
    png = _png(321, 123)
    monkeypatch.setattr(chart_process, "draw", lambda kind, data, size, dark: (png, []))
    chart = operations.dashboard_chart({"judge_metrics": []}, None, "slices", (321, 123), False, None)
    assert chart.png == png
    assert chart.image is not None and not chart.image.isNull()
    assert (chart.image.width(), chart.image.height()) == (321, 123)
    label = ChartLabel("hint")
    label.set_chart(chart, (321, 123))
    assert (label.pixmap().width(), label.pixmap().height()) == (321, 123)
    label.set_chart(operations.Chart(png, []), (321, 123))      # a chart without its image: decoded here
    assert (label.pixmap().width(), label.pixmap().height()) == (321, 123)
