"""What the knowledge base announces to the apps above it (integrations).

They connect their receivers in their ``AppConfig.ready()``; kb imports none of
them (the layers are in CONTRIBUTING.md). Sent synchronously, inside the
caller's transaction.
"""

from django.dispatch import Signal

# A case was published for the first time: ``case``.
case_published = Signal()
