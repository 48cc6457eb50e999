"""Search that reads code words (issue 33): symbol words, identifier parts
across case styles, paths and dotted names, versions, and accents beyond
Latin. Each case ranks its file first in one tree that also holds near
misses, through the library's defaults; some run through the installed CLI.
"""

import json
import sqlite3
import subprocess
import sys

import pytest
from conftest import line, rewind, run_memsearch, transcript, write

from memsearch import HistoryIndex, MemoryIndex, codewords, migrate, pieces
from memsearch.query import plan

# One tree: every file is some other case's near miss.
TREE = {
    "lang/c.md": "Notes on C: pointers in C, the C standard library, malloc and free in plain C.\n",
    "cooking/bread.md": "The bread recipe is written in metric: bake at 220°C, then at 200°C; proof at 30ºC.\n",
    "lang/cpp.md": "Notes on C++: templates in C++, RAII and the standard library.\n",
    "lang/csharp.md": "Our tools are written in C# with LINQ queries.\n",
    "lang/fsharp.md": "The pricing model is written in F# with discriminated unions.\n",
    "lang/sharp.md": "Keep the knives sharp; C major is the key of the song.\n",
    "net/layer.md": "The net layer retries when the net is down; the network stack drops packets.\n",
    "net/dotnet.md": "The service targets .NET 8 and runs on Kestrel.\n",
    "code/getuser.md": "Call getUserById to load a profile from the cache.\n",
    "code/far.md": "We get the list of orders first. Much later the user signs in and picks a profile.\n",
    "code/prose.md": "A helper to get user by id reads the table row by row.\n",
    "code/snake.md": "The column user_id joins orders to accounts.\n",
    "code/kebab.md": "The header x-request-id carries the request id.\n",
    "code/camel.md": "The session keeps sessionToken in memory only.\n",
    "code/invalidate.md": "invalidateUser drops the cached entry on logout.\n",
    "code/users.md": "Invalidate the cache when a user changes roles.\n",
    "code/http.md": "HTTPServer listens on port 8080 behind the proxy.\n",
    "code/b64.md": "Call Base64Encode on the payload before the upload.\n",
    "code/base.md": "The base image is 64 bit; encode the video first.\n",
    "code/s3.md": "Keep the S3Bucket name in the deploy config.\n",
    "code/oauth.md": "We sign in with OAuth2 against the identity provider.\n",
    "code/auth.md": "The auth layer checks each token.\n",
    "code/sha.md": "Check the download with sha256sum before the install.\n",
    "code/sum.md": "The sha of the commit and the sum of 256 bytes.\n",
    "code/utf.md": "Files are decoded as utf8 unless a BOM says otherwise.\n",
    "paths/query.md": "The planner lives in src/memsearch/query.py and builds FTS5 strings.\n",
    "paths/scatter.md": "The query goes to src first; memsearch reads py files later.\n",
    "paths/join.md": "Paths are built with os.path.join, never by hand.\n",
    "paths/words.md": "Join the path of the os folder by hand when needed.\n",
    "versions/v207.md": "Pin the parser to version 2.0.7 until the fix ships.\n",
    "versions/v208.md": "Version 2.0.8 is out; 7 bugs fixed since 0.7 and 2.0 notes.\n",
    "versions/v2071.md": "Hotfix 2.0.7.1 is out.\n",
    "versions/schema12.md": "Schema version 1.2 added the tenant column.\n",
    "versions/tag123.md": "Tag 1.2.3 has the hotfix.\n",
    "accents/greek.md": "The conference is held in Αθηνά in May.\n",
    "accents/greek-other.md": "Θεσσαλονίκη hosts the second meeting.\n",
    "accents/viet.md": "Giao diện hỗ trợ tiếng việt và tiếng anh.\n",
    "accents/viet-other.md": "Tieng anh only: the manual is in English.\n",
    "accents/turkish.md": "Kapı kilidi ve ısı sensörü bozuk.\n",
    "accents/turkish-other.md": "Kapi means door in Malay, not the sensor.\n",
    "accents/fullwidth.md": "コミット前に ｇｉｔ ｓｔａｔｕｓ を確認する。\n",
    "accents/arabic.md": "التحية مَرْحَبًا بالعالم في الملف.\n",
    "accents/arabic-other.md": "نص عن مرحلة أخرى من العمل.\n",
    "accents/hebrew.md": "ברכה: שָׁלוֹם עולם.\n",
    "accents/hebrew-other.md": "שלומית כתבה את הקובץ.\n",
    "accents/ascii-git.md": "Git stores objects by their hash.\n",
    "lang/cpp17.md": "The engine targets C++17 and clang 16.\n",
    "net/aspnet.md": "The public API is built with ASP.NET Core and minimal APIs.\n",
    "net/asp.md": "The legacy site still has classic ASP pages from 2003.\n",
    "lang/c99.md": "The firmware targets C99 and gcc.\n",
    "code/utf-dash.md": "All files are UTF-8 without a BOM, since Python 3 reads them so.\n",
    "code/uber.md": "ÜberClient wraps the ride API.\n",
    "code/uber-other.md": "The client for rides is generic; uber is a brand.\n",
    "code/fullwidth-id.md": "Call ｌｏａｄＣｏｎｆｉｇＦｉｌｅ on startup.\n",
    "code/config.md": "The config file is loaded on startup.\n",
    "accents/german.md": "Die Straße ist gesperrt.\n",
    "accents/german-other.md": "Der Weg ist gesperrt.\n",
    "accents/french.md": "Le cœur du système est le planificateur.\n",
    "code/dunder.md": "Keep __init__.py empty except for the public exports.\n",
    "code/init.md": "The init scripts live in /etc/init.d on the old hosts.\n",
    "paths/dotenv.md": "The .env file holds the local secrets; never commit it.\n",
    "paths/env.md": "CI env vars are set in the project settings.\n",
    "code/dry-run.md": "Always pass --dry-run to the migrate script first.\n",
    "code/dry.md": "A dry run of the play happened on Friday.\n",
    "code/dollar-home.md": "The cache lives under $HOME/.cache/app on every host.\n",
    "code/home.md": "Go home early on Fridays.\n",
    "code/issue.md": "The fix for issue #1234 landed in the parser.\n",
    "code/rows.md": "There were 1234 rows.\n",
    "code/annotation.md": "Service methods that write must be @Transactional; reads use readOnly.\n",
    "code/emails.md": "Transactional emails go through Postmark.\n",
    "lang/objc.md": "The share extension is still Objective-C; the rest of the app is Swift.\n",
    "lang/driver.md": "The USB driver is C with a thin wrapper.\n",
}

