"""The booking models: write Room and Reservation here (see the task)."""
