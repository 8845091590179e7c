"""Case search ranks from its own inverted index, the same on every backend.

``kb_posting`` holds each term of each case version with its BM25 weight;
``kb_termstat`` (now kept on SQLite too) its document frequency. The
tsvector column with its RUM/GIN index (PostgreSQL) and the FTS5 tables
(SQLite) are no longer read: they go. The pg_trgm index on the vocabulary
stays. ``kb.search.TOKENIZER_VERSION`` moved on, so ``manage.py loadcases``
re-indexes every case into the new table.
"""

from django.db import migrations, models


def drop_fts(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute("DROP TABLE IF EXISTS kb_case_fts_vocab")
        schema_editor.execute("DROP TABLE IF EXISTS kb_case_fts")


def create_fts(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS kb_case_fts USING fts5(title, body, tokenize='unicode61 remove_diacritics 2')"
        )
        schema_editor.execute("CREATE VIRTUAL TABLE IF NOT EXISTS kb_case_fts_vocab USING fts5vocab(kb_case_fts, row)")


class Migration(migrations.Migration):
    dependencies = [
        ("kb", "0006_case_review_revisions_reuse"),
    ]

    operations = [
        migrations.RunPython(drop_fts, create_fts),
        migrations.RemoveField(
            model_name="case",
            name="search_vector",
        ),
        migrations.CreateModel(
            name="Posting",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "case_id",
                        "term",
                        blank=True,
                        editable=False,
                        primary_key=True,
                        serialize=False,
                    ),
                ),
                ("case_id", models.IntegerField()),
                ("term", models.CharField(max_length=200)),
                ("state", models.CharField(max_length=10)),
                ("impact", models.FloatField()),
            ],
            options={
                "indexes": [
                    models.Index(
                        fields=["term", "state", "-impact", "case_id"],
                        name="kb_posting_term_impact",
                    )
                ],
            },
        ),
    ]
