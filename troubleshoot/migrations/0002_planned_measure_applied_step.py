"""Applied measures get a step number: measures applied together share one
step and one metric.

Existing rows did not record which measures were applied together, only a
metric on some of them. The metric an engineer entered after several applied
measures was measured after all of them, so in each session the applied
measures are taken in the order they were applied (``applied_at``, then plan
order), and every run of measures without a metric joins the next measure
with one: together they form one step, and each member gets that metric.
Measures applied after the last metric form one step without a metric.
"""

from django.db import migrations, models


def group_applied_measures(apps, schema_editor):
    PlannedMeasure = apps.get_model("troubleshoot", "PlannedMeasure")
    applied = PlannedMeasure.objects.filter(status="applied").order_by(
        "session_id", "applied_at", "tier", "position", "id"
    )
    by_session: dict[int, list] = {}
    for pm in applied:
        by_session.setdefault(pm.session_id, []).append(pm)
    for rows in by_session.values():
        step, pending = 0, []
        for pm in rows:
            pending.append(pm)
            if pm.metric_after is None:
                continue
            step += 1
            for member in pending:
                member.step, member.metric_after = step, pm.metric_after
            pending = []
        if pending:
            step += 1
            for member in pending:
                member.step = step
        PlannedMeasure.objects.bulk_update(rows, ["step", "metric_after"])


def ungroup(apps, schema_editor):
    """The step column goes away; the shared metric stays on every member."""


class Migration(migrations.Migration):
    dependencies = [
        ("troubleshoot", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="plannedmeasure",
            name="step",
            field=models.PositiveIntegerField(blank=True, null=True, verbose_name="applied in step"),
        ),
        migrations.RunPython(group_applied_measures, ungroup),
    ]
