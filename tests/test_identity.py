import hashlib
import subprocess
import threading
import uuid

import pytest

from memsearch import main_git_dir, mimo_project_id, zcode_memory_dir, zcode_project_folder


def sha16(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@pytest.mark.parametrize(
    "workspace, slug",
    [
        ("/home/me/code/shop", "shop"),
        ("/home/me/code/My Project!", "my-project-"),
        ("/home/me/code/a.b_c-D", "a.b_c-d"),
        ("/home/me/code/日本語", "---"),
        ("/home/me/code/" + "x" * 60, "x" * 48),
        ("/home/me/code/shop/", "shop"),
    ],
)
def test_zcode_folder_of_a_posix_path(workspace, slug):
    absolute = workspace.rstrip("/")
    assert zcode_project_folder(workspace, windows=False) == f"{slug}-{sha16(absolute)}"


def test_zcode_folder_of_a_relative_path_uses_the_absolute_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ws").mkdir()
    assert zcode_project_folder("ws", windows=False) == f"ws-{sha16(str(tmp_path / 'ws'))}"


def test_zcode_folder_of_a_windows_path_hashes_it_lower_cased():
    folder = zcode_project_folder(r"C:\Users\Me\Code\Shop", windows=True)
    lowered = r"c:\users\me\code\shop"
    assert folder == f"shop-{sha16(lowered)}"
    assert zcode_project_folder(r"c:\users\me\code\shop", windows=True) == folder


def test_zcode_folder_of_an_identity():
    assert zcode_project_folder(identity="github.com/me/shop") == f"project-{sha16('github.com/me/shop')}"
    # The identity wins over the path, and is hashed as given.
    assert zcode_project_folder("/x/y", identity="ID") == f"project-{sha16('ID')}"
    with pytest.raises(ValueError):
        zcode_project_folder()


@pytest.mark.parametrize("given, resolved", [
    ("//srv/proj", "/srv/proj"),  # Node's path.resolve keeps one leading slash, posixpath.abspath two
    ("///srv//proj/", "/srv/proj"),
    ("/srv/./a/../proj", "/srv/proj"),
])
def test_zcode_folder_resolves_the_path_as_node_does(given, resolved):
    assert zcode_project_folder(given, windows=False) == f"proj-{sha16(resolved)}"


@pytest.mark.parametrize("root, windows, hashed", [("/", False, "/"), ("//", False, "/"), ("C:\\", True, "c:\\")])
def test_zcode_folder_of_a_file_system_root_is_slugged_project(root, windows, hashed):
    assert zcode_project_folder(root, windows=windows) == f"project-{sha16(hashed)}"


@pytest.mark.parametrize("identity", ["", "   ", "\t\n", "\ufeff"])
def test_a_blank_zcode_identity_falls_back_to_the_path(identity):
    assert zcode_project_folder("/w/shop", identity=identity, windows=False) == f"shop-{sha16('/w/shop')}"
    with pytest.raises(ValueError):
        zcode_project_folder(identity=identity)


def test_a_zcode_identity_is_trimmed_as_javascript_trims():
    assert zcode_project_folder("/x", identity="  ID\n", windows=False) == f"project-{sha16('ID')}"
    assert zcode_project_folder("/x", identity="\ufeffID\u3000", windows=False) == f"project-{sha16('ID')}"
    # U+001C is whitespace to str.strip(), not to String.prototype.trim()
    assert zcode_project_folder("/x", identity="\x1cID", windows=False) == f"project-{sha16(chr(0x1c) + 'ID')}"


def test_zcode_memory_dir(isolated_home, tmp_path):
    assert zcode_memory_dir("/w/shop", windows=False) == (
        isolated_home / ".zcode" / "cli" / "memories" / "projects" / f"shop-{sha16('/w/shop')}" / "memory")
    assert zcode_memory_dir(identity="i", storage=tmp_path) == (
        tmp_path / "cli" / "memories" / "projects" / f"project-{sha16('i')}" / "memory")


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(cwd), "PATH": "/usr/bin:/bin"})


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "repo"
    (r / "src" / "deep").mkdir(parents=True)
    git("init", "-q", cwd=r)
    (r / "README").write_text("x")
    git("add", "README", cwd=r)
    git("commit", "-q", "-m", "init", cwd=r)
    return r


