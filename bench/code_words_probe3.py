"""A third blind code-word probe (issue 33, session 61): 157 cases, each a query, one gold file, 1-3 near misses
and 5 neutral notes, in a fresh tree (memory/<name>.md) and a fresh index, through ``MemoryIndex.search`` with the
library's defaults. Pass: the gold file first. A twentieth of the cases also through ``python -m memsearch query
--json`` (the hits must agree). Written by a helper who read neither memsearch's code-word modules nor the other
probes' cases, before any run; no case changed after. The second probe's runner runs them. Reads no corpus::

    python bench/code_words_probe3.py [--out result.json] [--scratch DIR]
"""
from __future__ import annotations

import os
import random

from code_words_probe import fm, main  # the second probe's (bench/ is the script's folder)


CASES = []


def C(cat, q, gold, *distr):
    CASES.append((cat, q, gold, list(distr)))


# ---------------------------------------------------------------- symbol (26)
C("symbol", "C++",
  "# Engine build\nThe render engine is written in C++17. Build it with clang++ and -std=c++17;"
  " gcc works but is slower.\n"
  "Header-only deps are vendored under third_party/.",
  "# Firmware\nThe sensor firmware is plain C. Build it with gcc and -std=c99; no heap allocation allowed.")
C("symbol", "C#",
  "# Game client\nUnity scripts are written in C#; the team uses Rider, not Visual Studio.",
  "# Bootloader\nThe bootloader is written in C, and its docs are Markdown in docs/boot.",
  "# Jingle\nThe onboarding jingle is in the key of C, then modulates up to G.")
C("symbol", "F#",
  fm("pricing-model", "Where the pricing model lives",
     "The pricing model is written in F# with FAKE build scripts; run `dotnet fake build`."),
  "# Audit forms\nForm F must be filed before the audit; scans go in folder F of the shared drive.")
C("symbol", ".NET",
  "# Billing API\nThe billing API runs on .NET 8 with minimal APIs; deploy via the Azure pipeline.",
  "# Refactor\nThe net result of the billing refactor was 200 fewer lines and one less service.",
  "# Office network\nThe guest net in the office is isolated from the dev VLAN.")
C("symbol", "ASP.NET",
  "# Admin portal\nThe admin portal is ASP.NET MVC with Razor views; auth via cookie.",
  "# Import tool\nThe CSV import tool is a .NET console app scheduled nightly.")
C("symbol", "Node.js",
  "# Webhook relay\nThe webhook relay is a Node.js service using Express and pino for logs.",
  "# Cluster\nEach node in the cluster has 16 GB of RAM and two vCPUs.",
  "# Marketing\nThe marketing site is Next.js on Vercel.")
C("symbol", "Vue.js",
  "# Dashboard\nThe dashboard frontend is Vue.js 3 with Pinia for state.",
  "# Marketing\nThe marketing site is Next.js on Vercel; the blog is Astro.")
C("symbol", "C++ templates",
  "# Metaprogramming\nAvoid deep C++ templates in the math lib; compile times doubled last time."
  " Prefer constexpr functions.",
  "# Email\nEmail templates live in templates/email and are rendered with Jinja.",
  "# Docs\nPR templates are in .github; fill in the testing section.")
C("symbol", "Objective-C",
  "# iOS share extension\nThe share extension is still Objective-C; everything else in the app is Swift.",
  "# OKRs\nThe objective for Q3 is to cut CI time in half.",
  "# Drivers\nThe USB driver is C with a thin Python wrapper.")
C("symbol", "g++",
  "# Toolchain\nUse g++ 13 on the build box; older g++ versions choke on concepts.",
  "# Teams\nGroup G owns the payments service and its dashboards.")
C("symbol", "A*",
  "# Pathfinding\nThe robot planner uses A* with a Manhattan heuristic on the grid map.",
  "# Release plan\nPlan A is to ship Friday; plan B is Monday if QA slips.")
C("symbol", "@Override",
  "# Java style\nAlways put @Override on overridden methods; checkstyle fails the build otherwise.",
  "# Config\nYou can override the default timeout with TIMEOUT_S in the environment.")
C("symbol", "#pragma once",
  "# Headers\nAll headers use #pragma once instead of include guards.",
  "# Cron\nPragmatic choice: the report job runs once per day instead of hourly.")
C("symbol", "@types/node",
  "# Typings\nPinned @types/node to 20.x so it matches the runtime.",
  "# Graph\nNode types in the graph are user, order and item.")
C("symbol", "$HOME",
  "# Scripts\nShell scripts must use $HOME, never a hard-coded /home/alice path.",
  "# Website\nThe home page hero image is 1600px wide and served as AVIF.")
