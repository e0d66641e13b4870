"""`gpu-finops import prometheus --url`: the documented kube-state-metrics and DCGM range queries
run against a live Prometheus, answered in the form the file importer reads.

Each query is the metric's name (`QUERIES`: the series `gpu_finops.importers.prometheus` reads),
run as ``GET /api/v1/query_range`` over ``--start``..``--end`` at ``--step``. Prometheus refuses a
range query of more than 11,000 steps per series (``end - start > 11,000 × step``: "exceeded
maximum resolution"), so the range is split into pages of at most `MAX_POINTS` evaluation
times on the same grid (``start + k × step``, in whole milliseconds as Prometheus keeps time),
and the pages' series are joined back into one answer per query, sorted by their labels as
Prometheus sorts one answer. A page the server refuses for loading too many samples
(``--query.max-samples``) is split in two until it fits.

HTTP goes through `requests` with urllib3's `Retry`: connection errors, timeouts and 5xx
answers are retried with exponential backoff (honouring ``Retry-After``); a 4xx answer stops
the import with one line naming the server (without credentials) and the query, and Prometheus'
own ``error`` text; a token is never printed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from gpu_finops.importers.dcgm import DCGM_METRICS
from scheduler.errors import InputError

POD_QUERIES = (
    "kube_pod_created", "kube_pod_start_time", "kube_pod_completion_time", "kube_pod_container_resource_requests",
    "kube_pod_labels", "kube_pod_annotations", "kube_pod_owner", "kube_pod_info", "kube_pod_status_phase",
    "kube_pod_container_status_restarts_total",
)
NODE_QUERIES = ("kube_node_status_allocatable", "kube_node_status_capacity", "kube_node_labels")
QUERIES = (*POD_QUERIES, *NODE_QUERIES, *DCGM_METRICS)
MAX_POINTS = 11_000
"""Evaluation times per page: Prometheus answers at most 11,001 per series (web/api/v1)."""
LATEST_S = datetime(2200, 1, 1, tzinfo=UTC).timestamp()  # the importers' calendar ends with 2199
RETRIES = 5
BACKOFF_S = 0.5  # 0, 1, 2, 4, 8 s before the retries (urllib3's exponential backoff), or Retry-After
TIMEOUT_S = (10.0, 120.0)  # connect, read: a range query over weeks of a large cluster takes a while
RETRIED_STATUSES = (500, 502, 503, 504)
_DURATION = re.compile(r"(\d+)(ms|s|m|h|d|w|y)")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000,
            "y": 31_536_000_000}


class PrometheusError(InputError):
    """A live query that cannot be answered: one line naming the server and the query."""

    def __init__(self, server: str, query: str | None, message: str) -> None:
        self.server, self.query = server, query
        super().__init__(server, message)

    def __str__(self) -> str:
        where = f"{self.server}: query {self.query}" if self.query else self.server
        return f"{where}: {self.message}"

    def __reduce__(self):
        return (PrometheusError, (self.server, self.query, self.message))


@dataclass(frozen=True, slots=True)
class LiveRange:
    """What to ask a live Prometheus: its URL, the range and step (milliseconds), the TLS and
    token settings."""

    url: str
    start_ms: int
    end_ms: int
    step_ms: int
    bearer_token_file: Path | None = None
    ca_file: Path | None = None
    insecure: bool = False
    max_points: int = MAX_POINTS
    timeout_s: tuple[float, float] = TIMEOUT_S
    retries: int = RETRIES
    backoff_s: float = BACKOFF_S

    @property
    def shown_url(self) -> str:
        """The URL without user and password, for messages and import.json."""
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        netloc += f":{parts.port}" if parts.port else ""
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))

    def pages(self) -> Iterator[tuple[int, int]]:
        """(start, end) in milliseconds of each page: the one query's grid, ``max_points``
        evaluation times at most per page."""
        last = (self.end_ms - self.start_ms) // self.step_ms
        first = 0
        while first <= last:
            final = min(first + self.max_points - 1, last)
            yield self.start_ms + first * self.step_ms, self.start_ms + final * self.step_ms
            first = final + 1


def parse_time(text: str, option: str) -> int:
    """``--start``/``--end`` in milliseconds: RFC 3339 (``2026-03-02T08:00:00Z``) or Unix seconds,
    as Prometheus takes them."""
    try:
        seconds = float(text)
    except ValueError:
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise InputError(option, f"{text!r} is not an RFC 3339 time (2026-03-02T08:00:00Z) nor Unix "
                             "seconds") from None
        if moment.tzinfo is None:
            raise InputError(option, f"{text!r} has no time zone: add Z for UTC") from None
        seconds = moment.astimezone(UTC).timestamp()
    if not 0 <= seconds < LATEST_S:  # NaN and infinities too
        raise InputError(option, f"{text!r} is not within 1970-2199")
    return round(seconds * 1000)


def parse_step(text: str) -> int:
    """``--step`` in milliseconds: seconds (``60``, ``0.5``) or a Prometheus duration (``5m``, ``1h30m``)."""
    try:
        seconds = float(text)
        milliseconds = round(seconds * 1000) if math.isfinite(seconds) and seconds < LATEST_S else 0
    except ValueError:
        matched = _DURATION.findall(text)
        if not matched or "".join(n + u for n, u in matched) != text:
            raise InputError("--step", f"{text!r} is not a duration (60, 30s, 5m, 1h)") from None
        milliseconds = sum(int(n) * _UNIT_MS[u] for n, u in matched)
    if not 1 <= milliseconds < LATEST_S * 1000:
        raise InputError("--step", f"{text!r}: the step must be at least 1 ms and less than the calendar")
    return milliseconds


def live_range(url: str, start: str | None, end: str | None, step: str, *, bearer_token_file: str | None = None,
               ca_file: str | None = None, insecure: bool = False) -> LiveRange:
    """The checked command-line settings of a live import (one line for each mistake)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError("--url", f"{url!r} is not an http(s) URL of a Prometheus server (http://prometheus:9090)")
    if start is None or end is None:
        raise InputError("--start" if start is None else "--end", "required with --url: the range to import")
    start_ms, end_ms = parse_time(start, "--start"), parse_time(end, "--end")
    if end_ms <= start_ms:
        raise InputError("--end", f"{end} is not after --start {start}")
    if ca_file and insecure:
        raise InputError("--insecure", "give --ca-file or --insecure, not both")
    for option, path in (("--bearer-token-file", bearer_token_file), ("--ca-file", ca_file)):
        if path is not None and not Path(path).is_file():
            raise InputError(path, "file not found", field=option)
    return LiveRange(url.rstrip("/"), start_ms, end_ms, parse_step(step),
                     Path(bearer_token_file) if bearer_token_file else None, Path(ca_file) if ca_file else None,
                     insecure)