# (query, the file that must rank first, what its excerpt must mark)
CASES = [
    ("C++", "lang/cpp.md", "<<C++>>"),
    ("C++ templates", "lang/cpp.md", "<<C++>>"),
    ("c++", "lang/cpp.md", "<<C++>>"),
    ("C", "lang/c.md", "<<C>>"),
    ("written in C", "lang/c.md", "<<C>>"),  # C++, C#, F# and bread files say "written in"; 200°C is no C
    ("c", "lang/c.md", "<<C>>"),
    ("C#", "lang/csharp.md", "<<C#>>"),
    ("F#", "lang/fsharp.md", "<<F#>>"),
    (".NET", "net/dotnet.md", "<<.NET>>"),
    (".net 8", "net/dotnet.md", "<<.NET>>"),
    ("ASP.NET", "net/aspnet.md", "<<ASP.NET>>"),  # asked for as ASP and .NET, marked as one
    ("net layer", "net/layer.md", "<<net>> <<layer>>"),
    ("getUser", "code/getuser.md", "<<getUserById>>"),
    ("getUserById", "code/getuser.md", "<<getUserById>>"),
    ("get_user_by_id", "code/getuser.md", "<<getUserById>>"),
    ("userId", "code/snake.md", "<<user_id>>"),
    ("user_id", "code/snake.md", "<<user_id>>"),
    ("user-id", "code/snake.md", "<<user_id>>"),
    ("requestId", "code/kebab.md", "x-<<request-id>>"),
    ("session_token", "code/camel.md", "<<sessionToken>>"),
    ("session token", "code/camel.md", "<<sessionToken>>"),
    ("invalidate user", "code/invalidate.md", "<<invalidateUser>>"),
    ("http server", "code/http.md", "<<HTTPServer>>"),
    ("base64", "code/b64.md", "<<Base64Encode>>"),
    ("base64 encode", "code/b64.md", "<<Base64Encode>>"),
    ("s3", "code/s3.md", "<<S3Bucket>>"),
    ("s3 bucket", "code/s3.md", "<<S3Bucket>>"),
    ("oauth", "code/oauth.md", "<<OAuth2>>"),
    ("sha256", "code/sha.md", "<<sha256sum>>"),
    ("__init__", "code/dunder.md", "<<__init__>>"),
    ("__init__.py", "code/dunder.md", "<<__init__.py>>"),
    ("init scripts", "code/init.md", "<<init>> <<scripts>>"),
    ("UTF-8", "code/utf.md", "<<utf8>>"),
    ("C++17", "lang/cpp17.md", "<<C++17>>"),
    ("C++ clang", "lang/cpp17.md", "<<C++>>17"),
    ("Ｃ＋＋ clang", "lang/cpp17.md", "<<C++>>17"),
    ("python3", "code/utf-dash.md", "<<Python 3>>"),
    ("uber client", "code/uber.md", "<<ÜberClient>>"),
    ("load config file", "code/fullwidth-id.md", "<<ｌｏａｄＣｏｎｆｉｇＦｉｌｅ>>"),
    ("strasse", "accents/german.md", "<<Straße>>"),
    ("Straße", "accents/german.md", "<<Straße>>"),
    ("coeur", "accents/french.md", "<<cœur>>"),
    ("src/memsearch/query.py", "paths/query.md", "<<src/memsearch/query.py>>"),
    ("memsearch/query.py", "paths/query.md", "<<memsearch/query.py>>"),
    ("os.path.join", "paths/join.md", "<<os.path.join>>"),
    (".env", "paths/dotenv.md", "<<.env>>"),  # env.md says env
    ("the .env file", "paths/dotenv.md", "<<.env>> <<file>>"),
    ("--dry-run", "code/dry-run.md", "<<--dry-run>>"),  # code/dry.md says "dry run"
    ("dry-run flag", "code/dry-run.md", "<<--dry-run>>"),
    ("$HOME", "code/dollar-home.md", "<<$HOME>>"),  # code/home.md says home
    ("$HOME/.cache", "code/dollar-home.md", "<<$HOME>>/.<<cache>>"),
    ("#1234", "code/issue.md", "<<#1234>>"),  # code/rows.md says 1234
    ("issue #1234", "code/issue.md", "<<issue>> <<#1234>>"),
    ("@Transactional", "code/annotation.md", "<<@Transactional>>"),  # code/emails.md says transactional
    ("Objective-C", "lang/objc.md", "<<Objective>>-<<C>>"),  # its C is no language: lang/driver.md's is
    ("2.0.7", "versions/v207.md", "<<2.0.7>>"),
    ("version 2.0.7", "versions/v207.md", "<<2.0.7>>"),
    ("v2.0.7", "versions/v207.md", "<<2.0.7>>"),  # 2.0.7.1 holds the phrase 2 0 7 too
    ("1.2", "versions/schema12.md", "<<1.2>>"),  # and 1.2.3 the phrase 1 2
    ("Αθηνα", "accents/greek.md", "<<Αθηνά>>"),
    ("ΑΘΗΝΑ", "accents/greek.md", "<<Αθηνά>>"),
    ("Θεσσαλονικη", "accents/greek-other.md", "<<Θεσσαλονίκη>>"),
    ("tieng viet", "accents/viet.md", "<<tiếng>> <<việt>>"),
    ("tiếng việt", "accents/viet.md", "<<tiếng>> <<việt>>"),
    ("isi sensoru", "accents/turkish.md", "<<ısı>> <<sensörü>>"),
    ("kapı ısı", "accents/turkish.md", "<<Kapı>>"),
    ("git status", "accents/fullwidth.md", "<<ｇｉｔ>> <<ｓｔａｔｕｓ>>"),
    ("ｇｉｔ ｓｔａｔｕｓ", "accents/fullwidth.md", "<<ｇｉｔ>> <<ｓｔａｔｕｓ>>"),
    ("مرحبا", "accents/arabic.md", "<<مَرْحَبًا>>"),
    ("مَرْحَبًا", "accents/arabic.md", "<<مَرْحَبًا>>"),
    ("שלום", "accents/hebrew.md", "<<שָׁלוֹם>>"),
    ("שָׁלוֹם", "accents/hebrew.md", "<<שָׁלוֹם>>"),
]


@pytest.fixture(scope="module")
def code_tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("code") / "memory"
    for rel, text in TREE.items():
        write(root, rel, text)
    return root


@pytest.fixture(scope="module")
def code_index(code_tree, tmp_path_factory):
    with MemoryIndex(code_tree, tmp_path_factory.mktemp("db") / "index.db") as idx:
        yield idx


@pytest.mark.parametrize("query,first,marked", CASES)
def test_each_case_ranks_its_file_first(code_index, query, first, marked):
    hits = code_index.search(query)
    assert hits and hits[0].path == first, [(h.path, round(h.score, 2)) for h in hits[:4]]
    assert marked in hits[0].snippet
    assert codewords.OPEN not in hits[0].snippet and codewords.CLOSE not in hits[0].snippet


def test_a_name_and_its_number_meet_their_spelling_apart(code_index):
    """utf8 finds UTF-8 (after the file that says utf8 as typed), as UTF-8 finds utf8."""
    ranked = [h.path for h in code_index.search("utf8")]
    assert ranked[:2] == ["code/utf.md", "code/utf-dash.md"], ranked


def test_whole_identifier_ranks_above_its_parts(code_index):
    """getUserById as written beats "get a user by id" in prose, and files
    holding get and user far apart come after both. Spelled as words, the
    query finds the identifier and the prose alike."""
    ranked = [h.path for h in code_index.search("getUserById")]
    assert ranked.index("code/getuser.md") < ranked.index("code/prose.md")
    ranked = [h.path for h in code_index.search("get user by id")]
    assert ranked[:2] == ["code/getuser.md", "code/prose.md"] or ranked[:2] == ["code/prose.md", "code/getuser.md"]
    assert "code/far.md" not in ranked[:2]


# A second tree of near misses, in the same categories, written apart from the first (session 70): each case's
# file first, and no marker of the index in its excerpt.
MORE_TREE = {
    "a/cpp20.md": "We moved the renderer to C++20 modules last spring.\n",
    "a/c11.md": "The kernel shim is plain C11 with no runtime.\n",
    "a/c-lang.md": "Write the parser in C and keep it small.\n",
    "a/cplus-music.md": "The piano piece is in C major, plus a coda.\n",
    "a/csharp-unity.md": "Unity scripts are C# MonoBehaviours.\n",
    "a/music-sharp.md": "Play C sharp then D flat on the scale.\n",
    "a/fsharp.md": "Type providers in F# read the CSV schema.\n",
    "a/dotnet6.md": "Upgrade the API to .NET 6 before March.\n",
    "a/network.md": "Our network uses a .net domain and the net mask 255.0.0.0.\n",
    "b/fetch.md": "fetchUserProfile caches the response for ten minutes.\n",
    "b/fetch-prose.md": "To fetch a profile of a user we call the API twice.\n",
    "b/retries.md": "Set MAX_RETRIES to 5 in the client config.\n",
    "b/retries-prose.md": "The max number of retries is a guess.\n",
    "b/json.md": "parseJSON throws on trailing commas.\n",
    "b/json-prose.md": "We parse the JSON body with the standard library.\n",
    "b/depth.md": "The CLI flag --max-depth limits recursion.\n",
    "b/depth-prose.md": "The max depth of the tree is ten levels.\n",
    "b/repo.md": "UserRepository owns all queries on users.\n",
    "b/repo-prose.md": "The user repository on GitHub is archived.\n",
    "b/vector.md": "Prefer std::vector over raw arrays in new code.\n",
    "b/vector-prose.md": "The vector math library is standard.\n",
    "b/arch.md": "Release builds target x86_64 and arm64.\n",
    "b/arch-prose.md": "The x86 machines are 64 bit.\n",
    "b/ipv6.md": "Enable IPv6 on the load balancer.\n",
    "b/ip-prose.md": "The IP address list has 6 entries.\n",
    "c/path.md": "Settings are read from ~/.config/memsearch/settings.toml at start.\n",
    "c/path-prose.md": "The settings page and its config live in memsearch docs.\n",
    "c/dotted.md": "Set logging.handlers.RotatingFileHandler for the daemon.\n",
    "c/dotted-prose.md": "The logging handlers rotate files daily.\n",
    "c/semver.md": "Upgrade to v3.11.2 of the runtime.\n",
    "c/semver-near.md": "Python 3.11 ships with 2 new parsers.\n",
    "c/semver-other.md": "Release 3.11.20 is the next one.\n",
    "c/pre.md": "Tag 1.0.0-rc.1 is the release candidate.\n",
    "c/pre-other.md": "Tag 1.0.0 is final.\n",
    "d/greek.md": "Η συνάντηση είναι στην Θεσσαλία.\n",
    "d/greek-other.md": "Η ομάδα δουλεύει από το σπίτι.\n",
    "d/viet.md": "Người dùng thích giao diện mới.\n",
    "d/viet-other.md": "Nguoi ta noi khac.\n",
    "d/polish.md": "Biuro jest w Łodzi od maja.\n",
    "d/polish-other.md": "Biuro jest w Krakowie.\n",
    "d/turkish.md": "İstanbul ofisi Pazartesi açılıyor.\n",
    "d/turkish-other.md": "Ankara ofisi kapalı.\n",
    "d/cyrillic.md": "Сервер в Москве перезапущен.\n",
    "d/cyrillic-other.md": "Сервер в Казани работает.\n",
    "d/fullwidth.md": "ＡＰＩキーは ＵＳＥＲ＿ＩＤ と一緒に送る。\n",
    "d/fullwidth-other.md": "API key rotates monthly.\n",
    "d/danish.md": "Filen ligger i mappen Søgning.\n",
    "d/danish-other.md": "Filen ligger i mappen Hjem.\n",
}
MORE_CASES = [
    ("C++20", "a/cpp20.md"), ("c++ modules", "a/cpp20.md"), ("C11", "a/c11.md"), ("parser in C", "a/c-lang.md"),
    ("C#", "a/csharp-unity.md"), ("c# unity", "a/csharp-unity.md"), ("F#", "a/fsharp.md"), (".NET 6", "a/dotnet6.md"),
    ("dotnet", "a/dotnet6.md"), ("fetchUserProfile", "b/fetch.md"), ("fetch_user_profile", "b/fetch.md"),
    ("user profile", "b/fetch.md"), ("fetchUser", "b/fetch.md"), ("max_retries", "b/retries.md"),
    ("maxRetries", "b/retries.md"), ("MAX_RETRIES", "b/retries.md"), ("parseJSON", "b/json.md"),
    ("parse_json", "b/json.md"), ("--max-depth", "b/depth.md"), ("max-depth", "b/depth.md"), ("maxDepth", "b/depth.md"),
    ("UserRepository", "b/repo.md"), ("user_repository", "b/repo.md"), ("std::vector", "b/vector.md"),
    ("x86_64", "b/arch.md"), ("x86-64", "b/arch.md"), ("IPv6", "b/ipv6.md"), ("ipv6", "b/ipv6.md"),
    ("~/.config/memsearch/settings.toml", "c/path.md"), ("settings.toml", "c/path.md"),
    (".config/memsearch", "c/path.md"),
    ("logging.handlers.RotatingFileHandler", "c/dotted.md"), ("RotatingFileHandler", "c/dotted.md"),
    ("rotating file handler", "c/dotted.md"), ("v3.11.2", "c/semver.md"), ("3.11.2", "c/semver.md"),
    ("1.0.0-rc.1", "c/pre.md"), ("Θεσσαλια", "d/greek.md"), ("συναντηση", "d/greek.md"), ("nguoi dung", "d/viet.md"),
    ("giao dien moi", "d/viet.md"), ("Lodzi", "d/polish.md"), ("lodzi", "d/polish.md"), ("istanbul", "d/turkish.md"),
    ("ISTANBUL", "d/turkish.md"), ("acilıyor", "d/turkish.md"), ("Москве", "d/cyrillic.md"),
    ("user_id", "d/fullwidth.md"),
    ("USER_ID", "d/fullwidth.md"), ("sogning", "d/danish.md"), ("Søgning", "d/danish.md"),
]