def test_mimo_project_id_is_created_once_in_the_main_git_dir(repo):
    first = mimo_project_id(repo / "src" / "deep")
    uuid.UUID(first)
    assert (repo / ".git" / "mimocode-project-id").read_text().strip() == first
    assert mimo_project_id(repo) == first


def test_a_reader_asks_for_the_id_without_creating_it(repo):
    assert mimo_project_id(repo, create=False) is None
    assert not (repo / ".git" / "mimocode-project-id").exists()
    created = mimo_project_id(repo)
    assert mimo_project_id(repo, create=False) == created == mimo_project_id(repo / "src", create=False)


def test_mimo_project_id_is_shared_by_worktrees(repo, tmp_path):
    git("worktree", "add", "-q", str(tmp_path / "wt"), "-b", "feature", cwd=repo)
    assert (tmp_path / "wt" / ".git").is_file()
    assert main_git_dir(tmp_path / "wt") == repo / ".git"
    from_worktree = mimo_project_id(tmp_path / "wt")
    assert (repo / ".git" / "mimocode-project-id").read_text().strip() == from_worktree
    assert mimo_project_id(repo) == from_worktree


def test_mimo_project_id_keeps_an_existing_id_and_replaces_garbage(repo):
    given = "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0"
    (repo / ".git" / "mimocode-project-id").write_text(given + "\n")
    assert mimo_project_id(repo) == given
    (repo / ".git" / "mimocode-project-id").write_text("not a uuid")
    new = mimo_project_id(repo)
    uuid.UUID(new)
    assert mimo_project_id(repo) == new


def test_mimo_project_id_outside_git_is_global(tmp_path):
    (tmp_path / "plain").mkdir()
    assert mimo_project_id(tmp_path / "plain") == "global"
    assert main_git_dir(tmp_path / "plain") is None


def test_a_git_file_naming_any_folder_gets_nothing_written_there(tmp_path):
    """A checkout's .git file (or a commondir) may name any folder: mimo_project_id wrote its id into
    it (/etc, as root). Only a git folder (HEAD, objects or commondir) is one now; a hostile .git
    that is too long, a FIFO or /dev/zero is no repository, without a traceback or a hang."""
    import os

    victim = tmp_path / "victim"
    victim.mkdir()
    for name, dot_git in [("named", f"gitdir: {victim}\n"), ("long", "gitdir: " + "a/" * 2_000_000 + "\n")]:
        (tmp_path / name).mkdir()
        (tmp_path / name / ".git").write_text(dot_git)
        assert main_git_dir(tmp_path / name) is None and mimo_project_id(tmp_path / name) == "global"
    fake = tmp_path / "fake"
    (fake / ".git").mkdir(parents=True)
    (fake / ".git" / "commondir").write_text(str(victim))
    assert main_git_dir(fake) is None and mimo_project_id(fake) == "global"
    assert list(victim.iterdir()) == []
    os.mkfifo(fake / ".git" / "fifo")
    (fake / ".git" / "commondir").unlink()
    os.symlink(fake / ".git" / "fifo", fake / ".git" / "commondir")
    (fake / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (fake / ".git" / "objects").mkdir()
    os.symlink("/dev/zero", fake / ".git" / "mimocode-project-id")
    assert main_git_dir(fake) == fake / ".git"  # a commondir it cannot read: none
    uuid.UUID(mimo_project_id(fake))


def test_concurrent_first_use_agrees(repo):
    found = []
    threads = [threading.Thread(target=lambda: found.append(mimo_project_id(repo))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(found)) == 1
    assert not list((repo / ".git").glob("*.tmp"))


def test_bad_arguments_raise_invalid_argument():
    from memsearch import InvalidArgument

    for bad in (lambda: zcode_project_folder(5), lambda: zcode_project_folder(b"/w/shop"),
                lambda: zcode_project_folder("/w/shop", identity=5), lambda: zcode_project_folder(),
                lambda: zcode_memory_dir("/w/shop", storage=5), lambda: main_git_dir(None),
                lambda: mimo_project_id(5)):
        with pytest.raises(InvalidArgument):
            bad()
