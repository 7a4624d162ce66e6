"""Settings shared by every environment; local, production and test build on these."""

import json
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONCE, NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

from shisanshui.channel_layer import redis_host
from shisanshui.logs import build_logging
from shisanshui.settings.env import env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent.parent

# Local and test settings supply a development key; production requires one.
SECRET_KEY = env_str("SECRET_KEY")
DEBUG = env_bool("DEBUG", default=False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS")

# Applications

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "channels",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "simple_history",
    "axes",
    "accounts",
    "games",
    "lobby",
]

MIDDLEWARE = [
    # First, so that every log line of the request carries its id (X-Request-ID in and out).
    "shisanshui.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # The Content-Security-Policy header (CONTENT_SECURITY_POLICY below) and request.csp_nonce.
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # At most REST_FRAMEWORK's "login" rate of log-in POSTs per client address.
    "shisanshui.middleware.LoginThrottleMiddleware",
    # Records who made each change of a model with history (the rule configurations).
    "simple_history.middleware.HistoryRequestMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last (django-axes): turns a log-in refused for too many failures into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "shisanshui.urls"
ASGI_APPLICATION = "shisanshui.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.debug",
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.context_processors.wallet",
                # CSP_NONCE, for the rare inline <script>/<style> a page cannot avoid.
                "csp.context_processors.nonce",
            ],
        },
    },
]

# Run-time files of `make run` (the demo admin's password, Celery beat's schedule, the
# embedded Redis's directory) and caches; outside version control.
VAR_DIR = Path(env_str("VAR_DIR") or BASE_DIR / "var")

# Database: DATABASE_URL (postgres://...), or a SQLite file (SQLITE_PATH, by default
# db.sqlite3 in the project root) when unset.

SQLITE_PATH = Path(env_str("SQLITE_PATH") or BASE_DIR / "db.sqlite3")
DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{SQLITE_PATH}",
        conn_health_checks=True,
    ),
}
# Keep connections open between requests (checked before reuse): daphne runs every database
# call of the WebSocket consumers on one thread, and opening a PostgreSQL connection for each
# action costs more than the action itself (docs/load-and-faults.md).
DATABASES["default"]["CONN_MAX_AGE"] = env_int("CONN_MAX_AGE", 60)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # The same backend, whose health checks skip a connection used in the last few seconds
    # (shisanshui/postgresql/base.py): one round trip less per table action.
    DATABASES["default"]["ENGINE"] = "shisanshui.postgresql"
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # `make run` has daphne, a Celery worker and beat writing the same file. WAL lets readers
    # run beside the writer; IMMEDIATE takes the write lock when a transaction begins (so two
    # writers queue instead of one failing with "database is locked" on its first write); the
    # timeout is how long a writer waits in that queue. select_for_update() is a no-op here:
    # the queue serializes whole transactions instead.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        }
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Users

AUTH_USER_MODEL = "accounts.User"
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "accounts:profile"
LOGOUT_REDIRECT_URL = "home"

# django-axes first: it refuses a locked-out username + address before any password is checked
# (it never logs anyone in itself).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Log-in lockout (django-axes; accounts.lockout): the web log-in, the admin's and
# POST /api/auth/token/ count failures per user name + client address together (REMOTE_ADDR:
# behind the load balancer daphne's --proxy-headers puts the client's address there). The
# LOGIN_FAILURE_LIMIT-th failure within LOGIN_LOCKOUT_MINUTES locks that pair out until
# LOGIN_LOCKOUT_MINUTES after its last failure: HTTP 429, a page or the API's JSON error, with
# Retry-After. A success clears the count. Per pair, not per user name, so that nobody can lock
# a player out from another address; many names tried from one address are held off by the
# per-address throttles of the log-in forms ("login") and of the token endpoint ("auth_token").
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
LOGIN_LOCKOUT_MINUTES = env_int("LOGIN_LOCKOUT_MINUTES", 15)
AXES_COOLOFF_TIME = timedelta(minutes=LOGIN_LOCKOUT_MINUTES)
if AXES_FAILURE_LIMIT < 1 or LOGIN_LOCKOUT_MINUTES < 1:
    raise ImproperlyConfigured("LOGIN_FAILURE_LIMIT and LOGIN_LOCKOUT_MINUTES must be positive.")
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# An attempt refused during a lockout is not recorded: the lockout ends on time (so
# Retry-After is exact) and a hammering client cannot grow the attempt's row.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_LOCKOUT_CALLABLE = "accounts.lockout.lockout_response"

