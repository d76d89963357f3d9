from decimal import Decimal

from bank import notifications
from bank.models import Account, Transfer


class InsufficientFunds(Exception):
    pass


def transfer(source_id, target_id, amount):
    # no transaction: a failure half-way leaves the debit in place, and the message goes out at once
    amount = Decimal(amount)
    if amount <= 0 or source_id == target_id:
        raise ValueError("bad transfer")
    source = Account.objects.get(pk=source_id)
    target = Account.objects.get(pk=target_id)
    source.balance -= amount
    source.save()
    if source.balance < 0:
        raise InsufficientFunds("no money")
    target.balance += amount
    target.save()
    record = Transfer.objects.create(source=source, target=target, amount=amount)
    notifications.notify(f"transfer {record.pk} done")
    return record


def batch_transfer(items):
    results = []
    for item in items:
        try:
            results.append(transfer(*item).pk)
        except Exception:
            results.append(None)
    return results
