"""Reviewer keys: each reviewer signs with an Ed25519 key kept in the user's own
config folder (`$XDG_CONFIG_HOME/keypose-studio/keys/<name>.key`, mode 0600),
never in a project; a project keeps only the public half.

A key is made on first use. The names `demo`, `replay` and `batch` belong to
the studio's own runs (example films, replays, batch approvals); their reviews
are shown as that kind of run, never as a person.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import tempfile
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

MACHINE_KINDS = ("demo", "replay", "batch")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")


class ReviewerKeyError(ValueError):
    """A reviewer key that cannot be read or made; the message names the file."""


def reviewer_kind(name: str) -> str:
    """`person`, or the kind of studio run a machine reviewer stands for."""
    return name if name in MACHINE_KINDS else "person"


def keys_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "keypose-studio" / "keys"


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME.match(name):
        raise ReviewerKeyError(f"reviewer {name!r}: expected a name of letters, digits, '_', '.', '@' or '-' "
                        f"(at most 64, starting with a letter or digit)")
    return name


def key_path(name: str) -> Path:
    return keys_dir() / f"{check_name(name)}.key"


def _read(path: Path) -> Ed25519PrivateKey:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise ReviewerKeyError(f"{path}: the reviewer key is readable by others (mode {mode:04o}); "
                        f"run `chmod 600 {path}`")
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except OSError as e:
        raise ReviewerKeyError(f"{path}: cannot read the reviewer key ({e.strerror or e})") from None
    except (ValueError, TypeError) as e:
        raise ReviewerKeyError(f"{path}: not a PEM Ed25519 private key ({e})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ReviewerKeyError(f"{path}: expected an Ed25519 private key, found {type(key).__name__}")
    return key


def signing_key(name: str) -> Ed25519PrivateKey:
    """The reviewer's private key, made (and stored 0600) on first use."""
    path = key_path(name)
    if path.exists():
        return _read(path)
    try:
        return _make(path)
    except OSError as e:
        raise ReviewerKeyError(f"{path}: cannot make the reviewer key ({e.strerror or e})") from None


def _make(path: Path) -> Ed25519PrivateKey:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")   # 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)          # never replaces a key another process made meanwhile
        except FileExistsError:
            pass
        except OSError:                 # a file system without hard links
            with contextlib.suppress(FileExistsError), \
                    os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
                f.write(pem)
    finally:
        os.unlink(tmp)
    return _read(path)


def local_public_key(name: str) -> str | None:
    """The public half of this user's key for `name`, or None if this user has none."""
    try:
        path = key_path(name)
    except ReviewerKeyError:
        return None
    return public_hex(_read(path)) if path.exists() else None


def public_hex(key: Ed25519PrivateKey) -> str:
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()


def fingerprint(public: str) -> str:
    """A short name for a public key, for messages."""
    return hashlib.sha256(bytes.fromhex(public)).hexdigest()[:16]


def sign(key: Ed25519PrivateKey, message: bytes) -> str:
    return key.sign(message).hex()


def verify(public: str, message: bytes, signature: str) -> bool:
    """Does `signature` (hex) sign `message` under `public` (hex, raw 32 bytes)?"""
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(public)).verify(bytes.fromhex(signature), message)
        return True
    except (InvalidSignature, ValueError, TypeError):
        return False


# ---- the witness: where this user last signed in a project ------------------
# The log's own chain cannot show rows cut from its end; this user's config
# remembers the last row they signed in each project (by id and folder), so
# `audit verify` can tell when that row is gone or was rewritten.

def _witness_path(project_id: str, folder: Path) -> Path:
    name = hashlib.sha256(f"{project_id}\n{Path(folder).resolve()}".encode()).hexdigest()[:32]
    return keys_dir().parent / "witness" / f"{name}.json"


def remember_signed_row(project_id: str, folder: Path, row: int, row_hash: str, at: str) -> None:
    path = _witness_path(project_id, folder)
    try:
        _write_witness(path, row, row_hash, at)
    except OSError as e:
        raise ReviewerKeyError(f"{path}: the signed row {row} is stored in the project, but this record of it "
                               f"could not be written ({e.strerror or e})") from None


def _write_witness(path: Path, row: int, row_hash: str, at: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    body = json.dumps({"row": int(row), "hash": row_hash, "at": at}).encode()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    with os.fdopen(fd, "wb") as f:
        f.write(body)
    os.replace(tmp, path)


def signed_row(project_id: str, folder: Path) -> dict | None:
    """{"row", "hash", "at"} of the last row this user signed in the project, if any."""
    path = _witness_path(project_id, folder)
    try:
        data = json.loads(path.read_text())
        return {"row": int(data["row"]), "hash": str(data["hash"]), "at": str(data.get("at", ""))}
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        raise ReviewerKeyError(f"{path}: the record of your last signed row is unreadable; "
                               f"delete it to stop checking against it") from None
