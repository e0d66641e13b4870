"""Column headers as a person reads them: a GPU-hour word is replaced whole, never inside another."""

from __future__ import annotations

import pytest

from dashboards.labels import header
from dashboards.ui import signed_usd


@pytest.mark.parametrize(("column", "shown"), [
    ("gpu_hour_share", "GPU-hour share"),  # was "GPU-hoursour share"
    ("today_gpu_hour_share", "Today GPU-hour share"),
    ("idle_quota_gpu_hours", "Idle quota GPU-hours"),
    ("gpu_hours_productive", "GPU-hours productive"),
    ("idle_gpu_h", "Idle GPU-hours"),
])
def test_gpu_hour_words(column, shown):
    assert header(column) == shown


def test_a_fall_in_money_reads_as_a_fall():
    assert signed_usd(-10_921.54) == "-$10.9k"  # st.metric points the arrow by the first character
    assert signed_usd(2_500_000) == "+$2.5M"
