"""Open the index database: location, pragmas, schema, and recovery. The database is a cache of
the files: a damaged one is set aside (kept) and rebuilt, never repaired. Whether a file is an
index is decided before anything writes to it (:func:`inspect`).
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from _thread import RLock  # threading's own, without importing threading on the query path
from contextlib import contextmanager, suppress
from typing import Any, Callable, NoReturn

from . import migrate
from .fingerprint import COLUMNS as FINGERPRINT
from .metadata import FIELDS
from .errors import DatabaseCorrupt, DatabaseError, DatabaseLocked, InvalidArgument, SchemaTooNew, quoted
from .settings import BUSY_TIMEOUT_S, given_path, path_text, xdg_folder

# Page cache of each connection, in KiB (allocated only as pages are used).
CACHE_KIB = 32768

# WAL bytes kept once checkpointed (journal_size_limit): else a long-lived process keeps a WAL as
# large as its largest write, a cold build's whole index. About SQLite's autocheckpoint (1000 pages).
WAL_LIMIT_BYTES = 4 << 20

# Messages by which SQLite says the file is damaged or not a database at all.
# FTS5 reports a damaged structure record as a failed vtable constructor.
_CORRUPT = ("file is not a database", "malformed", "database corrupt", "disk image", "vtable constructor failed")


class NotAnIndex(DatabaseCorrupt):
    """The file is not a memsearch index: not SQLite at all, or another program's database."""


def is_corruption(ex: sqlite3.Error) -> bool:
    return any(text in str(ex) for text in _CORRUPT)


# PRAGMA application_id of every index memsearch creates ("mems"): a damaged file with it is set
# aside and rebuilt, even with --db; one without it is never written. Older indexes: see _premark.
APPLICATION_ID = 0x6D656D73


def cache_folder() -> str:
    """Where memsearch keeps its indexes: ``$XDG_CACHE_HOME/memsearch``."""
    return path_text(os.path.join(xdg_folder("XDG_CACHE_HOME", ".cache"), "memsearch"))


def given_file(path: str | os.PathLike) -> str:
    """The index file a caller named, as text, ``~`` expanded and made absolute now (a later
    os.chdir() must not move it); InvalidArgument for what is not a path."""
    path = os.path.expanduser(given_path(path, "db_path must be a file's path"))
    if not path:  # (else the default file, though the caller named one)
        raise InvalidArgument("db_path is empty: name a file, or leave it out for the default one")
    try:
        os.fsencode(path)
    except UnicodeEncodeError:  # a lone surrogate that is no escaped byte: every os call would raise
        raise InvalidArgument(f"db_path {quoted(path, 200, always=True)} is no file's name"
                              " (it holds a lone surrogate)") from None
    if not os.path.isabs(path):
        with suppress(OSError):  # no working folder (deleted): left relative, for SQLite to report
            path = os.path.join(os.getcwd(), path)
    return path_text(path)


def default_db_file(root: str | os.PathLike) -> str:
    """One database per root, keyed by the resolved root path."""
    resolved = os.path.realpath(root)
    name = "".join(c if c.isalnum() or c in "-_" else "-" for c in os.path.basename(resolved))
    return os.path.join(cache_folder(), f"{name or 'root'}-{_digest(resolved)}.db")


def roots_db_file(keys, kind: str = "roots") -> str:
    """One database per set of roots (``kind`` "history": of transcript folders), keyed by the
    sorted root keys: turning a root on or off picks another file."""
    return os.path.join(cache_folder(), f"{kind}-{_digest(chr(10).join(sorted(keys)))}.db")


def _digest(text: str) -> str:
    """16 hex digits of SHA-256, without importing hashlib (which loads OpenSSL)."""
    try:
        from _sha256 import sha256  # CPython 3.10, 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # CPython 3.12+
        except ImportError:
            from hashlib import sha256
    return sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def set_hash_size(conn: sqlite3.Connection, fts: str, size: int) -> None:
    """FTS5's 'hashsize' of table ``fts`` (an FTS5 too old to know it just builds slower)."""
    with suppress(sqlite3.OperationalError):
        conn.execute(f"INSERT INTO {fts} ({fts}, rank) VALUES ('hashsize', ?)", (size,))