@pytest.fixture(scope="module")
def more_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("more") / "memory"
    for rel, text in MORE_TREE.items():
        write(root, rel, text)
    with MemoryIndex(root, tmp_path_factory.mktemp("db") / "index.db") as idx:
        yield idx


@pytest.mark.parametrize("query,first", MORE_CASES)
def test_each_case_of_the_second_tree_ranks_its_file_first(more_index, query, first):
    hits = more_index.search(query)
    assert hits and hits[0].path == first, [(h.path, round(h.score, 2)) for h in hits[:4]]
    assert "<<" in hits[0].snippet
    assert codewords.OPEN not in hits[0].snippet and codewords.CLOSE not in hits[0].snippet

def test_a_name_with_digits_is_found_by_its_units():
    """The index adds the units a name with digits is typed as (split at case changes alone, digits kept
    with their letters, and at digits alone); a query for the whole identifier asks for its parts only."""
    assert codewords.identifier_forms("Base64Encode", True) == ("Base 64 Encode", "Base64")
    assert codewords.identifier_forms("OAuth2", True) == ("O Auth 2", "Auth2 OAuth")
    assert codewords.identifier_forms("K8sCluster", True)[1].split()[0] == "K8s"
    assert codewords.identifier_forms("AVX512VL", True)[1] == "AVX512"  # capitals all through
    assert codewords.identifier_forms("sha256sum", True) == ("sha 256 sum", "sha256")  # no capitals
    for plain in ("getUserById", "HTTPServer", "utf8", "x86", "2nd", "user_id"):  # no unit a part or piece is not
        assert codewords.identifier_forms(plain, True) == codewords.identifier_forms(plain)
    assert codewords.identifier_forms("Base64Encode") == ("Base 64 Encode",)
    assert codewords.expand("use S3Bucket now") == f"use S3Bucket{codewords.OPEN}S 3 Bucket S3{codewords.CLOSE} now"


def test_a_long_run_costs_linear_time():
    """A name's number was sought from every letter of a run: a 40,000-letter run ending in a digit took
    7.5 s, a megabyte hours. The guard is a generous timeout, in a child process; what it adds is checked."""
    code = (
        "import json, sys\n"
        "from memsearch import codewords\n"
        "texts = json.loads(sys.stdin.read())\n"
        "print(json.dumps([codewords.unexpand(codewords.expand(t)) == t for t in texts]))\n"
        "print(json.dumps(codewords._forms('sha' + 'a' * 1000 + '256sum', True)[1:]))\n"
    )
    run_ = "a" * 1_000_000
    texts = [f"A{run_}1", f"aB{run_}1", f"x{run_}9y", "Ab1" * 300_000 + "x",
             "1" * 1_000_000 + ".2", "1." * 500_000, "1.2 " * 250_000,  # (dotted numbers: from each dot)
             f" .{run_}_", " .a" * 300_000,  # (names a dot begins)
             f" ${run_}_", " $a" * 300_000, " #1" * 300_000, "$" * 1_000_000, "#" * 1_000_000,  # (a $ or a #)
             f" @{run_}/", " @a" * 300_000, "@" * 1_000_000,  # (an @)
             f" --{run_}-", " --a-b" * 200_000, "--" * 500_000, " --" + "a-" * 500_000 + "_"]  # (options)
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps(texts), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    same, units = map(json.loads, done.stdout.splitlines())
    assert same == [True] * len(texts) and units == ["sha" + "a" * 1000 + "256"]


def test_a_run_longer_than_a_name_adds_nothing():
    """A base64 blob is no name: it added hundreds of parts, and each such run, a megabyte long, stayed in the
    cache of forms (4,096 of them)."""
    blob = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg" + "A" * 6
    assert len(blob) == codewords.MAX_NAME and codewords.identifier_forms(blob)
    assert codewords.expand(f"see {blob}x now") == f"see {blob}x now"
    cached = codewords._forms.cache_info().currsize
    assert codewords.identifier_forms("aB" * 500_000) == () and codewords._forms.cache_info().currsize == cached


def test_a_long_query_word_costs_linear_time(code_tree, tmp_path):
    """A path or dotted name in a query was sought from every letter of a word: a 100,000-character word
    took 134 s to plan. The guard is a generous timeout for all four queries."""
    for word in ("aA" * 50_000, "a1" * 50_000, "a/" * 50_000, "\u05d0\u05b0" * 30_000):  # (an argument: < 128 KiB)
        r = run_memsearch("query", "--root", code_tree, "--db", tmp_path / "db", "--", word, timeout=30)
        assert r.returncode in (0, 1) and not r.stderr.strip("no matches\n"), r.stderr


def test_a_long_run_of_underscores_in_a_query_costs_linear_time(code_tree, tmp_path):
    """A query's word was sought from every _ of a run of them: 32,000 took 30 s through the CLI, the
    100,000 here would take minutes. The guard is a generous timeout."""
    r = run_memsearch("query", "--root", code_tree, "--db", tmp_path / "db", "--", "port " + "_" * 100_000, timeout=30)
    assert r.returncode in (0, 1) and not r.stderr.strip("no matches\n"), r.stderr


def test_a_long_run_of_marks_costs_linear_time(tmp_path):
    """unicodedata sorts a run of combining marks in quadratic time: a 200 KB file of Hebrew points
    in mixed order held every query 10 s, one at the 2 MB cap would have held it ~1,000 s. Such a
    run is left unnormalized; the files beside it and the file itself are found. A generous timeout."""
    root = tmp_path / "m"
    write(root, "canary.md", "zebracanary here\n")
    for name, base, marks in (("hebrew.md", "\u05d0", "\u05b3\u05b2\u05b1\u05b0"), ("latin.md", "a", "\u0327\u0301")):
        write(root, name, f"zebra{name[:-3]} {base}{marks * (500_000 // len(marks))} end\n")  # 1 MB
    r = run_memsearch("query", "--root", root, "--db", tmp_path / "db", "--json", "zebracanary zebrahebrew zebralatin",
                      timeout=60)
    assert r.returncode == 0, r.stderr
    assert {hit["path"] for hit in json.loads(r.stdout)["results"]} == {"canary.md", "hebrew.md", "latin.md"}
    assert codewords.fold("e" + "\u0301\u0300" * 20) == "e"
    from unicodedata import normalize
    short, long = "e" + "\u0301\u0300" * 15, "e" + "\u0301\u0300" * 16
    assert codewords.normalized("NFC", short) == normalize("NFC", short) != short
    assert codewords.normalized("NFC", f"e\u0301 {long} e\u0301") == f"\u00e9 {long} \u00e9"


def test_symbol_words_do_not_match_their_letter(code_index):
    """C++ and C# are words of their own: the file about plain C never ranks for them."""
    assert "lang/c.md" not in [h.path for h in code_index.search("C++")]
    assert "lang/c.md" not in [h.path for h in code_index.search("C#")]
    assert "lang/sharp.md" not in [h.path for h in code_index.search("C#")]


def test_a_pair_ending_in_a_symbol_word_holds_its_token(tmp_path):
    """The pair "in F#" was asked for as "in F", which the letter F of "written in F, an old dialect" matched."""
    root = tmp_path / "m"
    write(root, "letter.md", "# Tools\nThe exporter is written in F, an old dialect.\n")
    write(root, "fsharp.md", "# Tools\nFor the exporter we went with F# after the spike.\n")
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert [h.path for h in idx.search("written in F#")][:1] == ["fsharp.md"]
    assert '"in F fsharp"' in plan("written in F#").pairs and '"on NET dotnet"' in plan("runs on .NET").pairs
    assert '"C cplusplus samples"' in plan("C++ samples").pairs  # a symbol first: through its token, as before


