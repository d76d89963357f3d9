"""RotaError, assign(), assign_week() and rota_report(): write them (see the task)."""
