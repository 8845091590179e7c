"""The index ``fleet_findings_source`` walks (see ``Snapshot.Meta``): on
PostgreSQL only, as SQLite cannot index NULLS LAST."""

from django.db import migrations

INDEX = "snapshot_cluster_finished"


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {INDEX} ON triage_snapshot "
            "(cluster, finished_at DESC NULLS LAST, id DESC)"
        )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [
        ("triage", "0006_snapshot_fleet_facts"),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
