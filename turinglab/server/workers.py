"""`turinglab serve --redis URL [--workers N]`: N worker processes on one port, each one worker
of the cluster (live/cluster.py). Here, not in the cluster module: this builds the app, and the
app builds the cluster's hub."""

from __future__ import annotations

import json
from typing import Any

from turinglab.server.live.cluster_redis import check_cluster_db

SERVE_ENV = "TURINGLAB_CLUSTER_SERVE"  # the settings of `turinglab serve --workers N` for each worker process


def serve_cluster(study: str | None, db: str | None, redis_url: str | None, workers: int, host: str, port: int,
                  warm_up: bool, fail: Any) -> None:
    """`turinglab serve --redis URL [--workers N]`: N worker processes on one port (the kernel
    spreads connections), each one worker of the cluster."""
    import os

    import uvicorn

    from turinglab.store.db import database_url

    if workers < 1:
        fail(f"--workers must be 1 or more, got {workers}")
    url = database_url(db)
    try:
        check_cluster_db(url)
    except ValueError as exc:
        fail(str(exc))
    if not redis_url:
        fail(f"--workers {workers} needs --redis redis://HOST:6379/0 (the workers share the waiting room "
             "and the games through Redis); see docs/deploy.md")
    try:
        import redis

        redis.Redis.from_url(redis_url).ping()
    except Exception as exc:  # noqa: BLE001 - any failure: Redis is not there
        fail(f"--redis {redis_url}: Redis does not answer ({type(exc).__name__}: {exc}); start redis-server "
             "or fix the URL")
    os.environ[SERVE_ENV] = json.dumps({"study": study, "db": url, "redis": redis_url, "warm_up": warm_up})
    try:  # build once here: a bad study, witness or database fails now, in one line, and migrations run once
        build_app()
    except Exception as exc:  # noqa: BLE001 - StudyFileError, StoreError, WitnessSetupError
        fail(" ".join(str(exc).split()) or type(exc).__name__)
    print(f"turinglab: {workers} worker(s) on http://{host}:{port}/ sharing {redis_url}", flush=True)
    from turinglab.server.slowclients import PROTOCOL_PATH
    from turinglab.server.testing import WS_MAX_BYTES

    from turinglab.server.proxies import proxy_settings

    # an import string, not the class: the spawned worker processes import it themselves
    uvicorn.run("turinglab.server.workers:app_from_env", factory=True, workers=workers, host=host, port=port,
                log_level="info", ws_max_size=WS_MAX_BYTES, http=PROTOCOL_PATH, **proxy_settings())


def app_from_env():  # noqa: ANN201 - WorkerApp
    """What uvicorn runs in one worker process: the study's app once it can be built (a database or
    Redis away at start: not ready meanwhile, retried; turinglab/server/worker_start.py)."""
    from turinglab.server.live.cluster_outage import hold_for_test
    from turinglab.server.worker_start import WorkerApp

    return WorkerApp(build_app, before=hold_for_test)


def build_app():  # noqa: ANN201 - FastAPI
    """The study's app of one worker, from the settings `serve_cluster` put in the environment."""
    import os

    from turinglab.server.app import create_app
    from turinglab.server.defaults import default_study
    from turinglab.server.tuning import tune_gc

    cfg = json.loads(os.environ[SERVE_ENV])
    if cfg["study"]:
        from turinglab.game.study_file import load_study

        chosen = load_study(cfg["study"])
    else:
        chosen = default_study()
    tune_gc()
    return create_app(chosen, cfg["db"], warm_up=cfg["warm_up"], redis_url=cfg["redis"],
                      redis_prefix=os.environ.get("TURINGLAB_REDIS_PREFIX") or None)
