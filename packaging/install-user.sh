#!/usr/bin/env bash
# Put the unpacked bundle on this user's menu and PATH: links in ~/.local/bin, the launcher entry and icons in
# ~/.local/share. Run it from the unpacked folder; remove the links and files to uninstall.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${XDG_DATA_HOME:-$HOME/.local/share}
mkdir -p "$HOME/.local/bin"
ln -sf "$HERE/rageval-desktop" "$HOME/.local/bin/rageval-desktop"
ln -sf "$HERE/rageval-desktop" "$HOME/.local/bin/rageval"
cp -r "$HERE/share/." "$DATA/"
# the file types (.rageval projects, .ragevalpack review packs) and the launcher that opens them: double-click works
if command -v update-mime-database >/dev/null; then update-mime-database "$DATA/mime"; fi
if command -v update-desktop-database >/dev/null; then update-desktop-database "$DATA/applications"; fi
echo "installed: rageval-desktop and rageval in ~/.local/bin; the launcher entry in $DATA/applications, the file types in $DATA/mime"
