"""Fault-matrix scenarios (docs/reliability.md), one module per area.

Each ``rows_<area>.py`` module exports ``ROWS: dict[int, Scenario]`` mapping a
row number of the fault matrix to an async scenario. A scenario builds
whatever it needs beyond :class:`FaultContext` (a private Valkey to kill or
pause, worker processes, farm faults) and asserts what the contract promises:
attempts spent, status, releases, breaker state and pages.
``tests/e2e/test_fault_matrix.py`` runs every row as one parametrized test.
"""
