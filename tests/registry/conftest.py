"""Fixtures: the registry on SQLite (always) and on a real PostgreSQL (127.0.0.1:5432, db `test`).

Each PostgreSQL test gets its own schema, dropped afterwards. When no server is reachable the
PostgreSQL variants are skipped and the reason says so.
"""

from __future__ import annotations

import os
import uuid
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from controller.registry.draw import TableSpec
from controller.registry.keys import VenueKeys, create_key_file, load_keys
from controller.registry.registry import Registry

PG_URL = os.environ.get("SMART_TABLE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
NOW = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)


def _pg_admin():
    import psycopg

    try:
        return psycopg.connect(PG_URL, autocommit=True, connect_timeout=3)
    except psycopg.Error as exc:
        pytest.skip(f"PostgreSQL not reachable at {PG_URL}: {str(exc).strip().splitlines()[0]}")


@pytest.fixture
def pg_url():
    admin = _pg_admin()
    schema = f"registry_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield f"{PG_URL}?options=-csearch_path%3D{schema}"
    finally:
        admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
        admin.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'registry.sqlite3'}"
    else:
        yield request.getfixturevalue("pg_url")


@pytest.fixture
def registry(db_url):
    reg = Registry.open(db_url)
    yield reg
    reg.close()


@pytest.fixture
def keys_path(tmp_path) -> Path:
    path = tmp_path / "venue-keys.toml"
    create_key_file(path, "cool_mule", "k1")
    return path


@pytest.fixture
def keys(keys_path) -> VenueKeys:
    return load_keys(keys_path)


def add_member(reg: Registry, pid: str, name: str, born: date = date(1990, 5, 1), **kw):
    kw.setdefault("photo_id_checked", True)
    return reg.add_member(pid, name, born, now=NOW, **kw)


def open_event(reg: Registry, event_id="E1", profile="cool_mule", tables=(("T1", 6), ("T2", 6)), **kw):
    return reg.open_event(
        event_id,
        "Sunday league",
        venue="cool_mule",
        profile=profile,
        starts_at=NOW,
        tables=[TableSpec(t, s) for t, s in tables],
        now=NOW,
        **kw,
    )
