"""The PySide6 layer: the only package that imports Qt. Widgets draw; workers run core functions."""
