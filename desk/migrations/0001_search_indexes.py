"""Indexes the one search box (``desk.search``) needs on PostgreSQL: trigram
indexes for a host name, label or session title typed in part (``icontains``
is ``UPPER(col) LIKE UPPER('%x%')``), and an index on the upper-cased ticket
key for a key typed whole or by its start (``iexact``, ``istartswith``).
SQLite gets none: it is the embedded default, not the 100k-snapshot server."""

from django.db import migrations

INDEXES = {
    "desk_snapshot_host_key_trgm": "triage_snapshot USING gin (UPPER(host_key) gin_trgm_ops)",
    "desk_snapshot_label_trgm": "triage_snapshot USING gin (UPPER(label) gin_trgm_ops)",
    "desk_session_title_trgm": "troubleshoot_session USING gin (UPPER(title) gin_trgm_ops)",
    "desk_ticketref_key_upper": "triage_ticketref (UPPER(key::text) text_pattern_ops)",
}


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for name, definition in INDEXES.items():
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {definition}")


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [
        ("triage", "0007_snapshot_cluster_finished"),
        ("troubleshoot", "0003_assignee_comments_ack_audit"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
