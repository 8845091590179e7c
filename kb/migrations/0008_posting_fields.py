"""Postings say where their term occurs (``fields``: a bit per field of the
case version), so search explains a hit from the index instead of re-reading
its texts; the weight is a 4-byte float on PostgreSQL.

The table is created again (its columns in an order without padding):
``kb.search.TOKENIZER_VERSION`` moved on, so ``manage.py loadcases``
re-indexes every case into it.
"""

from django.db import migrations, models

import kb.models


class Migration(migrations.Migration):
    dependencies = [
        ("kb", "0007_search_postings"),
    ]

    operations = [
        migrations.DeleteModel(name="Posting"),
        migrations.CreateModel(
            name="Posting",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "case_id", "term", blank=True, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("case_id", models.IntegerField()),
                ("term", models.CharField(max_length=200)),
                ("state", models.CharField(max_length=10)),
                ("fields", models.SmallIntegerField(default=0)),
                ("impact", kb.models.RealField()),
            ],
            options={
                "indexes": [
                    models.Index(fields=["term", "state", "-impact", "case_id"], name="kb_posting_term_impact")
                ],
            },
        ),
    ]
