"""A sha256 typed by its start (``sha256__startswith``, ``LIKE 'abc%'``) on PostgreSQL."""

from django.db import migrations

SQL = "CREATE INDEX IF NOT EXISTS desk_snapshot_sha256_prefix ON triage_snapshot (sha256 text_pattern_ops)"


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(SQL)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS desk_snapshot_sha256_prefix")


class Migration(migrations.Migration):
    dependencies = [("desk", "0002_inbox")]

    operations = [migrations.RunPython(forwards, backwards)]