C("symbol", "std::vector",
  "# Performance\nPrefer std::vector over raw arrays; call reserve() before push_back in hot loops.",
  "# Icons\nThe vector icons are SVG; keep each under 2 KB.",
  "# Config parsing\nstd::map is fine for the small config tables.")
C("symbol", "@Transactional",
  "# Spring\nService methods that write must be @Transactional; read paths use readOnly = true.",
  "# Mail\nTransactional emails (receipts, resets) go through Postmark.")
C("symbol", "__init__",
  "# Python style\nKeep __init__ light; heavy setup belongs in a classmethod like from_config.",
  "# Legacy boxes\nThe init scripts in /etc/init.d on the old boxes are legacy; use systemd units.")
C("symbol", ".NET Core",
  fm("dotnet-migration", "Deadline for moving old services",
     ".NET Core 3.1 services must move to .NET 8 before December."),
  "# Core team\nThe core team meets Mondays; core hours are 10 to 4.")
C("symbol", "TCP/IP",
  "# PLC\nThe PLC speaks Modbus over TCP/IP on port 502.",
  "# Admin access\nThe IP allowlist for the admin panel covers the office only.")
C("symbol", "I/O",
  "# Indexer\nThe indexer is I/O bound; use async reads and a bigger page cache.",
  "# Codenames\nIo, the moon of Jupiter, is the codename of the next release.")
C("symbol", "C++20 coroutines",
  "# Async\nCoroutines in C++20 need -fcoroutines on gcc 10; we use cppcoro's task.",
  "# Android\nKotlin coroutines handle the Android networking layer.")
C("symbol", "--force",
  "# Git\nNever git push --force to main; use --force-with-lease on feature branches.",
  "# Onboarding\nThe task force on onboarding meets monthly.")
C("symbol", "written in C",
  "# Firmware\nThe sensor firmware is written in C (C99) with no dynamic allocation.",
  "# Engine\nThe render engine is written in C++ and built with CMake.")
C("symbol", "C",
  "# Bootloader\nThe bootloader is C, compiled with gcc -Os.",
  "# Engine\nThe render engine is C++, compiled with clang++ -O2.",
  "# Client\nThe desktop client is C#, compiled with dotnet build.")
C("symbol", "ASP.NET Core",
  "# Public API\nThe public API moved to ASP.NET Core in 2023; controllers live in Api/Controllers.",
  "# Core values\nCore values poster is in the kitchen; the team picked them in 2023.",
  "# Admin\nThe admin portal is still classic ASP.NET MVC.")

# ------------------------------------------------------------ identifier (36)
C("identifier", "getUserById",
  "# Users repo\n`getUserById(id)` in users/repo.ts reads from the replica and caches for 30s.",
  "# Orders repo\n`getOrderById(id)` in orders/repo.ts always reads from the primary.")
C("identifier", "getUserById",
  "# Lookups\ngetUserById throws NotFound for deleted users; callers must catch it.",
  "# Session\ngetUser() returns the current session user; no id needed.",
  "# Admin\nLook up a user by id in the admin panel under Support > Users.")
C("identifier", "getUser",
  "# Users repo\ngetUserById(id) reads from the replica and caches for 30 seconds; stale reads are acceptable there.",
  "# Orders repo\ngetOrderById(id) returns null for archived orders.")
C("identifier", "invalidate user",
  "# Cache\nCall invalidateUser(uid) after a profile edit, else the cache serves stale names.",
  "# Refunds\ninvalidateOrder(oid) runs after refunds.",
  "# Avatars\nUser avatars are resized to 256px on upload.")
C("identifier", "user_id",
  "# Events\nThe events table keys on user_id (bigint), not on email.",
  "# Office\nEach user of the office gets an id badge from reception.",
  "# Orders\norder_id is a UUID in the orders table.")
C("identifier", "userId",
  "# Analytics\nAnalytics joins on user_id from the sessions table; null for anonymous visits.",
  "# Tokens\nsessionId is a random 128-bit token.",
  "# Surveys\nUser feedback survey IDs are numbered by quarter.")
C("identifier", "user-id",
  "# Gateway\nThe gateway forwards an x-user-id header to every upstream service.",
  "# Tracing\nx-request-id is generated at the edge and logged everywhere.")
C("identifier", "HTTPServer",
  "# Test stub\nThe test stub subclasses HTTPServer from http.server and listens on 8081.",
  "# Client\nThe HTTP client retries three times with jitter.",
  "# Facilities\nThe server room key is with facilities.")
C("identifier", "XMLParser",
  "# Vendor feed\nXMLParser chokes on the vendor feed's BOM; strip it before parsing.",
  "# JSON\nThe JSON parser is orjson; do not switch back to the stdlib.",
  "# Exports\nXML exports go to the reports bucket every night.")