def _session(live: LiveRange):
    import requests
    from requests.adapters import HTTPAdapter
    from urllib3.util.retry import Retry

    retry = Retry(total=live.retries, connect=live.retries, read=live.retries, status=live.retries,
                  backoff_factor=live.backoff_s,
                  status_forcelist=RETRIED_STATUSES, allowed_methods=frozenset({"GET"}),
                  other=0, respect_retry_after_header=True, raise_on_status=False)  # other: TLS, not retried
    session = requests.Session()
    session.mount("http://", HTTPAdapter(max_retries=retry))
    session.mount("https://", HTTPAdapter(max_retries=retry))
    session.headers["Accept"] = "application/json"
    if live.bearer_token_file is not None:
        try:
            token = live.bearer_token_file.read_text(encoding="utf-8").strip()
        except UnicodeDecodeError:
            token = "\n"
        if not token or not token.isprintable():  # never quoted: it is a secret
            raise InputError(live.bearer_token_file, "not one line of text: a token file holds the token alone",
                             field="--bearer-token-file")
        session.headers["Authorization"] = f"Bearer {token}"
    return session


def fetch_answers(live: LiveRange, queries: tuple[str, ...] = QUERIES) -> list[tuple[str, dict[str, Any]]]:
    """(query, one query_range answer) for each of ``queries``, every page joined."""
    import warnings

    import urllib3

    with warnings.catch_warnings():
        if live.insecure:  # said once by the command, not once per request
            warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
        with _session(live) as session:
            return [(query, _answer(session, live, query)) for query in queries]


def _answer(session, live: LiveRange, query: str) -> dict[str, Any]:
    pages = (_page(session, live, query, start_ms, end_ms) for start_ms, end_ms in live.pages())
    joined = _join(raw for page in pages for raw in page)
    result = [joined[labels] for labels in sorted(joined)]
    return {"status": "success", "data": {"resultType": "matrix", "result": result}}


