from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("triage", "0003_snapshot_artifacts_history"),
    ]

    operations = [
        migrations.AddField(
            model_name="snapshot",
            name="lease_owner",
            field=models.CharField(blank=True, max_length=255),
        ),
        migrations.AddField(
            model_name="snapshot",
            name="lease_expires_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
