"""Tunable constants, and the optional config file (``$XDG_CONFIG_HOME/memsearch/config.toml`` or
``$MEMSEARCH_CONFIG``) that sets those a user may want to change (README, "Configuration")."""

from __future__ import annotations

import os
from typing import NamedTuple

from .errors import InvalidArgument, MemsearchError, RootNotFound, quoted
from .memory_file import open_confined

# A hit under this fraction of the top hit's score is noise (of OR-joined words, it matched one common one).
FLOOR = 0.15

# Fetch this many times the limit from FTS5 (up to the cap): candidates for the floor, in bounded work.
OVERFETCH = 3
OVERFETCH_CAP = 50

# snippet(): excerpt length in tokens and the markers around matched words.
SNIPPET_TOKENS = 32
# 32 tokens can be huge (a run of punctuation is no token): a longer excerpt is cut around its first match.
SNIPPET_MAX_CHARS = 600
MARK_OPEN, MARK_CLOSE, ELLIPSIS = "<<", ">>", "..."

DEFAULT_LIMIT = 10
MAX_LIMIT = 1000

# Memory files are notes; a bigger file is a log or a dump that would swamp the ranking: skipped and reported.
MAX_FILE_BYTES = 2_000_000

# How long a writer waits for another process's write transaction.
BUSY_TIMEOUT_S = 30.0

# A manifest goes into an agent's context: past this many lines it is noise (Claude Code's memory scan stops here too).
MANIFEST_LIMIT = 200


class Settings(NamedTuple):
    """The settings the config file (or a caller) may change, with their defaults; immutable."""

    floor: float = FLOOR
    # Reconciling before every query keeps results fresh: off only when something else (a watcher, a batch job) does.
    reconcile: bool = True
    max_file_bytes: int = MAX_FILE_BYTES
    manifest_limit: int = MANIFEST_LIMIT
    # How long a query waits for a running watcher's cookie reply (a few ms) before walking the tree itself.
    sync_timeout: float = 1.0

    def with_overrides(self, **values) -> "Settings":
        """A copy with the values given that are not None, each checked; TypeError for an unknown name."""
        if unknown := sorted(values.keys() - set(self._fields)):
            raise TypeError(f"unknown setting {', '.join(unknown)}: use one of {', '.join(self._fields)}")
        settings = self._replace(**{k: v for k, v in values.items() if v is not None})
        for name, value in zip(self._fields, settings):
            checked_setting(name, value, "settings: ")
        return settings


# Each setting's range and type (config file and caller's Settings alike), and a search limit's: one rule.
RANGES = {"floor": (0.0, 1.0, float), "reconcile": (False, True, bool), "max_file_bytes": (1, 1 << 34, int),
          "manifest_limit": (1, 1 << 31, int), "sync_timeout": (0.0, 600.0, float), "limit": (1, MAX_LIMIT, int),
          "seconds": (0.0, 86_400.0, float)}  # a history refresh's reading time (None: until done)


def given_settings(settings: Settings | None, **overrides) -> Settings:
    """A caller's Settings (None: the config file's) with ``overrides`` that are not None, all checked."""
    given_type(settings, Settings | None, "settings must be a memsearch.settings.Settings")
    return (settings or load_settings()).with_overrides(**overrides)


def checked_setting(name: str, value, prefix: str = "", error: type[MemsearchError] = InvalidArgument,
                    setting: str | None = None):
    """``value`` if setting ``name`` (or a search's limit) may hold it, else ``error`` saying why; NaN is in no range.
    ``setting``: the one whose range argument ``name`` takes (manifest()'s limit: manifest_limit's)."""
    low, high, kind = RANGES[setting or name]
    if kind is bool:
        fits, rule = isinstance(value, bool), "true or false"
    else:
        fits = not isinstance(value, bool) and isinstance(value, (int,) if kind is int else (int, float)) \
            and low <= value <= high
        rule = f"a {'whole number' if kind is int else 'number'} from {low} to {high}"
    if not fits:
        raise error(f"{prefix}{name} must be {rule}, got {quoted(value, 40, always=True)}", argument=name)
    return value


def checked_progress(progress) -> None:
    """A caller's progress callback (None: none), checked where it enters, not when first called mid-walk."""
    if progress is not None and not callable(progress):
        raise InvalidArgument(f"progress must be called as progress(done, total), got {type(progress).__name__}")


def given_type(value, kind, must_be: str):
    """``value`` if it is a ``kind`` (a type, or a union: str | None), else InvalidArgument("<must_be>, got <type>")."""
    if not isinstance(value, kind):
        raise InvalidArgument(f"{must_be}, got {type(value).__name__}")
    return value


def given_path(value, must_be: str, empty: str | None = None) -> str:
    """A caller's path as text; None, a number, bytes or a path-like giving no str raise InvalidArgument
    ("<must_be>, got <type>"). With ``empty``, a blank one raises InvalidArgument(empty): os.path reads "" as
    the working directory, which a folder left out (a ':' too many in a list of roots) never means."""
    try:
        path = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    except TypeError:  # a __fspath__ that gave neither str nor bytes, or raised it: the same wrong type
        path = None
    if not isinstance(path, str):
        given_type(value, str, must_be)  # raises (a PathLike of bytes too)
    if empty is not None and not path.strip():
        raise InvalidArgument(empty)
    return path