C("identifier", "utf8",
  "# Encoding\nAlways open files with encoding utf8; the Windows default is cp1252.",
  "# Excel\nutf16 is used only by the Excel export.")
C("identifier", "utf-8",
  "# CSV\nAll CSV exports are UTF-8 with a BOM so Excel opens them correctly.",
  "# Fax\nUTF-16 LE is required by the legacy fax export.")
C("identifier", "base64",
  "# Webhooks\nAttachments are base64 encoded in the webhook payload.",
  "# Images\nThe base image is debian-slim; layers must stay under 64 MB.")
C("identifier", "x86_64",
  "# Release targets\nRelease builds target x86_64 and aarch64 only.",
  "# Legacy\n32-bit x86 support was dropped in 2022.")
C("identifier", "sha256",
  "# Artifacts\nArtifacts are verified with sha256 checksums listed in SHA256SUMS.",
  "# Mirror\nsha1 is still used by the old git mirror.")
C("identifier", "MAX_RETRIES",
  "# Worker config\nMAX_RETRIES defaults to 5 in config.py; the worker reads it once at boot.",
  "# Pool\nMAX_CONNECTIONS is 100 for the database pool.",
  "# Webhooks\nWe retry webhooks at most three times.")
C("identifier", "max retries",
  "# Worker config\nMAX_RETRIES defaults to 5 in config.py.",
  "# Pool\nMAX_CONNECTIONS is 100 for the pool.",
  "# Backoff\nRetries use exponential backoff starting at 200 ms.")
C("identifier", "OrderService",
  "# Checkout\nOrderService owns the checkout saga; it calls PaymentGateway and InventoryClient.",
  "# Data access\nOrderRepository is a thin wrapper over SQL.",
  "# Support\nThe customer service team handles refunds by phone.")
C("identifier", "order service",
  "# Checkout\nOrderService owns the checkout saga and publishes OrderPlaced events.",
  "# Data access\nOrderRepository is a thin wrapper over SQL.",
  "# Desk\nThe service desk rotation changes weekly.")
C("identifier", "useEffect",
  "# React\nAvoid fetching in useEffect; use React Query's useQuery instead.",
  "# Forms\nuseState is fine for local form state.",
  "# Migration\nThe side effect of the migration was ten minutes of downtime.")
C("identifier", "feature-flags",
  "# Remote config\nRemote config lives in the feature-flags service (Go, gRPC).",
  "# Product\nFeature requests go to the product board.",
  "# CLI\nFlags on the CLI are documented in --help output.")
C("identifier", "is_active",
  "# Soft delete\nSoft deletes set is_active = false; never DELETE rows from accounts.",
  "# Metrics\nThe active user count dashboard is in Grafana.",
  "# Roles\nis_admin is only ever set by migrations.")
C("identifier", "created_at",
  "# Mobile API\nThe mobile client sends createdAt in ISO 8601 with a trailing Z.",
  "# Triggers\nupdatedAt is set by a database trigger.",
  "# History\nThe repo was created at the spring hackathon.")
C("identifier", "PaymentGateway",
  "# Payments\nPaymentGateway wraps Stripe; never call the Stripe SDK directly from handlers.",
  "# Nginx\nThe gateway timeout is 30s at nginx.",
  "# Vendors\nPayment terms for vendors are 30 days.")
C("identifier", "DATABASE_URL",
  "# Prod config\nDATABASE_URL must include sslmode=require in production.",
  "# Cache\nREDIS_URL points at the cache cluster.",
  "# Backups\nThe database backup runs nightly at 02:00.")
C("identifier", "AWS_SECRET_ACCESS_KEY",
  "# CI secrets\nCI reads AWS_SECRET_ACCESS_KEY from the vault, never from the repo.",
  "# Logging\nAWS_ACCESS_KEY_ID is safe to log; the secret access key is not.")
C("identifier", "IOError",
  "# NFS\nCatch IOError around the NFS reads; the mount flaps under load.",
  "# Permissions\nOSError covers permission problems too.")
C("identifier", "iOS",
  "# Mobile\nThe iOS app ships through TestFlight every Friday.",
  "# DB host\nThe IO scheduler on the database host is mq-deadline.")
C("identifier", "OAuth2",
  "# Login\nLogin uses OAuth2 with PKCE for the SPA.",
  "# Importer\nOAuth1 signatures are still needed for the old importer.")
C("identifier", "S3",
  "# Backups\nBackups go to S3 with a 30-day lifecycle rule.",
  "# Compute\nEC2 instances are m5.large in the worker pool.")
