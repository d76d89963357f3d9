"""Path converters of the catalog: write FourDigitYearConverter and MonthConverter here (see the task)."""
