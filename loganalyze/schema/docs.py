"""docs/schema.md's column tables, generated from the schema's own ``COMMENT`` statements.

Every table, view and column that ``loganalyze/schema/NN_family.sql`` creates carries a
``COMMENT ON`` statement in ``loganalyze/schema/comments/NN_family.sql`` (a schema file may also
hold its own).  The comments are kept apart because the store runs the schema files at every
writable open, and some 600 ``COMMENT`` statements would cost 0.15 s of CPU there (seconds on a
file database, one commit each); :func:`comments_sql` gives them to whoever wants them in a
database.  A column comment that is exactly ``see <relation>.<column>`` means "the same as that
column" (views passing a table's column through); the page shows the text it points at.  The page keeps its hand-written prose; only what lies between the markers
``<!-- schema:begin NN_name.sql -->`` and ``<!-- schema:end NN_name.sql -->`` is generated,
one such block per schema file.

    python -m loganalyze.schema.docs          # rewrite docs/schema.md
    python -m loganalyze.schema.docs --check  # exit 1 when docs/schema.md is out of date
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import duckdb

#: the command that rewrites the generated part of docs/schema.md
REGENERATE = "python -m loganalyze.schema.docs"
#: the page, in a source checkout
DOC_PATH = Path(__file__).resolve().parents[2] / "docs" / "schema.md"

_SEE = re.compile(r"see (\w+)\.(\w+)")
_BLOCK = re.compile(r"<!-- schema:begin (\S+) -->\n.*?<!-- schema:end \1 -->", re.S)


class SchemaDocError(Exception):
    """The schema cannot be documented as it stands (a missing comment, a dangling reference,
    a schema file without its block in the page)."""


@dataclass(frozen=True)
class Column:
    """One column of a table or view, as the database describes it."""

    name: str
    data_type: str
    comment: str | None


@dataclass(frozen=True)
class Relation:
    """A table or a view with its comment and columns, in declaration order."""

    name: str
    kind: str  # "table" | "view"
    comment: str | None
    columns: tuple[Column, ...]


@dataclass(frozen=True)
class SchemaFile:
    """The relations one ``schema/*.sql`` file creates, in creation order."""

    name: str
    relations: tuple[Relation, ...]


def _sql_files(folder) -> dict[str, str]:
    return {f.name: f.read_text(encoding="utf-8")
            for f in sorted(folder.iterdir(), key=lambda f: f.name) if f.name.endswith(".sql")}


def schema_files() -> list[tuple[str, str, str]]:
    """(file name, DDL, comments) of every ``schema/*.sql`` file, in the order the store runs
    them; the comments are the matching ``schema/comments/*.sql`` file ("" when there is none)."""
    root = resources.files(__package__)
    ddl = _sql_files(root)
    comments = _sql_files(root / "comments") if (root / "comments").is_dir() else {}
    orphans = sorted(set(comments) - set(ddl))
    if orphans:
        raise SchemaDocError(f"schema/comments/{', '.join(orphans)}: no schema file of that name")
    return [(name, sql, comments.get(name, "")) for name, sql in ddl.items()]


def comments_sql() -> str:
    """Every ``COMMENT ON`` statement of the schema, to run after the schema itself."""
    return "\n".join(comments for _, _, comments in schema_files())


def read_schema() -> list[SchemaFile]:
    """Run the schema file by file in an in-memory database and read back what each created."""
    con = duckdb.connect(":memory:")
    try:
        out, seen = [], set()
        for name, sql, comments in schema_files():
            con.execute(sql)
            if comments:
                con.execute(comments)
            rels = [r for r in _relations(con) if r.name not in seen]
            seen.update(r.name for r in rels)
            out.append(SchemaFile(name, tuple(rels)))
        return out
    finally:
        con.close()


def _relations(con: duckdb.DuckDBPyConnection) -> list[Relation]:
    rows = con.execute(
        """SELECT table_name, 'table', comment, table_oid FROM duckdb_tables() WHERE NOT internal
           UNION ALL
           SELECT view_name, 'view', comment, view_oid FROM duckdb_views() WHERE NOT internal
           ORDER BY 4"""
    ).fetchall()
    cols: dict[str, list[Column]] = {}
    for rel, col, dtype, comment in con.execute(
        """SELECT table_name, column_name, data_type, comment FROM duckdb_columns()
           WHERE NOT internal ORDER BY table_oid, column_index"""
    ).fetchall():
        cols.setdefault(rel, []).append(Column(col, dtype, comment))
    return [Relation(name, kind, comment, tuple(cols.get(name, ()))) for name, kind, comment, _ in rows]


def column_comments(schema: list[SchemaFile]) -> dict[tuple[str, str], str | None]:
    """Every column's own comment, by (relation, column)."""
    return {(r.name, c.name): c.comment for f in schema for r in f.relations for c in r.columns}


def meaning(comments: dict[tuple[str, str], str | None], relation: str, column: str) -> str:
    """The text a column's comment stands for, following ``see rel.col`` references
    (``comments`` as :func:`column_comments` gives them)."""
    path = [(relation, column)]
    while True:
        comment = comments.get(path[-1])
        if not comment or not comment.strip():
            raise SchemaDocError(f"{'.'.join(path[-1])} has no comment")
        ref = _SEE.fullmatch(comment.strip())
        if ref is None:
            return comment.strip()
        target = (ref[1], ref[2])
        if target not in comments:
            raise SchemaDocError(f"{relation}.{column}: '{comment}' names no column")
        if target in path:
            raise SchemaDocError(f"{relation}.{column}: 'see' references go round in a circle")
        path.append(target)


def problems(schema: list[SchemaFile]) -> list[str]:
    """What keeps the schema from being documented: one line per uncommented table, view or
    column, or per ``see`` reference that leads nowhere."""
    found, comments = [], column_comments(schema)
    for f in schema:
        for rel in f.relations:
            if not (rel.comment or "").strip():
                found.append(f"comments/{f.name}: {rel.kind} {rel.name} has no COMMENT ON {rel.kind.upper()}")
            for col in rel.columns:
                try:
                    meaning(comments, rel.name, col.name)
                except SchemaDocError as exc:
                    found.append(f"comments/{f.name}: {exc} (COMMENT ON COLUMN {rel.name}.{col.name})")
    return found


def _cell(text: str) -> str:
    """Plain comment text made safe for a Markdown table cell."""
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*")
    text = text.replace("<", "\\<").replace(">", "\\>")
    return re.sub(r"(?<![A-Za-z0-9])_", r"\\_", text)


def _same_columns_as(schema: list[SchemaFile], rel: Relation) -> str | None:
    """The relation whose columns a view passes through unchanged, all of them, if any."""
    targets = set()
    for col in rel.columns:
        ref = _SEE.fullmatch((col.comment or "").strip())
        if ref is None or ref[2] != col.name:
            return None
        targets.add(ref[1])
    if len(targets) != 1:
        return None
    (target,) = targets
    other = next((r for f in schema for r in f.relations if r.name == target), None)
    same = other is not None and [(c.name, c.data_type) for c in other.columns] == \
        [(c.name, c.data_type) for c in rel.columns]
    return target if same else None


def render_relation(schema: list[SchemaFile], rel: Relation, comments: dict[tuple[str, str], str | None]) -> str:
    """One relation as a Markdown section: heading, its comment, a column | type | meaning table."""
    about = (rel.comment or "").strip()
    lines = [f"### `{rel.name}` ({rel.kind})", "", _cell(about if about.endswith(".") else about + "."), ""]
    same = _same_columns_as(schema, rel)
    if same is not None:
        lines.append(f"Columns: the same as `{same}`.")
        return "\n".join(lines)
    lines += ["| column | type | meaning |", "|---|---|---|"]
    lines += [f"| `{c.name}` | {_cell(c.data_type)} | {_cell(meaning(comments, rel.name, c.name))} |"
              for c in rel.columns]
    return "\n".join(lines)


def render_blocks(schema: list[SchemaFile]) -> dict[str, str]:
    """The generated block of each schema file, markers included, by file name."""
    blocks, comments = {}, column_comments(schema)
    for f in schema:
        body = "\n\n".join(render_relation(schema, r, comments) for r in f.relations)
        blocks[f.name] = (f"<!-- schema:begin {f.name} -->\n<!-- generated by {REGENERATE} from"
                          f" loganalyze/schema/{f.name} and comments/{f.name}: edit the COMMENT statements -->\n\n"
                          f"{body}\n\n<!-- schema:end {f.name} -->")
    return blocks


def splice(page: str, blocks: dict[str, str]) -> str:
    """``page`` with each generated block replaced by the fresh one."""
    present = [m[1] for m in _BLOCK.finditer(page)]
    missing = [name for name in blocks if name not in present]
    if missing:
        raise SchemaDocError(
            "no block for " + ", ".join(missing) + ": add the lines "
            + " / ".join(f"'<!-- schema:begin {n} -->' '<!-- schema:end {n} -->'" for n in missing)
            + " where the tables should go, then run " + REGENERATE)
    stale = [name for name in present if name not in blocks]
    if stale:
        raise SchemaDocError(f"blocks for schema files that no longer exist: {', '.join(stale)}")
    return _BLOCK.sub(lambda m: blocks[m[1]], page)


def generated_page(page: str) -> str:
    """``page`` (the current docs/schema.md text) with every generated block brought up to date."""
    schema = read_schema()
    found = problems(schema)
    if found:
        raise SchemaDocError("every table, view and column needs a comment:\n  " + "\n  ".join(found))
    return splice(page, render_blocks(schema))


def main(argv: list[str] | None = None) -> int:
    """Rewrite docs/schema.md, or with ``--check`` only say whether it is up to date."""
    parser = argparse.ArgumentParser(prog=REGENERATE, description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the page is out of date")
    parser.add_argument("--doc", type=Path, default=DOC_PATH, help="the page (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        page = args.doc.read_text(encoding="utf-8")
        fresh = generated_page(page)
    except (OSError, SchemaDocError) as exc:
        print(f"{args.doc}: {exc}", file=sys.stderr)
        return 1
    if args.check:
        if fresh != page:
            print(f"{args.doc}: column tables are out of date; run {REGENERATE}", file=sys.stderr)
            return 1
        return 0
    if fresh != page:
        args.doc.write_text(fresh, encoding="utf-8")
        print(f"{args.doc}: column tables regenerated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