# E-mail: password reset links (asked for on the log-in page, or sent by support from the
# admin) and the notice to an account's old address when staff change it. SMTP by default;
# a developer's machine prints them on the console (settings.local).
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", default=False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "webmaster@localhost")

# Coins

# Coins a new player receives from the mint when signing up (0: none).
SIGNUP_GRANT = env_int("SIGNUP_GRANT", 100_000)
if SIGNUP_GRANT < 0:
    raise ImproperlyConfigured("SIGNUP_GRANT cannot be negative.")
# A guest (playing without an account) neither logged in nor played for this many days is
# removed by the beat task below: deactivated, anonymised, its coins back in the mint.
GUEST_IDLE_DAYS = env_int("GUEST_IDLE_DAYS", 7)
if GUEST_IDLE_DAYS < 1:
    raise ImproperlyConfigured("GUEST_IDLE_DAYS must be at least 1.")

# Threads per web process that run the table's services for its WebSockets (each keeps a
# database connection): an action mostly waits for PostgreSQL (games.live.consumers).
TABLE_SERVICE_THREADS = env_int("TABLE_SERVICE_THREADS", 8)
if TABLE_SERVICE_THREADS < 1:
    raise ImproperlyConfigured("TABLE_SERVICE_THREADS must be at least 1.")
# … and the threads for the rest of a table socket's work: its seat, its welcome (the table's
# snapshot), the reconnect and disconnect, the engine's suggestions. A storm of connections
# (a web process restarted, its players all back at once) then never queues the table's
# commands behind it. Each keeps a database connection too.
TABLE_SIDE_THREADS = env_int("TABLE_SIDE_THREADS", 4)
if TABLE_SIDE_THREADS < 1:
    raise ImproperlyConfigured("TABLE_SIDE_THREADS must be at least 1.")

# Every Celery worker process polls the tables' phase deadlines (games.live.timers) at most this
# many milliseconds apart, and sleeps until a deadline it saw coming: a timeout is acted on
# within milliseconds of its deadline, or within one interval when the phase began during the
# sleep. 0 turns the poller off (the beat's sweeper alone then, seconds late).
TABLE_DEADLINE_POLL_MS = env_int("TABLE_DEADLINE_POLL_MS", 200)
if not (TABLE_DEADLINE_POLL_MS == 0 or 10 <= TABLE_DEADLINE_POLL_MS <= 10_000):
    raise ImproperlyConfigured("TABLE_DEADLINE_POLL_MS must be 0 or 10 to 10000.")

# Bot players (games.live.bots) wait a human-like random delay before each action, multiplied by
# this scale: 0 makes them act at once (tests), 1 is the normal pace.
BOT_DELAY_SCALE = float(env_str("BOT_DELAY_SCALE", "1.0"))
if BOT_DELAY_SCALE < 0:
    raise ImproperlyConfigured("BOT_DELAY_SCALE cannot be negative.")

# Internationalisation