# FTS5's own hash size, put back after a bulk load: the setting is stored in the index, and later
# small writes must not hold more.
FTS5_HASH_BYTES = 1 << 20


@contextmanager
def bulk_indexing(conn: sqlite3.Connection, content: str, fts: str, hash_bytes: int, added: str | None = None):
    """Rows written inside go to table ``content`` alone, its sync triggers dropped (a trigger per
    row doubles the CPU); then one statement indexes them into ``fts`` and the triggers come back.
    ``added``: the columns to index of the rows inserted inside; None: rebuild the whole table.
    Yields a function that indexes the rows inserted so far (with ``added``), so that FTS5's work
    can go along with the writing. Inside the caller's write transaction, so a rollback leaves all
    as it was."""
    triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?",
                            (content,)).fetchall()
    indexed = conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {content}").fetchone()[0]
    for name, _ in triggers:
        conn.execute(f'DROP TRIGGER "{name}"')  # names come from sqlite_master, not from input
    set_hash_size(conn, fts, hash_bytes)

    def index_inserted() -> None:
        # Rowids only grow (INTEGER PRIMARY KEY above the largest): the rows written since the last call.
        nonlocal indexed
        last = conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {content}").fetchone()[0]
        conn.execute(f"INSERT INTO {fts} (rowid, {added}) SELECT rowid, {added} FROM {content}"
                     " WHERE rowid > ? AND rowid <= ?", (indexed, last))
        indexed = last

    yield index_inserted
    if added is None:
        conn.execute(f"INSERT INTO {fts} ({fts}) VALUES ('rebuild')")
    else:
        index_inserted()
    set_hash_size(conn, fts, FTS5_HASH_BYTES)
    for _, sql in triggers:
        conn.execute(sql)


def set_journal(conn: sqlite3.Connection, mode: str) -> bool:
    """Whether the file now has journal ``mode``: SQLite refuses to leave WAL while another
    connection reads the file, and to enter it while another writes; either way it works on."""
    try:
        return conn.execute(f"PRAGMA journal_mode = {mode}").fetchone()[0] == mode  # PRAGMA takes no parameters
    except sqlite3.OperationalError:  # locked: the file keeps its mode, and the next open tries again
        return False


@contextmanager
def building(conn: sqlite3.Connection):
    """Writes into an empty index through a rollback journal: it holds only the few pages that
    existed, and each new page is written once, where WAL writes it twice (the log, then the
    checkpoint). Still atomic: a crash leaves the journal, and the next open rolls it back."""
    switched = set_journal(conn, "delete")
    try:
        yield
    finally:
        if switched:
            set_journal(conn, "wal")


