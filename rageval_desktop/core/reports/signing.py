"""Signing keys for decision records: Ed25519 (the `cryptography` package), in OpenSSH's formats so that a key
made by `ssh-keygen -t ed25519` works too, and an allowed-signers list in git's format (`signer ssh-ed25519 KEY`).

A key of yours lives in your data folder (`keys/NAME`, readable by you only; `NAME.pub` beside it). In CI, a key
comes from an environment variable by name (`env:NAME`, the private key's text), never from the command line.
Whoever verifies decides whose keys count, from outside the project: an allowed-signers file kept in the repository
(`--allowed-signers FILE`, `$RAGEVAL_ALLOWED_SIGNERS`, or `.rageval/allowed_signers` in the project's folder or a
folder above it, up to the repository's root: `default_allowed`) and your own keys. The project's own list says only
that the file agrees with itself — whoever can write the file can write the list — and never makes a record hold.

`cryptography` is imported inside the functions that use it (45 ms): only recording and verifying pay for it."""

from __future__ import annotations

import base64
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rageval_desktop.core.base.errors import RagevalError
from rageval_desktop.core.base.paths import read_small_text, user_data_dir
from rageval_desktop.core.store.files import default_actor

ALGORITHM = "ssh-ed25519"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_SIGNER = re.compile(r"^[^\s#]{1,128}$")


class SigningError(RagevalError):
    """A key that cannot be made, read or used; the message says which and why."""


@dataclass(frozen=True)
class Signer:
    """Who signs (a name, as in an allowed-signers file) and their public key, as `ssh-ed25519 BASE64`."""

    name: str
    public: str

    def line(self) -> str:
        return f"{self.name} {self.public}"


def _me() -> str:
    """Your signer name: your user name, spaces made dashes (an allowed-signers line splits on spaces)."""
    return re.sub(r"\s+", "-", default_actor().strip())[:128] or "unknown"


def key_dir() -> Path:
    return user_data_dir() / "keys"


def _check_name(name: str) -> None:
    if not _NAME.match(name):
        raise SigningError(f"a key's name is letters, digits, '.', '_' and '-' (got {name!r})")


def _public_line(private: Any) -> str:
    from cryptography.hazmat.primitives import serialization

    text = private.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return str(text.decode("ascii"))


def new_key(name: str = "default", signer: str | None = None) -> tuple[Signer, Path]:
    """Make a key named `name` for `signer` (default: your user name); an existing key is never replaced."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    _check_name(name)
    who = signer or _me()
    if not _SIGNER.match(who):
        raise SigningError(f"a signer's name has no spaces and at most 128 characters (got {who!r})")
    folder = key_dir()
    path = folder / name
    if path.exists():
        raise SigningError(f"you already have a key named '{name}' ({path}); keys are never replaced",
                        cli_hint="choose another --name")
    private = Ed25519PrivateKey.generate()
    body = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                 serialization.NoEncryption())
    try:
        folder.mkdir(parents=True, exist_ok=True)
        os.chmod(folder, 0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(body)
        found = Signer(who, _public_line(private))
        path.with_name(name + ".pub").write_text(f"{found.public} {who}\n", encoding="ascii")
    except OSError as exc:
        raise SigningError(f"cannot write the key to {folder}: {exc.strerror or exc}") from None
    return found, path


def _read_private(text: bytes, where: str) -> Any:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private: Any
    try:
        if b"OPENSSH PRIVATE KEY" in text:
            private = serialization.load_ssh_private_key(text, password=None)
        else:
            private = serialization.load_pem_private_key(text, password=None)
    except (ValueError, TypeError) as exc:
        raise SigningError(f"{where} is not an unencrypted private key ({exc})",
                        cli_hint="make one with rageval keys new (or ssh-keygen -t ed25519 -N '')") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise SigningError(f"{where} is not an Ed25519 key (decisions are signed with Ed25519)")
    return private


def _unwrapped(held: str) -> bytes:
    """A key's text as an environment variable holds it: the key file's text, or that text base64-encoded on one
    line (`base64 -w0 KEY`; GitLab masks a variable only when it is one line), whose whitespace is dropped."""
    text = held.strip()
    if "PRIVATE KEY" in text:
        return text.encode()
    try:
        decoded = base64.b64decode("".join(text.split()), validate=True)
    except ValueError:
        return text.encode()
    return decoded if b"PRIVATE KEY" in decoded else text.encode()


NOTES: list[str] = []      # what loading a key found that its user must hear (said and cleared by `said`)


def said() -> list[str]:
    """The notes loading keys left since last asked (a key made on first use, a key file others can read)."""
    found = list(dict.fromkeys(NOTES))
    NOTES.clear()
    return found


def _exposed(path: Path) -> str | None:
    """Why a key file is readable by others (None: only its owner can read it)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if os.name == "nt" or not mode & 0o077:
        return None
    return (f"the signing key {path} can be read by other users (mode {mode & 0o777:o}): anyone who reads it can "
            f"sign as you — chmod 600 {path}")


