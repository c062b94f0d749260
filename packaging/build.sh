#!/usr/bin/env bash
# The desktop bundle (make package): PyInstaller one-folder in dist/bundle/rageval-desktop, `rageval` (the CLI twin)
# as a link beside the app, the launcher entry, AppStream metadata and icons under share/ as in /usr/share, then a
# .tar.gz of it, and an AppImage when appimagetool is on the PATH. Usage: bash packaging/build.sh [VENV_BIN]
set -euo pipefail
BIN=$(cd "${1:-.venv/bin}" && pwd)
cd "$(dirname "$0")/.."
VERSION=$("$BIN/python" -c "from rageval_desktop._version import __version__; print(__version__)")
OUT=dist/bundle
APP="$OUT/rageval-desktop"
echo "[1/3] PyInstaller (a few minutes)"
rm -rf build/pyi "$APP"
"$BIN/pyinstaller" --noconfirm --log-level ERROR --workpath build/pyi --distpath "$OUT" packaging/rageval-desktop.spec
ln -sf rageval-desktop "$APP/rageval"

echo "      PyInstaller: ${SECONDS} s"
echo "[2/3] launcher entry and icons"
SHARE="$APP/share"
install -D -m 644 packaging/rageval-desktop.desktop "$SHARE/applications/rageval-desktop.desktop"
install -D -m 644 packaging/io.github.rageval.Desktop.metainfo.xml "$SHARE/metainfo/io.github.rageval.Desktop.metainfo.xml"
install -D -m 644 packaging/rageval-desktop-mime.xml "$SHARE/mime/packages/rageval-desktop.xml"
for png in resources/icons/rageval-*.png; do
    size=${png##*-}; size=${size%.png}
    install -D -m 644 "$png" "$SHARE/icons/hicolor/${size}x${size}/apps/rageval-desktop.png"
done
install -D -m 644 resources/icons/rageval.svg "$SHARE/icons/hicolor/scalable/apps/rageval-desktop.svg"
install -m 755 packaging/install-user.sh "$APP/install-user.sh"

echo "[3/3] archives"
START=$SECONDS
TAR="dist/rageval-desktop-$VERSION-linux-$(uname -m).tar.gz"
tar -C "$OUT" -czf "$TAR" rageval-desktop
if command -v appimagetool >/dev/null 2>&1; then
    APPDIR=build/AppDir
    rm -rf "$APPDIR" && mkdir -p "$APPDIR/usr" && cp -a "$APP" "$APPDIR/usr/lib-rageval"
    ln -s usr/lib-rageval/rageval-desktop "$APPDIR/AppRun"
    cp packaging/rageval-desktop.desktop "$APPDIR/" && cp resources/icons/rageval-256.png "$APPDIR/rageval-desktop.png"
    ARCH=$(uname -m) appimagetool "$APPDIR" "dist/RAGEval_Desktop-$VERSION-$(uname -m).AppImage"
else
    echo "appimagetool is not on the PATH: no AppImage (the .tar.gz has everything)"
fi
echo "      archives: $((SECONDS - START)) s"
echo "bundle: $APP ($(du -sh "$APP" | cut -f1)); archive: $TAR ($(du -sh "$TAR" | cut -f1)); $SECONDS s in all"