def test_three_spellings_meet(tmp_path):
    """user_id, user-id and userId find each other, and prose with the two
    words apart comes after all three."""
    root = tmp_path / "m"
    write(root, "a.md", "Store the user_id with the order.\n")
    write(root, "b.md", "Send the user-id header with the order.\n")
    write(root, "c.md", "Keep userId on the order.\n")
    write(root, "d.md", "The user placed the order; the id comes from the shop.\n")
    with MemoryIndex(root, tmp_path / "db") as idx:
        for query in ("user_id", "user-id", "userId", "UserID"):
            ranked = [h.path for h in idx.search(query, floor=0)]
            assert set(ranked[:3]) == {"a.md", "b.md", "c.md"}, (query, ranked)


def test_expand_and_unexpand_round_trip():
    text = "Use C++ and getUserById, user_id or .NET in Αθηνά; tiếng việt ｇｉｔ ısı x\u2064y\u2062z"
    shown = codewords.expand(text)
    assert "cplusplus" in shown and "get User By Id" in shown and "dotnet" in shown
    assert "Αθηνα" in shown and "tieng" in shown and "git" in shown and "isi" in shown
    chars = [[c, False] for c in shown]
    assert "".join(c for c, _ in codewords.unexpand_marked(chars)) == text


def test_an_excerpt_cut_inside_an_expansion_shows_no_part_of_it():
    """FTS5 cuts excerpts by tokens, so one may start or end inside an expansion."""
    def unexpand(text):
        return "".join(c for c, _ in codewords.unexpand_marked([[c, False] for c in text]))

    assert unexpand(f"User By Id{codewords.CLOSE} to load") == " to load"
    assert unexpand(f"Call getUserById{codewords.OPEN}get User") == "Call getUserById"


# Plain words that need no expansion, to place a code word in FTS5's excerpt window.
GREEK = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon"


def test_an_excerpt_ending_inside_an_expansion_marks_its_word(tmp_path):
    """FTS5 ended the window inside getX1Y2's expansion, past the part y2 it matched there: the word showed unmarked
    (with the long identifier, the excerpt's only match)."""
    long = "".join(f"{c}{n}" for n, c in enumerate("abcdefghijklmnopqrstuvwxyz", 1))
    write(tmp_path / "m", "y2.md", f"y2 {GREEK} getX1Y2 {GREEK}\n")
    write(tmp_path / "m", "long.md", f"Intro words here. Then {long} ends. More words after it.\n")
    with MemoryIndex(tmp_path / "m", tmp_path / "db") as idx:
        assert "<<getX1Y2>>" in idx.search("y2")[0].snippet
        assert f"<<{long}>>" in idx.search("m")[0].snippet


@pytest.mark.parametrize("word,part", [("getX1Y2", "y2"), ("getX1Y2", "x1"), ("sha256sum", "sha256"), ("utf8", "utf"),
                                       ("base64Encode", "encode")])
def test_an_excerpt_shows_and_marks_a_word_its_window_cuts_from_its_expansion(tmp_path, word, part):
    """A match in an expansion marks the word before it, but FTS5's window could start inside the expansion (the
    word cut off: no mark at all), end before the part that matched (the word shown unmarked), or a slice of a long
    file end inside it. Each file holds the word once: wherever the window falls, it is shown and marked."""
    words = GREEK.split()
    for n in range(len(words) + 1):
        write(tmp_path / "m", f"start{n}.md", f"{GREEK} {GREEK} {word} {' '.join(words[:n])} omega\n")
        write(tmp_path / "m", f"end{n}.md", f"{part} {' '.join(words[:n])} {word} {GREEK} {GREEK}\n")
    for n in range(990, 1010):
        write(tmp_path / "m", f"long{n}.md", f"{'a' * n} {word} {'filler ' * 600}\n")
    with MemoryIndex(tmp_path / "m", tmp_path / "db") as idx:
        for query in (part, f"{part} omega"):
            hits = idx.search(query, limit=200)
            assert len(hits) > 20
            for hit in hits:
                assert f"<<{word}>>" in hit.snippet or hit.path.startswith("end") and word not in hit.snippet, (
                    query, hit.path, hit.snippet)


@pytest.mark.parametrize("word", ["@Transactional", "$HOME", ".env", "#1234"])
def test_an_excerpt_starting_or_ending_at_a_sign_word_marks_its_sign(tmp_path, word):
    """A window ending on a sign word's name, before its expansion, marked the name alone (`@<<Transactional>>...`,
    as the plain word matched), and one starting at the name left its sign out (`...<<Transactional>>`), where
    mid-window the expansion marks the sign too (`<<@Transactional>>`)."""
    words = (GREEK + " " + GREEK).split()
    for n in range(len(words) + 1):
        write(tmp_path / "m", f"end{n}.md", f"{word} {' '.join(words[:n])} {word} {GREEK} {GREEK}\n")
        write(tmp_path / "m", f"start{n}.md", f"{GREEK} {GREEK} {word} {' '.join(words[:n])} {word}\n")
    with MemoryIndex(tmp_path / "m", tmp_path / "db") as idx:
        snippets = [hit.snippet for hit in idx.search(word, limit=200)]
    shown = run_memsearch("query", "--root", tmp_path / "m", "--db", tmp_path / "db", "--limit", "200", "--", word)
    assert shown.returncode == 0 and len(snippets) == 2 * (len(words) + 1)
    for snippet in [*snippets, *(line for line in shown.stdout.splitlines() if line.startswith("    "))]:
        assert snippet.count(word[1:]) == snippet.count(f"<<{word}>>") > 0, snippet


def test_unicode61_folds_what_fold_leaves_to_it():
    """codewords expands every letter unicode61 (remove_diacritics 1) does
    not fold as fold() does, and no Latin letter it folds (Latin text is
    indexed as before): checked letter by letter against FTS5."""
    letters = [chr(c) for c in [*range(0xC0, 0x530), *range(0x1E00, 0x2000)] if chr(c).isalpha()]
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'unicode61 remove_diacritics 1')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    conn.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", enumerate(letters, 1))
    token = dict(conn.execute("SELECT doc, term FROM v"))
    conn.close()
    for n, letter in enumerate(letters, 1):
        want = codewords.fold(letter).lower()
        if want == letter.lower():
            continue
        expanded = codewords.expand(letter) != letter
        if token.get(n) != want:
            assert expanded, (letter, hex(ord(letter)), token.get(n), want)
        elif letter < "\u0250" or "\u1e00" <= letter <= "\u1eff":
            assert not expanded, (letter, hex(ord(letter)))


def test_an_excerpt_marks_a_symbol_or_folded_word_not_the_run_it_ends(tmp_path):
    """A match through a symbol's or a folded word's expansion marked the whole run of letters and joiners
    before it: `foo-bar-baz-C#` for C#, `Αθηνά-Πειραιάς` for Πειραιας. An identifier's parts still mark it whole."""
    write(tmp_path / "m", "a.md", "note foo-bar-baz-C# and x-g++ on the Αθηνά-Πειραιάς line, get_userById\n")
    with MemoryIndex(tmp_path / "m", tmp_path / "db") as idx:
        for query, marked in [("C#", "foo-bar-baz-<<C#>> and"), ("g++", "x-<<g++>> on"),
                              ("Πειραιας", "Αθηνά-<<Πειραιάς>> line"), ("Αθηνα", "<<Αθηνά>>-Πειραιάς"),
                              ("userById", "<<get_userById>>")]:
            (hit,) = idx.search(query)
            assert marked in hit.snippet and hit.snippet.count("<<") == 1, (query, hit.snippet)


def test_an_identifier_after_dots_is_marked_without_them(tmp_path):
    """The leading dot word_start() takes for .NET went into an identifier's mark: `it..<<.getUserById>>`, and
    FTS5's own ellipsis before a window starting at one read `..<<.getUserById>>`. A name a dot begins keeps its dot."""
    write(tmp_path / "m", "a.md", "Wait for it...getUserById is called, then see .base64Encode and ASP.NET here\n")
    with MemoryIndex(tmp_path / "m", tmp_path / "db") as idx:
        for query, marked in [("user", "it...<<getUserById>> is"), ("encode", "see <<.base64Encode>> and"),
                              ("ASP.NET", "and <<ASP.NET>> here")]:
            (hit,) = idx.search(query)
            assert marked in hit.snippet, (query, hit.snippet)


def test_cli_ranks_and_marks_code_words(code_tree, tmp_path):
    """Through the installed script, as a user runs it."""
    db = tmp_path / "cli.db"
    for query, first, marked in [("C++", "lang/cpp.md", "<<C++>>"), (".NET", "net/dotnet.md", "<<.NET>>"),
                                 ("getUser", "code/getuser.md", "<<getUserById>>"),
                                 ("Αθηνα", "accents/greek.md", "<<Αθηνά>>"),
                                 ("uber client", "code/uber.md", "<<ÜberClient>>"),
                                 ("Ｃ＋＋ clang", "lang/cpp17.md", "<<C++>>17")]:
        r = run_memsearch("query", "--root", code_tree, "--db", db, "--json", "--", query)
        assert r.returncode == 0, r.stderr
        data = json.loads(r.stdout)
        assert data["results"][0]["path"] == first
        assert marked in data["results"][0]["snippet"]
    r = run_memsearch("query", "--root", code_tree, "--db", db, "--", "user_id")
    assert r.returncode == 0 and r.stdout.splitlines()[0].startswith(str(code_tree / "code/snake.md"))


