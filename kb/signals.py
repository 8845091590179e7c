"""What the knowledge base announces to the apps above it (desk, integrations).

They connect their receivers in their ``AppConfig.ready()``; kb imports none of
them (the layers are in CONTRIBUTING.md). Sent synchronously, inside the
caller's transaction.
"""

from django.dispatch import Signal

# A case was published for the first time: ``case``.
case_published = Signal()

# A case group was sent to review: ``slug``, ``user`` (who sent it), ``comment``.
case_review_requested = Signal()

# A reviewer returned a case group to draft: ``slug``, ``user`` (the reviewer), ``comment``.
case_returned = Signal()

# A retro-scan finished and found hosts that no earlier scan of its case or
# rule had matched: ``scan`` (a ``RetroScan``; its new hosts are the
# ``HostMatch`` rows whose ``first_scan_id`` is its id).
hosts_matched = Signal()
