"""Start the Streamlit dashboard on a database (`gpu-finops dashboard --db P`).

The server runs `server_app.py`: the Streamlit app behind `dashboards.guard.HostGuard`, which
serves only requests whose Host and Origin name the address it binds (loopback by default;
``--allow-host`` adds names for deliberate exposure). The SQL limits (`SqlLimits`) and the
guard's settings reach the server process through its environment.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

from dashboards import data
from dashboards.data import SqlLimits
from dashboards.errors import DashboardError
from dashboards.guard import ALLOWED_HOSTS_ENV, AllowedHosts

LAUNCH_DIR_ENV = "GPU_FINOPS_LAUNCH_DIR"
APP = Path(__file__).resolve().parent / "server_app.py"  # streamlit_app.py behind the guard
_REPO_ROOT = APP.parent.parent


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost: addresses other machines cannot reach."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def warn_if_exposed(host: str) -> bool:
    """Warn on stderr when ``host`` is reachable from other machines; True when it warned."""
    if is_loopback(host):
        return False
    print(
        f"warning: serving on {host}: anyone who can reach this address can read the cost "
        "data (the dashboard has no login)",
        file=sys.stderr,
    )
    return True


def refuse_a_busy_port(host: str, port: int) -> None:
    """DashboardError when ``host:port`` cannot be bound (another server holds it): Streamlit
    would otherwise print the other server's URL and the command would exit 0. Only a port
    another server holds is refused here: an address this machine cannot bind or resolve (a
    name, another host's IP) is Streamlit's to report, as before."""
    host = host.strip("[]")  # "[::1]", as URLs write it
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # as a server binds (a port in TIME_WAIT is free to it), but not one another listens on
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise DashboardError(f"port {port} on {host} is in use (another dashboard?): "
                                     "stop it or pick another with --port") from None


def streamlit_command(db: Path, port: int, host: str) -> list[str]:
    """The command line that serves the app (options as flags: they win over any config file)."""
    return [
        sys.executable, "-m", "streamlit", "run", str(APP),
        "--server.address", host,
        "--server.port", str(port),
        "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
        "--server.runOnSave", "false",
        "--", "--db", str(db),
    ]


def serve(
    db: Path,
    port: int = 8501,
    host: str = "127.0.0.1",
    block: bool = True,
    allowed_hosts: tuple[str, ...] = (),
    limits: SqlLimits | None = None,
    budgets: Path | None = None,
    cost_centre_label: str | None = None,
) -> subprocess.Popen | None:
    """Serve the dashboard on ``host:port`` over ``db``.

    ``allowed_hosts``: further names browsers may reach it by (see `dashboards.guard`);
    ``limits``: memory, temp space and timeout of its queries (default: the environment's);
    ``budgets``: a budgets file for the Budgets page (`dashboards.budgets`), ``cost_centre_label``
    the pod label of its cost centres (default: cost-center, else cost_center).
    With ``block`` (the CLI), wait until the server exits (Ctrl-C stops it) and return None;
    otherwise return the running process: the caller must terminate it.
    """
    db = data.require_db(db).resolve()
    if not 0 < int(port) < 65536:
        raise DashboardError(f"invalid port {port}: use 1-65535")
    refuse_a_busy_port(host, int(port))
    warn_if_exposed(host)
    allowed = AllowedHosts.for_address(host, allowed_hosts)
    if allowed.anything:
        print("warning: --allow-host '*': requests naming any Host or Origin are served "
              "(no protection against DNS rebinding)", file=sys.stderr)
    env = dict(os.environ)
    env[data.DB_ENV_VAR] = str(db)
    env[LAUNCH_DIR_ENV] = os.getcwd()  # the sidebar names the database relative to it
    env[ALLOWED_HOSTS_ENV] = allowed.to_json()
    if budgets is not None:
        from dashboards.budgets import BUDGETS_ENV_VAR, read_budgets

        read_budgets(Path(budgets))  # a bad file fails here, with its row and field
        env[BUDGETS_ENV_VAR] = str(Path(budgets).resolve())
    if cost_centre_label is not None:
        from dashboards.budgets import COST_CENTRE_LABEL_ENV_VAR

        if budgets is None:
            raise DashboardError("--cost-centre-label needs --budgets (it names the budgets' cost centres)")
        env[COST_CENTRE_LABEL_ENV_VAR] = cost_centre_label
    env.update((limits or SqlLimits.from_env()).environment())
    # The app imports `dashboards.*`; make the repository importable even when not installed.
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(_REPO_ROOT), env.get("PYTHONPATH", "")) if p
    )
    shown_host = f"[{host}]" if ":" in host else host
    print(f"gpu-finops dashboard: http://{shown_host}:{port}/  (database {db})", flush=True)
    process = subprocess.Popen(streamlit_command(db, port, host), env=env, cwd=str(APP.parent))
    if not block:
        return process
    # A SIGTERM (a service manager, a test stopping `gpu-finops dashboard`) would end this
    # process and leave the Streamlit server running on its own: stop it as Ctrl-C does.
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        process.wait()
    except KeyboardInterrupt:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return None


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