def test_an_index_from_before_0011_is_migrated(tmp_path):
    """Rows written before migration 0011 hold no expansions: they answer as
    before until the next reconcile, which reads every file again."""
    root = tmp_path / "m"
    write(root, "code.md", "Call getUserById and compile with C++.\n")
    write(root, "other.md", "Notes on plain C and user ids.\n")
    db = tmp_path / "db"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT)")
    for number, name, path in migrate.available():
        if number < 11:
            for statement in migrate.split_statements(path.read_text("utf-8")):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations VALUES (?, ?, 'then')", (number, name))
            conn.execute(f"PRAGMA user_version = {number}")
    key = MemoryIndex(root, tmp_path / "scratch.db").roots[0].key
    conn.execute("INSERT INTO memory_roots (id, key) VALUES (1, ?)", (key,))
    for rel in ("code.md", "other.md"):
        st = (root / rel).stat()
        # The fingerprint of the file as it is: without 0011, nothing would be read again.
        conn.execute("INSERT INTO memory_fts (path, root, scope, type, body, size, mtime_ns, ctime_ns, device, inode)"
                     " VALUES (?, 1, 'x', 'x', ?, ?, ?, ?, ?, ?)",
                     (rel, (root / rel).read_text(), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_dev, st.st_ino))
    conn.execute("INSERT INTO history_files (root, path, project, size, mtime_ns, inode, consumed, head, tail)"
                 " VALUES ('/r', 'p.jsonl', 'p', 1, 1, 42, 1, x'', x'')")
    conn.close()
    with MemoryIndex(root, db) as idx:
        assert idx.status()["schema_version"] == migrate.latest_version()
        # The history's transcripts will be read again from their start.
        assert idx.conn.execute("SELECT inode FROM history_files").fetchall() == [(-1,)]
        assert [h.path for h in idx.search("getUserById", reconcile=False)] == ["code.md"]
        assert idx.search("getUser", reconcile=False) == []  # no parts yet
        report = idx.reconcile()
        assert set(report.updated) == {"code.md", "other.md"}
        assert [h.path for h in idx.search("getUser")] == ["code.md"]
        assert idx.search("C++")[0].path == "code.md"
        assert idx.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_parts_follow_the_first_occurrence_only():
    """A page naming CreateThread fifty times must not count "thread" fifty
    times more; the whole identifier keeps its count."""
    shown = codewords.expand("CreateThread starts it. CreateThread again, and CreateThread.")
    assert shown.count("Create Thread") == 1 and shown.count("CreateThread") == 3
    assert codewords.expand("C++ and C++").count("cplusplus") == 2  # symbol words: every time


# Texts whose shadow column differs from them: code words, folded letters,
# CJK, and the markers and separator themselves (U+2062, U+2063, U+2064).
ONCE = {
    "cpp.md": "Build it with C++ and C# on .NET.\n",
    "ident.md": "Call getUserById then get_userById.\n",
    "accents.md": "Αθηνά, tiếng việt, kapı and ｇｉｔ.\n",
    "cjk.md": "用 git 提交到仓库 docker部署。\n",
    "marks.md": "okapi \u2062\u2064 and \u2063 x\u2064\u2064y\u2062 getUserById\u2062 提交\u2063部署\n",
}
ONCE_QUERIES = {"cpp.md": "C++", "ident.md": "getUserById", "accents.md": "Αθηνα", "cjk.md": "提交", "marks.md": "okapi"}


def _unmarked(snippet: str) -> str:
    return snippet.replace("<<", "").replace(">>", "")


def test_a_text_is_stored_once_and_read_back_byte_for_byte(tmp_path):
    """Where the shadow column holds a text (with its expansions or bigrams),
    the text column is empty; excerpts, history verification and session
    context still give the text exactly."""
    root = tmp_path / "m"
    for rel, text in ONCE.items():
        write(root, rel, text)
    write(root, "front.md", "---\nname: getUserById 提交\ndescription: Αθηνά C# \u2063\u2064\n---\nplain words\n")
    with MemoryIndex(root, tmp_path / "db") as idx:
        for rel, query in ONCE_QUERIES.items():
            hit = next(h for h in idx.search(query) if h.path == rel)
            assert _unmarked(hit.snippet) == ONCE[rel]
        assert [h.path for h in idx.search("getUser")] == ["ident.md", "front.md", "marks.md"]
        assert _unmarked(idx.search("Αθηνα C#")[0].snippet) == "Αθηνά C# \u2063\u2064"
    conn = sqlite3.connect(tmp_path / "db")
    rows = conn.execute("SELECT path, body, body_seg, name, name_seg, description, description_seg FROM memory_fts"
                        " WHERE body_seg IS NOT NULL OR name_seg IS NOT NULL").fetchall()
    conn.close()
    assert {r[0] for r in rows} == {*ONCE, "front.md"}
    for path, *columns in rows:
        for text, shadow in zip(columns[::2], columns[1::2]):
            assert shadow is None or text == "", path  # held once, in the shadow
    with MemoryIndex(root, tmp_path / "db") as idx:  # rewritten and removed: FTS5 drops what it had indexed
        write(root, "ident.md", "Plain words now.\n")
        (root / "cpp.md").unlink()
        assert [h.path for h in idx.search("getUser")] == ["front.md", "marks.md"] and idx.search("C++") == []
        idx.conn.execute("INSERT INTO memory_fts_idx (memory_fts_idx, rank) VALUES ('integrity-check', 1)")

    history = tmp_path / "projects"
    said = [text.rstrip("\n") for text in ONCE.values()]  # (a transcript's message ends without one)
    transcript(history, [line("user", text, session="once-1") for text in said]
               + [line("assistant", "cafe\u0301 getUserById", session="once-1")], session="once-1")
    with HistoryIndex(history, tmp_path / "db") as h:
        h.refresh()
        for rel, query in ONCE_QUERIES.items():
            found = h.search_result(query, messages=True, refresh=False)
            # Verified against the transcript's bytes: a mismatch would read it again (a report).
            assert found.refresh is None and ONCE[rel].rstrip("\n") in {_unmarked(hit.snippet) for hit in found.hits}
        context = h.read_session_context("once-1", "okapi getUserById C++ Αθηνα 提交", "handoff")
        assert [f[3] for f in context.fragments] == [*said, "cafe\u0301 getUserById"]
        stored = h.conn.execute("SELECT body, body_seg FROM history_messages ORDER BY id").fetchall()
    # The text not in NFC keeps its copy (its shadow is of the NFC form).
    assert stored[:-1] == [("", shadow) for _, shadow in stored[:-1]] and stored[-1][0] == "cafe\u0301 getUserById"


def test_an_index_from_before_0014_keeps_each_text_once(tmp_path):
    """Rows written before 0014 hold a text and its shadow: an ASCII text is
    emptied by the migration, the others are read again (SQL cannot check that
    their shadow gives them back), and every search answers throughout."""
    root = tmp_path / "m"
    for rel, text in ONCE.items():
        write(root, rel, text)
    history = tmp_path / "projects"
    transcript(history, [line("user", "call getUserById", session="a-1")], session="a-1")
    transcript(history, [line("user", "提交到仓库 getUserById", session="b-1")], session="b-1")
    db = tmp_path / "db"
    with MemoryIndex(root, db) as idx:
        idx.reconcile()
    with HistoryIndex(history, db) as h:
        h.refresh()
    conn = sqlite3.connect(db, isolation_level=None)  # as 0013 left them: both columns filled
    for rel, text in ONCE.items():
        conn.execute("UPDATE memory_fts SET body = ? WHERE path = ?", (text, rel))
    for text in ("call getUserById", "提交到仓库 getUserById"):
        conn.execute("UPDATE history_messages SET body = ? WHERE idx_body LIKE ?", (text, text[:2] + "%"))
    for column in ("first_at", "last_at"):  # nor 0015's piece times
        conn.execute(f"ALTER TABLE history_pieces DROP COLUMN {column}")
    rewind(conn, 14)
    conn.close()
    with MemoryIndex(root, db) as idx:
        assert idx.status()["schema_version"] == migrate.latest_version()
        kept = dict(idx.conn.execute("SELECT path, body FROM memory_fts WHERE body <> ''"))
        assert kept == {rel: ONCE[rel] for rel in ("accents.md", "cjk.md", "marks.md")}
        assert [h.path for h in idx.search("getUserById", reconcile=False)] == ["ident.md", "marks.md"]
        # Read again (ident.md by 0025: a _; cpp.md by 0031's superset: .NET).
        assert sorted(idx.reconcile().updated) == sorted([*kept, "ident.md", "cpp.md"])
        assert idx.conn.execute("SELECT count(*) FROM memory_fts WHERE body <> ''").fetchone() == (0,)
        assert _unmarked(idx.search("提交")[0].snippet) == ONCE["cjk.md"]
        idx.conn.execute("INSERT INTO memory_fts_idx (memory_fts_idx, rank) VALUES ('integrity-check', 1)")
    with HistoryIndex(history, db) as h:
        inodes = dict(h.conn.execute("SELECT path, inode FROM history_files"))
        assert inodes["-home-u-shop/b-1.jsonl"] == -1 and inodes["-home-u-shop/a-1.jsonl"] > 0
        assert len(h.search("getUserById", messages=True)) == 2
        assert h.conn.execute("SELECT body FROM history_messages").fetchall() == [("",), ("",)]
        h.conn.execute("INSERT INTO history_fts (history_fts, rank) VALUES ('integrity-check', 1)")


