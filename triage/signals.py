"""What triage announces to the apps above it (integrations, troubleshoot).

Those apps connect their receivers in their ``AppConfig.ready()``; triage
imports none of them (the layers are in CONTRIBUTING.md). Every signal is sent
synchronously, inside the caller's transaction.
"""

from django.dispatch import Signal

# An analysis finished, done or failed: ``snapshot_id``.
analysis_finished = Signal()

# The sweeper re-enqueued ``count`` stale snapshots.
snapshots_requeued = Signal()

# An acknowledgement was made, or withdrawn: ``acknowledgement``, ``user``,
# ``action`` ("acknowledge", "withdraw" ...), ``old`` and ``new`` (text).
acknowledgement_changed = Signal()