def open_database(path: str | os.PathLike, *, explicit: bool, recover: bool = True) -> sqlite3.Connection:
    """Connect, check and migrate. ``explicit``: the user named this file.
    ``recover``: set a damaged cache aside and rebuild it (False: raise)."""
    path = path_text(path)  # what a Path would print, without importing pathlib
    _no_nul(path)  # else every os call would raise ValueError
    parent = os.path.dirname(path) or "."
    try:
        os.makedirs(parent, exist_ok=True)
    except (OSError, RecursionError) as ex:  # makedirs recurses once per folder it makes
        reason = getattr(ex, "strerror", None) or "too deep"
        raise DatabaseError(f"cannot create the index directory {parent}: {reason};"
                            " use --db to put the index elsewhere") from None
    # Which file this open finds bad: another process may set it aside and build a new one meanwhile.
    found = identity(path)
    try:
        check_path(path, explicit)
    except NotAnIndex as ex:  # at memsearch's own path: moved aside, never followed
        if not recover:
            raise
        set_aside(path, str(ex), found)
        check_path(path, explicit)  # (a hard link renamed onto another name of its file stays)
        found = identity(path)
    # The -wal and -shm files left read-only by a query while the index was: given the index's
    # mode when we can write it, else SQLite opens it read-only.
    for side in (f"{path}-wal", f"{path}-shm") if os.access(path, os.W_OK) else ():
        if os.access(side, os.F_OK) and not os.access(side, os.W_OK):
            with suppress(OSError):  # another owner's: SQLite's error says the rest
                os.chmod(side, os.stat(path).st_mode & 0o7777)
    try:
        return _open_checked(path)
    except NotAnIndex as ex:
        if identity(path) != found:  # replaced meanwhile: the verdict was on another file
            return _open_checked(path)
        if explicit:  # the user's own file: never moved, never written
            raise DatabaseError(f"{ex}; memsearch will not touch it: move it away or name another --db") from None
        if not recover:
            raise
        set_aside(path, str(ex), found)
    except (SchemaTooNew, DatabaseCorrupt) as ex:
        too_new = isinstance(ex, SchemaTooNew)
        if not recover or (explicit and too_new):
            raise
        set_aside(path, "it was written by a newer memsearch" if too_new else str(ex), found)
    return _open_checked(path)


def identity(path: str | os.PathLike) -> tuple[int, int] | None:
    with suppress(OSError, ValueError):  # ValueError: a NUL byte, which no file's path holds
        st = os.stat(path)
        return st.st_dev, st.st_ino
    return None


class Cached:
    """What ``load(conn)`` read, kept while the index holds the same: the same connection, no other
    one committed since (PRAGMA data_version) and this one changed no row (total_changes)."""

    def __init__(self, load: Callable[[sqlite3.Connection], Any]):
        self._load, self.key, self._value = load, None, None  # key: the index's state when last read

    @staticmethod
    def key_of(conn: sqlite3.Connection) -> tuple:
        return conn, conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes

    def get(self, conn: sqlite3.Connection):
        key = self.key_of(conn)
        if self._value is None or key != self.key:
            value = self._load(conn)
            if value != self._value:  # else the same objects: what walks cached by them stays
                self._value = value
            self.key = key
        return self._value


class Opened:
    """What MemoryIndex and HistoryIndex share: an index file whose connection is opened at first
    use, closed by close() or a ``with`` block; threads sharing it run one operation at a time."""

    _db_file: str
    explicit_db: bool
    _conn: sqlite3.Connection | None = None
    _opened: tuple[int, int] | None = None  # identity() of the file the connection has open
    _wal: tuple[int, int] | None = None  # and of its -wal file

    def __init__(self) -> None:
        # Held by every operation and by opening and closing: threads share one connection.
        # Reentrant: an operation opens the connection, refresh() runs others.
        self._lock = RLock()

    @property
    def db_file(self) -> str:
        return self._db_file

    @property  # opened at first use
    def conn(self) -> sqlite3.Connection:
        with self._lock:
            if self._conn is None:
                self._conn = open_database(self._db_file, explicit=self.explicit_db)
                self._opened, self._wal = identity(self._db_file), identity(f"{self._db_file}-wal")
            return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    @contextmanager
    def first_build(self, conn: sqlite3.Connection):
        """:func:`building`, the -wal made anew by its switch back taken as this connection's own (see replaced)."""
        with building(conn):
            yield
        conn.execute("PRAGMA schema_version")  # a read makes the new -wal (SQLite makes it at the next one)
        self._wal = identity(f"{self._db_file}-wal")

    def replaced(self) -> bool:
        """Whether the connection's file, or its -wal file, is no longer the one at the path
        (deleted, or set aside by another process): the connection would go on in the old one, and
        a -wal deleted alone fails every other process's open until this one is closed."""
        return self._conn is not None and (
            identity(self._db_file), identity(f"{self._db_file}-wal")) != (self._opened, self._wal)

    def _follow(self) -> None:
        """Drop a connection to a file no longer at the path, so that the index there now (or a
        new one: deleting it is how a user forces a full re-read) is the one brought in step."""
        with self._lock:
            if self.replaced():
                self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _guarded(self, operation, *, refill: bool = True):
        """Run an operation; SQLite errors become memsearch errors, and a damaged index is set
        aside and filled again from its files (the subclass's ``_refill``), once."""
        with self._lock:
            try:
                return operation()
            except sqlite3.Error as ex:
                # Python 3.10 reports SQLite's SQLITE_NOMEM while binding a value as a bind error; we
                # bind only str, bytes, int and None, so it is memory, as 3.11+ says.
                if isinstance(ex, sqlite3.InterfaceError) and str(ex).startswith("Error binding parameter"):
                    raise MemoryError(str(ex)) from None
                error = translate(ex, self._db_file)
                # A connection SQLite opened read-only stays so: the next call opens the file as it is then.
                if "readonly" in str(ex):
                    self.close()
            if not isinstance(error, DatabaseCorrupt):
                raise error
            opened = self._opened
            self.close()
            set_aside(self._db_file, str(error), opened)
            try:
                if refill:  # the new index is empty: answering from it would miss every file
                    self._refill()
                return operation()
            except sqlite3.Error as ex:
                raise translate(ex, self._db_file) from None


