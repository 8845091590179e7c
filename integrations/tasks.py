"""Thin Celery tasks of the integrations app: one webhook POST per run,
retried with exponential back-off; the opt-in e-mails of one event."""

from __future__ import annotations

import smtplib

from celery import shared_task
from django.conf import settings

from . import services
from .models import Delivery


class DeliveryRetry(Exception):
    """Raised by the delivery task for an attempt worth retrying (Celery's
    ``autoretry_for`` turns it into a retry with back-off)."""


@shared_task(
    name="integrations.tasks.deliver_webhook",
    acks_late=True,
    autoretry_for=(DeliveryRetry,),
    retry_backoff=settings.CASEBOOK_WEBHOOK_BACKOFF,
    retry_backoff_max=settings.CASEBOOK_WEBHOOK_BACKOFF_MAX,
    retry_jitter=False,
    # The service counts attempts on the row and stops at RETRIES + 1.
    max_retries=settings.CASEBOOK_WEBHOOK_RETRIES,
)
def deliver_webhook(delivery_id: int) -> str | None:
    delivery = services.attempt_delivery(delivery_id=delivery_id)
    if delivery is not None and delivery.status == Delivery.Status.RETRYING:
        raise DeliveryRetry(delivery.error)
    return delivery.status if delivery else None


@shared_task(
    name="integrations.tasks.send_event_email",
    acks_late=True,
    autoretry_for=(smtplib.SMTPException, OSError),
    retry_backoff=settings.CASEBOOK_WEBHOOK_BACKOFF,
    retry_backoff_max=settings.CASEBOOK_WEBHOOK_BACKOFF_MAX,
    max_retries=3,
)
def send_event_email(event: str, team_id: int, payload: dict) -> int:
    return services.mail_event(event=event, team_id=team_id, payload=payload)


@shared_task(
    name="integrations.tasks.send_inbox_email",
    acks_late=True,
    autoretry_for=(smtplib.SMTPException, OSError),
    retry_backoff=settings.CASEBOOK_WEBHOOK_BACKOFF,
    retry_backoff_max=settings.CASEBOOK_WEBHOOK_BACKOFF_MAX,
    max_retries=3,
)
def send_inbox_email(payload: dict) -> int:
    return services.mail_inbox_item(payload=payload)


@shared_task(name="integrations.tasks.prune_deliveries")
def prune_deliveries() -> int:
    return services.prune_deliveries()