def _join(raws) -> dict[tuple[tuple[str, str], ...], dict[str, Any]]:
    """Series of consecutive pages, by label set, their samples in page order."""
    joined: dict[tuple[tuple[str, str], ...], dict[str, Any]] = {}
    for raw in raws:
        metric = raw.get("metric") if isinstance(raw.get("metric"), Mapping) else {}
        labels = tuple(sorted((str(k), str(v)) for k, v in metric.items()))
        held = joined.setdefault(labels, {"metric": metric, "values": []})
        held["values"].extend(raw.get("values") or [])
    return joined


def _page(session, live: LiveRange, query: str, start_ms: int, end_ms: int) -> list[Mapping[str, Any]]:
    """The series of one page; a page past the server's sample limit is split in two."""
    try:
        return _get(session, live, query, start_ms, end_ms)
    except _TooManySamples:
        steps = (end_ms - start_ms) // live.step_ms
        if steps < 1:
            raise PrometheusError(live.shown_url, query, "the server refuses even one step of it as too many "
                                  "samples (--query.max-samples): raise that limit") from None
        middle = start_ms + (steps // 2) * live.step_ms
        halves = (_page(session, live, query, start_ms, middle), _page(session, live, query, middle + live.step_ms,
                                                                       end_ms))
        return list(_join(raw for half in halves for raw in half).values())


class _TooManySamples(Exception):
    pass


def _seconds(milliseconds: int) -> str:
    whole, rest = divmod(milliseconds, 1000)
    return f"{whole}.{rest:03d}" if rest else str(whole)


def _get(session, live: LiveRange, query: str, start_ms: int, end_ms: int) -> list[Mapping[str, Any]]:
    import requests

    params = {"query": query, "start": _seconds(start_ms), "end": _seconds(end_ms), "step": _seconds(live.step_ms)}
    try:
        # verify per request: a session's setting loses to REQUESTS_CA_BUNDLE (requests#3829)
        response = session.get(f"{live.url}/api/v1/query_range", params=params, timeout=live.timeout_s,
                               verify=False if live.insecure else str(live.ca_file) if live.ca_file else True)
    except requests.exceptions.SSLError as error:
        raise PrometheusError(live.shown_url, query, f"TLS failed ({_reason(error)}): give the server's CA with "
                              "--ca-file (or --insecure to skip the check)") from None
    except requests.exceptions.RetryError as error:
        raise PrometheusError(live.shown_url, query, f"no answer after {live.retries + 1} tries: {_reason(error)}") from None
    except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as error:
        raise PrometheusError(live.shown_url, query, f"no answer after {live.retries + 1} tries: {_reason(error)}") from None
    body = _json(response)
    if response.status_code in (401, 403):
        hint = "check --bearer-token-file" if live.bearer_token_file else "give a token with --bearer-token-file"
        raise PrometheusError(live.shown_url, query, f"{response.status_code} {response.reason}: the server refused "
                              f"the credentials ({hint})")
    if response.status_code == 422 and "too many samples" in str(body.get("error", "")):
        raise _TooManySamples
    if response.status_code >= 500:
        raise PrometheusError(live.shown_url, query, f"{response.status_code} {response.reason} after "
                              f"{live.retries + 1} tries: {body.get('error', '')}".rstrip(": "))
    if response.status_code != 200 or body.get("status") != "success":
        detail = body.get("error") or ("not a Prometheus API answer (is the URL the server's root?)"
                                       if not body else "")
        raise PrometheusError(live.shown_url, query, f"{response.status_code} {response.reason}: {detail}")
    data = body.get("data")
    if not isinstance(data, Mapping) or data.get("resultType") != "matrix" or not isinstance(data.get("result"), list):
        raise PrometheusError(live.shown_url, query, "the answer holds no data.result matrix")
    return [s for s in data["result"] if isinstance(s, Mapping)]


def _json(response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _reason(error: Exception) -> str:
    """The innermost cause of a requests error, in one short phrase (never the request's headers)."""
    cause: BaseException | None = error
    while cause is not None and cause.args and isinstance(cause.args[0], BaseException):
        cause = cause.args[0]
    reason = getattr(cause, "reason", None)
    text = str(reason if reason is not None else cause)
    text = re.sub(r"<urllib3\.[^>]*>:?\s*|^\w*Connection\([^)]*\):\s*", "", text)  # urllib3's object names
    return text.strip() or type(error).__name__
