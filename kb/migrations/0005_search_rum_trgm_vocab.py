"""Ranked search over every match and a vocabulary for "did you mean".

PostgreSQL: a RUM index on ``search_vector`` (Debian's postgresql-15-rum; it
answers ``ORDER BY search_vector <=> query LIMIT n`` from the index, positions
included) replaces the GIN index, and a pg_trgm index on ``kb_termstat.term``
finds near spellings. Without the rum extension the GIN index stays and
``kb.search`` sorts every match with ts_rank_cd (exact, slower).
SQLite: an fts5vocab table over ``kb_case_fts`` is the term table.
"""

from django.db import migrations


def forwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        schema_editor.execute(
            "CREATE INDEX IF NOT EXISTS kb_termstat_term_trgm ON kb_termstat USING gin (term gin_trgm_ops)"
        )
        with schema_editor.connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'rum'")
            has_rum = cursor.fetchone() is not None
        if has_rum:
            schema_editor.execute("CREATE EXTENSION IF NOT EXISTS rum")
            schema_editor.execute(
                "CREATE INDEX IF NOT EXISTS kb_case_search_rum ON kb_case USING rum (search_vector rum_tsvector_ops)"
            )
            schema_editor.execute("DROP INDEX IF EXISTS kb_case_search_gin")
    elif vendor == "sqlite":
        schema_editor.execute("CREATE VIRTUAL TABLE IF NOT EXISTS kb_case_fts_vocab USING fts5vocab(kb_case_fts, row)")


def backwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS kb_termstat_term_trgm")
        schema_editor.execute(
            "CREATE INDEX IF NOT EXISTS kb_case_search_gin ON kb_case USING gin (search_vector)"
        )
        schema_editor.execute("DROP INDEX IF EXISTS kb_case_search_rum")
    elif vendor == "sqlite":
        schema_editor.execute("DROP TABLE IF EXISTS kb_case_fts_vocab")


class Migration(migrations.Migration):
    dependencies = [("kb", "0004_caserule_case_index")]

    operations = [migrations.RunPython(forwards, backwards)]