LANGUAGE_CODE = "en"
LANGUAGES = [
    ("en", _("English")),
    ("zh-hans", _("Simplified Chinese")),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
# Numbers are grouped by thousands with a comma in both languages (shisanshui/formats/zh_Hans:
# Django's Chinese format has no separator), as intcomma and the pages' scripts show them.
FORMAT_MODULE_PATH = ["shisanshui.formats"]
USE_I18N = True
TIME_ZONE = "UTC"
USE_TZ = True

# Static files

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Where `collectstatic` puts them (STATIC_ROOT in the environment, else ./staticfiles).
STATIC_ROOT = Path(env_str("STATIC_ROOT") or BASE_DIR / "staticfiles")

# Rule configurations

# The special-hand simulation behind the admin's frequency table (games.rules.stats) is
# cached here as an .npz file; `manage.py warm_special_stats` builds it ahead of time.
STATS_CACHE_DIR = Path(env_str("STATS_CACHE_DIR") or VAR_DIR / "cache")
SPECIAL_STATS_DEALS = env_int("SPECIAL_STATS_DEALS", 100_000)
SPECIAL_STATS_SEED = env_int("SPECIAL_STATS_SEED", 13)
# A configuration's special hands have their own history rows; reverting only the parent
# from its history page would bypass the rules engine's validation, so it is off.
SIMPLE_HISTORY_REVERT_DISABLED = True

# Redis: the channel layer, Celery's broker and its result backend. Without REDIS_URL
# everything stays in this process, which is enough for one development server.

REDIS_URL = env_str("REDIS_URL")

# CHANNEL_LAYER=core selects channels-redis's list-based layer instead of its pub/sub one
# (docs/load-and-faults.md compares them).
CHANNEL_LAYER_BACKENDS = {
    "pubsub": "shisanshui.channel_layer.BatchedPubSubChannelLayer",
    "core": "channels_redis.core.RedisChannelLayer",
}
CHANNEL_LAYER = env_str("CHANNEL_LAYER", "pubsub")
if CHANNEL_LAYER not in CHANNEL_LAYER_BACKENDS:
    raise ImproperlyConfigured(f"CHANNEL_LAYER must be one of {sorted(CHANNEL_LAYER_BACKENDS)}.")

if REDIS_URL:
    # Shared by every web process: an action id's stored reply (games.live.consumers) must be
    # found whichever process the retry reaches, and survive a web process restart.
    CACHES = {
        "default": {
            "BACKEND": "shisanshui.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "shisanshui",
        },
    }
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": CHANNEL_LAYER_BACKENDS[CHANNEL_LAYER],
            # pub/sub: commands retried on a new connection after a dead one (a Redis restart;
            # see redis_host). The core layer's groups live in Redis and a restart empties
            # them: there a socket must fail on its dead connection, so that its client
            # reconnects and joins its groups again.
            "CONFIG": {
                "hosts": [redis_host(REDIS_URL) if CHANNEL_LAYER == "pubsub" else REDIS_URL]
            },
        },
    }
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    # Sessions read from the shared cache, written through to the database: every page and
    # every socket's handshake loads its session, which was a query each (a Redis restart
    # loses only the copies; a session ended anywhere is deleted from both). Only with the
    # shared cache: a per-process cache would keep a session another process has ended.
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CELERY_BROKER_URL = "memory://"
    CELERY_RESULT_BACKEND = "cache+memory://"

# Celery

