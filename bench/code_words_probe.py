"""A second blind code-word probe (issue 33, session 54): 249 cases, each a query, the file that should rank
first, 1-3 near misses and 5 neutral notes, each case in a fresh tree and index, through ``MemoryIndex.search``
with the library's defaults; every 12th case also through ``python -m memsearch query --json`` (the two must
agree). The cases of the last group, ``after-read``, were written after reading memsearch/query.py; the rest
were written blind to the code-word modules and their tests. Reads no corpus::

    python bench/code_words_probe.py [--out result.json] [--scratch DIR]

Prints pass/fail per category (pass: the gold file first), how many gold hits mark a word with ``<<``/``>>``,
and each failure's first hits.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys

from memsearch import MemoryIndex

def fm(name, desc, body, typ="project"):
    return f"---\nname: {name}\ndescription: {desc}\ntype: {typ}\n---\n{body}\n"

CASES = []
def C(cat, q, gold, *distr):
    CASES.append((cat, q, gold, list(distr)))

# ---------------- symbols ----------------
S = "symbol"
C(S, "C++", "# Engine\nThe render engine is C++ built with CMake; run `cmake --build build -j4`.",
  "# Firmware\nThe firmware is written in plain C; compile it with gcc -O2 and flash over SWD.",
  "# Tools\nThe C# service talks to the engine over gRPC on the internal network.")
C(S, "C#", "# Unity\nThe Unity gameplay scripts are C#; keep them under Assets/Scripts and avoid LINQ in Update.",
  "# Core\nThe engine core is C and a little assembly; see core/README for the calling rules.",
  "# Analysis\nF# scripts for the data analysis live in tools/analysis and run with dotnet fsi.")
C(S, "F#", "# Pricing\nPricing models are written in F# with FsCheck property tests; keep them pure.",
  "# Pricing service\nThe pricing service is C# on the current runtime, deployed as a container.",
  "# Grades\nA grade of F in the lint report means the module has more than 50 warnings.")
C(S, ".NET", "# Billing\nThe billing API runs on .NET 8 behind IIS on the two Windows hosts.",
  "# Webhooks\nThe webhook receiver uses the net/http package in Go, no framework.",
  "# Model\nThe neural net for spam scoring was retrained on the new labels in May.")
C(S, "c++ templates", "# Style\nC++ templates: prefer concepts over SFINAE, and keep them in headers under include/.",
  "# Style\nC templates for the generated headers are m4 macros under gen/; do not edit the output.",
  "# Email\nEmail templates live in templates/mail and are rendered with Jinja.")
C(S, "C# async", "# Gotchas\nC# async code: never call .Result inside request handlers, it deadlocks.",
  "# Gotchas\nC async I/O goes through libuv callbacks; never block inside a callback.",
  "# Gotchas\nF# async workflows are cold, unlike tasks; start them explicitly.")
C(S, "how do we build the C++ code?",
  "# Build\nTo build the C++ code run ./build.sh release; it needs clang 17 and ninja.",
  "# Build\nTo build the C code run make in firmware/; it needs arm-none-eabi-gcc.",
  "# Build\nTo build the docs run mkdocs build; the output goes to site/.")
C(S, "Objective-C", "# iOS\nThe share extension is still Objective-C; the bridging header sits in ShareExt/.",
  "# Goals\nThe objective for this quarter is crash-free sessions above 99.5 percent.",
  "# Imaging\nThe C library for image decoding is vendored under third_party/.")
C(S, "ASP.NET Core", "# Admin\nThe admin backend is ASP.NET Core minimal APIs with EF migrations.",
  "# Crashes\nCore dumps are written to /var/crash on the build box; clean them weekly.",
  "# Importer\nThe legacy importer is .NET Framework 4.8 and only runs on the old VM.")
C(S, "Node.js", "# Worker\nNode.js 20 runs the webhook worker; install it with nvm, not apt.",
  "# Bundle\nThe JS bundle is built by esbuild in one step.",
  "# Cluster\nEach node in the cluster has 16 GB of RAM and two disks.")
C(S, "Vue.js", "# Frontend\nVue.js components in web/src/components use the composition API only.",
  "# Frontend\nThe view layer of the old admin uses JSX and class components.")
C(S, "C++ memory leak", "# Incident\nFound a C++ memory leak in the decoder; a unique_ptr fixed it.",
  "# Incident\nFound a C memory leak in the parser; a missing free() on the error path.")
C(S, "F# scripts", "# Ops\nRun the F# scripts with dotnet fsi from the repo root.",
  "# Ops\nRun the shell scripts with bash -e from the repo root.")
C(S, "c#", "# Client\nThe C# client library is published to NuGet on every tag.",
  "# Client\nThe C client library is published as a tarball on every tag.")
C(S, ".net", "# Upgrade\nUpgrade the .NET SDK in global.json first, then the packages.",
  "# Upgrade\nUpgrade the network firmware on the router first, then the switches.")
C(S, "C++/CLI", "# Interop\nThe wrapper around the native codec is C++/CLI, built only on Windows.",
  "# CLI\nThe command line tool is written in Rust with clap; release builds are static.")
C(S, "TCP/IP", "# Device\nThe TCP/IP stack on the device is lwIP with a 4 KB window.",
  "# Infra\nThe IP allow-list for staging lives in infra/allow.txt.")
C(S, "Q#", "# Labs\nQuantum experiments are written in Q# under labs/quantum.",
  "# Labs\nQ is the name of the small query helper under labs/q.")
C(S, "A/B test", "# Experiments\nThe A/B test on the checkout button runs until Friday.",
  "# Flaky\nTest B in the payment suite fails now and then on CI.")
C(S, "C++ C#", "# Interop\nThe C++ core is wrapped for C# callers through P/Invoke.",
  "# Interop\nThe C core is wrapped for Python callers through cffi.",
  "# Interop\nThe C# tools call the REST API only.")
C(S, "what runs on .NET?", "# Services\nThe billing and reporting services run on .NET 8.",
  "# Services\nThe search and ingest services run on the JVM.",
  "# Services\nWhat runs on the edge is a small Lua script in nginx.")

# ---------------- identifiers ----------------
I = "identifier"
C(I, "get user", "# Users\n`getUserById` returns null for deleted accounts; callers must check.",
  "# Orders\n`getOrderById` throws for archived orders instead of returning null.",
  "# Profile\nThe profile page shows the avatar and the display name.")
C(I, "getUserById", "# Users\n`getUserById` returns null for deleted accounts; callers must check.",
  "# Lookup\nWe get the user by id from the cache first, then from the database.",
  "# Users\n`getUserByEmail` is the other lookup; it lowercases the address.")
C(I, "user_id", "# Schema\nColumn user_id on events is indexed and never null.",
  "# Schema\nColumn order_id on payments is indexed and never null.",
  "# Schema\nColumn user_name on accounts is unique.")
C(I, "user_id", "# API\nThe API field userId maps to the accounts table primary key.",
  "# API\nThe API field orderId maps to the orders table primary key.",
  "# API\nThe API field userName is shown on the profile.")
C(I, "userId", "# Gateway\nThe header user-id is forwarded by the gateway to every service.",
  "# Gateway\nThe header order-id is forwarded by the gateway to billing.",
  "# Gateway\nThe header user-agent is logged but never forwarded.")
C(I, "user-id", "# Schema\nColumn user_id on sessions is a foreign key to accounts.",
  "# Schema\nColumn user_role on sessions is a small enum.",
  "# Schema\nColumn device_id on sessions is optional.")
C(I, "USER_ID", "# Payload\nThe JWT claim userId is copied into the request context.",
  "# Payload\nThe JWT claim tenantId is copied into the request context.")
C(I, "MAX_RETRY_COUNT", "# Config\nMAX_RETRY_COUNT is 5 in config.py; the client gives up after that.",
  "# Config\nMAX_RETRY_DELAY is 30 seconds in config.py; backoff is exponential.",
  "# Metrics\nThe retry count is logged for every request; the max is on the dashboard.")
C(I, "max retry count", "# Config\nMAX_RETRY_COUNT is 5 in config.py; the client gives up after that.",
  "# Config\nMAX_RETRY_DELAY is 30 seconds in config.py; backoff is exponential.")
C(I, "feature-flag-service", "# Flags\nfeature-flag-service owns the toggles and their audit log.",
  "# Flags\nfeature-flag-client caches the toggles for 30 seconds.",
  "# Flags\nThe service for flags was a beta feature last year.")
C(I, "featureFlagService", "# Deploy\nfeature-flag-service deploys with helm from the infra repo.",
  "# Deploy\nfeature-flag-client ships inside every web bundle.")
C(I, "base64", "# Cache\nThumbnails are stored base64 encoded in the cache table.",
  "# Cache\nThe base URL of the cache is set per environment.",
  "# Ids\nIds are 64 bit integers generated by the database.")
C(I, "oauth2", "# Login\nOAuth2 login goes through Google; tokens refresh every hour.",
  "# Login\nOAuth tokens from the old provider are stored encrypted.")
C(I, "sha256", "# Release\nArtifacts are verified by their SHA-256 digest before upload.",
  "# Release\nSHA-1 is banned for signatures since last year.")
C(I, "html5 parser", "# Parsing\nThe HTML5 parser is html5ever, wrapped in a small crate.",
  "# Parsing\nThe HTML parser for the old importer is lxml.")
C(I, "parseHTTPResponse", "# Bug\n`parseHTTPResponse` chokes on chunked bodies over 1 MB.",
  "# HTTP\nThe HTTP response codes we return are listed in docs/errors.",
  "# Bug\n`parseJSONBody` chokes on a byte order mark.")
C(I, "http response", "# Bug\n`parseHTTPResponse` chokes on chunked bodies over 1 MB.",
  "# Bug\n`parseJSONBody` chokes on a byte order mark at the start.")
C(I, "XMLHttpRequest", "# Legacy\nThe old upload code uses XMLHttpRequest; migrate it to fetch.",
  "# Legacy\nThe XML config is parsed by expat in the old agent.",
  "# Retries\nEvery HTTP request is retried twice on a 503.")
C(I, "IOError", "# Disk\nIOError when the disk is full; catch it and retry after cleanup.",
  "# Disk\nThe IO scheduler is set to mq-deadline on the database hosts.",
  "# SLO\nThe error budget is 0.1 percent per month.")
C(I, "snake_case naming", "# Style\nPython modules use snake_case naming for functions and files.",
  "# Style\nThe JS code uses camelCase naming for functions and files.")
C(I, "__init__", "# Packages\nKeep __init__.py empty except for the public exports.",
  "# Boot\nThe init scripts live in /etc/init.d on the old hosts.")
C(I, "i18n", "# Locales\ni18n strings live in locales/*.json and are loaded lazily.",
  "# Locales\nThe translations team reviews new strings every sprint.")
C(I, "k8s", "# Deploy\nk8s manifests are under deploy/k8s and applied by Argo.",
  "# Deploy\nThe cluster has 8 nodes in two zones.")
C(I, "is_active", "# Queries\nFilter on is_active before counting accounts in reports.",
  "# Status\nThe service is active on weekends with a reduced crew.")
C(I, "isActive", "# Queries\nFilter on is_active before counting accounts in reports.",
  "# Queries\nFilter on is_admin before showing the settings menu.")
C(I, "get_user_by_id", "# Users\n`getUserById` returns null for deleted accounts.",
  "# Users\n`get_user_by_email` lowercases the address first.")
C(I, "UserRepository", "# Data\nUserRepository wraps the SQLAlchemy session and commits on exit.",
  "# Data\nUserService holds the business rules for sign-up.",
  "# Data\nOrderRepository wraps the SQLAlchemy session for orders.")
C(I, "user repository", "# Data\nUserRepository wraps the SQLAlchemy session and commits on exit.",
  "# Data\nOrderRepository wraps the SQLAlchemy session for orders.",
  "# Data\nUserService holds the business rules for sign-up.")
C(I, "getUserByID", "# Users\n`getUserById` returns null for deleted accounts; callers must check.",
  "# Orders\n`getOrderById` throws for archived orders.")
C(I, "ReactDOM", "# Frontend\nReactDOM.render is deprecated; switch every entry point to createRoot.",
  "# Mobile\nThe React Native app shares only the API client.",
  "# Frontend\nDOM events bubble through the portal, mind the modal.")
C(I, "createRoot", "# Frontend\nSwitch every entry point to createRoot from react-dom/client.",
  "# Servers\nCreate the root account with sudo during provisioning only.")
C(I, "useEffect", "# Hooks\nuseEffect cleanup must cancel the pending fetch.",
  "# Hooks\nuseState resets when the component remounts.",
  "# Perf\nThe effect of the cache was small; use it only for search.")
C(I, "vector3", "# Engine\nVector3 math helpers are in engine/math and are SIMD friendly.",
  "# Engine\nVector2 is used for the UI layout only.")
C(I, "s3 bucket", "# Backups\nThe S3 bucket for backups is acme-backups in eu-west-1.",
  "# Logs\nThe GCS bucket for logs is acme-logs.")
C(I, "ec2", "# Workers\nEC2 instances in us-east-1 run the queue workers.",
  "# API\nThe EKS cluster runs the public API.")
C(I, "XMLParser", "# Parsing\nXMLParser is fed in chunks so large feeds do not blow memory.",
  "# Parsing\nJSONParser reads the whole payload at once.",
  "# Parsing\nThe XML feed parser was replaced by a streaming reader.")
C(I, "getHTTPSUrl", "# Links\ngetHTTPSUrl rewrites plain links before they are stored.",
  "# Links\ngetHTTPUrl is the old helper, kept for the export.")
C(I, "https url", "# Links\ngetHTTPSUrl rewrites plain links before they are stored.",
  "# Links\ngetFtpPath maps the legacy locations.")
C(I, "toString", "# Gotcha\nCalling toString on a null ref crashes the logger.",
  "# Gotcha\nThe string table is rebuilt at startup.")
C(I, "MyHTTPServer2", "# Server\nMyHTTPServer2 replaced the first server in March.",
  "# Server\nMyHTTPServer is the first server, still in the tests.")
C(I, "load balancer", "# Infra\nloadBalancerArn is exported from the network stack.",
  "# Infra\nThe balance sheet export runs nightly.")

# ---------------- paths and dotted names ----------------
P = "path"
C(P, "src/auth/login.py", "# Bug\nBug in src/auth/login.py: the session cookie is not set on redirect.",
  "# Auth\nsrc/auth/logout.py clears the cookies and the cache.",
  "# Billing\nsrc/billing/login_hooks.py runs after the login event.")
C(P, "login.py", "# Bug\nBug in src/auth/login.py: the session cookie is not set on redirect.",
  "# Web\nlogin.js handles the form validation on the page.")
C(P, "auth login", "# Bug\nBug in src/auth/login.py: the session cookie is not set on redirect.",
  "# Auth\nsrc/auth/logout.py clears the cookies.",
  "# Design\nThe page design uses Tailwind and a dark theme.")
C(P, "os.path.join", "# Paths\nUse os.path.join, never string concatenation, for file names.",
  "# Paths\nos.path.exists is racy; just try to open the file.",
  "# CSV\nUse str.join for CSV lines only when no field has a comma.")
C(P, "path join", "# Paths\nUse os.path.join, never string concatenation, for file names.",
  "# Paths\nos.path.exists is racy; just try to open the file.")
C(P, "package.json", "# Release\nBump the version in package.json before tagging.",
  "# Deps\nThe package list in requirements.txt is pinned.",
  "# Schema\nThe JSON schema for the config is in schema/.")
C(P, "tsconfig.json", "# TS\ntsconfig.json sets strict and noUncheckedIndexedAccess.",
  "# Flags\nconfig.json holds the feature toggles per region.")
C(P, "~/.ssh/config", "# Access\nThe jump host is set in ~/.ssh/config with ProxyJump bastion.",
  "# Access\n~/.aws/config holds the profiles for each account.",
  "# Access\nSSH keys are rotated every year by the platform team.")
C(P, "/etc/nginx/nginx.conf", "# Proxy\nWorker counts are in /etc/nginx/nginx.conf on the edge box.",
  "# Proxy\nThe vhost lives in /etc/nginx/sites-enabled/app.conf.")
C(P, "com.example.app", "# Android\nThe Android package name is com.example.app; never change it.",
  "# Docs\nexample.com is the placeholder domain in every doc.",
  "# Android\nThe package com.example.lib holds the shared widgets.")
C(P, "java.util.concurrent", "# JVM\nUse java.util.concurrent executors, not raw threads.",
  "# JVM\njava.util.List is fine for the DTOs.")
C(P, "django.db.models", "# Django\nImport fields from django.db.models, never from the private module.",
  "# Django\ndjango.db.migrations must stay reversible.")
C(P, "README.md", "# Docs\nUpdate README.md with every new flag.",
  "# Docs\nThe docs folder has its own README.rst for Sphinx.")
C(P, "Dockerfile.dev", "# Docker\nDockerfile.dev mounts the source for hot reload.",
  "# Docker\nThe Dockerfile is multi-stage and ends on distroless.")
C(P, ".github/workflows/ci.yml", "# CI\n.github/workflows/ci.yml runs lint and tests on every push.",
  "# CI\n.github/workflows/release.yml publishes on tags.")
C(P, "C:\\Users\\dev\\AppData", "# Windows\nLogs go to C:\\Users\\dev\\AppData\\Local\\acme\\logs on the test VM.",
  "# Backups\nThe roaming profile is excluded from the backup job.")
C(P, "np.array", "# Numpy\nnp.array copies by default; use np.asarray for views.",
  "# Numpy\nAn array of floats is fine for the small batches.")
C(P, "logger.info", "# Logging\nUse logger.info for request lines only.",
  "# Logging\nUse logger.debug for bodies; info is the default level.")
C(P, "app/models/user.rb", "# Rails\napp/models/user.rb has the devise config.",
  "# Rails\napp/models/order.rb has the state machine.",
  "# Rails\napp/controllers/users_controller.rb is thin.")
C(P, "pyproject.toml", "# Lint\nRuff settings are in pyproject.toml under tool.ruff.",
  "# Lint\nsetup.cfg still holds the flake8 settings.")
C(P, "src\\auth\\login.py", "# Bug\nBug in src/auth/login.py: the session cookie is not set on redirect.",
  "# Auth\nsrc/auth/logout.py clears the cookies.")
C(P, "self.assertEqual", "# Tests\nPrefer self.assertEqual over assertTrue(a == b) for the message.",
  "# Tests\nself.assertIn reads better for membership.")
C(P, "utils/date.ts", "# Dates\nAll formatting goes through utils/date.ts.",
  "# Dates\nutils/time.ts has the timers.",
  "# Dates\nThe date of the launch is not set yet.")
C(P, "where is login.py?", "# Layout\nThe login handler is src/auth/login.py.",
  "# Layout\nWhere is the logout? src/auth/logout.py.")
C(P, "Makefile", "# Build\nThe Makefile has a dev target that starts everything.",
  "# Build\nMake sure the file watcher is off before a release.")
C(P, "index.ts", "# Entry\nThe package entry is src/index.ts; it re-exports everything.",
  "# Entry\nThe package index page is generated.")
C(P, "requests.get", "# HTTP\nAlways pass a timeout to requests.get; it waits forever otherwise.",
  "# HTTP\nrequests.post is retried by the session adapter.")

# ---------------- versions ----------------
V = "version"
C(V, "2.0.7", "# Deps\nPinned requests to 2.0.7 because the next minor broke proxies.",
  "# Deps\nUpgraded urllib to 2.0.8 for the CVE fix.",
  "# SDK\nVersion 7.0.2 of the SDK is the last with Python 2.")
C(V, "v1.2.3", "# Releases\nTag v1.2.3 has the hotfix for the upload crash.",
  "# Releases\nTag v1.2.4 reverted the cache change.",
  "# Releases\nTag v3.2.1 is the first with the new API.")
C(V, "1.2.3", "# Releases\nTag v1.2.3 has the hotfix for the upload crash.",
  "# Releases\nTag 1.2.30 is the one with the broken cache.")
C(V, "C++17", "# Toolchain\nWe compile with C++17 for std::optional and structured bindings.",
  "# Toolchain\nC++20 modules are not allowed yet.",
  "# Toolchain\nThe firmware is C17 with gnu extensions.")
C(V, "C++20", "# Toolchain\nC++20 modules are not allowed yet.",
  "# Toolchain\nWe compile with C++17 for std::optional.")
C(V, "python 3.11", "# CI\nCI runs Python 3.11 on Ubuntu.",
  "# CI\nCI runs Python 3.12 on macOS.",
  "# Legacy\nThe old box still has Python 2.7.")
C(V, "node 18", "# Lambda\nThe lambda runs on Node 18 until the runtime is retired.",
  "# Server\nThe server runs on Node 20.")
C(V, "ES2015", "# Targets\nTarget ES2015 for the old kiosk browsers.",
  "# Targets\nTarget ES2020 for the modern build.")
C(V, "1.0.0-beta.2", "# npm\nPublished 1.0.0-beta.2 to npm with the new exports map.",
  "# npm\nPublished 1.0.0-beta.1 with the broken types.",
  "# npm\nPublished 1.0.0 final last week.")
C(V, "3.10", "# Workers\nThe workers run Python 3.10 from the deadsnakes PPA.",
  "# Museum\nThe archive box has Python 3.1, do not touch it.")
C(V, "HTTP/2", "# Edge\nEnable HTTP/2 on the load balancer for the API.",
  "# Edge\nHTTP/1.1 keepalive is tuned to 75 seconds.")
C(V, "IPv6", "# Docker\nIPv6 is disabled in the docker daemon config.",
  "# Docker\nIPv4 forwarding must be on for the bridge.")
C(V, "2024-03-15", "# Outage\nOutage on 2024-03-15 from a bad migration.",
  "# Outage\nOutage on 2024-03-16 from a full disk.")
C(V, "^4.17.21", "# Deps\nlodash ^4.17.21 in package.json for the prototype fix.",
  "# Deps\nlodash ^4.17.15 was the vulnerable one.")
C(V, "postgres 15", "# DB\nProduction is on Postgres 15 with logical replication.",
  "# DB\nStaging is on Postgres 14 until the upgrade.")
C(V, "10.0.19045", "# Windows\nThe test VM is Windows 10.0.19045.",
  "# Windows\nThe build VM is Windows 10.0.22631.")
C(V, "v2 api", "# API\nThe v2 API endpoints need a bearer token.",
  "# API\nThe v1 API endpoints are read only.")
C(V, "go1.22", "# Toolchain\nThe services build with go1.22 and the new loop semantics.",
  "# Toolchain\nThe CLI still builds with go1.21.")
C(V, "Java 17", "# JVM\nThe search service runs on Java 17 with ZGC.",
  "# JVM\nThe batch jobs still run on Java 11.")
C(V, "0.9.1", "# Deps\nclick 0.9.1 is vendored in the old plugin.",
  "# Deps\nclick 9.0.1 is what the new code uses.")

# ---------------- accents and scripts ----------------
A = "accent"
C(A, "Αθηνα", "# Γραφεία\nΗ ομάδα στην Αθηνά συναντιέται κάθε Τρίτη.",
  "# Γραφεία\nΗ ομάδα στη Θεσσαλονίκη συναντιέται κάθε Πέμπτη.")
C(A, "Αθηνά",
  "# Γραφεία\nΤο γραφείο ΑΘΗΝΑ κλείνει νωρίς την Παρασκευή.",
  "# Γραφεία\nΤο γραφείο ΠΑΤΡΑ κλείνει νωρίς την Παρασκευή.")
C(A, "ΛΟΓΟΣ", "# Σημείωση\nΟ λόγος της αλλαγής είναι η καθυστέρηση.",
  "# Σημείωση\nΟ σκοπός της αλλαγής είναι η ταχύτητα.")
C(A, "ευρωπαικη", "# Νομικά\nΗ Ευρωπαϊκή οδηγία ισχύει από τον Μάιο.",
  "# Νομικά\nΗ εθνική οδηγία ισχύει από τον Ιούνιο.")
C(A, "tieng viet", "# Giao diện\nGiao diện hỗ trợ tiếng Việt từ bản này.",
  "# Giao diện\nGiao diện hỗ trợ tiếng Anh từ bản trước.")
C(A, "da nang", "# Văn phòng\nVăn phòng Đà Nẵng mở cửa lúc 8 giờ.",
  "# Văn phòng\nVăn phòng Hà Nội mở cửa lúc 9 giờ.")
C(A, "nguoi dung", "# Ghi chú\nBảng người dùng có chỉ mục trên email.",
  "# Ghi chú\nBảng đơn hàng có chỉ mục trên ngày.")
C(A, "tiếng Việt", "# UI\nThe settings page now has a tieng viet option.",
  "# UI\nThe settings page now has a tieng anh option.")
C(A, "istanbul", "# Ofis\nİstanbul ofisi pazartesi kapalı.",
  "# Ofis\nAnkara ofisi cuma kapalı.")
C(A, "kapi", "# Not\nKapı numarası 12, ikinci kat.",
  "# Not\nPencere numarası 12, ikinci kat.")
C(A, "KAPI", "# Not\nKapı numarası 12, ikinci kat.",
  "# Not\nPencere numarası 12, ikinci kat.")
C(A, "ISTANBUL", "# Ofis\nİstanbul ofisi pazartesi kapalı.",
  "# Ofis\nIzmir ofisi cuma kapalı.")
C(A, "sehir", "# Not\nŞehir listesi her ay güncellenir.",
  "# Not\nÜlke listesi her yıl güncellenir.")
C(A, "docker", "# 起動\n起動はｄｏｃｋｅｒで行う。設定は別ファイル。",
  "# 起動\n起動はpodmanで行う。設定は別ファイル。")
C(A, "8080", "# ポート\nローカルのポートは８０８０です。",
  "# ポート\nローカルのポートは３０００です。")
C(A, "ｎｐｍ", "# Install\nRun npm install in the web folder first.",
  "# Install\nRun pip install in the api folder first.")
C(A, "lodz", "# Offices\nThe Łódź office runs the night shift.",
  "# Offices\nThe Kraków office runs the day shift.")
C(A, "oresund", "# Routes\nThe Øresund link is the backup route for the Malmö site.",
  "# Routes\nThe Kattegat link is the main route.")
C(A, "bucuresti", "# Birouri\nBiroul din București are ședința lunea.",
  "# Birouri\nBiroul din Cluj are ședința marțea.")
C(A, "prilis", "# Poznámka\nTen soubor je příliš velký pro e-mail.",
  "# Poznámka\nTen soubor je dost malý pro e-mail.")
C(A, "ежик", "# Заметка\nЁжик в тумане — название тестового стенда.",
  "# Заметка\nЗаяц в поле — название второго стенда.")
C(A, "ECOLE", "# Partenaires\nL'école partenaire reçoit les stagiaires en juin.",
  "# Partenaires\nL'université partenaire reçoit les stagiaires en mai.")
C(A, "café", "# Menu\nThe cafe\u0301 on the ground floor closes at four.",
  "# Menu\nThe canteen on the ground floor closes at three.")
C(A, "reykjavik", "# Offices\nThe Reykjavík team owns the payments SDK.",
  "# Offices\nThe Oslo team owns the mobile SDK.")
C(A, "Ｔｏｋｙｏ", "# Region\nThe Tokyo region hosts the read replicas.",
  "# Region\nThe Osaka region hosts the backups.")
C(A, "Ελλάδα", "# Αγορές\nΗ ΕΛΛΑΔΑ είναι η πρώτη αγορά.",
  "# Αγορές\nΗ ΚΥΠΡΟΣ είναι η δεύτερη αγορά.")
C(A, "Đà Nẵng", "# Office\nThe da nang office opens at eight.",
  "# Office\nThe ha noi office opens at nine.")
C(A, "İzmir", "# Ofis\nIzmir ofisi cuma kapalı.",
  "# Ofis\nBursa ofisi cuma kapalı.")
C(A, "nino", "# Notas\nEl niño del vecino prueba la app los sábados.",
  "# Notas\nLa vecina prueba la app los domingos.")

# ---------------- mixes ----------------
M = "mix"
C(M, "where is the getUserById helper defined?", "# Layout\ngetUserById lives in src/users/repo.ts.",
  "# Layout\ngetOrderById lives in src/orders/repo.ts.",
  "# Layout\nHelper functions are defined in src/utils and nowhere else.")
C(M, "what version of C++ do we use?", "# Toolchain\nThe engine compiles as C++17 with clang.",
  "# Toolchain\nThe version of Python we use for scripts is 3.12.",
  "# Toolchain\nThe firmware compiles as C99 with gcc.")
C(M, "getUserById cache", fm("user-lookup", "How getUserById caches results", "Entries live 60 seconds."),
  fm("order-lookup", "How getOrderById caches results", "Entries live 60 seconds."),
  "# Cache\nThe cache is Redis with an LRU policy.")
C(M, "auth flow", fm("auth-flow", "The sign-in redirect chain", "Three hops: app, idp, app."),
  fm("payment-flow", "The checkout redirect chain", "Two hops: app, psp."),
  "# Auth\nauth tokens are short lived.")
C(M, "C++", fm("engine-build", "C++ build notes for the engine", "Use ninja; never make."),
  fm("firmware-build", "C build notes for the firmware", "Use make; never ninja."))
C(M, "getUserById 缓存", "# 缓存\ngetUserById 的结果会缓存60秒。",
  "# 缓存\ngetOrderById 的结果会缓存60秒。")
C(M, "userId", "# 表结构\n用户表的主键是user_id，不能为空。",
  "# 表结构\n订单表的主键是order_id，不能为空。")
C(M, "src/auth/login.py", "# ログイン\nログイン処理はsrc/auth/login.pyにある。",
  "# ログアウト\nログアウト処理はsrc/auth/logout.pyにある。")
C(M, "C++ 编译", "# 编译\nC++ 编译需要 clang 17。",
  "# 编译\nC 编译使用 gcc。")
C(M, "getUserById", "# 함수\ngetUserById 함수는 캐시를 사용합니다.",
  "# 함수\ngetOrderById 함수는 캐시를 사용합니다.")
C(M, "Button.tsx", "# UI\nButton.tsx renders the primary and ghost buttons.",
  "# UI\nButton.ts exports the prop types only.",
  "# UI\nButton.jsx is the old one, delete it after the migration.")
C(M, "tsx files", "# Lint\nLint all .tsx files with the react plugin.",
  "# Lint\nLint all .ts files with tsc --noEmit.")
C(M, "127.0.0.1:8080", "# Dev\nThe dev server listens on 127.0.0.1:8080.",
  "# Dev\nThe dev server used to listen on 127.0.0.1:3000.",
  "# Dev\nMetrics listen on 0.0.0.0:8080 in the container.")
C(M, "192.168.1.10", "# LAN\nThe printer is at 192.168.1.10.",
  "# LAN\nThe NAS is at 192.168.1.100.")
C(M, "localhost:3000", "# Dev\nThe web app runs on localhost:3000.",
  "# Dev\nThe docs run on localhost:3001.")
C(M, "@acme/ui", "# Packages\nShared components come from @acme/ui.",
  "# Packages\n@acme/utils has the date helpers.",
  "# Packages\nThe design team owns the acme brand colours.")
C(M, "@types/node", "# Deps\nInstall @types/node as a dev dependency.",
  "# Deps\nInstall @types/react as a dev dependency.")
C(M, "#123", "# Fixes\nFixed in #123: a race in the uploader.",
  "# Fixes\nFixed in #1234: the retry storm.",
  "# Fixes\nSee #12 for the original report.")
C(M, "issue 123", "# Fixes\nissue-123 is the race in the uploader.",
  "# Fixes\nissue-124 is the retry storm.")
C(M, "#issue-123", "# Fixes\nissue-123 is the race in the uploader.",
  "# Fixes\nissue-124 is the retry storm.")
C(M, "alice@example.com", "# Access\nPage alice@example.com for prod access.",
  "# Access\nPage bob@example.com for staging access.",
  "# People\nAlice in accounting approves the invoices.")
C(M, "$HOME", "# CLI\nThe CLI writes its state to $HOME/.acme.",
  "# Web\nThe home page hero image is 2 MB, shrink it.")
C(M, "NODE_ENV", "# Docker\nSet NODE_ENV=production in the Dockerfile.",
  "# Rails\nSet RAILS_ENV=production in the Procfile.")
C(M, "node env", "# Docker\nSet NODE_ENV=production in the Dockerfile.",
  "# Rails\nSet RAILS_ENV=production in the Procfile.")
C(M, "GETUSERBYID", "# Users\n`getUserById` returns null for deleted accounts.",
  "# Orders\n`getOrderById` throws for archived orders.")
C(M, "getuserbyid", "# Users\n`getUserById` returns null for deleted accounts.",
  "# Orders\n`getOrderById` throws for archived orders.")
C(M, "pre-commit", "# Hooks\npre-commit runs ruff and mypy on staged files.",
  "# Hooks\npre-push runs the unit tests.",
  "# Git\nCommit messages follow conventional commits.")
C(M, "end-to-end tests", "# Testing\nend-to-end tests use Playwright against staging.",
  "# Testing\nUnit tests run in under a minute.")
C(M, "x-request-id", "# Tracing\nPropagate x-request-id through every service.",
  "# Tracing\nx-correlation-id is legacy, drop it.")
C(M, "DATABASE_URL", "# Env\nDATABASE_URL points at the pooler, not the primary.",
  "# Env\nDATABASE_HOST is only for the migration job.")
C(M, "$PATH", "# Shell\nAdd ~/.local/bin to $PATH for the pipx tools.",
  "# Config\nThe path of the config file is printed by --verbose.")
C(M, "%APPDATA%", "# Windows\nThe app stores settings in %APPDATA%\\acme.",
  "# Windows\nThe app stores logs in %TEMP%\\acme.")
C(M, "acme/api", "# Remotes\nThe remote is git@github.com:acme/api.git.",
  "# Remotes\nThe web remote is git@github.com:acme/web.git.")
C(M, "readme", "# Docs\nUpdate README.md with every new flag.",
  "# Docs\nThe docs index is generated by Sphinx.")
C(M, "NODE_ENV production", "# Docker\nSet NODE_ENV=production in the Dockerfile.",
  "# Node\nproduction builds set NODE_OPTIONS for the heap.")
C(M, "Is C# faster than F#?", "# Bench\nC# beat F# by 8 percent on the parser benchmark.",
  "# Bench\nC beat Go by 8 percent on the parser benchmark.")
C(M, "v1.2.3 hotfix", fm("release-notes", "What went into v1.2.3", "The hotfix for the upload crash."),
  fm("release-notes-old", "What went into v1.2.2", "The hotfix for the login loop."))
C(M, "user_id index", "# DB\nThe user_id index on events was rebuilt last night.",
  "# DB\nThe order_id index on payments was rebuilt last night.")
C(M, "UserId", "# DB\nThe user_id index on events was rebuilt last night.",
  "# DB\nThe user index page was redesigned; the id column is gone.")
C(M, "user.name", "# Git\nSet git config user.name before the first commit.",
  "# Git\nSet git config user.email before the first commit.")
C(M, "Content-Type", "# HTTP\nAlways send Content-Type: application/json on writes.",
  "# HTTP\nContent-Length is set by the client library.")
C(M, "how do I set NODE_ENV in docker?", "# Docker\nSet NODE_ENV=production in the Dockerfile with ENV.",
  "# Docker\nSet RAILS_ENV=production in the Dockerfile with ENV.")
C(M, "Ｃ＋＋", "# Engine\nThe render engine is C++ built with CMake.",
  "# Firmware\nThe firmware is written in plain C.")
C(M, "tiếng Việt getUserById",
  "# Ghi chú\ngetUserById trả về null khi tài khoản bị xóa; giao diện tiếng Việt.",
  "# Ghi chú\ngetOrderById trả về null khi đơn bị xóa; giao diện tiếng Anh.")

# ---------------- second wave: harder near misses ----------------
C(S, "C", "# Firmware\nThe firmware is written in C; compile it with gcc -O2.",
  "# Engine\nThe engine is written in C++; compile it with clang.",
  "# Tools\nThe tools are written in C#; compile them with dotnet.")
C(S, "c language", "# Firmware\nThe firmware sticks to the C language, C99 subset.",
  "# Engine\nThe engine uses the C++ language, no exceptions.")
C(S, "is the engine C++?", "# Engine\nThe engine is C++ with no RTTI.",
  "# Engine\nThe engine bindings are C with a stable ABI.")
C(S, "C#.", "# Stack\nThe tools are all C#.",
  "# Stack\nThe tools are all C.")
C(S, "std::vector", "# Perf\nReserve std::vector capacity before the hot loop.",
  "# Perf\nstd::map lookups dominate the profile.",
  "# Math\nThe vector math lives in engine/math.")
C(S, "ActiveRecord::Base", "# Rails\nEvery model inherits ActiveRecord::Base through ApplicationRecord.",
  "# Rails\nThe base controller sets the tenant.")
C(S, "--force-with-lease", "# Git\nAlways push with --force-with-lease after a rebase.",
  "# Git\nForce push to main is blocked; lease a branch instead.")
C(S, "--dry-run", "# Deploy\nRun the migration with --dry-run first.",
  "# Deploy\nThe dry season run of the load test is in July.")
C(S, "-O3", "# Build\nRelease builds use -O3 with LTO.",
  "# Build\nDebug builds use -O0 and sanitizers.")
C(S, "stdio.h", "# C\nInclude stdio.h only in the CLI, never in the core.",
  "# C\nstdlib.h is fine anywhere.")
C(S, "@Override", "# Java\nAlways annotate with @Override on interface methods.",
  "# Java\nOverride the equals method together with hashCode.")
C(I, "getUser", "# Users\n`getUser(id)` returns a cached copy of the account.",
  "# Users\n`getUserById(id)` bypasses the cache on purpose.",
  "# Users\n`getUserSettings` loads the preferences.")
C(I, "UserService", "# Services\nUserService holds the sign-up rules.",
  "# Services\nUserServiceImpl is the generated stub, do not edit.")
C(I, "user_service", "# Services\nuser_service owns the sign-up rules.",
  "# Services\nuser_service_test covers the stub only.")
C(I, "API_KEY", "# Env\nAPI_KEY must be set for the nightly job.",
  "# Env\nAPI_KEY_ID is the public half, safe to log.",
  "# Env\nThe api key rotation runs quarterly.")
C(I, "get-user-by-id", "# Users\n`getUserById` returns null for deleted accounts.",
  "# Users\n`getUserByEmail` lowercases the address.")
C(I, "GetUserByID", "# Users\n`get_user_by_id` returns None for deleted accounts.",
  "# Users\n`get_user_by_email` lowercases the address.")
C(I, "userID", "# Schema\nColumn user_id on sessions is a foreign key.",
  "# Schema\nColumn user_role on sessions is an enum.")
C(I, "HttpServer", "# Server\nhttp_server.py wraps the HTTPServer class from the stdlib.",
  "# Server\nThe ftp server was retired in June.")
C(I, "ip address", "# Net\nipAddress is validated before we store it.",
  "# Net\nThe address book sync is nightly.")
C(I, "IPAddress", "# Net\nip_address is validated before we store it.",
  "# Net\nmac_address is optional for virtual hosts.")
C(I, "OAuth2Client", "# Login\nOAuth2Client refreshes the token one minute early.",
  "# Login\nOAuthClient is the old v1 wrapper.")
C(I, "oauth2 client", "# Login\nOAuth2Client refreshes the token one minute early.",
  "# Login\nOAuthClient is the old v1 wrapper.")
C(I, "getuser", "# Users\n`getUser` returns a cached copy of the account.",
  "# Users\n`getOrder` returns a cached copy of the order.")
C(I, "utf8ToString", "# Encoding\nutf8ToString replaces invalid bytes with U+FFFD.",
  "# Encoding\nlatin1ToString is only for the old exports.")
C(P, "auth/login", "# Bug\nBug in src/auth/login.py: the cookie is not set.",
  "# Odd\nThe handler at src/login/auth.py is unrelated.")
C(P, "os.path", "# Paths\nUse os.path.join for file names.",
  "# Installer\nSet the OS path in the installer wizard.")
C(P, "path.join", "# Node\nIn the scripts use path.join from node:path.",
  "# Python\nUse os.path.join in the tooling.")
C(P, ".py files", "# Lint\nAll .py files are formatted with black.",
  "# Lint\nThe pyproject has the line length.")
C(P, ".tsx", "# UI\nButton.tsx renders the buttons.",
  "# UI\nButton.ts exports the types.")
C(P, ".env", "# Secrets\nThe .env file holds the local secrets; never commit it.",
  "# CI\nCI env vars are set in the project settings.")
C(P, ".gitignore", "# Repo\nAdd the build folder to .gitignore.",
  "# Repo\nGit ignores empty folders.")
C(P, "api.acme.dev", "# URLs\nProduction is https://api.acme.dev/v2/users.",
  "# URLs\nStaging is https://api.staging.acme.dev/v2/users.",
  "# URLs\nThe dev API lives on acme.dev/api.")
C(P, "Array.prototype.map", "# JS\nArray.prototype.map skips holes in sparse arrays.",
  "# JS\nArray.prototype.filter also skips holes.")
C(V, "2.0", "# API\nThe 2.0 API dropped XML.",
  "# Deps\nPinned requests to 2.0.7 for proxies.")
C(V, "1.2", "# Schema\nSchema version 1.2 added the tenant column.",
  "# Releases\nTag 1.2.3 has the hotfix.")
C(V, "3.1", "# Museum\nThe archive box has Python 3.1, do not touch it.",
  "# Workers\nThe workers run Python 3.10.")
C(V, "v1", "# API\nThe v1 endpoints are read only.",
  "# Releases\nTag v1.2.3 has the hotfix.")
C(V, "8080", "# Dev\nThe dev server listens on port 8080.",
  "# Dev\nThe admin listens on port 18080.")
C(V, "127.0.0.1", "# Dev\nBind the debugger to 127.0.0.1 only.",
  "# Dev\nThe test box is 127.0.0.10.")
C(V, "0x1F", "# Protocol\nThe frame ends with 0x1F.",
  "# Protocol\nThe frame starts with 0x1E.")
C(V, "1.0.0", "# npm\nPublished 1.0.0 final last week.",
  "# npm\nPublished 1.0.0-beta.2 with the exports map.")
C(A, "kapı", "# Not\nKAPI numarası 12, ikinci kat.",
  "# Not\nPENCERE numarası 12, ikinci kat.")
C(A, "kapı", "# Not\nkapi numarasi 12, ikinci kat.",
  "# Not\npencere numarasi 12, ikinci kat.")
C(A, "user_id", "# 表\n主キーはｕｓｅｒ＿ｉｄです。",
  "# 表\n主キーはｏｒｄｅｒ＿ｉｄです。")
C(A, "TIẾNG VIỆT", "# Giao diện\nGiao diện hỗ trợ tiếng Việt.",
  "# Giao diện\nGiao diện hỗ trợ tiếng Anh.")
C(A, "Άρης", "# Ομάδες\nΗ ομάδα ΑΡΗΣ έχει τις εκδόσεις.",
  "# Ομάδες\nΗ ομάδα ΔΙΑΣ έχει τα δοκιμαστικά.")
C(A, "résumé", "# Hiring\nAsk for a résumé before the first call.",
  "# Jobs\nResume the paused job after the deploy.")
C(A, "tiến độ", "# Dự án\nBáo cáo tiến độ mỗi thứ hai.",
  "# Dự án\nHóa đơn tiền điện mỗi tháng.")
C(A, "getUserById", "# Users\nｇｅｔＵｓｅｒＢｙＩｄ returns null for deleted accounts.",
  "# Users\ngetOrderById throws for archived orders.")
C(M, "`getUserById`", "# Users\ngetUserById returns null for deleted accounts.",
  "# Users\ngetOrderById throws for archived orders.")
C(M, "getUserById()", "# Users\ngetUserById returns null for deleted accounts.",
  "# Users\ngetOrderById throws for archived orders.")
C(M, '"getUserById"', "# Users\ngetUserById returns null for deleted accounts.",
  "# Users\nget the user by id from the cache first.")
C(M, "user_id?", "# Schema\nuser_id is never null on events.",
  "# Schema\norder_id is never null on payments.")
C(M, "NODE_ENV=production", "# Docker\nSet NODE_ENV=production in the Dockerfile.",
  "# Docker\nSet NODE_ENV=development in compose.")
C(M, "$HOME/.config", "# XDG\nSettings go to $HOME/.config/acme.",
  "# XDG\nCaches go to $HOME/.cache/acme.")
C(M, "bob@example.com", "# Access\nPage bob@example.com for staging access.",
  "# Access\nPage alice@example.com for prod access; bob approves.")
C(M, "C++ build", fm("engine", "Engine notes", "The C++ build uses ninja."),
  fm("firmware", "Firmware notes", "The C build uses make."))
C(M, "std::optional C++17", "# Toolchain\nstd::optional needs C++17 at least.",
  "# Toolchain\nstd::variant is fine in C++14 with the backport.")

# ---------------- written AFTER reading memsearch/query.py (not blind) ----------------
R = "after-read"
C(R, "written in C++", "# Engine\nThe engine is C++ only.",
  "# Firmware\nThe firmware is written in C, see the flashing notes in the wiki for the board.")
C(R, "in C++", "# Engine\nThe engine is C++ only, no exceptions and no RTTI anywhere in the tree.",
  "# Firmware\nEverything in C here.")
C(R, "written in F#", "# Tools\nFor the exporter we went with F# after the spike.",
  "# Tools\nThe exporter is written in F, an old dialect.")
C(R, "runs on .NET", "# Billing\nBilling moved to .NET last spring after the rewrite of the invoicing code.",
  "# Proxy\nThe proxy runs on net/http.")
C(R, "acme.net", "# Mail\nOutgoing mail goes through relay.acme.net on port 25.",
  "# Billing\nThe billing API runs on .NET 8.",
  "# Mail\nThe acme relay is the fallback for outgoing mail.")
C(R, "example.net smtp", "# Mail\nThe smtp host for tests is mail.example.net.",
  "# Billing\nThe .NET smtp client is configured in appsettings.")
C(R, "tests in C#", "# Tests\nThe integration suite uses xUnit; every new feature gets tests, all C#.",
  "# Tests\nUnit tests in C, with Unity.")
C(R, "port to C#", "# Plan\nThe importer port to C# starts after the release.",
  "# Plan\nThe importer port to C is done.")


NEUTRAL = [
    "# Standup\nStandup moved to 10:30 on Tuesdays and Thursdays.",
    fm("review-cadence", "How often design reviews happen", "Every second Wednesday, thirty minutes."),
    "# Preferences\nThe owner prefers short replies and no emoji in messages.",
    "# Holidays\nThe office is closed between the 24th and the 2nd.",
    fm("tone", "Writing tone for release announcements", "Plain, calm, no exclamation marks.", "feedback"),
    "# Coffee\nThe kitchen machine descales itself on Mondays; leave it alone.",
    "# Meetings\nNo meetings on Friday afternoons; focus time.",
    "# Onboarding\nNew people get a buddy for the first two weeks.",
    fm("owner", "Who the owner is", "Product lead; likes diagrams more than prose.", "user"),
    "# Palette\nKeep the palette muted: slate, sand and one accent green.",
    "# Reminders\nRemind the owner about the quarterly planning doc on the first Monday.",
    "# Travel\nBook trains, not flights, for trips under four hours.",
    "# Naming\nProducts are named after rivers; the next one is Danube.",
    "# Feedback\nThe owner dislikes long bullet lists; two or three at most.",
    fm("roadmap", "Roadmap themes for the half year", "Reliability first, then onboarding polish.", "project"),
    "# Support\nSupport rotation changes every Monday at noon.",
    "# Office\nThe plants on the third floor are watered on Wednesdays.",
    "# Habits\nSummaries go at the top, details after a blank line.",
    "# Calendar\nThe all-hands is the last Thursday of each month.",
    "# Hiring\nInterview loops are four conversations, one of them with a peer.",
]
PROJECTS = ["shop", "atlas", "kiosk"]


def build(tree, i, case):
    cat, q, gold, distr = case
    rng = random.Random(i)
    texts = [("gold", gold)] + [(f"d{k}", d) for k, d in enumerate(distr)]
    texts += [("neutral", t) for t in rng.sample(NEUTRAL, 5)]
    names = [f"n{k:02d}" for k in range(len(texts))]
    rng.shuffle(names)
    where = {}
    for (role, text), name in zip(texts, names):
        rel = f"projects/{rng.choice(PROJECTS)}/{name}.md"
        os.makedirs(os.path.join(tree, os.path.dirname(rel)), exist_ok=True)
        with open(os.path.join(tree, rel), "w", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")
        where[rel] = role
    return where


def main(cases=CASES, build=build, name="code-words-probe", doc=__doc__):
    """Run ``cases``, each in the tree ``build`` writes (bench/code_words_probe3.py runs its own cases so)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--out", default=None, help="write each case's outcome here (JSON)")
    ap.add_argument("--scratch", default=f"/tmp/memsearch-bench/{name}", help="trees and indexes")
    args = ap.parse_args()
    base = args.scratch
    shutil.rmtree(base, ignore_errors=True)
    cli_sample = set(range(0, len(cases), max(1, len(cases) // 20)))
    out = []
    for i, case in enumerate(cases):
        tree, db = f"{base}/t{i:03d}", f"{base}/d{i:03d}.db"
        where = build(tree, i, case)
        gold_rel = next(r for r, role in where.items() if role == "gold")
        ix = MemoryIndex(tree, db)
        try:
            hits = ix.search(case[1])
            err = None
        except Exception as e:  # a query the library refuses counts as a miss
            hits, err = [], f"{type(e).__name__}: {e}"
        ix.close()
        paths = [h.path for h in hits]
        rank = paths.index(gold_rel) + 1 if gold_rel in paths else None
        gold_hit = hits[rank - 1] if rank else None
        marked = bool(gold_hit and "<<" in gold_hit.snippet and ">>" in gold_hit.snippet)
        rec = {"i": i, "cat": case[0], "q": case[1], "rank": rank, "marked": marked, "err": err,
               "top": [(where[h.path], round(h.score, 4), h.snippet.strip()[:90]) for h in hits[:4]],
               "gold_snippet": gold_hit.snippet.strip()[:120] if gold_hit else None}
        if i in cli_sample:
            p = subprocess.run([sys.executable, "-m", "memsearch", "query", "--root", tree, "--db", db, "--json",
                                "--", case[1]], capture_output=True, text=True)  # (-- : a query may start with -)
            try:
                cli = [r["path"] for r in json.loads(p.stdout)["results"]]
            except Exception:
                cli = f"rc={p.returncode} {p.stderr.strip()[:200]}"
            rec["cli_agree"] = cli == paths
            if cli != paths:
                rec["cli"] = cli
        out.append(rec)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(out, f, ensure_ascii=False, indent=1)
    cats = {}
    for r in out:
        c = cats.setdefault(r["cat"], [0, 0, 0])
        c[0 if r["rank"] == 1 else 1] += 1
        c[2] += r["marked"]
    for c, (p, f, m) in cats.items():
        print(f"{c:12s} pass {p:3d} fail {f:3d} marked {m}")
    print("total pass", sum(v[0] for v in cats.values()), "of", len(out))
    cli = [r for r in out if "cli_agree" in r]
    print("cli sample", len(cli), "agree", sum(r["cli_agree"] for r in cli))
    for r in out:
        if r["rank"] != 1:
            print(f"FAIL #{r['i']} [{r['cat']}] {r['q']!r} rank={r['rank']} err={r['err']}")
            for t in r["top"]:
                print("     ", t)
    for r in out:
        if r["rank"] == 1 and not r["marked"]:
            print(f"UNMARKED #{r['i']} {r['q']!r}: {r['gold_snippet']!r}")


if __name__ == "__main__":
    main()
