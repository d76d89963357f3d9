"""Where the clinic sends its messages. The tests read OUTBOX."""

OUTBOX = []


def notify(message):
    OUTBOX.append(message)
