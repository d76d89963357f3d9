from decimal import Decimal

import pytest
from django.db import transaction

from bank import notifications
from bank.models import Account, Transfer
from bank.services import InsufficientFunds, batch_transfer, transfer


@pytest.fixture(autouse=True)
def outbox():
    notifications.OUTBOX.clear()
    yield notifications.OUTBOX
    notifications.OUTBOX.clear()


@pytest.fixture
def accounts(db):
    return (
        Account.objects.create(owner="ann", balance=Decimal("100.00")),
        Account.objects.create(owner="bob", balance=Decimal("20.00")),
        Account.objects.create(owner="cat", balance=Decimal("0.00")),
    )


def balances():
    return {a.owner: a.balance for a in Account.objects.order_by("owner")}


def fail_on_save(monkeypatch, after=0):
    original = Transfer.save
    calls = []

    def save(self, *args, **kwargs):
        calls.append(1)
        if len(calls) > after:
            raise RuntimeError("the ledger is down")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Transfer, "save", save)


def test_transfer_moves_money_and_records_it(accounts, django_capture_on_commit_callbacks):
    ann, bob, _ = accounts
    with django_capture_on_commit_callbacks(execute=True):
        record = transfer(ann.pk, bob.pk, Decimal("30.00"))
    assert isinstance(record, Transfer)
    assert (record.source_id, record.target_id, record.amount) == (ann.pk, bob.pk, Decimal("30.00"))
    assert balances() == {"ann": Decimal("70.00"), "bob": Decimal("50.00"), "cat": Decimal("0.00")}
    assert notifications.OUTBOX == [f"transfer {record.pk} done"]


def test_refused_transfers_change_nothing(accounts, django_capture_on_commit_callbacks):
    ann, bob, _ = accounts
    before = balances()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(InsufficientFunds):
            transfer(bob.pk, ann.pk, Decimal("20.01"))
        with pytest.raises(ValueError):
            transfer(ann.pk, bob.pk, Decimal("0"))
        with pytest.raises(ValueError):
            transfer(ann.pk, bob.pk, Decimal("-5"))
        with pytest.raises(ValueError):
            transfer(ann.pk, ann.pk, Decimal("1"))
        with pytest.raises(Account.DoesNotExist):
            transfer(ann.pk, 999_999, Decimal("1"))
    assert balances() == before
    assert Transfer.objects.count() == 0
    assert callbacks == []


def test_exact_balance_can_be_sent(accounts):
    _, bob, cat = accounts
    transfer(bob.pk, cat.pk, Decimal("20.00"))
    assert balances()["bob"] == Decimal("0.00")
    assert balances()["cat"] == Decimal("20.00")


def test_failure_after_the_debit_undoes_everything(accounts, monkeypatch):
    ann, bob, _ = accounts
    before = balances()
    fail_on_save(monkeypatch)
    with pytest.raises(RuntimeError):
        transfer(ann.pk, bob.pk, Decimal("10.00"))
    assert balances() == before


def test_notification_waits_for_the_commit(accounts, django_capture_on_commit_callbacks):
    ann, bob, _ = accounts
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        transfer(ann.pk, bob.pk, Decimal("1.00"))
        assert notifications.OUTBOX == []
    assert len(callbacks) == 1
    assert notifications.OUTBOX == []


@pytest.mark.django_db(transaction=True)
def test_real_commit_sends_and_outer_rollback_does_not():
    ann = Account.objects.create(owner="ann", balance=Decimal("100.00"))
    bob = Account.objects.create(owner="bob", balance=Decimal("0.00"))
    with transaction.atomic():
        record = transfer(ann.pk, bob.pk, Decimal("10.00"))
        assert notifications.OUTBOX == []
    assert notifications.OUTBOX == [f"transfer {record.pk} done"]
    with pytest.raises(RuntimeError), transaction.atomic():
        transfer(ann.pk, bob.pk, Decimal("10.00"))
        raise RuntimeError("changed my mind")
    assert notifications.OUTBOX == [f"transfer {record.pk} done"]
    assert balances() == {"ann": Decimal("90.00"), "bob": Decimal("10.00")}


def test_batch_skips_failed_items_alone(accounts, django_capture_on_commit_callbacks):
    ann, bob, cat = accounts
    with django_capture_on_commit_callbacks(execute=True):
        result = batch_transfer([
            (ann.pk, bob.pk, Decimal("50.00")),
            (cat.pk, ann.pk, Decimal("5.00")),
            (bob.pk, cat.pk, Decimal("60.00")),
            (ann.pk, ann.pk, Decimal("1.00")),
            (ann.pk, 999_999, Decimal("1.00")),
        ])
    assert len(result) == 5
    assert result[1] is None and result[3] is None and result[4] is None
    assert all(isinstance(pk, int) for pk in (result[0], result[2]))
    assert balances() == {"ann": Decimal("50.00"), "bob": Decimal("10.00"), "cat": Decimal("60.00")}
    assert sorted(Transfer.objects.values_list("pk", flat=True)) == sorted([result[0], result[2]])
    assert notifications.OUTBOX == [f"transfer {result[0]} done", f"transfer {result[2]} done"]


def test_batch_uses_credits_of_earlier_items(accounts):
    ann, bob, cat = accounts
    result = batch_transfer([(ann.pk, cat.pk, Decimal("40.00")), (cat.pk, bob.pk, Decimal("40.00"))])
    assert None not in result
    assert balances() == {"ann": Decimal("60.00"), "bob": Decimal("60.00"), "cat": Decimal("0.00")}


def test_unexpected_error_rolls_back_the_whole_batch(accounts, monkeypatch, django_capture_on_commit_callbacks):
    ann, bob, cat = accounts
    before = balances()
    fail_on_save(monkeypatch, after=1)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(RuntimeError):
            batch_transfer([(ann.pk, bob.pk, Decimal("10.00")), (ann.pk, cat.pk, Decimal("10.00"))])
    assert balances() == before
    assert Transfer.objects.count() == 0
    assert callbacks == []
    assert notifications.OUTBOX == []
