"""Double-clicking a project opens it: the launcher entry declares the file types, and a shared-mime-info definition
of them ships with it (the .desktop declared application/x-rageval-project, but nothing defined it)."""

from __future__ import annotations

import configparser
import xml.etree.ElementTree as ET

from tests.conftest import REPO

NS = "{http://www.freedesktop.org/standards/shared-mime-info}"


def test_every_type_the_launcher_opens_is_defined_with_its_glob_and_installed():
    entry = configparser.ConfigParser(interpolation=None)
    entry.read(REPO / "packaging" / "rageval-desktop.desktop", encoding="utf-8")
    declared = {t for t in entry["Desktop Entry"]["MimeType"].split(";") if t}
    mime = ET.parse(REPO / "packaging" / "rageval-desktop-mime.xml").getroot()
    defined = {t.get("type"): t.find(f"{NS}glob").get("pattern") for t in mime.findall(f"{NS}mime-type")}
    assert declared == set(defined) and defined == {"application/x-rageval-project": "*.rageval",
                                                    "application/x-rageval-pack": "*.ragevalpack"}
    assert "Exec=rageval-desktop %f" in (REPO / "packaging" / "rageval-desktop.desktop").read_text()
    build = (REPO / "packaging" / "build.sh").read_text()
    assert 'packaging/rageval-desktop-mime.xml "$SHARE/mime/packages/rageval-desktop.xml"' in build
    assert 'update-mime-database "$DATA/mime"' in (REPO / "packaging" / "install-user.sh").read_text()

