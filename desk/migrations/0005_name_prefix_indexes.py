"""A host name or snapshot label typed from its start (``istartswith``:
``UPPER(col) LIKE 'KVM-0%'``) on PostgreSQL: a btree range instead of the
trigram index, whose scan reads every posting of the common trigrams of a long
name (``.EXAMPLE.NET``: 100 ms at 100k snapshots, issue 28). The column read
(the host key, the snapshot id) is in the index: an index-only scan."""

from django.db import migrations

CREATE = (
    "CREATE INDEX IF NOT EXISTS desk_snapshot_host_key_upper"
    " ON triage_snapshot (UPPER(host_key) text_pattern_ops, host_key);"
    " CREATE INDEX IF NOT EXISTS desk_snapshot_label_upper ON triage_snapshot (UPPER(label) text_pattern_ops, id)"
)
DROP = "DROP INDEX IF EXISTS desk_snapshot_host_key_upper; DROP INDEX IF EXISTS desk_snapshot_label_upper"


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("desk", "0004_inbox_hosts_matched")]

    operations = [migrations.RunPython(forwards, backwards)]