CELERY_TIMEZONE = TIME_ZONE
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_RESULT_EXPIRES = 60 * 60 * 24
CELERY_TASK_TIME_LIMIT = 5 * 60
CELERY_TASK_SOFT_TIME_LIMIT = 60
# A task is acknowledged after it has run, so a worker that dies mid-task leaves it queued;
# tasks must therefore be safe to run twice (a timer only asks, the game decides).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Workers and beat log through Django's LOGGING (below), so LOG_FORMAT=json covers them too.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# The sweeper asks again for any table deadline whose timeout task was lost.
CELERY_BEAT_SCHEDULE = {
    "sweep-table-deadlines": {"task": "games.tasks.sweep_deadlines", "schedule": 5.0},
    # Closes rooms nobody has sat in for LOBBY_IDLE_ROOM_SECONDS.
    "close-idle-rooms": {"task": "lobby.tasks.close_idle_rooms", "schedule": 30.0},
    # Standings and statistics (games.history.standings), computed here, never on request.
    "compute-standings": {
        "task": "games.tasks.compute_standings",
        "schedule": float(env_int("STANDINGS_SECONDS", 300)),
    },
    # The skill rating (games.history.rating): rounds whose update on settlement was lost.
    "rate-rounds": {
        "task": "games.tasks.ratings_catch_up",
        "schedule": float(env_int("RATING_CATCH_UP_SECONDS", 60)),
    },
    # The collusion report (games.history.collusion): pairs of players moving coins one way.
    "scan-collusion": {"task": "accounts.tasks.collusion_scan", "schedule": 3600.0},
    # Idle guests (GUEST_IDLE_DAYS) removed, their coins back in the mint (accounts.tasks).
    "remove-idle-guests": {"task": "accounts.tasks.guests_idle_remove", "schedule": 3600.0},
}

# Rate limits of the sockets and the lobby (shisanshui.ratelimit, on the `limits` library):
# named budgets, each one or more `limits` rates ("10/second;120/minute": all must hold),
# counted in Redis when REDIS_URL is set (every web process shares them), in memory
# otherwise. The environment variable RATE_LIMITS, a JSON object, replaces single entries:
# RATE_LIMITS='{"table.cooldown": "1/5seconds"}'.
RATE_LIMITS = {
    # Frames of one user on all its lobby sockets, pings included: over it, `rate_limited`.
    "lobby.message": "10/second;120/minute",
    # Lobby frames refused as over budget: past this, the socket is closed with 4429.
    "lobby.flood": "20/minute",
    # Lobby socket connections per user: over it, an error frame and close 4429.
    "lobby.connect": "20/minute",
    # Wrong private-room codes per user (socket, form and API alike); past this every code,
    # even the right one, is refused with `rate_limited` until the window frees.
    "lobby.join_code_failure": "5/minute;20/hour",
    # Rooms opened per user (creating one; quick-join when it opens a room).
    "lobby.room_create": "5/minute;30/hour",
    # A duplicate match's results page per user (games.views.match; its API has the DRF
    # scope "match_results").
    "games.match_page": "30/minute;600/hour",
    # The standings and player statistics pages per user (they read what the beat computed).
    "games.stats_page": "60/minute;1200/hour",
    # A series' scoreboard (page or image) per user, or per address for a visitor with the link.
    "games.series_page": "30/minute;600/hour",
    # Invite links (lobby.invite_views): pages and seatings per client address, guesses of a
    # token included, ...
    "lobby.invite_address": "30/minute;300/hour",
    # ... seatings through a link per user, ...
    "lobby.invite_user": "10/minute;60/hour",
    # ... and new links an owner makes (each regenerating revokes the last one).
    "lobby.invite_regenerate": "5/minute;30/hour",
    # Guests created per client address (the front page's Play now for a visitor); the
    # sign-ups-per-address quota and the guest mint ceiling hold beyond it.
    "accounts.guest_create": "3/minute;10/hour",
    # Play now's seatings per user (a player already seated is sent back, not counted).
    "lobby.quick_play": "10/minute;60/hour",
    # Asking whether a Play now wait has found a table (the waiting page asks about once a
    # second for PLAY_NOW_WAIT_SECONDS), and leaving the wait.
    "lobby.play_wait": "3/second;60/minute;600/hour",
    "lobby.play_cancel": "10/minute;60/hour",
    # Frames of one user on all its table sockets: over it, the socket is closed with 4429
    # and the cool-down below starts.
    "table.message": "20/second;600/minute",
    # Chat messages per user (all its tables): over it, `rate_limited` (nothing is sent).
    "table.chat": "3/5seconds;20/minute",
    # Drafts saved per user: over it, `rate_limited` (the draft is not saved).
    "table.draft": "2/second;60/minute",
    # Suggestions asked for the 13 cards kept with spare cards (`suggest`, each an engine
    # search): over it, `rate_limited`.
    "table.suggest": "2/second;20/minute",
    # Table socket connections per user and table: over it, an error frame and close 4429.
    "table.connect": "10/minute",
    # After a 4429 close, the user's table sockets are refused for this long.
    "table.cooldown": "1/30seconds",
    # Configurations an admin creates from a rule preset (each POST counts).
    "admin.rule_preset": "10/minute;100/hour",
    # Drafts an admin makes ("Save as new") and publish attempts (each POST counts).
    "admin.rule_draft": "10/minute;100/hour",
    # Polls of a rule configuration's statistics progress (the change page asks every 2 s).
    "admin.rule_stats_progress": "60/minute;1200/hour",
    # "Scan now" of the collusion report, per staff member.
    "admin.collusion_scan": "1/minute;20/hour",
    # Freezes and unfreezes of a player's transfers, per staff member.
    "admin.transfer_freeze": "10/minute;100/hour",
    # Comparisons of two rule configurations an admin opens (each page counts).
    "admin.rule_compare": "60/minute;600/hour",
    # Moves of rooms to another rule configuration (each applied action counts).
    "admin.room_move": "10/minute;100/hour",
    # Password reset links a staff member sends from the user admin (each link counts).
    "admin.password_reset": "10/minute;50/hour",
    # Requests to a password reset link's pages per client address (both steps count).
    "accounts.password_reset": "20/minute;100/hour",
    # "Forgot your password?" requests per client address (each POST counts) ...
    "accounts.password_reset_request": "5/minute;20/hour",
    # ... and links e-mailed to one address, however many clients ask (past it: none sent).
    "accounts.password_reset_mailbox": "3/hour;10/day",
}
RATE_LIMITS.update(json.loads(env_str("RATE_LIMITS") or "{}"))
# Keys of the counters in Redis start with this (tests give each test its own).
RATE_LIMIT_KEY_PREFIX = env_str("RATE_LIMIT_KEY_PREFIX", "ratelimit")

