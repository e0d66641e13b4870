"""`validate_db`: the FOCUS row-level checks plus the accounting audits, on a read-only connection.

The checks adapt to the layout the database was built with (FOCUS 1.2, or 1.3 split cost
allocation). A check that finds something reports its name, the number of rows and one example.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipeline.connect import (
    connect,
    is_older_layout_error,
    older_database_line,
    older_database_problem,
)
from pipeline.errors import PipelineError
from pipeline.focus.checks import TABLE, columns_violations, generated_checks
from pipeline.registry import registry_macros
from pipeline.runner import audit_paths


@dataclass(frozen=True)
class Violation:
    check: str
    count: int
    example: str


def _first_rows(con: duckdb.DuckDBPyConnection, name: str, sql: str) -> Violation | None:
    rows = con.execute(sql).fetchall()
    if not rows:
        return None
    columns = [d[0] for d in con.description]
    return Violation(name, len(rows), repr(dict(zip(columns, rows[0], strict=True))))


def validate_db(db: Path) -> list[Violation]:
    """Every violation found in `db` (an empty list means the database passes)."""
    db = Path(db)
    if not db.is_file():
        raise PipelineError(f"{db}: database not found")
    violations: list[Violation] = []
    try:
        con = connect(db, read_only=True)
    except duckdb.Error as exc:  # not a DuckDB file, or one in use
        raise PipelineError(f"{db}: cannot open the database: {str(exc).splitlines()[0]}") from None
    try:
        older = older_database_problem(con, db)
        if older:
            raise PipelineError(older)
        tables = {row[0] for row in con.execute("select table_name from information_schema.tables").fetchall()}
        if TABLE not in tables:
            raise PipelineError(f"{db}: no table '{TABLE}' (was it built with `build`?)")
        described = con.execute(f"select column_name, column_type from (describe {TABLE})").fetchall()
        columns = dict(described)
        for name, example in columns_violations([name for name, _ in described]):
            violations.append(Violation(name, 1, example))
        missing_columns = bool(violations)  # audits that name them then fail: reported as violations
        for check in generated_checks(columns):
            try:
                found = _first_rows(con, check.name, check.sql)
            except (duckdb.BinderException, duckdb.ConversionException) as exc:
                # a missing column is reported above; a value that cannot be parsed is a violation
                found = Violation(check.name, 1, str(exc).splitlines()[0])
            if found:
                violations.append(found)
        con.execute(registry_macros())  # the audits read the registry (temporary macros)
        for path in audit_paths():
            try:
                found = _first_rows(con, f"audit:{path.stem}", path.read_text())
            except (duckdb.CatalogException, duckdb.BinderException) as exc:
                if not missing_columns and is_older_layout_error(exc):
                    # the FOCUS table is whole but an audit names a mart or column the database
                    # lacks: not a failed audit, a database an older version built
                    raise PipelineError(older_database_line(db)) from None
                found = Violation(f"audit:{path.stem}", 1, str(exc).splitlines()[0])
            except duckdb.Error as exc:
                found = Violation(f"audit:{path.stem}", 1, str(exc).splitlines()[0])
            if found:
                violations.append(found)
    finally:
        con.close()
    return violations