def _indexed_before(tmp_path, memory: dict, said: dict, version: int, *expansions: tuple[str, str]):
    """(memory root, history root, db) of ``memory`` files and transcripts (session: what the user said),
    indexed, then put back as migration ``version`` - 1 left them: each (old, new) of ``expansions`` spelled
    ``new`` in the shadow texts (the pieces' contentless index made again from them)."""
    root, history, db = tmp_path / "m", tmp_path / "projects", tmp_path / "db"
    for rel, text in memory.items():
        write(root, rel, text)
    for session, text in said.items():
        transcript(history, [line("user", text, session=session)], session=session)
    with MemoryIndex(root, db) as idx:
        idx.reconcile()
    with HistoryIndex(history, db) as h:
        h.refresh()
    conn = sqlite3.connect(db, isolation_level=None)
    for table in ("memory_fts", "history_messages"):
        for old, new in expansions:
            conn.execute(f"UPDATE {table} SET body_seg = replace(body_seg, ?, ?)", (old, new))
    conn.execute("INSERT INTO history_session_fts (history_session_fts) VALUES ('delete-all')")
    conn.execute("INSERT INTO history_session_fts (rowid, idx_user, idx_other)"
                 f" SELECT p.id, {pieces.PIECE_TEXT} FROM history_pieces AS p")
    rewind(conn, version)
    conn.close()
    return root, history, db


def _memory_read_again(root, db, query: str, path: str) -> None:
    """Before a reconcile ``query`` finds nothing; the migration marked ``path`` to be read again, not
    plain.md; after it, ``query`` finds ``path``."""
    with MemoryIndex(root, db) as idx:
        assert not idx.search(query, reconcile=False)
        sizes = dict(idx.conn.execute("SELECT path, size FROM memory_fts"))
        assert sizes[path] == -1 and sizes["plain.md"] > 0
        assert [hit.path for hit in idx.search(query)] == [path]


def _history_read_again(history, db, query: str) -> None:
    """The migration marked session a-1's transcript to be read again, not b-1's; the search that reads it again
    finds a-1 by ``query``, and both indexes stay whole."""
    with HistoryIndex(history, db) as h:
        inodes = dict(h.conn.execute("SELECT path, inode FROM history_files"))
        assert inodes["-home-u-shop/a-1.jsonl"] == -1 and inodes["-home-u-shop/b-1.jsonl"] > 0
        assert [hit.session for hit in h.search(query)] == ["a-1"]
        _integrity(h)


def _history_kept(history, db, query: str, said: str) -> None:
    """The migration marked no transcript to be read again, so ``query`` finds none; a new session that says
    ``said`` is found by it."""
    with HistoryIndex(history, db) as h:
        assert h.conn.execute("SELECT count(*) FROM history_files WHERE inode = -1").fetchone() == (0,)
        assert not h.search(query)
        transcript(history, [line("user", said, session="c-1")], session="c-1")
        assert [hit.session for hit in h.search(query)] == ["c-1"]
        _integrity(h)


def _integrity(h: HistoryIndex) -> None:
    for fts in ("history_fts", "history_session_fts"):
        h.conn.execute(f"INSERT INTO {fts} ({fts}, rank) VALUES ('integrity-check', 1)")


def test_an_index_from_before_0017_reads_names_with_digits_again(tmp_path):
    """0017 marks to be read again the memory files whose expansions may gain units (an expansion followed
    by a digit), those alone: until then they answer as before, then "oauth" finds them. Transcripts keep
    the expansions they were read with (nearly all would be read again); a new one has the units."""
    root, history, db = _indexed_before(  # expansions without units
        tmp_path, {"oauth.md": "Sign in with OAuth2 first.\n", "plain.md": "Call getUserById on the payload.\n"},
        {"a-1": "sign in with OAuth2 first", "b-1": "run getUserById first"}, 17,
        (" Auth2 OAuth" + codewords.CLOSE, codewords.CLOSE))
    _memory_read_again(root, db, "oauth", "oauth.md")
    _history_kept(history, db, "oauth", "then OAuth2 again")


def test_an_index_from_before_0019_reads_latin_identifiers_and_versions_again(tmp_path):
    """0019 marks to be read again the memory files holding a Latin or full-width letter or a symbol's
    version, those alone; transcripts only for ß, æ and œ (a query asks for them folded alone)."""
    root, history, db = _indexed_before(
        tmp_path, {"cpp.md": "It targets C++17.\n", "uber.md": "ÜberClient wraps the API.\n",
                   "de.md": "Die Straße ist zu.\n", "plain.md": "Αθηνά and getUserById and C# and issue #12\n"},
        {"a-1": "it targets C++17", "b-1": "die Straße ist zu"}, 19,
        *((codewords.OPEN + added + codewords.CLOSE, "") for added in ("cplusplus", "Uber Client", "Strasse")))
    with MemoryIndex(root, db) as idx:
        for query in ("C++", "uber", "strasse"):
            assert not idx.search(query, reconcile=False)
        sizes = dict(idx.conn.execute("SELECT path, size FROM memory_fts"))
        # (plain.md by 0033 alone: its #12 is an issue's number.)
        marked = [path for path, size in sorted(sizes.items()) if size == -1]
        assert marked == ["cpp.md", "de.md", "plain.md", "uber.md"]
        for query, path in (("C++", "cpp.md"), ("uber", "uber.md"), ("strasse", "de.md")):
            assert [hit.path for hit in idx.search(query)] == [path]
    with HistoryIndex(history, db) as h:
        inodes = dict(h.conn.execute("SELECT path, inode FROM history_files"))
        assert inodes["-home-u-shop/b-1.jsonl"] == -1 and inodes["-home-u-shop/a-1.jsonl"] > 0
        assert not h.search("C++")
        assert [hit.session for hit in h.search("Straße")] == ["b-1"]
        _integrity(h)


def test_an_index_from_before_0018_folds_hebrew_and_arabic_marks(tmp_path):
    """0018 reads again the memory files and transcripts holding a Hebrew point or an Arabic haraka, and
    those alone: a voweled word is then found typed bare, where unicode61 had split it into letters."""
    root, history, db = _indexed_before(  # no expansion of their own
        tmp_path, {"ar.md": "التحية مَرْحَبًا بالعالم\n", "plain.md": "Αθηνά and getUserById\n"},
        {"a-1": "ברכה: שָׁלוֹם עולם", "b-1": "Αθηνά again"}, 18,
        *((codewords.OPEN + bare + codewords.CLOSE, "") for bare in ("مرحبا", "שלום")))
    _memory_read_again(root, db, "مرحبا", "ar.md")
    _history_read_again(history, db, "שלום")


def test_an_index_from_before_0035_reads_degrees_again(tmp_path):
    """0035 marks to be read again the memory files whose indexed copy gave a C after a degree sign C the
    language's token (200°C, 4ºC): the next reconcile takes it away."""
    o, c = codewords.OPEN, codewords.CLOSE
    root, history, db = _indexed_before(
        tmp_path, {"oven.md": "Set ovenTemp to 200°C, then 4ºC.\n", "plain.md": "Call getUserById on C++ first.\n"},
        {"a-1": "nothing here"}, 35, *((f"{d}C", f"{d}C{o}{codewords.LONE_C}{c}") for d in "°º"))
    with MemoryIndex(root, db) as idx:
        assert [h.path for h in idx.search(codewords.LONE_C, reconcile=False)] == ["oven.md"]
        sizes = dict(idx.conn.execute("SELECT path, size FROM memory_fts"))
        assert sizes["oven.md"] == -1 and sizes["plain.md"] > 0
        assert not idx.search(codewords.LONE_C)
        assert [h.path for h in idx.search("ovenTemp")] == ["oven.md"]


def test_an_index_from_before_0034_reads_drives_again(tmp_path):
    """0034 marks to be read again the memory files holding C: before a character, which 0029 read as C the
    language where it is a drive ({{C:}}): the next reconcile takes the language's token away."""
    o, c = codewords.OPEN, codewords.CLOSE
    root, history, db = _indexed_before(
        tmp_path, {"drive.md": "Run backupTool on {{C:}} nightly.\n", "plain.md": "Call getUserById on C++ first.\n"},
        {"a-1": "nothing here"}, 34, ("{{C:}}", f"{{{{C{o}{codewords.LONE_C}{c}:}}}}"))
    with MemoryIndex(root, db) as idx:
        assert [h.path for h in idx.search(codewords.LONE_C, reconcile=False)] == ["drive.md"]
        sizes = dict(idx.conn.execute("SELECT path, size FROM memory_fts"))
        assert sizes["drive.md"] == -1 and sizes["plain.md"] > 0
        assert not idx.search(codewords.LONE_C)
    assert codewords.expand("{{C:}}, C:x, C: the language") == (
        f"{{{{C:}}}}, C:x, C{o}{codewords.LONE_C}{c}: the language")


def test_a_domain_ending_in_net_is_not_dotnet(tmp_path):
    """The index reads a lower-case .net after a word as a domain (example.net), the query read it as .NET:
    acme.net ranked a file about .NET above the one naming the host."""
    root = tmp_path / "m"
    write(root, "mail.md", "Outgoing mail goes through relay.acme.net on port 25.\n")
    write(root, "billing.md", "The billing API runs on .NET 8.\n")
    write(root, "relay.md", "The acme relay is the fallback for outgoing mail.\n")
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert [h.path for h in idx.search("acme.net")][:1] == ["mail.md"]
        assert [h.path for h in idx.search(".net 8")][:1] == ["billing.md"]
    assert '"dotnet"' not in plan("acme.net").terms
    assert '"dotnet"' in plan("use .net 8").terms and '"dotnet"' in plan("ASP.NET").terms


