"""Read-only surfaces over the DuckDB marts: Streamlit dashboard, batch reports, SQL."""