def check_path(path: str, explicit: bool = True) -> None:
    """Refuse an index path that is not a regular file (or not there yet):
    SQLite would read /dev/null as empty and fail on its first write. At a path memsearch chose (not
    ``explicit``) only files of its own: a link (which may lead to a file under a root), there or at a
    side file's path, is NotAnIndex too, as anything that is not a regular file."""
    _no_nul(path)
    for name in () if explicit else (path, *(path + suffix for suffix in SIDE_FILES)):
        with suppress(OSError):  # (the index's own error, if any, is os.stat's below)
            st = os.lstat(name)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
                what = "a link" if stat.S_ISLNK(st.st_mode) or stat.S_ISREG(st.st_mode) else "not a regular file"
                raise NotAnIndex(f"{path} is not a memsearch index ({name[len(path):] or 'it'} is {what})")
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as ex:
        raise DatabaseError(f"cannot open the index {path}: {ex.strerror}; use --db to put it elsewhere") from None
    if stat.S_ISDIR(mode):
        raise DatabaseError(f"the index path {path} is a directory; remove it or use --db to put the index elsewhere")
    if not stat.S_ISREG(mode):
        raise DatabaseError(f"the index path {path} is not a regular file; use --db to name an index file")


def _no_nul(path: str) -> None:
    if "\0" in path:
        raise InvalidArgument(f"the index path {quoted(path, 200, always=True)} holds a NUL byte")


def _open_checked(path: str) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as ex:
        raise DatabaseError(f"cannot open the index {path}: {ex}; use --db to put it elsewhere") from None
    try:
        if inspect(path, conn):  # unmarked; decided before anything below writes to the file
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")  # PRAGMA takes no parameters
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            set_journal(conn, "wal")  # queries read while another process writes
        conn.execute("PRAGMA synchronous = NORMAL")  # a lost last transaction is harmless in a cache
        conn.execute(f"PRAGMA journal_size_limit = {WAL_LIMIT_BYTES}")
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")  # FTS5 merges through it: build speed against RSS
        migrate.migrate(conn)
        if missing := COLUMNS - {row[1] for row in conn.execute("PRAGMA table_xinfo(memory_fts)")}:
            raise DatabaseCorrupt("its schema does not match its recorded migrations"
                                  f" (no column {', '.join(sorted(missing))})")
        return conn
    except BaseException as ex:
        conn.close()
        if isinstance(ex, sqlite3.Error):
            raise translate(ex, path) from None
        raise


