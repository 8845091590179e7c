from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("triage", "0002_checked_not_checked_impact_extra_hosts"),
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
