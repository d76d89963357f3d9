from decimal import Decimal

from django.db import transaction
from django.db.models import F

from bank import notifications
from bank.models import Account, Transfer


class InsufficientFunds(Exception):
    pass


def transfer(source_id, target_id, amount):
    amount = Decimal(amount)
    if amount <= 0:
        raise ValueError("the amount must be positive")
    if source_id == target_id:
        raise ValueError("source and target are the same account")
    with transaction.atomic():
        accounts = {a.pk: a for a in Account.objects.select_for_update().filter(pk__in=[source_id, target_id])}
        if source_id not in accounts or target_id not in accounts:
            raise Account.DoesNotExist(f"no account {source_id if source_id not in accounts else target_id}")
        if accounts[source_id].balance < amount:
            raise InsufficientFunds(f"account {source_id} cannot pay {amount}")
        Account.objects.filter(pk=source_id).update(balance=F("balance") - amount)
        Account.objects.filter(pk=target_id).update(balance=F("balance") + amount)
        record = Transfer.objects.create(source_id=source_id, target_id=target_id, amount=amount)
        message = f"transfer {record.pk} done"
        transaction.on_commit(lambda: notifications.notify(message))
    return record


def batch_transfer(items):
    results = []
    with transaction.atomic():
        for source_id, target_id, amount in items:
            try:
                with transaction.atomic():
                    results.append(transfer(source_id, target_id, amount).pk)
            except (InsufficientFunds, ValueError, Account.DoesNotExist):
                results.append(None)
    return results
