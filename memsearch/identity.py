"""Which memory folder belongs to a project, as the agents themselves decide: ZCode's
``<slug>-<hash16>`` folder of a workspace, MiMo Code's project id kept in the repository's main
``.git`` folder (``global`` outside any repository). The rules: docs/roots.md, "Project identity".
"""

from __future__ import annotations

import hashlib
import ntpath
import os
import posixpath
import re
import sys
import uuid
from contextlib import suppress
from pathlib import Path

from .context import read_head
from .errors import InvalidArgument, MemsearchError
from .memory_file import MEMORY_DIR
from .roots import ZCODE_PROJECTS, ZCODE_STORAGE
from .settings import given_path, given_type

ZCODE_SLUG_MAX = 48
ZCODE_HASH_HEX = 16
ZCODE_IDENTITY_SLUG = "project"

MIMO_ID_FILE = "mimocode-project-id"
MIMO_GLOBAL = "global"

# What JavaScript's trim() removes: not str.strip()'s set (U+001C-U+001F, U+0085, but no BOM).
JS_WHITESPACE = ("\t\n\v\f\r \xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
                 + "\u2028\u2029\u202f\u205f\u3000\ufeff")

_NOT_SLUG = re.compile(r"[^a-z0-9._-]")


def zcode_project_folder(workspace: str | os.PathLike | None = None, *, identity: str | None = None,
                         windows: bool | None = None) -> str:
    """``<slug>-<hash16>``: a workspace's ZCode project folder. ``identity``: its identity string,
    if any (blank: none); ``windows``: Windows path rules (default: when running on Windows)."""
    given_type(identity, str | None, "identity must be a string")
    identity = identity.strip(JS_WHITESPACE) if identity is not None else ""
    if identity:
        digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()
        return f"{ZCODE_IDENTITY_SLUG}-{digest[:ZCODE_HASH_HEX]}"
    if workspace is None:
        raise InvalidArgument("give a workspace path or a non-blank identity")
    windows = sys.platform == "win32" if windows is None else windows
    path = given_path(workspace, "workspace must be a path")
    # Node's path.resolve, as ZCode makes it absolute: unlike abspath, leading slashes become one.
    absolute = (ntpath.abspath(path) if windows
                else "/" + posixpath.normpath(posixpath.join(os.getcwd(), path)).lstrip("/"))
    key = absolute.lower() if windows else absolute
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()
    name = (ntpath if windows else posixpath).basename(absolute)  # none for a root ("/", "C:\\")
    slug = _NOT_SLUG.sub("-", name.lower())[:ZCODE_SLUG_MAX] or ZCODE_IDENTITY_SLUG
    return f"{slug}-{digest[:ZCODE_HASH_HEX]}"


def zcode_memory_dir(workspace: str | os.PathLike | None = None, *, identity: str | None = None,
                     storage: str | os.PathLike | None = None, windows: bool | None = None) -> Path:
    """``<storage>/cli/memories/projects/<slug>-<hash16>/memory`` (not created)."""
    given = given_path(storage, "storage must be a path") if storage is not None else f"~/{ZCODE_STORAGE}"
    folder = zcode_project_folder(workspace, identity=identity, windows=windows)
    return Path(os.path.expanduser(given)).joinpath(*ZCODE_PROJECTS.split("/"), folder, MEMORY_DIR)


# -- MiMo ---------------------------------------------------------------------------
def main_git_dir(path: str | os.PathLike = ".") -> Path | None:
    """The main ``.git`` folder of the repository holding ``path``, or None. A linked worktree's
    ``.git`` is a file (``gitdir: ...``) whose folder's ``commondir`` names the main one."""
    here = Path(os.path.abspath(given_path(path, "path must be a path")))
    with suppress(OSError):  # a name too long, a loop: no repository to speak of
        for folder in (here, *here.parents):
            dot_git = folder / ".git"
            if dot_git.is_dir():
                return _common_dir(dot_git)
            if dot_git.is_file():
                line = _read_stripped(dot_git)
                if not line.startswith("gitdir:"):
                    return None
                git_dir = Path(os.path.normpath(folder / line[len("gitdir:"):].strip()))  # an absolute one replaces folder
                return _common_dir(git_dir) if _is_git_dir(git_dir) else None
    return None


def _common_dir(git_dir: Path) -> Path | None:
    if not (common := _read_stripped(git_dir / "commondir")):
        return git_dir
    main = Path(os.path.normpath(git_dir / common))  # an absolute commondir replaces git_dir
    return main if _is_git_dir(main) else None


def _is_git_dir(path: Path) -> bool:
    """Whether ``path`` is a git folder: a .git file or commondir may name any folder (/etc), and
    mimo_project_id writes its id there."""
    return (path / "HEAD").is_file() and ((path / "objects").is_dir() or (path / "commondir").is_file())


def _read_stripped(path: Path) -> str:
    """The file's text stripped, or "" if it cannot be read as UTF-8: its first 4 KiB, only if it is a
    regular file (a FIFO or /dev/zero in its place must not hang or fill memory)."""
    head = read_head(str(path), 4096)
    with suppress(UnicodeDecodeError):
        return "" if head is None else head[0].decode("utf-8").strip()
    return ""


def mimo_project_id(path: str | os.PathLike = ".", *, create: bool = True) -> str | None:
    """The MiMo project id of the repository holding ``path``; ``create=False`` writes nothing
    (None when the repository has no id yet)."""
    if (git_dir := main_git_dir(path)) is None:
        return MIMO_GLOBAL
    id_file = git_dir / MIMO_ID_FILE
    if (existing := _read_id(id_file)) or not create:
        return existing
    new = str(uuid.uuid4())
    tmp = git_dir / f"{MIMO_ID_FILE}.{os.getpid()}-{new[:8]}.tmp"
    try:
        tmp.write_text(new + "\n", encoding="utf-8")
        try:
            # A hard link makes the file appear whole or not at all: of two
            # processes creating it at once, one wins and both use its id.
            os.link(tmp, id_file)
            return new
        except OSError:  # already there (another process's id, or not a UUID), or no hard links here
            if _read_id(id_file) is None:
                os.replace(tmp, id_file)
            return _read_id(id_file) or new
    except OSError as ex:
        raise MemsearchError(f"cannot write the project id {id_file}: {ex.strerror}") from None
    finally:
        with suppress(OSError):
            tmp.unlink()


def _read_id(path: Path) -> str | None:
    text = _read_stripped(path)
    with suppress(ValueError):  # not a UUID (nor "": unreadable)
        uuid.UUID(text)
        return text
    return None