@pytest.mark.parametrize("question, gold, near", [
    ("tests in C#", "The integration suite uses xUnit; every new feature gets tests, all C#.",
     "Unit tests in C, with Unity."),
    ("written in C++", "The engine is C++ only.",
     "The firmware is written in C, see the flashing notes in the wiki."),
    ("where is the getUserById helper defined?", "getUserById lives in src/users/repo.ts.",
     "Helper functions are defined in src/utils and nowhere else."),
])
def test_a_code_word_outweighs_two_plain_words(tmp_path, question, gold, near):
    """A question's code word names its topic: the file holding it ranks above one holding two of its plain words
    (each counted once: five neutral files keep every word rare)."""
    root = tmp_path / "m"
    write(root, "gold.md", f"# Notes\n{gold}\n")
    write(root, "near.md", f"# Notes\n{near}\n")
    for n, topic in enumerate(["backups run nightly", "the staging host", "release notes", "on-call rota",
                               "the style guide"]):
        write(root, f"other{n}.md", f"# Notes\nSomething about {topic}.\n")
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert [h.path for h in idx.search(question)][:1] == ["gold.md"]


def test_only_code_shapes_weigh_more():
    """Symbol words and names only code writes (a _, a lower-case start with a capital or digits inside) weigh more;
    a capitalized name may be a person's or a brand's (McGee, YouTube), as prose writes them."""
    assert plan("C# and .NET with getUserById, user_id, API_KEY, utf8").code == (
        '"csharp"', '"dotnet"', '"getUserById"', '"user_id"', '"API_KEY"', '"utf8"')
    assert plan("LeBron at McGee's, YouTube, MoMA, CWindowImpl").code == ()
    assert repr(plan("stripe webhook")) == """Query(terms=('"stripe"', '"webhook"'), pairs=('"stripe webhook"',))"""


def test_a_full_width_joiner_keeps_its_word_whole(tmp_path):
    """ｕｓｅｒ＿ｉｄ in Japanese text: the ＿ ended the folded word, so its halves were folded apart, user and id
    were not adjacent, and user_id found nothing. ＿ also splits a full-width identifier as _ does."""
    root = tmp_path / "m"
    write(root, "ja.md", "# 表\n主キーはｕｓｅｒ＿ｉｄです。\n")
    write(root, "other.md", "# 表\nユーザーの名前は必須です。id と user は別。\n")
    with MemoryIndex(root, tmp_path / "db") as idx:
        for query in ("user_id", "ｕｓｅｒ＿ｉｄ", "user-id"):
            assert [h.path for h in idx.search(query)][:1] == ["ja.md"], query
    assert codewords.expand("ｇｅｔＵｓｅｒ＿ｂｙＩｄ") == (
        f"ｇｅｔＵｓｅｒ＿ｂｙＩｄ{codewords.OPEN}get User by Id getuserbyid getUser_byId{codewords.CLOSE}")


def test_an_identifier_with_a_joint_ranks_above_prose_with_its_words(tmp_path):
    """API_KEY, which unicode61 splits, is indexed joined too (apikey), as unicode61 keeps apiKey: a file
    naming it comes before prose saying "api key", and user_id and userId meet whole."""
    root = tmp_path / "m"
    write(root, "env.md", "# Env\nAPI_KEY must be set for the nightly job.\n")
    write(root, "prose.md", "# Env\nThe api key rotation runs.\n")
    write(root, "longer.md", "# Env\nAPI_KEY_ID is the public half of the pair.\n")
    write(root, "snake.md", "# Orders\nThe orders table keys on user_id for every row we keep.\n")
    write(root, "words.md", "# Orders\nEach user id is kept.\n")
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert [h.path for h in idx.search("API_KEY", floor=0)][:1] == ["env.md"]
        for query in ("user_id", "userId"):
            assert [h.path for h in idx.search(query, floor=0)][:2] == ["snake.md", "words.md"], query
    assert codewords.expand("MAX_FILE_BYTES or a_b_c_d_e_f_g or 1_000_000 or __init__") == (
        f"MAX_FILE_BYTES{codewords.OPEN}maxfilebytes{codewords.CLOSE} or a_b_c_d_e_f_g or 1_000_000 or __init__"
        f"{codewords.OPEN}dunderinit{codewords.CLOSE}")
    assert codewords.expand("well-known") == "well-known"  # prose joins words with - alone


@pytest.mark.parametrize("version,token,path,text", [
    (25, "apikey", "env.md", "API_KEY"),  # a name with a _ joined
    (27, "dunderinit", "pkg.md", "__init__"),  # a Python special name's token
])
def test_an_index_from_before_0025_or_0027_reads_memory_files_again(tmp_path, version, token, path, text):
    """0025 and 0027 mark to be read again the memory files holding a _ (a __), those alone; transcripts keep the
    expansions they were read with (nearly all hold a _), as in 0017, and a new one has the new token."""
    root, history, db = _indexed_before(
        tmp_path, {path: f"Set {text} first.\n", "plain.md": "Call getUserById first.\n"},
        {"a-1": f"set {text} first", "b-1": "run getUserById first"}, version,
        (codewords.OPEN + token + codewords.CLOSE, ""))
    _memory_read_again(root, db, token, path)
    _history_kept(history, db, token, f"then {text} again")


def test_an_index_from_before_0026_drops_the_parts_of_long_runs(tmp_path):
    """0026 marks to be read again the memory files with an expansion as long as a run longer than a name makes,
    those alone (plain.md has getUserById's): the parts an index gave such a run answer until then, and go with
    the next reconcile."""
    blob = "aB" * 60
    parts = " ".join(["a", "B"] * 60)  # as the index spelled them before MAX_NAME, with a word to find them by
    root, history, db = _indexed_before(
        tmp_path, {"blob.md": f"Call getUserById on {blob}.\n", "plain.md": "Call getUserById first.\n"},
        {"a-1": "nothing here"}, 26, (blob, f"{blob}{codewords.OPEN}{parts} kestrel{codewords.CLOSE}"))
    with MemoryIndex(root, db) as idx:
        assert [h.path for h in idx.search("kestrel", reconcile=False)] == ["blob.md"]
        sizes = dict(idx.conn.execute("SELECT path, size FROM memory_fts"))
        assert sizes["blob.md"] == -1 and sizes["plain.md"] > 0
        assert not idx.search("kestrel") and {h.path for h in idx.search("getUserById")} == {"blob.md", "plain.md"}


def test_a_special_name_is_a_token_of_its_own():
    """__init__ is init to unicode61: it also expands to dunderinit (after its first occurrence, as an
    identifier's parts), and a name that only looks like one gets nothing."""
    o, c = codewords.OPEN, codewords.CLOSE
    assert codewords.expand("__main__ then __main__ and __class_getitem__") == (
        f"__main__{o}dundermain{c} then __main__ and __class_getitem__{o}classgetitem dunderclassgetitem{c}")
    for text in ("___x___", "my__init__", "__init", "__1__", "__init___", "__", "__foo-bar__"):  # (- alone: nothing)
        assert codewords.expand(text) == text
    assert codewords.identifier_forms("__init__") == codewords.index_forms("__init__") == ("dunderinit",)


def test_an_index_from_before_0024_reads_full_width_joiners_again(tmp_path):
    """0024 reads again the memory files and transcripts holding a full-width ＿ or －, and those alone."""
    root, history, db = _indexed_before(
        tmp_path, {"ja.md": "主キーはｕｓｅｒ＿ｉｄです。\n", "plain.md": "ｕｓｅｒ and getUserById\n"},
        {"a-1": "主キーはｕｓｅｒ＿ｉｄです", "b-1": "run getUserById first"}, 24,
        (codewords.OPEN + "userid user_id" + codewords.CLOSE, ""))
    _memory_read_again(root, db, "user_id", "ja.md")
    _history_read_again(history, db, "user_id")


def test_ordinals_and_plurals_make_no_words_of_their_ends(tmp_path):
    """An ordinal adds its number (a date is asked for as "August 15"); a plural of capitals and a decade add
    nothing (the stemmer finds TVs by TV, 1990s by 1990). Split, they made words of nothing: "T Vs", "15 th"."""
    o, c = codewords.OPEN, codewords.CLOSE
    assert codewords.expand("the 15th, 2nd and 1990s TVs and CDs") == (
        f"the 15th{o}15{c}, 2nd{o}2{c} and 1990s TVs and CDs")
    assert codewords.identifier_forms("getAPIs", True) == ("get APIs",)
    assert codewords.identifier_forms("sha256sum", True) == ("sha 256 sum", "sha256")  # (256s is no decade)
    root = tmp_path / "m"
    for rel, text in {"met.md": "We met on the 15th in the office, with the TVs and CDs.",
                      "other.md": "We met at the office.", "urls.md": "Fetch the list of URLs, then the PDFs.",
                      "ls.md": "Run ls -la first."}.items():
        write(root, rel, text + "\n")
    with MemoryIndex(root, tmp_path / "db") as idx:
        assert [h.path for h in idx.search("met 15")][:1] == ["met.md"]
        for query, found in (("th", []), ("ds", []), ("fs", []), ("ls", ["ls.md"]),
                             ("TV", ["met.md"]), ("URL", ["urls.md"])):
            assert [h.path for h in idx.search(query)] == found, query


