"""What every blueprint shares: the app's store, replay cache, event stream, settings, photo
reader and dice-set profiles.

Made once by `create_app` as one `AppState` (kept in ``app.extensions["companion"]``); the routes
reach it through these accessors (as Flask's tutorial reaches its database through ``get_db``).
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import Flask, current_app

from companion.store import Store
from companion.table_profiles import TableProfiles
from companion.web_api.broadcast import Broadcaster
from companion.web_api.games import ReplayCache
from companion.web_api.held import HeldPhotos
from companion.web_api.photos import PhotoReader
from companion.web_api.settings import ServerSettings
from companion.web_api.throttle import JoinThrottle

EXTENSION = "companion"


@dataclass(frozen=True)
class AppState:
    settings: ServerSettings
    store: Store
    cache: ReplayCache
    events: Broadcaster
    photos: PhotoReader  # reads with the runtime's one dice reader
    profiles: TableProfiles  # learns with that same reader
    join_throttle: JoinThrottle  # wrong join codes per client (LAN mode)
    held: HeldPhotos  # live-view photos read, not yet kept


def state(app: Flask | None = None) -> AppState:
    found = (app or current_app).extensions[EXTENSION]
    assert isinstance(found, AppState)
    return found


def store() -> Store:
    return state().store


def events() -> Broadcaster:
    return state().events


def cache() -> ReplayCache:
    return state().cache


def photos() -> PhotoReader:
    return state().photos


def settings() -> ServerSettings:
    return state().settings


def profiles() -> TableProfiles:
    return state().profiles


def join_throttle() -> JoinThrottle:
    return state().join_throttle


def held() -> HeldPhotos:
    return state().held
