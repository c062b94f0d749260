"""Where the app keeps a person's files: the XDG base directories in full (settings in $XDG_CONFIG_HOME, state in
$XDG_STATE_HOME, data in $XDG_DATA_HOME; it read only the data and cache ones). Settings an earlier release kept in
the data folder are copied over once, never moved or lost."""

from __future__ import annotations

from rageval_desktop.core.base import paths


def test_settings_state_and_data_each_go_where_xdg_says(tmp_path, monkeypatch):
    monkeypatch.delenv("RAGEVAL_DATA_DIR", raising=False)
    for name, folder in (("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state"), ("XDG_DATA_HOME", "data")):
        monkeypatch.setenv(name, str(tmp_path / folder))
    assert paths.user_config_dir() == tmp_path / "config" / "rageval-desktop"
    assert paths.user_state_dir() == tmp_path / "state" / "rageval-desktop"
    assert paths.user_data_dir() == tmp_path / "data" / "rageval-desktop"
    from rageval_desktop.core.judges.hhem import registry_path
    from rageval_desktop.core.store.integrity import _passed_file

    assert registry_path().parent == tmp_path / "config" / "rageval-desktop"
    assert _passed_file().parent == tmp_path / "state" / "rageval-desktop"


def test_without_xdg_variables_the_specs_defaults_under_home(tmp_path, monkeypatch):
    monkeypatch.delenv("RAGEVAL_DATA_DIR", raising=False)
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert paths.user_config_dir() == tmp_path / ".config" / "rageval-desktop"
    assert paths.user_state_dir() == tmp_path / ".local" / "state" / "rageval-desktop"


def test_settings_of_an_earlier_release_are_copied_once(tmp_path, monkeypatch):
    monkeypatch.delenv("RAGEVAL_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    old = tmp_path / "data" / "rageval-desktop"
    old.mkdir(parents=True)
    (old / "settings.ini").write_text("[General]\nreviewer=ann\n", encoding="utf-8")
    new = paths.user_config_dir() / "settings.ini"
    assert new.read_text(encoding="utf-8") == "[General]\nreviewer=ann\n" and (old / "settings.ini").exists()
    new.write_text("[General]\nreviewer=bo\n", encoding="utf-8")
    paths.user_config_dir()
    assert new.read_text(encoding="utf-8") == "[General]\nreviewer=bo\n"     # copied once: later edits stay


def test_one_variable_keeps_them_all_together_for_tests_and_portable_installs(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGEVAL_DATA_DIR", str(tmp_path / "all"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert paths.user_config_dir() == paths.user_state_dir() == paths.user_data_dir() == tmp_path / "all"


def test_on_macos_and_windows_the_folders_are_the_systems_own(tmp_path, monkeypatch):
    """Issue 76.7: the XDG folders were used on every OS (~/.config on a Mac, on Windows). platformdirs decides; the
    settings an earlier release kept in XDG's folder there are copied over once."""
    import platformdirs
    from platformdirs.macos import MacOS

    monkeypatch.delenv("RAGEVAL_DATA_DIR", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    for kind in ("data", "config", "state"):
        monkeypatch.setattr(platformdirs, f"user_{kind}_dir",
                            lambda app, appauthor, kind=kind: getattr(MacOS(app, appauthor), f"user_{kind}_dir"))
    old = tmp_path / ".config" / "rageval-desktop"
    old.mkdir(parents=True)
    (old / "settings.ini").write_text("[General]\nreviewer=ann\n", encoding="utf-8")
    mac = tmp_path / "Library" / "Application Support" / "rageval-desktop"
    assert paths.user_config_dir() == paths.user_data_dir() == mac
    assert (mac / "settings.ini").read_text(encoding="utf-8") == "[General]\nreviewer=ann\n"