C("identifier", "ipv6",
  "# Load balancer\nThe load balancer has no ipv6 listener yet.",
  "# VPN\nipv4 only on the office VPN.")
C("identifier", "snake_case",
  "# Conventions\nPython code uses snake_case; the JSON API uses camelCase.",
  "# Examples\nThe snake game demo lives in /examples.")
C("identifier", "toString",
  "# Logging\nOverride toString on value objects so logs are readable.",
  "# Style\nString interpolation is preferred over concatenation.")
C("identifier", "fetchUserProfile",
  "# Profile\nfetchUserProfile retries twice, then falls back to the cached profile.",
  "# Settings\nfetchUserSettings is called on every page load.",
  "# Design\nThe user profile page was redesigned in May.")
C("identifier", "getUserByID",
  "# Users\ngetUserById is the only lookup allowed in request handlers.",
  "# Orders\ngetOrderByID is used by the batch exporter.")
C("identifier", "k8s",
  "# Staging\nThe staging k8s cluster autoscales between 3 and 9 nodes.",
  "# Lab\nk3s runs on the Raspberry Pi lab rack.")
C("identifier", "i18n",
  "# Strings\nUser-facing strings go through i18n keys in locales/*.json.",
  "# Vendor\nThe l10n vendor delivers translations monthly.")

# ------------------------------------------------------------------ path (26)
C("path", "src/auth/login.ts",
  "# Redirect bug\nThe redirect loop lives in src/auth/login.ts around line 120; it ignores the next= param.\n"
  "Repro: log in from a deep link while the session cookie is expired.",
  "# Logout\nsrc/auth/logout.ts clears the cookie and the local cache.",
  "# Copy\nLogin page copy was updated by marketing in June.")
C("path", "login.ts",
  "# OTP\nlogin.ts handles the OTP step after the password check.",
  "# Page\nlogin.tsx is the page component; keep logic out of it.")
C("path", "~/.config/nvim",
  "# Dotfiles\n~/.config/nvim/init.lua is symlinked from the dotfiles repo.",
  "# Terminal\n~/.config/alacritty/alacritty.toml sets the font size.")
C("path", r"C:\Users\dev\AppData",
  r"# Windows cache" "\n" r"On Windows the cache lives in C:\Users\dev\AppData\Local\memsearch.",
  "# Access\nUsers on the dev team get admin data access on request.")
C("path", "os.path.join",
  "# Paths\nUse os.path.join or pathlib, never string concatenation, for file paths.",
  "# Env\nos.environ is read once at startup.",
  "# Strings\nstr.join is faster than += in loops.")
C("path", "docker-compose.yml",
  "# Local stack\ndocker-compose.yml pins postgres:15 and redis:7 for local dev.",
  "# Overrides\ndocker-compose.override.yml is for local port changes only.",
  "# Images\nThe Dockerfile uses a multi-stage build.")
C("path", "package.json",
  "# Scripts\nThe scripts in package.json are build, test and lint.",
  "# Lockfile\npackage-lock.json must always be committed.")
C("path", ".env",
  "# Secrets\nSecrets go in .env (gitignored); .env.example lists the keys.",
  "# Environments\nThe dev environment uses the staging database.")
C("path", "api.example.com",
  "# Hosts\nThe prod API host is api.example.com behind Cloudflare.",
  "# Staging\napi.staging.example.com is the staging API.")
C("path", "https://github.com/acme/widgets",
  "# Upstream\nUpstream is https://github.com/acme/widgets; we vendor a fork with two patches.",
  "# Archived\nhttps://github.com/acme/gadgets is archived; do not file issues there.")
C("path", "/var/log/nginx",
  "# Logs\nAccess logs rotate daily in /var/log/nginx/ and are shipped to Loki.",
  "# Disk\n/var/log/postgresql fills the disk if verbose logging is on.")
C("path", "Makefile",
  "# Release\n`make release` in the Makefile tags and pushes the image.",
  "# Notes\nRelease notes are written by hand.")
C("path", "tsconfig.json",
  "# TypeScript\ntsconfig.json has strict: true; do not relax it.",
  "# Build\ntsconfig.build.json excludes the tests.")
C("path", "pyproject.toml",
  "# Versioning\nThe version lives in pyproject.toml only.",
  "# Rust\nCargo.toml defines a workspace of three crates.")
C("path", "requests.get",
  "# HTTP\nAlways pass timeout= to requests.get; the default waits forever.",
  "# Triage\nFeature requests get triaged on Monday.")
C("path", "django.db.models",
  "# Fields\nCustom fields subclass django.db.models.Field and live in core/fields.py.",
  "# ML\nThe models folder holds the ML weights, not Django code.")
