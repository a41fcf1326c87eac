"""The statement registry: one subpackage per paper (``paper_000`` .. ``paper_004``, one module per statement group)
and the ``empirical`` entries. See registry.py."""
from .registry import CheckResult, Statement, all_statements, get, register, run_check, statement

__all__ = ["CheckResult", "Statement", "all_statements", "get", "register", "run_check", "statement"]
