"""Shared fixtures: real databases and a real browser, skipped loudly when absent."""

from __future__ import annotations

import os
import shutil
import uuid
import warnings

import pytest

DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
CHROMIUM = os.environ.get("TURINGLAB_CHROMIUM", "/usr/bin/chromium")


# The suite runs on pytest-xdist workers (`-n auto --dist loadgroup`, pyproject.toml). The tests that
# load a machine by themselves (the local model, many server processes, a Redis kill) run one after
# another on one worker, so they never compete with each other for the cores.
HEAVY_FILES = {"test_cluster_chaos.py", "test_hosts.py", "test_redis_outage.py", "test_witness_probe.py", "test_workers.py"}


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if item.get_closest_marker("localmodel") or item.path.name in HEAVY_FILES:
            item.add_marker(pytest.mark.xdist_group("heavy"))


def pytest_xdist_auto_num_workers(config) -> int:
    """`-n auto`: half the cores (the servers, browsers and databases the tests start need the rest),
    at least 2 and at most 4."""
    return max(2, min(4, (os.cpu_count() or 2) // 2))


def _loud_skip(reason: str) -> None:
    warnings.warn(reason)
    print(f"\n!!! SKIPPED: {reason}\n")
    pytest.skip(reason)


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    """A fresh SQLite database file."""
    return f"sqlite:///{tmp_path / 'turinglab.db'}"


@pytest.fixture
def postgres_url() -> str:
    """A fresh schema-isolated PostgreSQL database (a new database per test), dropped after."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    base = os.environ.get("TEST_POSTGRES_URL", DEFAULT_PG)
    try:
        admin = create_engine(base, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text("select 1"))
    except Exception as exc:  # noqa: BLE001 - any failure means: no server here
        _loud_skip(f"PostgreSQL not reachable at {base} ({type(exc).__name__}); set TEST_POSTGRES_URL")
    name = f"tl_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(text(f'create database "{name}"'))
    url = make_url(base).set(database=name).render_as_string(hide_password=False)
    yield url
    with admin.connect() as conn:
        conn.execute(
            text("select pg_terminate_backend(pid) from pg_stat_activity where datname = :n"), {"n": name}
        )
        conn.execute(text(f'drop database if exists "{name}"'))
    admin.dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request) -> str:
    """Run a test on SQLite and on PostgreSQL."""
    return request.getfixturevalue(f"{request.param}_url")


@pytest.fixture(scope="session")
def chromium_path() -> str:
    if not (os.path.exists(CHROMIUM) and shutil.which(CHROMIUM)):
        _loud_skip(f"chromium not found at {CHROMIUM}: apt-get install chromium (CI does)")
    return CHROMIUM