def inspect(path: str, conn: sqlite3.Connection) -> bool:
    """Decide, reading only, whether ``conn``'s file is a memsearch index. True: ours but unmarked
    (empty, or older); False: marked. Raises NotAnIndex, SchemaTooNew, or DatabaseCorrupt (damaged
    but marked). The header is read directly only when SQLite cannot: closing a file opened again
    drops every other connection's POSIX locks on it."""
    conn.execute("PRAGMA query_only = ON")  # nothing written until this says yes
    try:
        try:
            mark = conn.execute("PRAGMA application_id").fetchone()[0]
            version = migrate.current_version(conn)
        except sqlite3.DatabaseError as ex:
            _bad_file(path, ex, None, "not an SQLite database")  # the mark from the file itself
        try:
            objects = conn.execute("SELECT type, name FROM sqlite_master ORDER BY rowid").fetchall()
        except sqlite3.DatabaseError as ex:
            _bad_file(path, ex, mark == APPLICATION_ID, f"its schema cannot be read: {ex}")
        if mark == APPLICATION_ID or (not mark and _premark(conn, objects, version)):
            latest = migrate.latest_version()
            if version > latest:
                raise migrate.too_new(version, latest)
            return mark != APPLICATION_ID
        if mark:
            raise NotAnIndex(f"{path} is not a memsearch index (another program's, application_id {mark:#x})")
        if not objects and not version:
            return True  # empty: a new index
        shown = [f"{kind} {name}" for kind, name in objects[:3]] or ["no tables"]
        if version:
            shown.append(f"user_version {version}")
        raise NotAnIndex(f"{path} is not a memsearch index ({', '.join(shown)})")
    finally:
        conn.execute("PRAGMA query_only = OFF")


def _bad_file(path: str, ex: sqlite3.DatabaseError, marked: bool | None, why: str) -> NoReturn:
    """A file SQLite finds damaged: a damaged index if ``marked`` as ours (None: if its header says SQLite and
    carries our mark), else not an index. Any other error (no -shm file can be made...) is no verdict: raised."""
    if not is_corruption(ex):
        raise ex
    if marked is None:
        marked = False
        with suppress(OSError), open(path, "rb") as f:
            header = f.read(72)
            marked = header[:16] == b"SQLite format 3\0" and int.from_bytes(header[68:72], "big") == APPLICATION_ID
    if marked:
        raise DatabaseCorrupt(f"the index {path} is damaged ({ex})") from None
    raise NotAnIndex(f"{path} is not a memsearch index ({why})") from None


def _premark(conn: sqlite3.Connection, objects, version: int) -> bool:
    """An index written before the mark: memory_fts, and a schema_migrations
    table that records exactly our migrations up to ``version``."""
    names = {name for kind, name in objects if kind == "table"}
    if version < 1 or not {"memory_fts", "schema_migrations"} <= names:
        return False
    try:
        recorded = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
    except sqlite3.DatabaseError:
        return False
    shipped = {number: name for number, name, _ in migrate.available()}
    # The shipped numbers, not 1..version: numbers reserved for other branches leave gaps.
    return ([v for v, _ in recorded] == [v for v in sorted(shipped) if v <= version]
            and all(shipped.get(v, n) == n for v, n in recorded))


# The columns of memory_fts a reconcile writes, in the order of its rows (memsearch.reconcile._row).
WRITTEN = ("path", "root", "scope", "scope_id", "type", *FIELDS, "body", "frontmatter_error", "racy",
           *(f"{text}_seg" for text in ("body", *FIELDS)), *FINGERPRINT.split(", "))
# The generated columns of memory_fts that memory_fts_idx indexes, in its order.
INDEXED = tuple(f"idx_{text}" for text in ("body", *FIELDS))
# Columns of memory_fts that reconcile and search use: an index its migrations call current that
# lacks one (a development build, a hand edit) would fail every query, so it is rebuilt.
COLUMNS = frozenset(("id", *WRITTEN, *INDEXED))


