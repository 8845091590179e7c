"""The trigram index of the vocabulary on ``lower(term)``, not on ``term``.

pg_trgm >= 1.6 (PostgreSQL 14) lets a ``gin_trgm_ops`` index answer equality
too, and without statistics (a fresh database, a test run, a just-loaded
library) the planner took it for ``term IN (...)``: the look-ups by primary key
of indexing (``update_term_stats``) and of ranking became bitmap scans of the
trigram index, about a second each on the library (``loadcases`` on
PostgreSQL took 48 s, on SQLite 4 s). On an expression the index answers only
what names the expression: the fuzzy "did you mean" query
(``kb.search.spelling``), which asks ``lower(term) %% ...``. Terms are index
tokens, already lower case, so the two are the same text.
"""

from django.db import migrations


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS kb_termstat_term_trgm")
        schema_editor.execute(
            "CREATE INDEX IF NOT EXISTS kb_termstat_lower_term_trgm ON kb_termstat USING gin (lower(term) gin_trgm_ops)"
        )


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS kb_termstat_lower_term_trgm")
        schema_editor.execute(
            "CREATE INDEX IF NOT EXISTS kb_termstat_term_trgm ON kb_termstat USING gin (term gin_trgm_ops)"
        )


class Migration(migrations.Migration):
    dependencies = [("kb", "0011_retro_scans")]

    operations = [migrations.RunPython(forwards, backwards)]