# The lobby: open rooms one owner may have (creating and quick-join refuse more with
# `too_many_rooms`), seconds a room may stay empty before the beat task above closes it, and
# rooms per page of the lobby's list (page and socket snapshot).
LOBBY_MAX_OPEN_ROOMS = env_int("LOBBY_MAX_OPEN_ROOMS", 3)
# The standings list players with at least this many rounds in the period (games.history.standings).
# The rounds a player's skill rating must come from to be listed in the standings by rating.
RATING_MIN_ROUNDS = env_int("RATING_MIN_ROUNDS", 20)
STANDINGS_MIN_ROUNDS = {
    "week": env_int("STANDINGS_MIN_ROUNDS_WEEK", 5),
    "all": env_int("STANDINGS_MIN_ROUNDS_ALL", 20),
}
LOBBY_IDLE_ROOM_SECONDS = env_int("LOBBY_IDLE_ROOM_SECONDS", 300)
LOBBY_PAGE_SIZE = env_int("LOBBY_PAGE_SIZE", 50)
# Play now waits this many seconds for people of a similar rating before it seats the player
# with bots (lobby.waiting); 0 seats with bots at once.
PLAY_NOW_WAIT_SECONDS = env_int("PLAY_NOW_WAIT_SECONDS", 4)
if PLAY_NOW_WAIT_SECONDS < 0:
    raise ImproperlyConfigured("PLAY_NOW_WAIT_SECONDS must not be negative.")
if LOBBY_MAX_OPEN_ROOMS < 1 or LOBBY_IDLE_ROOM_SECONDS < 1 or LOBBY_PAGE_SIZE < 1:
    raise ImproperlyConfigured(
        "LOBBY_MAX_OPEN_ROOMS, LOBBY_IDLE_ROOM_SECONDS and LOBBY_PAGE_SIZE must be positive."
    )