C("path", "auth/middleware",
  "# Tokens\nToken checks are in services/api/auth/middleware.go.",
  "# Order\nMiddleware order matters: logging first, then CORS.",
  "# Callback\nauth/handlers.go has the OAuth callback.")
C("path", ".github/workflows/ci.yml",
  "# CI\n.github/workflows/ci.yml runs lint and tests on every PR.",
  "# Release\n.github/workflows/release.yml publishes on tag.")
C("path", "/etc/hosts",
  "# Local TLS\nAdd 127.0.0.1 shop.local to /etc/hosts for local TLS.",
  "# Offsite\nThe hosts for the offsite are Dana and Lee.")
C("path", "localhost:5432",
  "# Postgres\nLocal postgres listens on localhost:5432.",
  "# Dev server\nThe dev server is localhost:3000.")
C("path", "README.md",
  "# Docs\nREADME.md must have the quickstart at the top.",
  "# Contributing\nCONTRIBUTING.md covers commit style.")
C("path", "node_modules",
  "# Repo hygiene\nNever commit node_modules; CI caches it between runs.",
  "# Graph\nNode modules for the ML graph are in graph/nodes.")
C("path", "com.acme.billing",
  "# Android\nThe Android package id is com.acme.billing.",
  "# Store\ncom.acme.shop is the storefront app.")
C("path", "__pycache__",
  "# Python versions\nDelete __pycache__ after switching Python versions.",
  "# Cache\nThe cache TTL is five minutes.")
C("path", "Dockerfile.dev",
  "# Hot reload\nDockerfile.dev mounts the source for hot reload.",
  "# Prod image\nDockerfile is for production; distroless base.")
C("path", "src/components/Button.tsx",
  "# A11y\nsrc/components/Button.tsx has the focus ring fix.",
  "# Inputs\nsrc/components/Input.tsx still lacks focus styles.")

# --------------------------------------------------------------- version (21)
C("version", "2.0.7",
  "# libfoo\nPin libfoo to 2.0.7; 2.0.8 broke the TLS handshake with old proxies.",
  "# Debian\nlibfoo 2.0.71 is the Debian package version; ignore it when reading bug reports.")
C("version", "2.0.71",
  "# libbar\nlibbar 2.0.71 fixes the memory leak in the pool.",
  "# libbar old\nlibbar 2.0.7 leaks memory under load.")
C("version", "1.4.2",
  "# Rollback\nThe rollback target is release 1.4.2.",
  "# Export\nRelease 1.4.20 added the CSV export.")
C("version", "v1.2",
  "# API\nAPI v1.2 added pagination cursors.",
  "# SDK\nSDK v1.20 is unrelated to the API version.",
  "# Breaking\nAPI v2.1 removed offset pagination.")
C("version", "Python 3.12",
  "# Runtime\nWe run Python 3.12 in prod since March.",
  "# Agents\nPython 3.11 is still on the build agents.")
C("version", "python 3.11",
  "# Notebooks\nThe data notebooks need python 3.11 because of numba.",
  "# Services\npython 3.12 is the default for services.")
C("version", "node 18",
  "# Lambda\nThe Lambda runtime is node 18; the upgrade is blocked on a native module.",
  "# Local\nnode 20 runs locally for everyone.",
  "# Cluster\nThere are 18 nodes in the cluster.")
C("version", "Node 20",
  "# nvmrc\nNode 20.11 is pinned in .nvmrc.",
  "# Old lambda\nNode 18.19 is in the old Lambda.")
C("version", "1.0.0-beta.2",
  "# Mobile SDK\nMobile SDK 1.0.0-beta.2 has the crash fix.",
  "# Crash\n1.0.0-beta.1 crashed on Android 12.")
C("version", "3.0.0-rc1",
  "# Staging\nStaging runs 3.0.0-rc1 of the gateway.",
  "# Next\n3.0.0-rc2 will add rate limits.")
C("version", "postgres 15",
  "# Upgrade\nThe upgrade to postgres 15 is done on all clusters.",
  "# Plan\npostgres 16 is planned for Q4.")
C("version", "Java 17",
  "# Build\nBuild with Java 17 (Temurin).",
  "# Batch\nJava 11 for the legacy batch jobs.",
  "# Offsite\n17 people attended the offsite.")
C("version", "ES2020",
  "# TS target\nThe TypeScript target is ES2020.",
  "# Bundle\nES2015 modules in the old bundle.")
C("version", "0.9.1",
  "# Crash\nThe sync crash was fixed in 0.9.1.",
  "# Regression\n0.9.10 introduced a regression in sync.")
