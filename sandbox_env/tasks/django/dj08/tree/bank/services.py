"""Money transfers: write InsufficientFunds, transfer() and batch_transfer() here (see the task)."""