def _missing(path: Path, name: str, create: bool) -> None:
    """A key file that is not there: made when it is your default key's first use (and said), else refused — and
    never made in place of a lost one (its public half left behind tells)."""
    public = path.with_name(path.name + ".pub")
    if public.exists():       # the private half is lost: a new key in its place would sign as someone new
        raise SigningError(f"your signing key '{name}' is missing ({path}; its public half {public.name} is "
                           "still there): restore the key file from where you keep it — a new key is never "
                           "made in its place, as records it signed would no longer be yours to extend",
                           cli_hint="or make a key of another name: rageval keys new --name NAME")
    if name != "default" or not create:
        raise SigningError(f"no key named '{name}' ({path})", cli_hint="make one with rageval keys new --name NAME")
    made, _ = new_key("default")
    NOTES.append(f"made your signing key 'default' ({path}; signs as {made.name}): add its public line to the "
                 "allowed-signers file your CI reads (rageval keys export)")


def load_key(name: str | None = None, *, create: bool = True) -> tuple[Any, Signer]:
    """(private key, signer) for `name`: a key in your data folder, `env:VAR` (the key's text in the environment
    variable VAR, or that text base64-encoded on one line), or the path of a key file. None: your default key,
    made on first use when `create`."""
    name = name or "default"
    if name.startswith("env:"):
        var = name[4:]
        held = os.environ.get(var)
        if not held:
            raise SigningError(f"the environment variable {var} holds no key")
        private = _read_private(_unwrapped(held), f"the key in {var}")
        who = os.environ.get("RAGEVAL_SIGNER") or _me()
        if not _SIGNER.match(who):
            raise SigningError(f"RAGEVAL_SIGNER must be a name without spaces, at most 128 characters (got {who!r})")
        return private, Signer(who, _public_line(private))
    path = Path(name).expanduser() if ("/" in name or name.startswith("~")) else key_dir() / name
    if not path.exists():
        _missing(path, name, create)
    exposed = _exposed(path)
    if exposed:
        NOTES.append(exposed)
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise SigningError(f"cannot read the key {path}: {exc.strerror or exc}") from None
    private = _read_private(text, str(path))
    signer = _me()
    pub = path.with_name(path.name + ".pub")
    if pub.exists():
        parts = pub.read_text(encoding="ascii", errors="replace").split()
        if len(parts) >= 3 and _SIGNER.match(parts[2]):
            signer = parts[2]
    return private, Signer(signer, _public_line(private))


def list_keys() -> list[dict[str, str]]:
    out = []
    folder = key_dir()
    for path in sorted(folder.glob("*")) if folder.is_dir() else []:
        if path.suffix == ".pub" or not path.is_file():
            continue
        try:
            _, signer = load_key(str(path), create=False)
        except SigningError as exc:
            out.append({"name": path.name, "problem": str(exc)})
            continue
        out.append({"name": path.name, "signer": signer.name, "public": signer.public, "path": str(path)})
    return out


def sign(private: Any, data: bytes) -> str:
    return base64.b64encode(private.sign(data)).decode("ascii")


def verify(public: str, data: bytes, signature: str) -> bool:
    """Whether `signature` (base64) is `public`'s (`ssh-ed25519 BASE64`) over `data`."""
    from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = serialization.load_ssh_public_key(public.encode("ascii"))
        if not isinstance(key, Ed25519PublicKey):
            return False
        key.verify(base64.b64decode(signature, validate=True), data)
        return True
    except (InvalidSignature, UnsupportedAlgorithm, ValueError, TypeError, UnicodeEncodeError):
        return False    # a key of no type it knows ("[1, 2]" edited in): not a signature of anyone's


def parse_allowed(text: str, where: str = "allowed signers") -> list[Signer]:
    """An allowed-signers list (git's format, restricted to Ed25519): `signer ssh-ed25519 BASE64 [comment]` a
    line; blank lines and `#` comments are skipped. A line it cannot read is refused with its number."""
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) < 3 or parts[1] != ALGORITHM or not _SIGNER.match(parts[0]):
            raise SigningError(f"{where}, line {number}: expected 'signer ssh-ed25519 KEY' (got {line[:80]!r})")
        try:
            base64.b64decode(parts[2], validate=True)
        except ValueError:
            raise SigningError(f"{where}, line {number}: the key is not base64") from None
        out.append(Signer(parts[0], f"{parts[1]} {parts[2]}"))
    return out


def read_allowed(path: str | Path) -> list[Signer]:
    path = Path(path)
    try:
        text = read_small_text(path, "the allowed signers", 1024 * 1024)
    except RagevalError as exc:
        raise SigningError(str(exc)) from None
    return parse_allowed(text, str(path))


ALLOWED_FILE = Path(".rageval") / "allowed_signers"
ALLOWED_ENV = "RAGEVAL_ALLOWED_SIGNERS"


def default_allowed(project_path: str | Path) -> Path | None:
    """The allowed-signers file a verification reads when none is named: `$RAGEVAL_ALLOWED_SIGNERS`, else
    `.rageval/allowed_signers` in the project's folder or the nearest folder above it, stopping at a repository's
    root (a folder holding `.git`); None when there is none."""
    named = os.environ.get(ALLOWED_ENV)
    if named:
        return Path(named)
    folder = Path(project_path).resolve().parent
    for place in (folder, *folder.parents):
        if (place / ALLOWED_FILE).is_file():
            return place / ALLOWED_FILE
        if (place / ".git").exists():
            return None
    return None
