from decimal import Decimal

import pytest
from django.db import transaction

from bank import notifications
from bank.models import Account, Transfer
from bank.services import InsufficientFunds, batch_transfer, transfer


@pytest.fixture(autouse=True)
def sent():
    notifications.OUTBOX.clear()
    yield notifications.OUTBOX
    notifications.OUTBOX.clear()


@pytest.fixture
def trio(db):
    return (
        Account.objects.create(owner="dora", balance=Decimal(25000) / 100),
        Account.objects.create(owner="eli", balance=Decimal(550) / 100),
        Account.objects.create(owner="fay", balance=Decimal(1225) / 100),
    )


def money():
    """Each owner's balance in cents."""
    return {a.owner: int(a.balance * 100) for a in Account.objects.order_by("owner")}


def break_transfers(monkeypatch, after=0):
    original = Transfer.save
    seen = []

    def save(self, *args, **kwargs):
        seen.append(self)
        if len(seen) > after:
            raise ConnectionError("the ledger went away")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Transfer, "save", save)


def test_transfer_with_cents(trio, django_capture_on_commit_callbacks):
    dora, eli, _ = trio
    with django_capture_on_commit_callbacks(execute=True):
        done = transfer(dora.pk, eli.pk, Decimal("0.75"))
    assert Transfer.objects.get(pk=done.pk).amount == Decimal("0.75")
    assert money() == {"dora": 25000 - 75, "eli": 550 + 75, "fay": 1225}
    assert notifications.OUTBOX == [f"transfer {done.pk} done"]


def test_one_cent_too_much_is_insufficient(trio, django_capture_on_commit_callbacks):
    _, eli, fay = trio
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(InsufficientFunds):
            transfer(eli.pk, fay.pk, Decimal(550 + 1) / 100)
    assert money()["eli"] == 550
    assert len(callbacks) == 0


def test_unknown_source_and_bad_amounts(trio):
    dora, eli, _ = trio
    with pytest.raises(Account.DoesNotExist):
        transfer(424242, eli.pk, Decimal("1.00"))
    with pytest.raises(ValueError):
        transfer(dora.pk, eli.pk, Decimal("-0.01"))
    with pytest.raises(ValueError):
        transfer(eli.pk, eli.pk, Decimal("2.00"))
    assert Transfer.objects.count() == 0
    assert money()["dora"] == 25000


def test_transfer_returns_the_saved_record(trio):
    dora, _, fay = trio
    record = transfer(dora.pk, fay.pk, Decimal("50.00"))
    stored = Transfer.objects.get()
    assert stored.pk == record.pk
    assert (stored.source.owner, stored.target.owner, stored.amount) == ("dora", "fay", Decimal("50.00"))


def test_failing_ledger_leaves_both_balances(trio, monkeypatch, django_capture_on_commit_callbacks):
    dora, _, fay = trio
    break_transfers(monkeypatch)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(ConnectionError):
            transfer(dora.pk, fay.pk, Decimal("100.00"))
    assert money() == {"dora": 25000, "eli": 550, "fay": 1225}
    assert callbacks == []


@pytest.mark.django_db(transaction=True)
def test_nothing_is_sent_before_the_outer_block_commits():
    a = Account.objects.create(owner="gus", balance=Decimal("40.00"))
    b = Account.objects.create(owner="hal", balance=Decimal("0.00"))
    with transaction.atomic():
        first = transfer(a.pk, b.pk, Decimal("15.00"))
        second = transfer(b.pk, a.pk, Decimal("5.00"))
        assert notifications.OUTBOX == []
    assert notifications.OUTBOX == [f"transfer {first.pk} done", f"transfer {second.pk} done"]
    assert money() == {"gus": 3000, "hal": 1000}


def test_batch_in_order_with_one_failure(trio, django_capture_on_commit_callbacks):
    dora, eli, fay = trio
    with django_capture_on_commit_callbacks(execute=True):
        result = batch_transfer([
            (eli.pk, fay.pk, Decimal("10.00")),
            (dora.pk, eli.pk, Decimal("20.00")),
            (eli.pk, fay.pk, Decimal("10.00")),
        ])
    assert result[0] is None
    assert [pk is None for pk in result] == [True, False, False]
    assert money() == {"dora": 25000 - 2000, "eli": 550 + 2000 - 1000, "fay": 1225 + 1000}
    assert notifications.OUTBOX == [f"transfer {result[1]} done", f"transfer {result[2]} done"]


def test_empty_batch_does_nothing(trio):
    assert batch_transfer([]) == []
    assert Transfer.objects.count() == 0


def test_batch_rolls_back_on_an_unexpected_error(trio, monkeypatch, django_capture_on_commit_callbacks):
    dora, eli, fay = trio
    break_transfers(monkeypatch, after=2)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(ConnectionError):
            batch_transfer([
                (dora.pk, eli.pk, Decimal("1.00")),
                (dora.pk, fay.pk, Decimal("1.00")),
                (dora.pk, eli.pk, Decimal("1.00")),
            ])
    assert money() == {"dora": 25000, "eli": 550, "fay": 1225}
    assert Transfer.objects.count() == 0
    assert (len(callbacks), notifications.OUTBOX) == (0, [])


def test_batch_with_only_failures_sends_nothing(trio, django_capture_on_commit_callbacks):
    dora, eli, _ = trio
    with django_capture_on_commit_callbacks(execute=True):
        result = batch_transfer([(eli.pk, dora.pk, Decimal("99.00")), (dora.pk, 777777, Decimal("1.00"))])
    assert result == [None, None]
    assert notifications.OUTBOX == []
