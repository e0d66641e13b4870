"""User-facing errors of the dashboard, report and SQL surfaces."""


class DashboardError(Exception):
    """A mistake the user can fix (missing database, refused query, bad path).

    The message is one line and is shown as is, without a traceback.
    """