def absolute(path: str, what: str, error: type[MemsearchError] | None = None) -> str:
    """``os.path.abspath(path)``; a relative path run from a working folder since deleted is ``error`` (default
    RootNotFound) "<what> ... is relative and the working folder is gone", not getcwd()'s FileNotFoundError."""
    try:
        return os.path.abspath(path)
    except FileNotFoundError:
        raise (error or RootNotFound)(f"{what} {quoted(path, 200, always=True)} is relative and the working folder"
                                      " is gone (deleted): give an absolute path, or cd to a folder") from None


def path_text(path: str | os.PathLike) -> str:
    """``str(pathlib.Path(path))`` without importing pathlib (a one-shot query never does): ``.``
    parts and repeated or trailing separators go; ``..`` and exactly two leading slashes stay."""
    path = os.fspath(path)
    if os.name != "posix" or not isinstance(path, str):
        from pathlib import Path  # its own rules (drives, UNC), or its TypeError for bytes

        return str(Path(path))
    root = ""
    if path[:1] == "/":
        rest = path.lstrip("/")
        root = "//" if len(path) - len(rest) == 2 else "/"
        path = rest
    return root + "/".join(part for part in path.split("/") if part and part != ".") or "."


def xdg_folder(name: str, default: str, home: str | None = None) -> str:
    """``$name`` if it is an absolute path (the XDG spec ignores a relative one, which would put the
    index wherever a command runs), else ``default`` in ``home`` (None: the user's home folder), which
    must be absolute too (MemsearchError)."""
    if os.path.isabs(value := os.environ.get(name, "")):
        return value
    if not os.path.isabs(home := os.path.expanduser("~") if home is None else home):  # ("~": no home known)
        raise MemsearchError(f"HOME is {quoted(os.environ.get('HOME', 'unset'))}, not a folder's absolute path"
                             " (files would go wherever a command runs): set it to your home folder")
    return os.path.join(home, default)


MAX_CONFIG_BYTES = 1 << 20
# The config file's keys: the settings, and the roots (memsearch.roots) and transcript folders (memsearch.history).
CONFIG_KEYS = frozenset((*Settings._fields, "roots", "history_roots"))


def read_config() -> dict:
    """The config file as a dict; {} when there is none (MemsearchError if MEMSEARCH_CONFIG names none: a typo
    there, or in a key, would leave every setting at its default without a word)."""
    named = os.environ.get("MEMSEARCH_CONFIG")
    path = path_text(named or os.path.join(xdg_folder("XDG_CONFIG_HOME", ".config"), "memsearch", "config.toml"))
    try:
        fd, _ = open_confined(path, confined=False)  # a FIFO or /dev/zero named as the config hung every command
        with open(fd, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):  # (HOME=/dev/null, as some services run: no file either)
        if named:
            # Quoted in each error, as every path an error names (a line break or a U+3164 cannot make it read as
            # another), and only there: every process reads the config.
            raise MemsearchError(f"config file {quoted(path)} (MEMSEARCH_CONFIG) does not exist") from None
        return {}
    except OSError as ex:
        raise MemsearchError(f"cannot read config file {quoted(path)}: {ex.strerror}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise MemsearchError(f"config file {quoted(path)} is larger than {MAX_CONFIG_BYTES} bytes")
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    try:
        conf = tomllib.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as ex:
        raise MemsearchError(f"config file {quoted(path)} is not valid TOML: {ex}") from None
    if unknown := sorted(conf.keys() - CONFIG_KEYS):
        raise MemsearchError(f"config: unknown key(s) {', '.join(quoted(k, 40) for k in unknown[:5])}"
                             f" in {quoted(path)}: use {', '.join(sorted(CONFIG_KEYS))}")
    return conf


def transcript_folder(root) -> str:
    """A caller's transcript folder as text; InvalidArgument for what is no path, or a blank one."""
    return given_path(root, "a transcript folder must be a path",
                      "empty transcript folder: give a folder's path, or drop the empty item from the list")


def configured_roots() -> list[str]:
    """Transcript folders from MEMSEARCH_HISTORY_ROOTS when it is not empty, as the command line reads it (an empty
    item is an error, not left out), else the config's ``history_roots``."""
    value = os.environ.get("MEMSEARCH_HISTORY_ROOTS", "")
    if value:
        return value.split(os.pathsep)
    given = read_config().get("history_roots", [])
    if not isinstance(given, list):
        raise MemsearchError("config: history_roots must be a list of folders")
    try:  # (an error says where it is)
        return [transcript_folder(g) for g in given]
    except InvalidArgument as ex:
        raise MemsearchError(f"config: history_roots: {ex}") from None


def load_settings() -> Settings:
    conf = read_config()
    return Settings(**{name: RANGES[name][2](checked_setting(name, conf[name], "config: ", MemsearchError))
                       for name in Settings._fields if name in conf})