C("version", "Go 1.21",
  "# Go\nGo 1.21 added the slices and maps packages; we require it.",
  "# Loopvar\nGo 1.22 fixes loop variable capture.")
C("version", "10.0.1",
  "# Hotfix\nHotfix 10.0.1 shipped on Tuesday.",
  "# VPN\nThe VPN subnet is 10.0.1.0/24.")
C("version", "Ubuntu 22.04",
  "# Agents\nBuild agents run Ubuntu 22.04.",
  "# EOL\nUbuntu 20.04 is end of life for us.",
  "# Laptops\n24.04 desktop on laptops.")
C("version", "React 18",
  "# Modal\nReact 18 concurrent rendering broke the modal.",
  "# Admin\nReact 17 is still in the admin app.")
C("version", "TLS 1.3",
  "# Public\nRequire TLS 1.3 on the public endpoints.",
  "# Internal\nTLS 1.2 is allowed internally.")
C("version", "v2.3.0",
  "# Release\nRelease 2.3.0 shipped Monday with the new importer.",
  "# Hotfix\nRelease 2.3.1 is a hotfix candidate.")
C("version", "1.2.3",
  fm("sdk-pin", "Which SDK version the app pins",
     "The app pins the payments SDK at 1.2.3. Newer releases changed the webhook signature format, and the\n"
     "migration is tracked in the payments board. Do not bump without talking to Maya."),
  "# Old\nSDK 1.2.30 was a bad release, yanked.",
  "# Other\nSDK 11.2.3 is the Android fork version.")

# ---------------------------------------------------------------- accent (21)
C("accent", "Αθηνα",
  "# Γραφεία\nΤο γραφείο στην Αθηνά ανοίγει στις 9.",
  "# Γραφεία 2\nΤο γραφείο στη Θεσσαλονίκη ανοίγει στις 10.")
C("accent", "tieng viet",
  "# Giao diện\nGiao diện có bản tiếng Việt cho khách hàng.",
  "# Giao diện 2\nGiao diện có bản tiếng Anh cho đối tác.")
C("accent", "Hà Nội",
  "# Máy chủ\nMáy chủ chính đặt ở Hà Nội.",
  "# Dự phòng\nMáy chủ dự phòng đặt ở Đà Nẵng.")
C("accent", "ha noi",
  "# Máy chủ\nMáy chủ chính đặt ở Hà Nội.",
  "# Dự phòng\nMáy chủ dự phòng đặt ở Sài Gòn.")
C("accent", "Istanbul",
  "# Ekip\nEkip İstanbul ofisinde çalışıyor.",
  "# Ekip 2\nEkip Ankara ofisinde çalışıyor.")
C("accent", "kapali",
  "# Sunucu\nSunucu hafta sonu kapalı.",
  "# Sunucu 2\nSunucu hafta sonu açık.")
C("accent", "Lodz",
  "# Centrum danych\nCentrum danych: Łódź, drugi rack.",
  "# Centrum danych 2\nCentrum danych: Kraków, pierwszy rack.")
C("accent", "strasse",
  "# Adresse\nRechnungsadresse: Lange Straße 7, Berlin.",
  "# Adresse 2\nRechnungsadresse: Marktplatz 3, Hamburg.")
C("accent", "Straße",
  "# Lieferung\nLieferadresse: Lange Strasse 9 (in der Schweiz schreibt man ss).",
  "# Lieferung 2\nLieferadresse: Marktplatz 3.")
C("accent", "cafe",
  "# Bureau\nLe café du bureau ferme à 16h.",
  "# Cantine\nLa cantine ferme à 14h.")
C("accent", "eleve",
  "# Portail\nLe portail élève est en maintenance ce week-end.",
  "# Portail 2\nLe portail parent est en maintenance ce week-end.")
C("accent", "елка",
  "# Проект\nПроект Ёлка запускается в декабре.",
  "# Проект 2\nПроект Сосна запускается в марте.")
C("accent", "ещё",
  "# Миграция\nМиграция еще не завершена, ждём DBA.",
  "# Миграция 2\nМиграция завершена в пятницу.")
C("accent", "Tokyo",
  "# リージョン\nサーバーはＴｏｋｙｏリージョンにあります。",
  "# リージョン2\nバックアップはOsakaリージョンにあります。")
C("accent", "ＡＰＩ",
  "# Keys\nThe API key rotates monthly.",
  "# Office\nThe key to the office is at reception.")
C("accent", "２０２４",
  "# Budget\nBudget freeze for 2024 starts in November.",
  "# Budget 2\nBudget freeze for 2025 starts in October.")
C("accent", "404",
  "# エラー\nエラー ４０４ が出る場合はキャッシュを消す。",
  "# エラー2\nエラー 500 が出る場合は再起動する。")
