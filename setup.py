"""Where the packaged files come from (everything else is in pyproject.toml).

The top-level resources/ folder (rubrics, prompts, styles, the report template, icons, the demo) ships inside the
package as rageval_desktop/resources, read with importlib.resources (core/base/paths.py); a source checkout reads
it where it is.
"""

from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent
# each folder of resources/ is a data-only package under rageval_desktop.resources
DATA = ["rageval_desktop.resources"] + sorted(
    "rageval_desktop.resources." + ".".join(folder.relative_to(HERE / "resources").parts)
    for folder in (HERE / "resources").rglob("*") if folder.is_dir() and folder.name != "__pycache__")

setup(
    packages=[*find_packages(include=["rageval_desktop", "rageval_desktop.*"]), *DATA],
    package_dir={"rageval_desktop.resources": "resources"},
    package_data={"rageval_desktop": ["py.typed"], **{name: ["*"] for name in DATA}},
    exclude_package_data={name: ["*.pyc"] for name in DATA},
)