def test_an_index_from_before_0028_reads_ordinals_and_plurals_again(tmp_path):
    """0028 marks to be read again the memory files with an ordinal, a decade or a plural of capitals (a
    superset), not plain.md: their old parts answer until the next reconcile, and go with it."""
    o, c = codewords.OPEN, codewords.CLOSE
    root, history, db = _indexed_before(
        tmp_path, {"met.md": "Met on the 15th with two TVs.\n", "plain.md": "Call getUserById first.\n"},
        {"a-1": "nothing here"}, 28, (f"15th{o}15{c}", f"15th{o}15 th{c}"), ("TVs", f"TVs{o}T Vs{c}"))
    with MemoryIndex(root, db) as idx:
        assert [h.path for h in idx.search("vs", reconcile=False)] == ["met.md"]
        sizes = dict(idx.conn.execute("SELECT path, size FROM memory_fts"))
        assert sizes["met.md"] == -1 and sizes["plain.md"] > 0
        assert not idx.search("vs") and [h.path for h in idx.search("15")] == ["met.md"]


def test_c_alone_is_a_token_of_its_own():
    """C standing alone expands to clanguage after each occurrence (a symbol word's C is the same letter to
    unicode61); a query for C or c asks for both, and a pair through C is spelled through its token."""
    o, c = codewords.OPEN, codewords.CLOSE
    assert codewords.expand(r"C:\Users and C:/x") == r"C:\Users and C:/x"  # a drive
    assert codewords.expand("in C, C/C++, C-style; Objective-C, main.C, C99, ABC, (C).") == (
        f"in C{o}clanguage{c}, C{o}clanguage{c}/C++{o}cplusplus{c}, C{o}clanguage{c}-style; Objective-C, main.C,"
        f" C99{o}C 99{c}, ABC, (C{o}clanguage{c}).")
    assert plan("c").terms == ('"c"', '"clanguage"')
    assert plan("C firmware").pairs == ('"C clanguage firmware"',)
    # Objective-C's C is not alone in the index, so the query does not ask for the language either.
    assert plan("Objective-C code").terms == ('"Objective"', '"C"', '"code"', '"objectivec"')
    assert plan("Objective-C code").pairs == ('"Objective C"', '"C code"')
    assert "clanguage" in plan("Objective-C or C").fts


def test_degrees_celsius_are_not_c():
    """A C after a degree sign (200°C, 4ºC, 20 °C) is degrees Celsius: no clanguage, in a file or a query."""
    o, c = codewords.OPEN, codewords.CLOSE
    assert codewords.expand("Bake at 200°C, store at 4ºC or 20 °C; the oven's firmware is in C.") == (
        f"Bake at 200°C, store at 4ºC or 20 °C; the oven's firmware is in C{o}clanguage{c}.")
    assert plan("200°C oven").terms == ('"200"', '"C"', '"oven"')
    assert codewords.LONE_C not in " ".join(plan("proof at 30ºC").terms)


def test_a_dotted_number_is_a_token_of_its_own():
    """A dotted number (2.0.7, 1.2, an address) also stands as one token after its first occurrence, so 2.0.7 is not
    found as well in 2.0.7.1; a query asks for it, its digits as a phrase, and without a v before it."""
    o, c = codewords.OPEN, codewords.CLOSE
    assert codewords.expand("Pin 2.0.7, then 2.0.7 and 10.0.0.1, not file.2.txt or 1..2") == (
        f"Pin 2.0.7{o}2dot0dot7{c}, then 2.0.7 and 10.0.0.1{o}10dot0dot0dot1{c}, not file.2.txt or 1..2")
    assert plan("v2.0.7").terms[3:5] == ('"2 0 7"', '"2dot0dot7"')


def test_an_option_of_several_words_is_joined():
    """A command line's option of several words (--dry-run) gets its words joined after its first occurrence, as a
    name with a _ does; a run joined by - alone (well-known), an em dash typed as -- and a one-word option get none."""
    o, c = codewords.OPEN, codewords.CLOSE
    assert codewords.expand("Pass --dry-run, --no-verify and --dry-run; not well-known, a -- b, x--y-z or --force") == (
        f"Pass --dry-run{o}dryrun{c}, --no-verify{o}noverify{c} and --dry-run; not well-known, a -- b, x--y-z or"
        " --force")
    assert plan("--dry-run").terms == ('"dry"', '"run"', '"dryrun"')


def test_a_name_a_dot_begins_is_a_token_of_its_own():
    """A name a dot begins (.env, *.md) expands to its token after each occurrence, not after a word, a dot, a bracket,
    ? or ! (file.env, ../up, f().bar, a?.b), nor a folder's (its token broke the phrase of .planning/ files), nor for
    .NET (a symbol); a query asks for the word and the token, and a pair through it is spelled through its token."""
    o, c = codewords.OPEN, codewords.CLOSE
    text = "Edit .env, *.md, .env; not ~/.config/x, .planning/ files, file.env, ../up, f().bar, a?.b, e.g. or .NET"
    assert codewords.expand(text) == (
        f"Edit .env{o}dotenv{c}, *.md{o}dotmd{c}, .env{o}dotenv{c}; not ~/.config/x, .planning/ files, file.env,"
        f" ../up, f().bar, a?.b, e.g. or .NET{o}dotnet{c}")
    assert plan(".env").terms == ('"env"', '"dotenv"') and plan(".env").code == ('"dotenv"',)
    assert plan("the .env file").pairs == ('"the env"', '"env dotenv file"')
    assert '"env dotenv local"' in plan(".env.local").terms  # a dotted name through it, as the index spells it


def test_a_variable_and_an_issue_number_are_tokens_of_their_own():
    """A name a $ begins ($HOME, ${CARGO_HOME}) and a number a # begins (#1234) expand to their token after each
    occurrence, not after a word or another sign (a$b, $$x, repo#1, &#38;, ##7), nor for a price ($5), a colour
    (#12ab) or a heading (# 5); a query asks for the word and the token, and a pair through it is spelled through it."""
    o, c = codewords.OPEN, codewords.CLOSE
    text = "Set $HOME, ${CARGO_HOME} and $HOME; issue #1234, (#42); not $5, a$b, $$x, repo#1, &#38;, #12ab, # 5 or ##7"
    assert codewords.expand(text) == (
        f"Set $HOME{o}dollarhome{c}, ${{CARGO_HOME{o}dollarcargohome cargohome{c}}} and $HOME{o}dollarhome{c};"
        f" issue #1234{o}hash1234{c}, (#42{o}hash42{c}); not $5, a$b, $$x, repo#{o}reposharp{c}1, &#38;,"
        f" #12ab{o}12 ab{c}, # 5 or ##7")
    assert plan("$HOME").terms == ('"HOME"', '"dollarhome"') and plan("$HOME").code == ('"dollarhome"',)
    assert plan("#1234").terms == ('"1234"', '"hash1234"') and plan("#1234").code == ('"hash1234"',)
    assert plan("the $HOME folder").pairs == ('"the HOME"', '"HOME dollarhome folder"')
    assert '"HOME dollarhome cache app"' in plan("$HOME/.cache/app").terms  # a path through it, as the index spells it


def test_an_annotation_is_a_token_of_its_own():
    """A name an @ begins (an annotation, a decorator, a handle) expands to its token after each occurrence, not
    after a word or another @ (an e-mail, @@x), nor before a /, a - or a . (a scope, @types/node; @my-org; a dotted
    name, @pytest.fixture, whose words stay a phrase)."""
    o, c = codewords.OPEN, codewords.CLOSE
    text = "@Transactional, @property and @Test; not me@x.org, @@x, @types/node, @my-org or @pytest.fixture"
    assert codewords.expand(text) == (
        f"@Transactional{o}atsigntransactional{c}, @property{o}atsignproperty{c} and @Test{o}atsigntest{c};"
        f" not me@x.org, @@x, @types/node, @my-org or @pytest.fixture")
    assert plan("@Transactional").terms == ('"Transactional"', '"atsigntransactional"')
    assert plan("@Transactional").code == ('"atsigntransactional"',)
    assert plan("@pytest.fixture scope").terms[-1] == '"pytest fixture"'  # a dotted name's phrase, unbroken


@pytest.mark.parametrize("version,token,path,text", [
    (29, "clanguage", "c.md", "C"),  # C alone
    (30, "2dot0dot7", "v.md", "2.0.7"),  # a dotted number
    (31, "dotenv", "env.md", ".env"),  # a name a dot begins
    (32, "dryrun", "opt.md", "--dry-run"),  # an option of several words
    (33, "dollarhome", "home.md", "$HOME"),  # a name a sign begins: a variable
    (33, "hash1234", "issue.md", "#1234"),  # an issue's number
    (34, "atsigntest", "test.md", "@Test"),  # an annotation
])
def test_an_index_from_before_0029_to_0034_reads_memory_files_again(tmp_path, version, token, path, text):
    """0029 to 0034 mark to be read again the memory files holding C alone, a dotted number, a name a dot begins, an
    option or a name a $, a # or an @ begins (supersets), not plain.md (which says C++); until the next reconcile
    nothing holds the token, then the file does."""
    o, c = codewords.OPEN, codewords.CLOSE
    root, history, db = _indexed_before(
        tmp_path, {path: f"Firmware pinned to {text} now.\n", "plain.md": "Call getUserById in C++ first.\n"},
        {"a-1": "nothing here"}, version, (f"{text}{o}{token}{c}", text))
    with MemoryIndex(root, db) as idx:
        assert not idx.search(token, reconcile=False)
        sizes = dict(idx.conn.execute("SELECT path, size FROM memory_fts"))
        assert sizes[path] == -1 and sizes["plain.md"] > 0
        assert [h.path for h in idx.search(token)] == [path]
