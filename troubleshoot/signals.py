"""What the troubleshooting sessions announce to the apps above them
(desk, integrations).

They connect their receivers in their ``AppConfig.ready()``; troubleshoot
imports none of them (the layers are in CONTRIBUTING.md). Sent synchronously,
inside the caller's transaction.
"""

from django.dispatch import Signal

# A session was closed: ``session``.
session_closed = Signal()

# A session was given to someone: ``session``, ``user`` (who did it), ``assignee``.
session_assigned = Signal()

# A comment was added to a session: ``comment``.
comment_added = Signal()
