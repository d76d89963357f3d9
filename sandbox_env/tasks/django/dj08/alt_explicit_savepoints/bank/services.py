from decimal import Decimal

from django.db import transaction

from bank import notifications
from bank.models import Account, Transfer


class InsufficientFunds(Exception):
    pass


@transaction.atomic
def _move(source_id, target_id, amount):
    source = Account.objects.select_for_update().get(pk=source_id)
    target = Account.objects.select_for_update().get(pk=target_id)
    if source.balance < amount:
        raise InsufficientFunds(f"balance of {source_id} is below {amount}")
    source.balance -= amount
    source.save(update_fields=["balance"])
    target.balance += amount
    target.save(update_fields=["balance"])
    done = Transfer.objects.create(source=source, target=target, amount=amount)
    transaction.on_commit(lambda pk=done.pk: notifications.notify(f"transfer {pk} done"))
    return done


def transfer(source_id, target_id, amount):
    amount = Decimal(amount)
    if not amount > 0:
        raise ValueError("amount must be positive")
    if source_id == target_id:
        raise ValueError("cannot transfer to the same account")
    return _move(source_id, target_id, amount)


def batch_transfer(items):
    done = []
    with transaction.atomic():
        for source_id, target_id, amount in items:
            savepoint = transaction.savepoint()
            try:
                pk = transfer(source_id, target_id, amount).pk
            except (InsufficientFunds, ValueError, Account.DoesNotExist):
                transaction.savepoint_rollback(savepoint)
                done.append(None)
            else:
                transaction.savepoint_commit(savepoint)
                done.append(pk)
    return done
