"""A snapshot label typed from its start on PostgreSQL: 0005's btree on
``(UPPER(label) text_pattern_ops, id)`` was never chosen. PostgreSQL allows an
index-only scan of an expression index only when the column inside the
expression is in the index too; without ``label`` the planner saw a heap read
per match and took the trigram index instead (13 ms for ``redis-04`` at 100k
snapshots, issue 28). With ``label`` in the index, as ``host_key`` is in
``desk_snapshot_host_key_upper``, the range is an index-only scan (0.1 ms)."""

from django.db import migrations

CREATE = (
    "DROP INDEX IF EXISTS desk_snapshot_label_upper;"
    " CREATE INDEX IF NOT EXISTS desk_snapshot_label_upper"
    " ON triage_snapshot (UPPER(label) text_pattern_ops, label, id)"
)
DROP = (
    "DROP INDEX IF EXISTS desk_snapshot_label_upper;"
    " CREATE INDEX IF NOT EXISTS desk_snapshot_label_upper ON triage_snapshot (UPPER(label) text_pattern_ops, id)"
)


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("desk", "0005_name_prefix_indexes")]

    operations = [migrations.RunPython(forwards, backwards)]