C("accent", "Zurich",
  "# Team\nDas Team sitzt in Zürich.",
  "# Team 2\nDas Team sitzt in Basel.")
C("accent", "Sao Paulo",
  "# Região\nA região sa-east-1 fica em São Paulo.",
  "# Região 2\nA região us-east-1 fica na Virgínia.")
C("accent", "naive datetime",
  "# Time\nNever store naïve datetime objects; always tz-aware.",
  "# Clock\ndatetime.now() without tz is banned in services.")
C("accent", "ΟΔΥΣΣΕΑΣ",
  "# Υπεύθυνος\nΟ Οδυσσέας είναι ο υπεύθυνος για τις κυκλοφορίες.",
  "# Υπεύθυνος 2\nΟ Νίκος είναι ο υπεύθυνος για τις υποδομές.")
C("accent", "dang nhap",
  "# Lỗi\nLỗi đăng nhập khi dùng Google.",
  "# Lỗi 2\nLỗi thanh toán khi dùng thẻ.")

# ------------------------------------------------------------------- mix (26)
C("mix", "where do we call getUserById?",
  "# Callers\ngetUserById is called from ProfileController and from the admin export job.",
  "# Orders\ngetOrderById is called from the checkout flow.",
  "# Notes\nWhere do we keep the meeting notes? In Notion, under Team.")
C("mix", "which version of node do we pin?",
  "# Node\n.nvmrc pins node 20.11.1; CI reads it too.",
  "# Python\nThe Python version is pinned to 3.12 in pyproject.")
C("mix", "how is the .env loaded",
  "# Settings\nThe .env file is loaded by python-dotenv in settings.py at import time.",
  "# Staging\nThe environment for staging is loaded from SSM parameters.")
C("mix", "what does MAX_RETRIES do",
  "# Webhooks\nMAX_RETRIES caps webhook redelivery; after that the event goes to the dead letter queue.",
  "# Reports\nWhat does the owner want in reports? Short summaries at the top.")
C("mix", "why did we drop Python 3.8?",
  "# Support\nPython 3.8 support was dropped in May: it is EOL and we wanted newer typing features.",
  "# Floor\nPython 3.9 is the new floor for all packages.",
  "# Demo\nWhy did we drop the Friday demo? Low attendance.")
C("mix", "is C++ allowed in the firmware?",
  "# Firmware rules\nC++ is allowed in the firmware if exceptions and RTTI are off.",
  "# Bootloader\nThe bootloader is C only; nothing else is allowed there.")
C("mix", "where is docker-compose.yml for local dev",
  "# Local dev\nLocal dev uses infra/docker-compose.yml; run make up.",
  "# Seeds\nThe local dev database seed is in seeds/dev.sql.")
C("mix", "who owns the PaymentGateway class",
  "# Ownership\nThe PaymentGateway class is owned by the payments squad (Maya).",
  "# On-call\nWho owns the on-call schedule? Ops.",
  "# Net\nThe Gateway class in net/ is owned by infra.")
C("mix", "how do we rotate AWS_SECRET_ACCESS_KEY",
  "# Rotation\nRotate AWS_SECRET_ACCESS_KEY via the vault UI, then redeploy the workers.",
  "# On-call\nHow do we rotate the on-call? Weekly, on Monday.")
C("mix", "what breaks on 2.0.7",
  "# libfoo\nlibfoo 2.0.7 breaks the TLS handshake with old proxies.",
  "# Debian\nlibfoo 2.0.71 breaks nothing; it is a Debian rebuild.")
C("mix", "does the iOS app use OAuth2?",
  "# iOS auth\nThe iOS app uses OAuth2 with PKCE via AppAuth.",
  "# Android auth\nThe Android app uses OAuth2 too, but through a webview.")
C("mix", "what is the user_id type in events",
  "# Schema\nevents.user_id is bigint; never cast it to int.",
  "# Event types\nWhat is the event type for signups? user.created.")
C("mix", "is /var/log/nginx on its own disk?",
  "# Volumes\n/var/log/nginx sits on its own 50 GB volume.",
  "# Postgres logs\n/var/log/postgresql is on the root disk.")
C("mix", "can I use std::optional here",
  "# Modern C++\nstd::optional is fine in new code; C++17 is the floor.",
  "# Forms\nOptional fields in the form are marked grey.")
C("mix", "who translates the tieng viet strings",
  "# Translations\nLan translates the tiếng Việt strings every sprint.",
  "# German\nWho translates the German strings? An agency.")
C("mix", "what does invalidateUser clear",
  "# Cache\ninvalidateUser clears the profile cache and the session list.",
  "# Nightly\nWhat does the nightly job clear? Temp files.")
