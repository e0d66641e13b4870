"""What `gpu-finops dashboard` serves: the Streamlit app behind the Host/Origin guard.

`streamlit run dashboards/server_app.py` finds ``app`` below (an ``st.App``, Streamlit's ASGI
application) and serves it; `dashboards.guard.HostGuard` wraps every route, so a request
whose Host or Origin is not the dashboard's own is refused before Streamlit sees it. The
pages themselves are `streamlit_app.py`, unchanged; the guard's settings come from the
environment that `dashboards.serve` sets.
"""

from __future__ import annotations

import sys
from pathlib import Path

# `streamlit run` puts this file's folder on sys.path, not the repository root.
_REPO_ROOT = Path(__file__).resolve().parent.parent
if str(_REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(_REPO_ROOT))

from starlette.middleware import Middleware  # noqa: E402
from streamlit.starlette import App  # noqa: E402

from dashboards.guard import AllowedHosts, HostGuard  # noqa: E402

app = App("streamlit_app.py", middleware=[Middleware(HostGuard, allowed=AllowedHosts.from_env())])