def translate(ex: sqlite3.Error, path) -> DatabaseError:
    text = str(ex)
    if is_corruption(ex):
        return DatabaseCorrupt(f"the index {path} is damaged ({text})")
    if "locked" in text or "busy" in text:
        return DatabaseLocked(f"the index {path} stayed locked by another process for {BUSY_TIMEOUT_S:.0f}s; try again")
    if "readonly" in text or "read-only" in text or "unable to open" in text:
        return DatabaseError(f"cannot write the index {path} ({text}); use --db to put it elsewhere")
    if "disk is full" in text or "disk I/O" in text:
        return DatabaseError(f"cannot write the index {path} ({text}); free some space and run again")
    return DatabaseError(f"index {path}: {text}")


# What SQLite keeps beside a database: WAL's two files, and a rollback journal (db.building).
SIDE_FILES = ("-wal", "-shm", "-journal")

# Copies set aside per index: the newest are enough for a post-mortem, and an index damaged again
# and again (or passed between an older and a newer memsearch) must not fill the disk.
KEEP_ASIDE = 3


def set_aside(path: str | os.PathLike, why: str, found: tuple[int, int] | None = None) -> str | None:
    """Move a bad database (and its side files) out of the way, keeping KEEP_ASIDE copies; the
    copy's name. ``found``: the identity() of the file found bad; when another is at ``path`` now
    (another process set it aside first), nothing is moved and None returned."""
    if found is not None and identity(path) != found:
        return None
    folder, name = os.path.split(path_text(path))
    kept = f"{name}.bad-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    path, target = os.path.join(folder, name), os.path.join(folder, kept)
    try:
        for suffix in ("", *SIDE_FILES):  # (side files with no index too: left behind, or put there)
            if os.path.lexists(f"{path}{suffix}"):
                os.replace(f"{path}{suffix}", f"{target}{suffix}")
    except FileNotFoundError:
        pass  # another process set it aside first
    except OSError as ex:
        raise DatabaseError(f"the index {path} is unusable ({why}) and cannot be moved aside: {ex.strerror}") from None
    older = [n for n in copies_aside(path) if n != kept]
    for old in older[:max(0, len(older) - KEEP_ASIDE + 1)]:
        for suffix in ("", *SIDE_FILES):
            with suppress(OSError):  # another process may delete it first
                os.unlink(os.path.join(folder, f"{old}{suffix}"))
    message = f"index {path} was unusable ({why}); kept it as {kept} and rebuilding from the files"
    if warning_sink is None:
        import logging

        logging.getLogger("memsearch").warning("%s", message)
    else:
        warning_sink(message)
    return kept


def copies_aside(path: str | os.PathLike) -> list[str]:
    """The names of the copies of the index at ``path`` set aside (each with its side files, not
    listed), oldest first: their names sort by time."""
    folder, name = os.path.split(os.fspath(path))
    with suppress(OSError), os.scandir(folder or ".") as entries:
        return sorted(e.name for e in entries if e.name.startswith(f"{name}.bad-") and not e.name.endswith(SIDE_FILES))
    return []


# Where warnings go: None means the "memsearch" logger (the CLI sets it for one command).
warning_sink = None


write_transaction = migrate.write_transaction  # every writer's, the migrations' first


# Ids bound in one statement: under SQLite's oldest bound on parameters (999).
IDS_AT_ONCE = 900


def rows_of(conn: sqlite3.Connection, sql: str, ids: list[int], params=(), before=()) -> list[tuple]:
    """The rows of ``sql`` for ``ids`` bound in its ``{marks}``, between ``before`` and ``params``."""
    out = []
    for start in range(0, len(ids), IDS_AT_ONCE):
        chunk = ids[start:start + IDS_AT_ONCE]
        out += conn.execute(sql.format(marks=",".join("?" * len(chunk))), [*before, *chunk, *params]).fetchall()
    return out
