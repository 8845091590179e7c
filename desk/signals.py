"""What the desk announces. Integrations (above it) listens; desk never imports it."""

from django.dispatch import Signal

# A new item waits in someone's inbox (after its row was written, inside the
# writer's transaction). Sent by ``desk.inbox.do_notify`` with ``item`` (the
# ``InboxItem``).
inbox_item_created = Signal()