C("mix", "which packages are missing on Ubuntu 22.04",
  "# Agents\nOn Ubuntu 22.04 libssl1.1 is missing; install it from the focal archive.",
  "# Mirror\nWhich packages are missing from the mirror? See the list in ops/mirror.md.")
C("mix", "how do I run tests in src/auth",
  "# Auth tests\nRun pytest src/auth -q for the auth tests; they need redis.",
  "# Lint\nHow do I run the linter? make lint.")
C("mix", "is .NET 8 on the build agents",
  "# Agents\n.NET 8 SDK is installed on the build agents.",
  "# Java\nJava 17 is on the build agents.")
C("mix", "what port does localhost:5432 map to in docker",
  "# Docker\nIn docker, localhost:5432 maps to the db container's 5432.",
  "# Ports\nWhat port does the API use? 8080.")
C("mix", "why is useEffect firing twice",
  "# StrictMode\nuseEffect fires twice in dev because of StrictMode; not a bug.",
  "# Cron\nWhy is the cron firing twice? Two schedulers were running.")
C("mix", "where is the HTTPServer stub for tests",
  "# Stubs\ntests/stubs.py has an HTTPServer stub on port 8081.",
  "# Staging\nWhere is the staging server? eu-west-1.")
C("mix", "what did we decide about snake_case in the JSON API",
  "# Decision\nThe JSON API stays camelCase; snake_case only in Python internals.",
  "# Limits\nWhat did we decide about the API rate limits? 100 rps per key.")
C("mix", "when does sha256 verification run",
  "# Release job\nsha256 verification runs in the release job before upload.",
  "# Schedule\nWhen does the release job run? On tags only.")
C("mix", "can I use git push --force on main?",
  "# Git rules\nNever git push --force on main; branch protection blocks it anyway.",
  "# Rooms\nCan I use the main meeting room? Book it first.")
C("mix", "which C# version does Unity support",
  fm("unity", "Unity scripting constraints",
     "Unity 2022 LTS supports C# 9 only; no file-scoped namespaces.\n"
     "The IL2CPP build adds its own limits on generics.\n"
     "Keep shared code in a netstandard2.1 library so the server can reuse it."),
  "# Docs\nWhich version of the docs does the support team use? The latest.",
  "# C\nThe C version of the parser supports C99 only.")

NEUTRAL = [
    "# Standup\nStandup is at 9:45, except on release days.",
    fm("design-reviews", "How design reviews work", "Every other Tuesday; bring one slide, not ten."),
    "# Lunch\nTeam lunch is on the first Friday of the month.",
    fm("writing", "How the owner likes written updates", "Lead with the decision, then the reasons.", "feedback"),
    "# Parking\nVisitor parking must be booked a day ahead.",
    "# Plants\nThe ferns by the window need water twice a week.",
    fm("owner", "Who the owner is", "Engineering manager; prefers async updates over calls.", "user"),
    "# Mentoring\nEach new hire gets a mentor for their first month.",
    "# Quiet hours\nNo pings after 6 pm unless production is down.",
    "# Books\nThe team book club is reading a history of bridges.",
    fm("themes", "Themes for the half", "Stability first, then speed of onboarding.", "project"),
    "# Printer\nThe printer on floor two jams on thick paper.",
    "# Retro\nRetros happen every second Thursday; keep them under an hour.",
    "# Slides\nSlides use the light theme and a single font.",
    "# Birthdays\nBirthdays are celebrated with cake on the closest Friday.",
    "# Bikes\nBike storage is in the basement, code from reception.",
    "# Hiring loop\nThe hiring loop has four interviews and a take-home.",
    "# Emoji\nThe owner prefers no emoji in status updates.",
    "# Q&A\nThe monthly Q&A is recorded and posted in the wiki.",
    "# Desk booking\nHot desks are booked in the office app.",
]


def build(tree, i, case):
    cat, q, gold, distr = case
    rng = random.Random(1000 + i)
    texts = [("gold", gold)] + [(f"d{k}", d) for k, d in enumerate(distr)]
    texts += [("neutral", t) for t in rng.sample(NEUTRAL, 5)]
    names = [f"note-{k:02d}" for k in range(len(texts))]
    rng.shuffle(names)
    where = {}
    os.makedirs(os.path.join(tree, "memory"), exist_ok=True)
    for (role, text), name in zip(texts, names):
        rel = f"memory/{name}.md"
        with open(os.path.join(tree, rel), "w", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")
        where[rel] = role
    return where


if __name__ == "__main__":
    main(CASES, build, "code-words-probe3", __doc__)
