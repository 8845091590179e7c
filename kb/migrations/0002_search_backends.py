"""Search backends that the ORM cannot describe: a GIN index on the tsvector
(PostgreSQL) and an FTS5 table over the same segmented text (SQLite)."""

from django.db import migrations


def forwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute("CREATE INDEX kb_case_search_gin ON kb_case USING gin (search_vector)")
    elif vendor == "sqlite":
        schema_editor.execute(
            "CREATE VIRTUAL TABLE kb_case_fts USING fts5(title, body, tokenize='unicode61 remove_diacritics 2')"
        )


def backwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS kb_case_search_gin")
    elif vendor == "sqlite":
        schema_editor.execute("DROP TABLE IF EXISTS kb_case_fts")


class Migration(migrations.Migration):
    dependencies = [("kb", "0001_initial")]

    operations = [migrations.RunPython(forwards, backwards)]
