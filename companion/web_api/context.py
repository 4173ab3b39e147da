"""What every blueprint shares: the app's store, replay cache, event stream and settings.

Made once by `create_app` and kept in ``app.extensions["companion"]``; the routes reach it
through these accessors (as Flask's tutorial reaches its database through ``get_db``).
"""

from __future__ import annotations

from flask import current_app

from companion.store import Store
from companion.web_api.broadcast import Broadcaster
from companion.web_api.games import ReplayCache
from companion.web_api.photos import PhotoReader
from companion.web_api.settings import ServerSettings
from companion.web_api.throttle import JoinThrottle


def store() -> Store:
    return current_app.extensions["companion"]["store"]


def events() -> Broadcaster:
    return current_app.extensions["companion"]["events"]


def cache() -> ReplayCache:
    return current_app.extensions["companion"]["cache"]


def photos() -> PhotoReader:
    return current_app.extensions["companion"]["photos"]


def settings() -> ServerSettings:
    return current_app.extensions["companion"]["settings"]


def join_throttle() -> JoinThrottle:
    return current_app.extensions["companion"]["join_throttle"]