# Django REST framework and the OpenAPI schema

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 20,
    # Every endpoint is throttled per user (per client address when anonymous), counted in the
    # default cache: Redis in production, shared by every web process. A refusal is a 429
    # {"error": {"code": "rate_limited", "message", "retry_after"}} with Retry-After
    # (shisanshui.api). Scoped rates (ScopedRateThrottle + throttle_scope) add their own.
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env_str("API_ANON_RATE", "60/min"),
        "user": env_str("API_USER_RATE", "600/min"),
        # POST /api/auth/token/ per client address, beside the log-in lockout.
        "auth_token": env_str("API_TOKEN_RATE", "10/min"),
        # POSTs to the web and admin log-in forms per client address
        # (shisanshui.middleware.LoginThrottleMiddleware), beside the log-in lockout.
        "login": env_str("LOGIN_RATE", "20/min"),
        # Claims of the daily bonus and of relief per user (the API and the profile page's
        # buttons share each budget); the economy settings decide what may be claimed.
        "wallet_daily_bonus": env_str("WALLET_DAILY_BONUS_RATE", "10/min"),
        "wallet_relief": env_str("WALLET_RELIEF_RATE", "10/min"),
        # The profile's table settings form, per user.
        "profile_settings": env_str("PROFILE_SETTINGS_RATE", "30/min"),
        # Reviews of one's own hand (games.apis): each runs the arrangement model twice.
        "round_review": env_str("ROUND_REVIEW_RATE", "30/min"),
        # A duplicate match's results (games.apis): every settled deal of every table.
        "match_results": env_str("MATCH_RESULTS_RATE", "30/min"),
        # A series' scoreboard (games.apis), read by anyone with its link.
        "series_scoreboard": env_str("SERIES_SCOREBOARD_RATE", "30/min"),
        # Standings and player statistics (games.apis), read from what the beat computed.
        "standings": env_str("STANDINGS_RATE", "60/min"),
    },
    # The client's address is REMOTE_ADDR (set from X-Forwarded-For by daphne --proxy-headers
    # behind the load balancer); a client's own X-Forwarded-For is never trusted.
    "NUM_PROXIES": 0,
    "EXCEPTION_HANDLER": "shisanshui.api.api_exception_handler",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Shisanshui API",
    "DESCRIPTION": "The HTTP API of the Shisanshui (十三水) platform.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI's files come from drf-spectacular-sidecar, served as static files: no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Content-Security-Policy (django-csp): only this site's own files; no inline script or style
# except an element carrying the request's nonce (CSP_NONCE in templates); WebSockets to this
# host ('self' covers ws:/wss: of the page's own host in current browsers); never framed.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, NONCE],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

# WebSockets: the exact origins (scheme://host[:port]) whose pages may open them; any other
# origin, and a connection without one, is refused (shisanshui.origins). Each settings layer
# gives the default: production its CSRF_TRUSTED_ORIGINS, local the loopback hosts on port
# 8000 (`make run` passes its own HOST and PORT), test http://testserver.
WEBSOCKET_ALLOWED_ORIGINS = env_list("WEBSOCKET_ALLOWED_ORIGINS")

# Logging: everything to the console, one line per record; the process manager collects it.
# LOG_FORMAT=json writes one JSON object per line (time, level, logger, message, the request
# id and user, and whatever the code passes as `extra=`); production settings default to it.

LOG_FORMAT = env_str("LOG_FORMAT", "plain")
LOG_LEVEL = env_str("LOG_LEVEL", "INFO").upper()
LOGGING = build_logging(log_format=LOG_FORMAT, level=LOG_LEVEL)
# One log record per request from RequestIdMiddleware (method, path, status, duration_ms);
# off by default in development, where daphne's access log already shows each request.
LOG_REQUESTS = env_bool("LOG_REQUESTS", default=LOG_FORMAT == "json")
