"""Which tests run on one pytest-xdist worker (`make test` runs the suite on two workers).

A fixture wider than one test (a session's demo database, a module's replay, a Ray cluster) is
built once per worker that needs it. Tests that share such a fixture, directly or through the
fixtures they use, form one group, run by one worker, so that each is built once, as in a run
without workers. The groups follow from the fixtures each test asks for: a new test that uses
the demo database joins the demo's group without being listed anywhere.

A test that shares one fixture with a group and another with a second group joins the two
groups (connected components), since a test runs on one worker only. Only the suite's own
fixtures count (a conftest's or a test module's): pytest's and its plugins' session fixtures
(``tmp_path_factory``) are cheap and shared by nearly every test. An explicit
``xdist_group`` mark joins its tests too, as under pytest-xdist's ``--dist loadgroup``.

How the groups reach the scheduler: pytest-xdist's own ``--dist loadgroup`` appends the group
to each test's node id, which pytest 9.2 no longer lets it do (pytest-xdist issue 1386: the
marks are silently ignored). So each worker writes the groups it computed from its collection
to a file named by the run's id, and the scheduler (``pytest_xdist_make_scheduler``, pytest-
xdist's hook for one) reads it once every worker has collected, which is before it hands out
the first test. Groups go out whole, largest first; the tests in no group go one by one.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import tempfile
import uuid
from collections.abc import Iterable
from pathlib import Path

import pytest

WIDER_THAN_ONE_TEST = ("class", "module", "package", "session")


def _shared_fixtures(item: pytest.Item) -> list[str]:
    """The suite's fixtures wider than a test that ``item`` uses, each named by its instance:
    a session or package fixture by where it is defined, a module or class fixture also by the
    module or class it is built for; and its ``xdist_group`` marks."""
    shared = [f"mark::{mark.args[0] if mark.args else mark.kwargs.get('name', 'default')}::"
              for mark in item.iter_markers("xdist_group")]
    info = getattr(item, "_fixtureinfo", None)
    if info is None:  # not a test function (a doctest, a plugin's item)
        return shared
    for name in info.names_closure:
        definitions = info.name2fixturedefs.get(name)
        if not definitions:
            continue
        fixture = definitions[-1]  # the one this test sees (a closer definition overrides)
        if fixture.scope not in WIDER_THAN_ONE_TEST or not _is_the_suites(fixture, item.config.rootpath):
            continue
        module = item.module.__name__ if getattr(item, "module", None) else ""
        cls = getattr(item, "cls", None)
        instance = {"session": "", "package": "", "module": module,
                    "class": f"{module}.{cls.__qualname__}" if cls else ""}[fixture.scope]
        shared.append(f"{fixture.baseid}::{name}::{instance}")
    return shared


def _is_the_suites(fixture: pytest.FixtureDef, rootpath: Path) -> bool:
    """Defined in a conftest or a test module of the project, not by pytest or a plugin
    installed in the environment (which may be a folder of the project: .venv)."""
    try:
        source = Path(inspect.getsourcefile(fixture.func) or "")
    except TypeError:  # a fixture made by a plugin from a built-in
        return False
    source = source.resolve()
    return (source.is_absolute() and source.is_relative_to(rootpath.resolve())
            and not source.is_relative_to(Path(sys.prefix).resolve()))


class _Components:
    """Union-find over fixture keys: two fixtures used by one test are in one component."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, key: str) -> str:
        self.parent.setdefault(key, key)
        root = key
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[key] != root:  # path compression
            self.parent[key], key = root, self.parent[key]
        return root

    def join(self, keys: Iterable[str]) -> None:
        roots = sorted({self.find(key) for key in keys})
        for root in roots[1:]:
            self.parent[root] = roots[0]  # the smallest key stays the root: a stable group name


def _group_name(key: str) -> str:
    """A group's name as the log shows it: the fixture, then where (or the mark's name)."""
    where, name, instance = key.split("::")
    return name if where == "mark" else f"{name}({instance or where})"


def worker_groups(items: Iterable[pytest.Item]) -> dict[str, str]:
    """Test node id -> its group's name, for the tests that share a fixture with another."""
    components = _Components()
    uses = {}
    for item in items:
        shared = _shared_fixtures(item)
        if shared:
            components.join(shared)
            uses[item.nodeid] = shared[0]
    return {nodeid: _group_name(components.find(key)) for nodeid, key in uses.items()}


def _groups_file(run_id: str) -> Path:
    return Path(tempfile.gettempdir()) / f"pytest-worker-groups-{run_id}.json"


class WorkerGroups:
    """The plugin, registered under pytest-xdist (tests/conftest.py), in the controller and in
    each worker."""

    @pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own scheduler
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log):
        if config.getvalue("dist") != "loadgroup":
            return None
        from xdist.scheduler import LoadScopeScheduling

        class FixtureGroupScheduling(LoadScopeScheduling):
            """pytest-xdist's scheduling by scope, where a test's scope is its group."""

            groups: dict[str, str] | None = None

            def schedule(self) -> None:
                if self.groups is None and self.collection_is_completed:
                    groups_file = _groups_file(config.option.testrunuid)
                    self.groups = json.loads(groups_file.read_text(encoding="utf-8"))
                super().schedule()

            def _split_scope(self, nodeid: str) -> str:
                return (self.groups or {}).get(nodeid, nodeid)

        return FixtureGroupScheduling(config, log)

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        if not hasattr(config, "workerinput") and config.option.testrunuid is None:
            config.option.testrunuid = uuid.uuid4().hex  # the controller names the run for its workers

    @pytest.hookimpl(trylast=True)  # once the items are final (deselected ones gone)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        worker = getattr(config, "workerinput", None)
        if worker is None:
            return
        groups_file = _groups_file(worker["testrunuid"])
        written = groups_file.with_suffix(f".{worker['workerid']}.tmp")
        written.write_text(json.dumps(worker_groups(items)), encoding="utf-8")
        os.replace(written, groups_file)  # whole: the workers write the same groups

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if not hasattr(config, "workerinput") and config.option.testrunuid:
            _groups_file(config.option.testrunuid).unlink(missing_ok=True)
